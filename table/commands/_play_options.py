"""``play``'s options for the turn timer and free roll, and the hold LEDs' state for a snapshot."""

from __future__ import annotations

import argparse
from typing import Any

from table.errors import UsageError
from table.game import TIMER_CHOICES

#: ``--rules`` names of free-roll mode.
FREE_NAMES = ("free", "free_roll")


def add_turn_options(p: argparse.ArgumentParser) -> None:
    """Add ``--timer`` and ``--dice``."""
    p.add_argument(
        "--timer",
        default=None,
        metavar="SECONDS",
        help=f"turn timer of a new game: {', '.join(map(str, TIMER_CHOICES))} (when it runs out the open box "
        "worth the most is scored; before a roll it only warns); default none",
    )
    p.add_argument(
        "--dice",
        type=int,
        default=None,
        metavar="N",
        help="free roll: most dice in one throw (default and limit: the calibration profile's dice_count)",
    )


def parse_timer(text: str | None, free: bool = False) -> int | None:
    """``--timer``: one of :data:`TIMER_CHOICES` seconds, or None when not given.

    Raises
    ------
    UsageError
        If it is not offered, or given for a free roll (one line saying what is allowed).
    """
    if text is None:
        return None
    if free:
        raise UsageError("a free roll has no turn timer: leave out --timer")
    value = text.strip()
    if not (value.isdigit() and int(value) in TIMER_CHOICES):
        raise UsageError(
            f"--timer {text!r} is not offered: give {', '.join(map(str, TIMER_CHOICES))} seconds, or leave it out"
        )
    return int(value)


def check_dice(n: int | None, limit: int) -> int:
    """``--dice``: most dice in a free roll, 1 to the tray's `limit` (default `limit`); else one line."""
    if n is None:
        return limit
    if not 1 <= n <= limit:
        raise UsageError(
            f"--dice {n}: this tray takes 1 to {limit} dice (the calibration profile's dice_count; "
            "'dicetable calibrate' sets it)"
        )
    return n


def led_state(snap: dict[str, Any]) -> tuple[tuple[bool, ...], bool]:
    """The hold LEDs for a snapshot: the holds, and whether they blink (the turn timer's last seconds)."""
    holds = tuple((snap.get("game") or {}).get("holds") or ())
    return holds, bool((snap.get("timer") or {}).get("warn"))
