"""Real games as a table would publish them (schema v1), for the leaderboard's tests and benchmark.

The games are played by the engine (:func:`table.game.execute`) with bots
(:mod:`table.strategy.bots`) or random legal play (:func:`table.game.autoplay.random_command`, which
also undoes and corrects now and then); each accepted event becomes the ``events`` payload of
docs/mqtt.md with the game's totals after it. The leaderboard service never imports this module.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

from table.game import GameState, ReadDice, Reroll, ScoreBox, SetHolds, StartGame, event_to_dict, execute
from table.game.autoplay import random_command
from table.rules import find_ruleset
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


def event_payload(table: str, game: str, seq: int, state: GameState, event: Any) -> dict[str, Any]:
    """The ``dicetable/<table>/events`` payload (a JSON-ready dict) of ``event``, ``state`` being the game after it."""
    n_boxes = len(find_ruleset(state.ruleset).boxes) if state.ruleset else 0
    scored = min(len(c) for c in state.cards) if state.cards else 0
    data = event_to_dict(event)
    return {
        "v": 1,
        "id": f"{game}:{seq}",
        "game": game,
        "seq": seq,
        "table": table,
        "type": data["type"],
        "at": event.at,
        "event": data,
        "ruleset": state.ruleset,
        "players": list(state.players),
        "totals": list(state.totals()),
        "round": min(scored + 1, n_boxes),
        "finished": state.ended is not None,
    }


def game_payloads(table: str, game: str, games: Iterator[tuple[GameState, Any]]) -> list[bytes]:
    """The encoded event payloads of one game (seq from 1)."""
    return [
        json.dumps(event_payload(table, game, seq, state, event)).encode()
        for seq, (state, event) in enumerate(games, start=1)
    ]


def state_payload(table: str, game: str | None, state: GameState | None, at: float) -> bytes:
    """A ``dicetable/<table>/state`` payload for ``state`` (``None``: no game on)."""
    if state is None:
        body: dict[str, Any] = {
            "game": None,
            "ruleset": "",
            "players": [],
            "current": None,
            "round": 0,
            "rounds": 0,
            "roll": 0,
            "dice": [],
            "held": [],
            "finished": False,
        }
    else:
        turn = state.turn
        n_boxes = len(find_ruleset(state.ruleset).boxes)
        body = {
            "game": game,
            "ruleset": state.ruleset,
            "players": [
                {"name": n, "total": t, "bot": bool(state.bot_level(k))}
                for k, (n, t) in enumerate(zip(state.players, state.totals()))
            ],
            "current": state.current_player,
            "round": min(min(len(c) for c in state.cards) + 1, n_boxes),
            "rounds": n_boxes,
            "roll": turn.roll if turn else 0,
            "dice": list(turn.dice) if turn else [],
            "held": list(turn.holds) if turn else [],
            "finished": state.ended is not None,
        }
    return json.dumps({"v": 1, "table": table, **body, "win_chances": None, "updated": at}).encode()
