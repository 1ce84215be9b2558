"""Helpers of :mod:`table.app`: setup checks, die-slot matching, strategy hints (no state of their own)."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

from table.errors import UsageError
from table.game import GameMode
from table.rules import JOKER_VARIANTS, RULESET_IDS, find_ruleset

log = logging.getLogger(__name__)


def _unique(names: Sequence[str]) -> list[str]:
    out: list[str] = []
    for n in names:
        base, k = n, 2
        while n.casefold() in (o.casefold() for o in out):
            n, k = f"{base} {k}", k + 1
        out.append(n)
    return out


def split_seats(entries: Sequence[str]) -> tuple[list[str], list[str]]:
    """Names and bot levels of the setup's seats: ``["Ann", "HAL:optimal"]`` -> ``(["Ann", "HAL"], ["", "optimal"])``.

    Raises
    ------
    UsageError
        If an entry names an unknown bot level.
    """
    from table._botdriver import split_seat

    names, bots = [], []
    for entry in entries:
        try:
            name, level = split_seat(entry)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        names.append(name)
        bots.append(level)
    return names, bots


def check_setup(ruleset: str, joker: str, names: Sequence[str], *, names_example: str = "") -> None:
    """Check the rules and player names of a new game (``NAME:LEVEL`` seats a bot).

    `names_example` ends the message for a wrong number of names (the command line gives
    ``'e.g. --players "Ann,Bo"'``; the page, which has its own buttons, gives none).

    Raises
    ------
    UsageError
        If the ruleset, joker or a bot level is unknown, or the names are not 1-8 different names
        of 1-40 characters.
    """
    names, _ = split_seats(names)
    if ruleset not in RULESET_IDS:
        raise UsageError(f"unknown ruleset {ruleset!r}; choose one of: {', '.join(RULESET_IDS)}")
    if joker not in JOKER_VARIANTS:
        raise UsageError(f"unknown joker variant {joker!r}; choose one of: {', '.join(JOKER_VARIANTS)}")
    if not 1 <= len(names) <= 8:
        example = f", {names_example}" if names_example else ""
        raise UsageError(f"{len(names)} players given; give 1 to 8 names{example}")
    seen: set[str] = set()
    for n in names:
        if not n or n != n.strip() or len(n) > 40:
            raise UsageError(f"player name {n!r} cannot be used; give 1-40 characters")
        if n.casefold() in seen:
            raise UsageError(f"two players are called {n!r}; give each player a different name")
        seen.add(n.casefold())


def assign_slots(prev: Sequence[int], holds: Sequence[bool], slot_mm: Sequence[tuple[float, float] | None],
                 read: Sequence[tuple[int, bool, tuple[float, float]]]) -> list[int]:
    """Which read die goes in each of the game's five die slots.

    Held slots keep their die: each takes, in order of preference, a read die in
    the hold area showing its value, one showing its value anywhere, one in the
    hold area, then any, nearest its last position first.  The other slots take
    the remaining dice in reading order.

    Parameters
    ----------
    prev : sequence of int
        The slots' values before this roll (empty on a first roll).
    holds : sequence of bool, length 5
        Held slots.
    slot_mm : sequence of (x, y) or None
        Where each slot's die lay at the last read, in tray mm.
    read : sequence of (value, in_hold_area, (x, y) mm)
        The dice read, in reading order.

    Returns
    -------
    list of int, length len(read)
        ``slots[i]`` is the index into `read` of slot ``i``'s die.
    """
    n = len(read)
    free = list(range(n))
    slots: list[int | None] = [None] * n
    if prev:
        for i in range(min(n, len(prev))):
            if not holds[i]:
                continue
            def rank(j: int) -> tuple[int, float]:
                value, held, xy = read[j]
                same = value == prev[i]
                pref = 0 if (same and held) else 1 if same else 2 if held else 3
                dist = math.dist(xy, slot_mm[i]) if i < len(slot_mm) and slot_mm[i] else 0.0
                return pref, dist
            j = min(free, key=rank)
            slots[i] = j
            free.remove(j)
    for i in range(n):
        if slots[i] is None:
            slots[i] = free.pop(0)
    return [int(s) for s in slots]  # type: ignore[arg-type]


def hints_for(state: Any) -> dict[str, Any] | None:
    """Strategy advice for the current turn, or None where there is none (no table, no roll).

    Returns
    -------
    dict or None
        ``{"box": best box, "costs": {box: expected points lost vs the best box},
        "holds": five bools to hold (roll 1-2), "keep": faces kept, "hold_cost":
        expected points the current holds lose vs the advised ones}``.
    """
    turn = state.turn
    if turn is None or not turn.roll or state.mode is not GameMode.SCORECARD:
        return None
    key = (state.ruleset, state.joker, state.cards[turn.player], turn.dice, turn.roll, turn.holds)
    if key in _HINTS:
        return _HINTS[key]
    try:
        from table.strategy import advise_boxes, advise_holds, get_table

        rs = find_ruleset(state.ruleset)
        table = get_table(rs, state.joker if rs.has_yahtzee_bonus else None, build=False)
        card = state.cards[turn.player]
        boxes = advise_boxes(table, card, turn.dice, turn.roll)
        best = boxes[0]
        out: dict[str, Any] = {"box": best.box,
                               "costs": {b.box: round(best.expected - b.expected, 1) for b in boxes}}
        if turn.roll < 3:
            holds = advise_holds(table, card, turn.dice, turn.roll)
            top = holds[0]
            out["holds"] = list(top.hold)
            out["keep"] = list(top.keep)
            out["stop"] = top.stop
            mine = tuple(sorted(d for d, h in zip(turn.dice, turn.holds) if h))
            same = [h for h in holds if h.keep == mine]
            if same:
                out["hold_cost"] = round(top.expected - same[0].expected, 1)
    except Exception:  # advice is optional (no table for this variant): never break the display
        log.debug("no hints", exc_info=True)
        out = None  # type: ignore[assignment]
    if len(_HINTS) > 64:
        _HINTS.clear()
    _HINTS[key] = out
    return out


_HINTS: dict[Any, Any] = {}


def analysis_json(analysis: Any, worst: int = 5) -> dict[str, Any]:
    """The end screen's analysis: each player's loss and the biggest mistakes.

    Parameters
    ----------
    analysis : table.strategy.analysis.GameAnalysis
    worst : int, optional
        How many of the costliest decisions to list.

    Returns
    -------
    dict
        ``{"players": [{"name", "loss", "decisions", "optimal", "score"}], "worst": [{"name", "turn",
        "roll", "dice", "kind", "choice", "best", "loss"}]}``; losses in expected points, 1 decimal.
    """
    return {
        "players": [{"name": p.name, "loss": round(p.loss, 1), "decisions": p.decisions, "optimal": p.optimal,
                     "score": p.score} for p in analysis.players],
        "worst": [{"name": d.name, "turn": d.turn, "roll": d.roll, "dice": list(d.dice), "kind": d.kind.value,
                   "choice": analysis.describe(d), "best": analysis.describe(d, "best"), "loss": round(d.loss, 1)}
                  for d in analysis.worst(worst)],
    }
