"""What the pip reader reports for one image: dice with values, boxes and confidence.

Coordinates are image pixels with the origin at the top-left corner; boxes are
``(x, y, w, h)`` with ``x`` to the right and ``y`` down (OpenCV order, not
``(row, col)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class UnknownReason(StrEnum):
    """Why a die is reported without a value (:attr:`DieReading.reason`).

    Members compare equal to their text, which is what ``dicetable read`` and
    the reports print.
    """

    LOW_CONFIDENCE = "low confidence"
    NOT_A_FACE = "not a readable face"
    PIPS_DISAGREE = "pip count disagrees"
    LEANING = "leaning"
    CUT_OFF = "cut off by the picture's edge"
    TOO_SMALL = "too small in the picture"
    PART_OF_A_DIE = "only part of a die boxed"
    GLARE = "glare on the face"
    STACKED = "stacked on another die"

    @property
    def short(self) -> str:
        """A word or two for labels drawn on pictures (``"unsure"`` for ``"low confidence"``, ``"cut"``...)."""
        return _REASON_SHORT[self]

    @property
    def needs_reroll(self) -> bool:
        """Whether this die is simply unreadable (re-roll or adjust), not leaning, stacked or cut off by the edge."""
        return self not in (UnknownReason.LEANING, UnknownReason.CUT_OFF, UnknownReason.STACKED)


_REASON_SHORT = {
    UnknownReason.PIPS_DISAGREE: "pipsX",
    UnknownReason.LOW_CONFIDENCE: "unsure",
    UnknownReason.NOT_A_FACE: "noface",
    UnknownReason.LEANING: "lean",
    UnknownReason.CUT_OFF: "cut",
    UnknownReason.TOO_SMALL: "small",
    UnknownReason.PART_OF_A_DIE: "part",
    UnknownReason.GLARE: "glare",
    UnknownReason.STACKED: "stack",
}


def short_reason(reason: str) -> str:
    """The short label of an unknown die's `reason`.

    It is :attr:`UnknownReason.short`, or its first 6 letters if it is another text.
    """
    try:
        return UnknownReason(reason).short
    except ValueError:
        return reason[:6]


@dataclass(frozen=True, slots=True)
class DieReading:
    """One die found in an image.

    Parameters
    ----------
    value : int or None
        Face value 1-6 of the face pointing up, or ``None`` when the reader is
        unsure (rule one: an unsure die is reported unknown, never guessed).
    box : tuple of 4 int
        ``(x, y, w, h)`` bounding box of the whole visible die, in pixels of
        the image that was read.
    confidence : float
        The reader's confidence in ``value`` (or, when ``value`` is ``None``,
        in its best guess), in ``[0, 1]``.
    reason : str or None, optional
        Why the value is unknown, usually an :class:`UnknownReason` (e.g.
        ``"low confidence"``, ``"leaning"``); ``None`` when a value is given.
    """

    value: int | None
    box: tuple[int, int, int, int]
    confidence: float
    reason: str | None = None

    def to_json(self) -> dict:
        """Return the JSON object of ``dicetable read --json`` for this die.

        ``reason`` says why ``value`` is null (e.g. ``"low confidence"``); it is
        null when a value is given. ``confidence`` of an unknown die is the
        reader's confidence in its best guess, which was not enough.
        """
        return {
            "value": self.value,
            "box": list(self.box),
            "confidence": round(float(self.confidence), 4),
            "reason": None if self.reason is None else str(self.reason),
        }


@dataclass(frozen=True, slots=True)
class ImageReading:
    """Everything the reader found in one image.

    Parameters
    ----------
    dice : tuple of DieReading
        Dice found, in reading order (top to bottom, then left to right).
    problems : tuple of str
        Problems noticed, in words a player understands (a die leaning on a
        wall, a blurred or dark frame, an unreadable die); empty when none.
    """

    dice: tuple[DieReading, ...]
    problems: tuple[str, ...] = ()

    @property
    def values(self) -> tuple[int | None, ...]:
        """Face values of the dice found, ``None`` for unknown dice."""
        return tuple(d.value for d in self.dice)

    @property
    def all_read(self) -> bool:
        """True when every die found has a value (no unknown die)."""
        return all(d.value is not None for d in self.dice)
