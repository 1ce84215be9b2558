"""What the roll watcher reports: its states, roll events, the dice of a reading on the tray, and flags.

:class:`vision.watch.RollWatcher` turns camera frames into :class:`RollEvent`
objects; a settled or unreadable event carries the dice as :class:`TrayDie`
(tray millimetres and rectified pixels, as in :mod:`vision.tray`) and, after
matching with the previous roll, :class:`Flag` objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

__all__ = ["WatchState", "EventKind", "FlagKind", "TrayDie", "Flag", "RollEvent"]


class WatchState(StrEnum):
    """What the watcher believes the tray is doing."""

    MOVING = "moving"
    """Dice (or a hand) are moving; nothing is read."""
    SETTLING = "settling"
    """Everything is still; frames are being read and voted on."""
    SETTLED = "settled"
    """A reading (or an unreadable verdict) was given for this still period."""


class EventKind(StrEnum):
    """Kinds of :class:`RollEvent`."""

    MOVING = "moving"
    """Motion started (dice thrown, a hand reached in)."""
    SETTLED = "settled"
    """The dice are still and read, agreed over the voting frames."""
    UNREADABLE = "unreadable"
    """The dice are still but cannot be read for sure: re-roll (problems say why)."""
    DISTURBED = "disturbed"
    """Something moved after a settled or unreadable verdict."""
    CAMERA_MOVED = "camera-moved"
    """The corner markers moved: the geometry was refitted, or recalibration is needed."""
    BLOCKED = "blocked"
    """The picture has stayed still but unlike the empty tray (taken for a hand) for ``stuck_s`` seconds, with
    no verdict: problems say what it looks like (camera moved, light changed, something left in the tray)."""


class FlagKind(StrEnum):
    """Kinds of :class:`Flag` raised by matching dice across rolls."""

    HELD_CHANGED = "held-changed"
    """A die in the hold area shows another value than in the previous roll."""
    UNMOVED = "unmoved"
    """A die outside the hold area lies exactly where it lay, with the same value."""


@dataclass(frozen=True, slots=True)
class TrayDie:
    """One die of a reading, on the tray.

    Parameters
    ----------
    value : int or None
        Face value 1-6; None when unknown (see `reason`).
    centre_mm : tuple of 2 float
        Centre ``(x, y)`` of the die's box in tray mm.
    box_px : tuple of 4 int
        ``(x, y, w, h)`` box in rectified pixels.
    confidence : float
        Reader confidence in ``[0, 1]``.
    held : bool
        The die lies in the hold area.
    reason : str or None
        Why the value is unknown.
    """

    value: int | None
    centre_mm: tuple[float, float]
    box_px: tuple[int, int, int, int]
    confidence: float
    held: bool = False
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON object of this die (``dicetable watch --json``)."""
        return {
            "value": self.value,
            "centre_mm": [round(self.centre_mm[0], 1), round(self.centre_mm[1], 1)],
            "box_px": list(self.box_px),
            "confidence": round(float(self.confidence), 3),
            "held": self.held,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class Flag:
    """A die that did not behave as a roll should (matched with the previous roll)."""

    kind: FlagKind
    die: int
    message: str


@dataclass(frozen=True, slots=True)
class RollEvent:
    """One thing the watcher noticed.

    Parameters
    ----------
    kind : EventKind
    frame_index : int
        Index of the frame that completed the event.
    timestamp_s : float
        That frame's timestamp, in seconds.
    dice : tuple of TrayDie, optional
        The reading (settled and unreadable events), ordered top to bottom, then left to right.
    problems : tuple of str, optional
        What prevents a reading, or what happened to the camera, in words; on a
        settled event only the reader's advice (e.g. a dark frame), which did not
        stop the dice from being read.
    flags : tuple of Flag, optional
        Dice flagged by matching with the previous roll (settled events).
    frame : ndarray of shape (H, W, 3), dtype uint8, optional
        The rectified tray image the reading came from, kept for the audit.
    votes : int, optional
        Frames the reading was agreed over.
    """

    kind: EventKind
    frame_index: int
    timestamp_s: float
    dice: tuple[TrayDie, ...] = ()
    problems: tuple[str, ...] = ()
    flags: tuple[Flag, ...] = ()
    frame: np.ndarray | None = field(default=None, repr=False, compare=False)
    votes: int = 0

    @property
    def values(self) -> tuple[int | None, ...]:
        """Face values of the dice, None where unknown."""
        return tuple(d.value for d in self.dice)

    @property
    def held(self) -> tuple[bool, ...]:
        """Whether each die lies in the hold area."""
        return tuple(d.held for d in self.dice)

    def to_json(self) -> dict[str, Any]:
        """JSON object of this event (without the frame)."""
        out: dict[str, Any] = {"event": self.kind.value, "frame": self.frame_index, "t": round(self.timestamp_s, 4)}
        if self.kind in (EventKind.SETTLED, EventKind.UNREADABLE):
            out["values"] = list(self.values)
            out["held"] = list(self.held)
            out["dice"] = [d.to_json() for d in self.dice]
            out["votes"] = self.votes
        if self.problems:
            out["problems"] = list(self.problems)
        if self.flags:
            out["flags"] = [{"kind": f.kind.value, "die": f.die, "message": f.message} for f in self.flags]
        return out
