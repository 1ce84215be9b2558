"""Yacht (Korean commercial edition): 12 boxes, upper bonus 35 at 63, no joker.

Source: ``shared/specs/rulesets.md`` section 4 (seeds 001, 003).
"""

from __future__ import annotations

from collections.abc import Mapping

from table.rules._upper import UPPER_BOXES, UPPER_FACE, upper_score
from table.rules.dice import (
    Dice,
    has_n_of_a_kind,
    has_run,
    is_five_of_a_kind,
    is_strict_full_house,
)
from table.rules.ruleset import Ruleset

BOXES = (*UPPER_BOXES, "choice", "four_of_a_kind", "full_house", "small_straight", "large_straight", "yacht")

DISPLAY_NAMES = {
    "aces": "Aces",
    "twos": "Twos",
    "threes": "Threes",
    "fours": "Fours",
    "fives": "Fives",
    "sixes": "Sixes",
    "choice": "Choice",
    "four_of_a_kind": "Four of a Kind",
    "full_house": "Full House",
    "small_straight": "Small Straight",
    "large_straight": "Large Straight",
    "yacht": "Yacht",
}


def score(dice: Dice, box: str, filled: Mapping[str, int], roll: int) -> int:
    """Points of ``box``; see spec section 4 table."""
    if box in UPPER_FACE:
        return upper_score(dice, UPPER_FACE[box])
    total = sum(dice)
    if box == "choice":
        return total
    if box == "four_of_a_kind":
        return total if has_n_of_a_kind(dice, 4) else 0
    if box == "full_house":
        return total if is_strict_full_house(dice) or is_five_of_a_kind(dice) else 0
    if box == "small_straight":
        return 15 if has_run(dice, 4) else 0
    if box == "large_straight":
        return 30 if has_run(dice, 5) else 0
    if box == "yacht":
        return 50 if is_five_of_a_kind(dice) else 0
    raise KeyError(box)


RULESET = Ruleset(
    id="yacht",
    boxes=BOXES,
    upper_boxes=UPPER_BOXES,
    upper_bonus_threshold=63,
    upper_bonus_points=35,
    display_names=DISPLAY_NAMES,
    scorer=score,
    title="Yacht (Korean edition)",
)
