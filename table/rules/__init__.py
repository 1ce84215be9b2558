"""The rules core: five scoresheet dice games as pure functions.

Rulesets (``shared/specs/rulesets.md``): ``yahtzee`` (Hasbro, with the Yahtzee
bonus and the ``forced`` / ``free`` / ``free_choice`` joker), ``yacht``,
``chaser``, ``yatzy`` and ``generala`` (servida, Doble Generala).

Everything here is pure (no I/O, clock or randomness) and imports nothing of
the project except :mod:`table.errors`.

Examples
--------
>>> from table.rules import Card, place, card_total, score_options
>>> card = place("yahtzee", Card.empty(), (6, 6, 6, 6, 6), "yahtzee")
>>> score_options("yahtzee", (6, 6, 6, 6, 6), card)
{'sixes': 30}
>>> card = place("yahtzee", card, (6, 6, 6, 6, 6), "sixes")
>>> card_total("yahtzee", card)
180
"""

from table.rules.card import Card
from table.rules.core import (
    DEFAULT_JOKER,
    JOKER_VARIANTS,
    ROLLS,
    card_total,
    check_joker,
    check_roll,
    is_bonus_yahtzee,
    is_full,
    open_boxes,
    place,
    score,
    score_options,
    upper_bonus,
    upper_sum,
    winners,
    yahtzee_bonus_for,
    yahtzee_bonus_points,
)
from table.rules.dice import Dice, Face, check_dice, format_dice, parse_dice
from table.rules.errors import (
    IllegalScoreError,
    InvalidCardError,
    InvalidDiceError,
    InvalidRollError,
    RulesError,
    UnknownBoxError,
    UnknownJokerError,
    UnknownRulesetError,
)
from table.rules.registry import RULESET_IDS, RULESETS, check_box, find_ruleset, possible_points, resolve_ruleset
from table.rules.ruleset import Ruleset

__all__ = [
    "DEFAULT_JOKER",
    "JOKER_VARIANTS",
    "ROLLS",
    "RULESET_IDS",
    "RULESETS",
    "Card",
    "Dice",
    "Face",
    "Ruleset",
    "IllegalScoreError",
    "InvalidCardError",
    "InvalidDiceError",
    "InvalidRollError",
    "RulesError",
    "UnknownBoxError",
    "UnknownJokerError",
    "UnknownRulesetError",
    "card_total",
    "check_box",
    "check_dice",
    "check_joker",
    "check_roll",
    "find_ruleset",
    "format_dice",
    "is_bonus_yahtzee",
    "is_full",
    "open_boxes",
    "parse_dice",
    "place",
    "possible_points",
    "resolve_ruleset",
    "score",
    "score_options",
    "upper_bonus",
    "upper_sum",
    "winners",
    "yahtzee_bonus_for",
    "yahtzee_bonus_points",
]
