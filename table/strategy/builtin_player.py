"""A simple built-in player for the demo: which dice to hold and which box to score.

Not an optimal strategist: it looks one throw ahead.  A box is worth its points
minus a share of what that box usually scores (its *par*, the mean over every
possible throw of five dice), so it keeps high-value boxes open and scratches
cheap ones; in rulesets with an upper bonus, three or more of a face count extra
in the upper boxes.  Holds are chosen by the expected worth of the best box after
re-rolling the other dice, over every outcome (exact, by multisets).  All scoring
comes from :mod:`table.rules`.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from collections.abc import Sequence
from math import factorial

from table.rules import Card, Ruleset, find_ruleset, score_options

#: Share of a box's par subtracted from its points when comparing boxes.
PAR_WEIGHT = 0.6


@functools.cache
def _outcomes(n: int) -> tuple[tuple[tuple[int, ...], float], ...]:
    """Every multiset of ``n`` dice, sorted, with its probability."""
    out = []
    for combo in itertools.combinations_with_replacement(range(1, 7), n):
        ways = factorial(n)
        for c in Counter(combo).values():
            ways //= factorial(c)
        out.append((combo, ways / 6**n))
    return tuple(out)


@functools.cache
def box_pars(ruleset_id: str) -> dict[str, float]:
    """Mean points of each box over one throw of five fair dice, on an empty card.

    Parameters
    ----------
    ruleset_id : str
        A ruleset id (see :data:`table.rules.RULESET_IDS`).

    Returns
    -------
    dict of str to float
        Box id -> mean points.
    """
    rs = find_ruleset(ruleset_id)
    pars = dict.fromkeys(rs.boxes, 0.0)
    for dice, p in _outcomes(5):
        for box in rs.boxes:
            pars[box] += p * rs.score_box(dice, box, {}, 3)
    return pars


def box_worth(rs: Ruleset, box: str, points: int, dice: Sequence[int]) -> float:
    """How much the player likes scoring ``points`` in ``box`` with ``dice``."""
    worth = points - PAR_WEIGHT * box_pars(rs.id)[box]
    if box in rs.upper_boxes and rs.upper_bonus_threshold is not None:
        face = rs.upper_boxes.index(box) + 1
        count = sum(1 for d in dice if d == face)
        worth += 0.1 * rs.upper_bonus_points * (count - 2.5)
    return worth


def choose_box(ruleset: Ruleset | str, dice: Sequence[int], card: Card, *, roll: int = 3, joker: str = "forced") -> str:
    """The box to score ``dice`` in: the legal box the player values most.

    Parameters
    ----------
    ruleset : Ruleset or str
    dice : sequence of int, length 5
        Final dice, faces 1-6.
    card : Card
        The player's card (not full).
    roll : int, optional
        Throw (1-3) the player stopped on.
    joker : str, optional
        Yahtzee joker variant.

    Returns
    -------
    str
        A box id among ``score_options(ruleset, dice, card, roll=roll, joker=joker)``.

    Raises
    ------
    ValueError
        If the card is full (no legal box).
    """
    rs = find_ruleset(ruleset) if isinstance(ruleset, str) else ruleset
    options = score_options(rs, dice, card, roll=roll, joker=joker)
    if not options:
        raise ValueError("the card is full: no box is open to score in")
    return max(options, key=lambda b: (box_worth(rs, b, options[b], dice), options[b]))


def _best_worth(rs: Ruleset, dice: tuple[int, ...], card: Card, roll: int, joker: str) -> float:
    options = score_options(rs, dice, card, roll=roll, joker=joker)
    return max(box_worth(rs, b, p, dice) for b, p in options.items())


def choose_holds(
    ruleset: Ruleset | str, dice: Sequence[int], card: Card, *, roll: int, joker: str = "forced"
) -> tuple[bool, ...]:
    """Which dice to hold before the next throw; all held means stop and score.

    Parameters
    ----------
    ruleset : Ruleset or str
    dice : sequence of int, length 5
        The dice after throw `roll`.
    card : Card
        The player's card (not full).
    roll : int
        Throws made so far this turn, 1 or 2.
    joker : str, optional
        Yahtzee joker variant.

    Returns
    -------
    tuple of bool, length 5
        ``True`` for each die to keep, in the order of `dice`.
    """
    rs = find_ruleset(ruleset) if isinstance(ruleset, str) else ruleset
    dice = tuple(int(d) for d in dice)
    worth = {combo: _best_worth(rs, combo, card, roll + 1, joker) for combo, _ in _outcomes(5)}
    best_value = _best_worth(rs, tuple(sorted(dice)), card, roll, joker)
    best_keep: tuple[int, ...] = tuple(sorted(dice))
    for mask in range(31):  # every hold but "all five" (that is standing, valued above)
        kept = tuple(sorted(d for i, d in enumerate(dice) if mask >> i & 1))
        value = sum(p * worth[tuple(sorted(kept + out))] for out, p in _outcomes(5 - len(kept)))
        if value > best_value + 1e-9:
            best_value, best_keep = value, kept
    holds = [False] * 5
    need = Counter(best_keep)
    for i, d in enumerate(dice):
        if need[d] > 0:
            holds[i] = True
            need[d] -= 1
    return tuple(holds)
