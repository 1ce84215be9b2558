"""The ruleset registry: every ruleset by id, name lookup, and what each box can hold.

Shared by :mod:`table.rules.card` (validating a card) and :mod:`table.rules.core`
(scoring), so neither imports the other.  Source for every rule:
``shared/specs/rulesets.md`` (version 1.0).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Mapping

from table.rules import chaser, generala, yacht, yahtzee, yatzy
from table.rules.dice import FACES
from table.rules.errors import UnknownBoxError, UnknownRulesetError
from table.rules.ruleset import Ruleset

#: Ruleset ids, in the order menus list them.
RULESET_IDS: tuple[str, ...] = ("yahtzee", "yacht", "chaser", "yatzy", "generala")

RULESETS: Mapping[str, Ruleset] = {
    rs.id: rs for rs in (yahtzee.RULESET, yacht.RULESET, chaser.RULESET, yatzy.RULESET, generala.RULESET)
}

_ALIASES = {"yacht_dice": "yacht", "yachtdice": "yacht", "yatzee": "yahtzee", "chase": "chaser", "general": "generala"}


def find_ruleset(name: str) -> Ruleset:
    """Return the ruleset with id ``name`` (case and surrounding spaces ignored).

    Parameters
    ----------
    name : str
        A ruleset id from :data:`RULESET_IDS` (a few spelling aliases such as
        ``"yacht-dice"`` are accepted).

    Returns
    -------
    ruleset : Ruleset

    Raises
    ------
    UnknownRulesetError
        If ``name`` is not a known ruleset; the message lists the ids.

    Examples
    --------
    >>> find_ruleset("Yatzy").boxes[-1]
    'yatzy'
    """
    if isinstance(name, Ruleset):
        return name
    key = str(name).strip().lower().replace("-", "_").replace(" ", "_")
    key = _ALIASES.get(key, key)
    try:
        return RULESETS[key]
    except KeyError:
        raise UnknownRulesetError(f"unknown ruleset {name!r}; choose one of: {', '.join(RULESET_IDS)}") from None


def resolve_ruleset(ruleset: Ruleset | str) -> Ruleset:
    """Return ``ruleset`` itself, or the ruleset it names (see :func:`find_ruleset`)."""
    return ruleset if isinstance(ruleset, Ruleset) else find_ruleset(ruleset)


def check_box(ruleset: Ruleset | str, box: str) -> str:
    """Return ``box`` if it is a box of ``ruleset``.

    Raises
    ------
    UnknownBoxError
        Otherwise; the message lists the ruleset's boxes.
    """
    rs = resolve_ruleset(ruleset)
    if box not in rs.boxes:
        raise UnknownBoxError(f"{box!r} is not a {rs.id} box; the boxes are: {', '.join(rs.boxes)}")
    return box


@functools.cache
def possible_points(ruleset: Ruleset, box: str) -> frozenset[int]:
    """Every number of points ``box`` can ever hold in ``ruleset`` (0 included).

    Found by scoring all 252 dice multisets on throws 1 and 3, with an empty
    card and with a card full of 50s (for Generala's Doble); joker values are
    all reachable by normal scoring too.
    """
    rs = resolve_ruleset(ruleset)
    check_box(rs, box)
    fifties = {b: 50 for b in rs.boxes}
    values = {0}
    for dice in itertools.combinations_with_replacement(FACES, 5):
        for roll in (1, 3):
            for filled in ({}, fifties):
                values.add(rs.score_box(dice, box, filled, roll))
    return frozenset(values)
