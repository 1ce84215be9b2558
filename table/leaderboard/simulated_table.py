"""Real games as a table would publish them (schema v1), for the leaderboard's tests and benchmark.

The games are played by the engine (:func:`table.game.execute`) with bots
(:mod:`table.strategy.bots`) or random legal play (:func:`table.game.autoplay.random_command`, which
also undoes and corrects now and then); each accepted event becomes the ``events`` payload of
docs/mqtt.md made by the table's own code (:mod:`table.cafe.topics`), without a table's app, store
or outbox. The leaderboard service never imports this module.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from table.cafe import topics
from table.game import GameState, ReadDice, Reroll, ScoreBox, SetHolds, StartGame, event_to_json, execute
from table.game.autoplay import random_command
from table.strategy.bots import make_bot


def _bot_command(state: GameState, bots: list[Any], rng: random.Random, at: float) -> Any:
    turn = state.turn
    assert turn is not None
    card, bot = state.cards[turn.player], bots[turn.player]
    if turn.roll == 0:
        return ReadDice(at, tuple(rng.randint(1, 6) for _ in range(5)))
    if turn.roll < 3:
        holds = tuple(bool(h) for h in bot.choose_hold(card, turn.dice, turn.roll))
        if not all(holds):
            if holds != turn.holds:
                return SetHolds(at, holds)
            return Reroll(at, tuple(rng.randint(1, 6) for h in holds if not h))
    return ScoreBox(at, bot.choose_box(card, turn.dice, turn.roll))


def play_game(
    ruleset: str,
    players: tuple[str, ...],
    rng: random.Random,
    *,
    level: str = "easy",
    start: float = 1.7e9,
    autoplay: bool = False,
) -> Iterator[tuple[GameState, Any]]:
    """Play one whole game; yield ``(state after, event)`` for each accepted event, in order.

    ``level``: the bots' level (``easy``, ``medium``, ``optimal``); ``autoplay``: random legal play
    with undos (10 % of the actions where one is allowed) and corrections
    instead. Event times start at ``start`` (Unix s), 1 s apart.
    """
    at = start
    state, events = execute(None, StartGame(at, ruleset, players))
    yield from ((state, e) for e in events)
    bots = [make_bot(level, ruleset) for _ in players]
    while not state.finished:
        at += 1.0
        cmd = random_command(state, rng, at, p_undo=0.1) if autoplay else _bot_command(state, bots, rng, at)
        state, events = execute(state, cmd)
        yield from ((state, e) for e in events)


def event_payload(table: str, store_id: str, game: int, seq: int, state: GameState, event: Any) -> bytes:
    """The ``dicetable/<table>/events`` payload of ``event`` (``seq`` from 1), as the table makes it
    (:func:`table.cafe.topics.event_payload`); ``state`` is the game after the event."""
    return topics.event_payload(table, store_id, game, seq - 1, event_to_json(event), state)


def game_payloads(table: str, store_id: str, game: int, played: Iterator[tuple[GameState, Any]]) -> list[bytes]:
    """The event payloads of one game (``seq`` from 1), game id ``<table>:<store_id>:<game>``."""
    return [event_payload(table, store_id, game, seq, state, event) for seq, (state, event) in enumerate(played, 1)]


def state_payload(table: str, store_id: str, game: int | None, state: GameState | None, at: float) -> bytes:
    """The ``dicetable/<table>/state`` payload (:func:`table.cafe.topics.state_payload`; ``None``: no game on)."""
    return topics.state_payload(table, store_id, game, state, at)
