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


def game_panel(game_id: int, events: Sequence[Any], db_path: Any) -> dict[str, Any]:
    """The "fair dice" panel of one game: its events' counts and the frames index beside the store at `db_path`.

    A frames index that cannot be read counts no unreadable throws (the panel is still shown).
    """
    import sqlite3

    from table.audit.frames import frames_dir, read_index

    try:
        frames = read_index(frames_dir(db_path), [game_id])
    except sqlite3.Error:
        frames = []
    unreadable = sum(1 for f in frames if f["kind"] == "unreadable")
    return panel(add_game(Tally(), game_id, events, unreadable), frames)
