"""Seeded games of camera-read dice, fair or loaded, for the audit's tests, benchmark and docs.

Like :mod:`table.game.autoplay`, a helper that plays through the real engine and store: each
throw is a :class:`~table.game.ReadDice` with ``source="camera"``; dice showing the most common
face are held, the rest re-rolled, up to three rolls, then the best open box is scored.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from table.app.session import GameSession
from table.game import DiceSource, ReadDice, ScoreBox, SetHolds, StartGame
from table.game.commands import best_box


def loaded_die(rng: random.Random, *, six_bias: float = 0.0) -> Callable[[], int]:
    """A die: ``() -> face``; six comes up ``1 + six_bias`` times as often as on a fair die, the
    others share the rest evenly (0.2: six has 1/5, the others 4/25 each)."""
    hot = (1 + six_bias) / 6
    weights = [(1 - hot) / 5] * 5 + [hot]
    return lambda: rng.choices(range(1, 7), weights)[0]


def play_games(
    store: Any,
    die: Callable[[], int],
    dice: int,
    *,
    players: tuple[str, ...] = ("Ann", "Bo"),
    ruleset: str = "yahtzee",
    finish: bool = False,
) -> list[int]:
    """Play games of `ruleset` in `store` until at least `dice` dice were thrown; return the game ids.

    The last game is left unfinished once enough dice were thrown, unless `finish` is True.
    """
    thrown, ids, at = 0, [], 1.8e9
    while thrown < dice:
        session = GameSession.start(store, StartGame(at=at, ruleset=ruleset, players=players))
        ids.append(session.game_id)
        while (finish or thrown < dice) and session.state.turn is not None:
            turn = session.state.turn
            values = tuple(die() for _ in range(5))
            thrown += 5
            at += 1
            session.handle(ReadDice(at=at, values=values, source=DiceSource.CAMERA))
            for _ in range(2):
                dice_now = session.state.turn.dice
                face = max(set(dice_now), key=dice_now.count)
                holds = tuple(v == face for v in dice_now)
                if all(holds) or (thrown >= dice and not finish):
                    break
                session.handle(SetHolds(at=at, holds=holds))
                new = tuple(v if h else die() for v, h in zip(dice_now, holds))
                thrown += holds.count(False)
                at += 1
                session.handle(ReadDice(at=at, values=new, source=DiceSource.CAMERA))
            box, _points = best_box(session.state)
            at += 1
            session.handle(ScoreBox(at=at, box=box))
            assert session.state.turn is None or session.state.turn.player != turn.player or len(players) == 1
    return ids
