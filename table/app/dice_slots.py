"""Which die is which between throws: read dice matched to the game's five die slots."""

from __future__ import annotations

import math
from collections.abc import Sequence


def assign_slots(
    prev: Sequence[int],
    holds: Sequence[bool],
    slot_mm: Sequence[tuple[float, float] | None],
    read: Sequence[tuple[int, bool, tuple[float, float]]],
) -> list[int]:
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

            def rank(j: int, i: int = i) -> tuple[int, float]:
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
