"""Yatzy (Scandinavian 15-box sheet): upper bonus 50 at 63, no Yatzy bonus, no joker.

Source: ``shared/specs/rulesets.md`` section 6 (seed 003).
"""

from __future__ import annotations

from collections.abc import Mapping

from table.rules._upper import UPPER_BOXES, UPPER_FACE, upper_score
from table.rules.dice import (
    FACES,
    Dice,
    face_with_at_least,
    is_exactly,
    is_five_of_a_kind,
    is_strict_full_house,
)
from table.rules.ruleset import Ruleset

BOXES = (
    *UPPER_BOXES,
    "one_pair",
    "two_pairs",
    "three_of_a_kind",
    "four_of_a_kind",
    "small_straight",
    "large_straight",
    "full_house",
    "chance",
    "yatzy",
)

DISPLAY_NAMES = {
    "aces": "Ones",
    "twos": "Twos",
    "threes": "Threes",
    "fours": "Fours",
    "fives": "Fives",
    "sixes": "Sixes",
    "one_pair": "One Pair",
    "two_pairs": "Two Pairs",
    "three_of_a_kind": "Three of a Kind",
    "four_of_a_kind": "Four of a Kind",
    "small_straight": "Small Straight",
    "large_straight": "Large Straight",
    "full_house": "Full House",
    "chance": "Chance",
    "yatzy": "Yatzy",
}


def score(dice: Dice, box: str, filled: Mapping[str, int], roll: int) -> int:
    """Points of ``box``; see spec section 6 table (only the combination's dice count)."""
    if box in UPPER_FACE:
        return upper_score(dice, UPPER_FACE[box])
    if box == "one_pair":
        face = face_with_at_least(dice, 2)
        return 2 * face if face else 0
    if box == "two_pairs":
        pairs = [f for f in FACES if dice.count(f) >= 2]
        return 2 * (pairs[-1] + pairs[-2]) if len(pairs) >= 2 else 0
    if box == "three_of_a_kind":
        face = face_with_at_least(dice, 3)
        return 3 * face if face else 0
    if box == "four_of_a_kind":
        face = face_with_at_least(dice, 4)
        return 4 * face if face else 0
    if box == "small_straight":
        return 15 if is_exactly(dice, (1, 2, 3, 4, 5)) else 0
    if box == "large_straight":
        return 20 if is_exactly(dice, (2, 3, 4, 5, 6)) else 0
    if box == "full_house":
        return sum(dice) if is_strict_full_house(dice) else 0
    if box == "chance":
        return sum(dice)
    if box == "yatzy":
        return 50 if is_five_of_a_kind(dice) else 0
    raise KeyError(box)


RULESET = Ruleset(
    id="yatzy",
    boxes=BOXES,
    upper_boxes=UPPER_BOXES,
    upper_bonus_threshold=63,
    upper_bonus_points=50,
    display_names=DISPLAY_NAMES,
    scorer=score,
    title="Yatzy (Scandinavian)",
)
