"""Shared pieces: the six "count one face" boxes."""

from __future__ import annotations

from table.rules.dice import Dice

UPPER_BOXES = ("aces", "twos", "threes", "fours", "fives", "sixes")
UPPER_FACE = {box: face for face, box in enumerate(UPPER_BOXES, start=1)}


def upper_score(dice: Dice, face: int) -> int:
    """Points of a "count one face" box: ``face * count(face)``."""
    return face * dice.count(face)
