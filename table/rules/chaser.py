"""Chaser (from *Rune Children: Winterer*): 12 boxes, conditions are minimums.

No bonus of any kind and no upper section bonus.  Source:
``shared/specs/rulesets.md`` section 5 (seed 000).
"""

from __future__ import annotations

from collections.abc import Mapping

from table.rules.dice import (
    Dice,
    counts,
    has_n_of_a_kind,
    is_exactly,
    is_five_of_a_kind,
    is_strict_full_house,
)
from table.rules.ruleset import Ruleset

BOXES = (
    "chase_off",
    "straight",
    "even_straight",
    "four_dice",
    "full_house",
    "choice",
    "six_beans",
    "five_beans",
    "four_beans",
    "three_beans",
    "two_beans",
    "aces",
)

DISPLAY_NAMES = {
    "chase_off": "Chase Off",
    "straight": "Straight",
    "even_straight": "Even Straight",
    "four_dice": "Four Dice",
    "full_house": "Full House",
    "choice": "Choice",
    "six_beans": "Six Beans",
    "five_beans": "Five Beans",
    "four_beans": "Four Beans",
    "three_beans": "Three Beans",
    "two_beans": "Two Beans",
    "aces": "Aces",
}

_BEAN_FACE = {"six_beans": 6, "five_beans": 5, "four_beans": 4, "three_beans": 3, "two_beans": 2, "aces": 1}


def score(dice: Dice, box: str, filled: Mapping[str, int], roll: int) -> int:
    """Points of ``box``; see spec section 5 table (minimum conditions)."""
    if box in _BEAN_FACE:
        face = _BEAN_FACE[box]
        return face * dice.count(face)
    total = sum(dice)
    if box == "chase_off":
        return 50 if is_five_of_a_kind(dice) else 0
    if box == "straight":
        return 40 if is_exactly(dice, (1, 2, 3, 4, 5)) else 0
    if box == "even_straight":
        return 30 if is_exactly(dice, (2, 3, 4, 5, 6)) else 0
    if box == "four_dice":
        return total if has_n_of_a_kind(dice, 4) else 0
    if box == "full_house":
        return total if is_strict_full_house(dice) or is_five_of_a_kind(dice) else 0
    if box == "choice":
        return total if sum(c // 2 for c in counts(dice)) >= 2 else 0
    raise KeyError(box)


RULESET = Ruleset(
    id="chaser",
    boxes=BOXES,
    upper_boxes=(),
    upper_bonus_threshold=None,
    upper_bonus_points=0,
    display_names=DISPLAY_NAMES,
    scorer=score,
    title="Chaser (Rune Children: Winterer)",
)
