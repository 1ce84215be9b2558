"""A game's history, turn by turn: each throw's dice, holds and re-rolled dice, corrections, timer expiries
and the box scored, folded from the stored events (pure: no clock, no store).

An undone action leaves the history as it was before it (the engine's ``previous`` state, matched by its
event count), so the history shows what stands, as the scorecards do.

Example
-------
>>> from table.game import StartGame, ReadDice, ScoreBox, execute
>>> s, e1 = execute(None, StartGame(at=0.0, ruleset="yacht", players=("Ann",)))
>>> s, e2 = execute(s, ReadDice(at=1.0, values=(6, 6, 6, 2, 1)))
>>> s, e3 = execute(s, ScoreBox(at=2.0, box="sixes"))
>>> [(t["name"], t["box"], t["points"]) for t in turns_of(e1 + e2 + e3)]
[('Ann', 'sixes', 18)]
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from table.game.apply import apply
from table.game.events import (
    BoxScored,
    DiceRead,
    DieCorrected,
    Event,
    GameMode,
    GameStarted,
    HoldsChanged,
    TimerExpired,
    Undone,
)
from table.game.state import GameState


def _new_turn(state: GameState, player: int, number: int) -> dict[str, Any]:
    n = max(1, len(state.players))
    return {
        "turn": number,
        "round": number // n + 1,
        "player": player,
        "name": state.players[player] if state.players else "",
        "throws": [],
        "corrections": [],
        "timer": [],
        "box": None,
        "points": None,
        "bonus": 0,
        "cause": None,
    }


def turns_of(events: Iterable[Event]) -> list[dict[str, Any]]:
    """Every turn of a game's events, oldest first (the running one last, without a box).

    Returns
    -------
    list of dict
        ``{"turn", "round", "player", "name", "throws": [{"roll", "dice", "held", "rerolled", "source", "at"}],
        "corrections": [{"roll", "die", "was", "value", "by", "at"}], "timer": [{"at", "rolled"}], "box",
        "points", "bonus", "cause"}``; ``held`` are the holds the throw was made with (five bools),
        ``rerolled`` the 0-based dice thrown. Free-roll games give one entry per throw (``turn`` counts them,
        ``round`` 1, no box).
    """
    state: GameState | None = None
    done: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    kept: dict[int, tuple[list[dict[str, Any]], dict[str, Any] | None]] = {}
    for e in events:
        if isinstance(e, Undone) and state is not None and state.previous is not None:
            done, cur = copy.deepcopy(kept.get(state.previous.events, (done, cur)))
            state = apply(state, e)
            kept[state.events] = copy.deepcopy((done, cur))
            continue
        before = state
        state = apply(state, e)
        if isinstance(e, GameStarted):
            cur = None if state.turn is None else _new_turn(state, state.turn.player, 0)
        elif state.mode is GameMode.FREE_ROLL:
            if isinstance(e, DiceRead):
                done.append(_free_throw(state, e, len(done)))
            elif isinstance(e, DieCorrected) and done:
                done[-1]["corrections"].append(_correction(e, 1))
        elif cur is not None:
            _note(cur, before, e)
            if isinstance(e, BoxScored):
                done.append(cur)
                cur = None if state.turn is None else _new_turn(state, state.turn.player, len(done))
        kept[state.events] = copy.deepcopy((done, cur))
    return done + ([cur] if cur is not None and (cur["throws"] or cur["timer"]) else [])


def _free_throw(state: GameState, e: DiceRead, k: int) -> dict[str, Any]:
    t = _new_turn(state, 0, k) if state.players else {**_new_turn(state, 0, k), "name": ""}
    t["round"] = 1
    n = len(e.values)
    t["throws"].append(
        {"roll": 1, "dice": list(e.values), "held": [False] * n, "rerolled": list(range(n)), "source": e.source.value}
    )
    t["throws"][-1]["at"] = e.at
    return t


def _correction(e: DieCorrected, roll: int) -> dict[str, Any]:
    return {"roll": roll, "die": e.die, "was": e.was, "value": e.value, "by": e.by, "at": e.at}


def _note(cur: dict[str, Any], before: GameState | None, e: Event) -> None:
    """Add event `e` (applied to `before`) to the running turn `cur`."""
    turn = None if before is None else before.turn
    if isinstance(e, DiceRead):
        held = list(turn.holds) if turn is not None and e.roll > 1 else [False] * len(e.values)
        cur["throws"].append(
            {
                "roll": e.roll,
                "dice": list(e.values),
                "held": held,
                "rerolled": [i for i, h in enumerate(held) if not h],
                "source": e.source.value,
                "at": e.at,
            }
        )
    elif isinstance(e, HoldsChanged) and cur["throws"]:
        cur["throws"][-1]["holds_after"] = list(e.holds)
    elif isinstance(e, DieCorrected):
        cur["corrections"].append(_correction(e, turn.roll if turn is not None else 0))
        if cur["throws"]:
            cur["throws"][-1]["dice"][e.die] = e.value
    elif isinstance(e, TimerExpired):
        cur["timer"].append({"at": e.at, "rolled": e.rolled})
    elif isinstance(e, BoxScored):
        cur.update(box=e.box, points=e.points, bonus=e.yahtzee_bonus, cause=e.cause.value)


def rounds_of(turns: list[dict[str, Any]]) -> int:
    """How many rounds `turns` (from :func:`turns_of`) reach (0 when none)."""
    return max((t["round"] for t in turns), default=0)
