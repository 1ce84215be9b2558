"""Generala: 11 boxes, servida (+5 on the first throw), Doble Generala.

Source: ``shared/specs/rulesets.md`` section 7 (seed 003).
"""

from __future__ import annotations

from collections.abc import Mapping

from table.rules._upper import UPPER_BOXES, UPPER_FACE, upper_score
from table.rules.dice import (
    Dice,
    has_n_of_a_kind,
    is_exactly,
    is_five_of_a_kind,
    is_strict_full_house,
)
from table.rules.ruleset import Ruleset

BOXES = (*UPPER_BOXES, "escalera", "full", "poker", "generala", "doble_generala")

DISPLAY_NAMES = {
    "aces": "Ones",
    "twos": "Twos",
    "threes": "Threes",
    "fours": "Fours",
    "fives": "Fives",
    "sixes": "Sixes",
    "escalera": "Escalera",
    "full": "Full",
    "poker": "Poker",
    "generala": "Generala",
    "doble_generala": "Doble Generala",
}

#: Points added to Escalera, Full or Poker made on the first throw.
SERVIDA_EXTRA = 5
_ESCALERAS = ((1, 2, 3, 4, 5), (2, 3, 4, 5, 6), (1, 3, 4, 5, 6))


def score(dice: Dice, box: str, filled: Mapping[str, int], roll: int) -> int:
    """Points of ``box``; ``roll`` 1 means servida.  See spec section 7 table."""
    if box in UPPER_FACE:
        return upper_score(dice, UPPER_FACE[box])
    servida = SERVIDA_EXTRA if roll == 1 else 0
    if box == "escalera":
        return 20 + servida if any(is_exactly(dice, e) for e in _ESCALERAS) else 0
    if box == "full":
        return 30 + servida if is_strict_full_house(dice) else 0
    if box == "poker":
        return 40 + servida if has_n_of_a_kind(dice, 4) else 0
    if box == "generala":
        return 50 if is_five_of_a_kind(dice) else 0
    if box == "doble_generala":
        return 100 if is_five_of_a_kind(dice) and filled.get("generala") == 50 else 0
    raise KeyError(box)


RULESET = Ruleset(
    id="generala",
    boxes=BOXES,
    upper_boxes=UPPER_BOXES,
    upper_bonus_threshold=None,
    upper_bonus_points=0,
    display_names=DISPLAY_NAMES,
    scorer=score,
    title="Generala",
)
