"""The fair-dice audit: frames kept in play, face counts from the store, Pearson's chi-square test.

Modules: :mod:`~table.audit.fairness` (the test, its p-value and power: pure maths),
:mod:`~table.audit.counts` (which dice count, from a game's events), :mod:`~table.audit.frames`
(the tray JPEGs kept in ``play`` and their index), :mod:`~table.audit.plot` (the picture, OpenCV).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from table.audit.counts import Tally, add_game
from table.audit.fairness import FairDice, fair_dice_test

__all__ = ["FairDice", "Tally", "add_game", "fair_dice_test", "panel"]


def panel(tally: Tally, frames: Sequence[Any] = ()) -> dict[str, Any]:
    """The audit as the end screen's "fair dice" panel and ``audit --json`` give it (JSON-able)."""
    result = fair_dice_test(tally.counts)
    return {
        **tally.as_dict(),
        "chi2": round(result.chi2, 4),
        "p": result.p,
        "power": round(result.power, 4),
        "verdict": result.verdict,
        "power_line": result.power_line,
        "frames": len(frames),
    }
