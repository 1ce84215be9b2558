"""The pure scoring functions over (ruleset, dice, card), and the joker and throw settings.

Source for every rule: ``shared/specs/rulesets.md`` (version 1.0).  The rulesets
themselves and box lookups are in :mod:`table.rules.registry`.
"""

from __future__ import annotations

from collections.abc import Sequence

from table.rules import yahtzee
from table.rules.card import Card
from table.rules.dice import check_dice, is_five_of_a_kind
from table.rules.errors import IllegalScoreError, InvalidRollError, UnknownJokerError
from table.rules.registry import check_box, resolve_ruleset
from table.rules.ruleset import Ruleset

#: Yahtzee joker variants (spec 3.2); ``forced`` is the default table setting.
JOKER_VARIANTS: tuple[str, ...] = ("forced", "free", "free_choice")
DEFAULT_JOKER = "forced"

#: Throw numbers on which a player may stop (1 = first throw, servida).
ROLLS: tuple[int, ...] = (1, 2, 3)


def check_joker(joker: str | None) -> str:
    """Return a valid joker variant (None means the default ``forced``).

    Raises
    ------
    UnknownJokerError
        If ``joker`` is not one of :data:`JOKER_VARIANTS`.
    """
    if joker is None:
        return DEFAULT_JOKER
    if joker not in JOKER_VARIANTS:
        raise UnknownJokerError(f"unknown joker variant {joker!r}; choose one of: {', '.join(JOKER_VARIANTS)}")
    return joker


def check_roll(roll: object) -> int:
    """Return ``roll`` if it is a throw number 1, 2 or 3.

    Raises
    ------
    InvalidRollError
        Otherwise (the message says what the number means).
    """
    if isinstance(roll, bool) or not isinstance(roll, int) or roll not in ROLLS:
        raise InvalidRollError(f"roll must be the throw the player stopped on: 1, 2 or 3, got {roll!r}")
    return roll


def open_boxes(ruleset: Ruleset | str, card: Card) -> tuple[str, ...]:
    """Open (unfilled) boxes of ``card``, in scorecard order."""
    rs = resolve_ruleset(ruleset)
    return tuple(b for b in rs.boxes if b not in card.boxes)


def is_full(ruleset: Ruleset | str, card: Card) -> bool:
    """True when every box of the ruleset is filled (the player's game is over)."""
    return not open_boxes(ruleset, card)


def is_bonus_yahtzee(ruleset: Ruleset | str, dice: Sequence[int], card: Card) -> bool:
    """True if ``dice`` are a bonus Yahtzee: five alike with the ``yahtzee`` box filled.

    Always False for rulesets without the Yahtzee bonus.
    """
    rs = resolve_ruleset(ruleset)
    return rs.has_yahtzee_bonus and is_five_of_a_kind(tuple(dice)) and "yahtzee" in card.boxes


def yahtzee_bonus_for(ruleset: Ruleset | str, dice: Sequence[int], card: Card) -> int:
    """Points (0 or 100) this roll earns outside the boxes as a Yahtzee bonus.

    100 only for a bonus Yahtzee while the ``yahtzee`` box holds 50 (spec 3.1).
    """
    rs = resolve_ruleset(ruleset)
    d = check_dice(dice)
    if is_bonus_yahtzee(rs, d, card) and card.boxes.get("yahtzee") == 50:
        return yahtzee.YAHTZEE_BONUS
    return 0


def score_options(
    ruleset: Ruleset | str, dice: Sequence[int], card: Card, *, roll: int = 3, joker: str | None = DEFAULT_JOKER
) -> dict[str, int]:
    """The boxes the rules allow now, each with the points it would score.

    Parameters
    ----------
    ruleset : Ruleset or str
        The ruleset or its id.
    dice : sequence of int, length 5
        The final dice, faces 1..6, any order.
    card : Card
        The player's card before scoring.
    roll : int, optional
        Throw (1..3) on which the player stopped; only Generala uses it
        (1 = servida).  Default 3.
    joker : {"forced", "free", "free_choice"}, optional
        Yahtzee joker variant; ignored by other rulesets.  Default ``forced``.

    Returns
    -------
    options : dict of str to int
        Legal box id -> points (0 = scratch), in scorecard order.  Every open
        box, except that a bonus Yahtzee narrows the choice (spec 3.2).  Empty
        when the card is full.  The Yahtzee bonus is not included; see
        :func:`yahtzee_bonus_for`.

    Raises
    ------
    InvalidDiceError, InvalidRollError, UnknownJokerError, UnknownRulesetError
        On bad arguments.

    Examples
    --------
    >>> score_options("yahtzee", (3, 3, 3, 3, 3), Card({"yahtzee": 50}))
    {'threes': 15}
    """
    rs = resolve_ruleset(ruleset)
    d = check_dice(dice)
    roll = check_roll(roll)
    joker = check_joker(joker)
    if is_bonus_yahtzee(rs, d, card):
        return yahtzee.joker_options(d, card.boxes, joker)
    return {b: rs.score_box(d, b, card.boxes, roll) for b in rs.boxes if b not in card.boxes}


def place(
    ruleset: Ruleset | str,
    card: Card,
    dice: Sequence[int],
    box: str,
    *,
    roll: int = 3,
    joker: str | None = DEFAULT_JOKER,
) -> Card:
    """Score ``dice`` in ``box`` and return the new card (``card`` is unchanged).

    Parameters
    ----------
    ruleset : Ruleset or str
    card : Card
        The card before scoring.
    dice : sequence of int, length 5
    box : str
        The chosen box id.
    roll : int, optional
        Throw number 1..3 (Generala servida on 1); default 3.
    joker : str, optional
        Yahtzee joker variant; default ``forced``.

    Returns
    -------
    card : Card
        With ``box`` filled and, for a bonus Yahtzee over a 50, one more
        Yahtzee bonus.

    Raises
    ------
    UnknownBoxError
        If ``box`` is not a box of the ruleset.
    IllegalScoreError
        If ``box`` is already filled or the joker rules forbid it now; the
        message lists the legal boxes.
    """
    rs = resolve_ruleset(ruleset)
    check_box(rs, box)
    options = score_options(rs, dice, card, roll=roll, joker=joker)
    if box not in options:
        legal = ", ".join(options) or "none (the card is full)"
        if box in card.boxes:
            why = f"box {box!r} is already scored ({card.boxes[box]} points)"
        else:
            why = (
                f"the {check_joker(joker)} joker rule does not allow {box!r} "
                f"for {''.join(map(str, dice))} (a bonus Yahtzee)"
            )
        raise IllegalScoreError(f"{why}; choose one of: {legal}")
    bonus = yahtzee_bonus_for(rs, dice, card)
    boxes = dict(card.boxes)
    boxes[box] = options[box]
    ordered = {b: boxes[b] for b in rs.boxes if b in boxes}
    return Card(ordered, card.yahtzee_bonuses + (1 if bonus else 0))


def score(
    ruleset: Ruleset | str,
    card: Card,
    dice: Sequence[int],
    box: str,
    *,
    roll: int = 3,
    joker: str | None = DEFAULT_JOKER,
) -> int:
    """Points ``box`` would get now; raises like :func:`place` if not allowed."""
    return place(ruleset, card, dice, box, roll=roll, joker=joker).boxes[box]


def upper_sum(ruleset: Ruleset | str, card: Card) -> int:
    """Sum of the filled upper boxes (0 for rulesets without an upper section)."""
    rs = resolve_ruleset(ruleset)
    return sum(card.boxes.get(b, 0) for b in rs.upper_boxes)


def upper_bonus(ruleset: Ruleset | str, card: Card) -> int:
    """Upper bonus points earned so far: the bonus once the upper sum reaches the threshold."""
    rs = resolve_ruleset(ruleset)
    if rs.upper_bonus_threshold is None:
        return 0
    return rs.upper_bonus_points if upper_sum(rs, card) >= rs.upper_bonus_threshold else 0


def yahtzee_bonus_points(ruleset: Ruleset | str, card: Card) -> int:
    """Yahtzee bonus points on the card: 100 per bonus (0 outside Yahtzee)."""
    rs = resolve_ruleset(ruleset)
    return yahtzee.YAHTZEE_BONUS * card.yahtzee_bonuses if rs.has_yahtzee_bonus else 0


def card_total(ruleset: Ruleset | str, card: Card) -> int:
    """Running total: all boxes + upper bonus + 100 per Yahtzee bonus."""
    rs = resolve_ruleset(ruleset)
    return sum(card.boxes.values()) + upper_bonus(rs, card) + yahtzee_bonus_points(rs, card)


def winners(totals: Sequence[int]) -> tuple[int, ...]:
    """Indexes of every player tied on the highest total (all share the win).

    Parameters
    ----------
    totals : sequence of int
        One total per player, in seating order.

    Returns
    -------
    winners : tuple of int
        Ascending player indexes; empty when ``totals`` is empty.

    Examples
    --------
    >>> winners([230, 231])
    (1,)
    >>> winners([200, 150, 200])
    (0, 2)
    """
    if not totals:
        return ()
    best = max(totals)
    return tuple(i for i, t in enumerate(totals) if t == best)
