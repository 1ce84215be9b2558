"""Yahtzee (Hasbro rules): 13 boxes, upper bonus 35 at 63, Yahtzee bonus, joker.

Source: ``shared/specs/rulesets.md`` section 3 (seeds 002, 003).
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

BOXES = (
    *UPPER_BOXES,
    "three_of_a_kind",
    "four_of_a_kind",
    "full_house",
    "small_straight",
    "large_straight",
    "yahtzee",
    "chance",
)

DISPLAY_NAMES = {
    "aces": "Aces",
    "twos": "Twos",
    "threes": "Threes",
    "fours": "Fours",
    "fives": "Fives",
    "sixes": "Sixes",
    "three_of_a_kind": "Three of a Kind",
    "four_of_a_kind": "Four of a Kind",
    "full_house": "Full House",
    "small_straight": "Small Straight",
    "large_straight": "Large Straight",
    "yahtzee": "Yahtzee",
    "chance": "Chance",
}

#: Points paid outside the boxes for each bonus Yahtzee (yahtzee box = 50).
YAHTZEE_BONUS = 100

#: Fixed-value boxes and the value a joker gives them (forced step 2).
JOKER_FIXED = {"full_house": 25, "small_straight": 30, "large_straight": 40}
#: Box maxima used by the ``free`` joker for lower boxes (seed 002 literal).
FREE_LOWER_MAX = {
    "three_of_a_kind": 30,
    "four_of_a_kind": 30,
    "full_house": 25,
    "small_straight": 30,
    "large_straight": 40,
    "chance": 30,
}


def score(dice: Dice, box: str, filled: Mapping[str, int], roll: int) -> int:
    """Normal (non-joker) points of ``box``; see spec section 3 table."""
    if box in UPPER_FACE:
        return upper_score(dice, UPPER_FACE[box])
    total = sum(dice)
    if box == "three_of_a_kind":
        return total if has_n_of_a_kind(dice, 3) else 0
    if box == "four_of_a_kind":
        return total if has_n_of_a_kind(dice, 4) else 0
    if box == "full_house":
        return 25 if is_strict_full_house(dice) else 0
    if box == "small_straight":
        return 30 if has_run(dice, 4) else 0
    if box == "large_straight":
        return 40 if has_run(dice, 5) else 0
    if box == "yahtzee":
        return 50 if is_five_of_a_kind(dice) else 0
    if box == "chance":
        return total
    raise KeyError(box)


def joker_value(dice: Dice, box: str) -> int:
    """Points of a lower box when a bonus Yahtzee acts as a joker (forced step 2)."""
    if box in JOKER_FIXED:
        return JOKER_FIXED[box]
    return sum(dice)  # three_of_a_kind, four_of_a_kind, chance


def joker_options(dice: Dice, filled: Mapping[str, int], joker: str) -> dict[str, int]:
    """Legal boxes and points for a bonus Yahtzee under joker variant ``joker``.

    Parameters
    ----------
    dice : tuple of int, length 5
        Five of a kind.
    filled : Mapping of str to int
        Filled boxes -> points; must include ``yahtzee``.
    joker : {"forced", "free", "free_choice"}
        The table's joker variant (spec section 3.2).

    Returns
    -------
    options : dict of str to int
        Legal open boxes -> points, in scorecard order.
    """
    face = dice[0]
    own_upper = UPPER_BOXES[face - 1]
    open_upper = [b for b in UPPER_BOXES if b not in filled]
    open_lower = [b for b in BOXES if b not in UPPER_FACE and b not in filled]
    if joker == "forced":
        if own_upper not in filled:
            return {own_upper: 5 * face}
        if open_lower:
            return {b: joker_value(dice, b) for b in open_lower}
        return {b: 0 for b in open_upper}
    if joker == "free":
        if open_upper:
            return {b: 5 * UPPER_FACE[b] for b in open_upper}
        return {b: FREE_LOWER_MAX[b] for b in open_lower}
    # free_choice
    options: dict[str, int] = {}
    for b in BOXES:
        if b in filled:
            continue
        if b in UPPER_FACE:
            options[b] = upper_score(dice, UPPER_FACE[b])
        elif own_upper in filled:
            options[b] = joker_value(dice, b)
        else:
            options[b] = score(dice, b, filled, 3)
    return options


RULESET = Ruleset(
    id="yahtzee",
    boxes=BOXES,
    upper_boxes=UPPER_BOXES,
    upper_bonus_threshold=63,
    upper_bonus_points=35,
    display_names=DISPLAY_NAMES,
    has_yahtzee_bonus=True,
    scorer=score,
    title="Yahtzee (Hasbro)",
)
