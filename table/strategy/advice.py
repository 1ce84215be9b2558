"""Advice from the value tables: which dice to hold, which box to score.

Both functions rank every choice by the *expected final score* (points on the
card, Yahtzee bonuses, this turn's points and the optimal expectation of the
rest of the game, upper bonus included).

Examples
--------
>>> from table.rules import Card
>>> table = get_table("yacht")                                     # doctest: +SKIP
>>> advise_holds(table, Card.empty(), (1, 3, 4, 5, 5), roll=1)[0].keep  # doctest: +SKIP
(5, 5)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from table.rules import Card, check_dice, check_roll, is_full
from table.strategy._dice import INDEX, hold_mask, sub_multisets
from table.strategy.errors import IllegalAdviceRequestError
from table.strategy.solver import roll_values
from table.strategy.tables import StrategyTable


@dataclass(frozen=True, slots=True)
class HoldAdvice:
    """One way to hold dice before the next throw.

    Attributes
    ----------
    keep : tuple of int
        The faces held, ascending (empty: re-roll all five).
    hold : tuple of bool, length 5
        Which of the given dice to hold, in the order given.
    expected : float
        Expected final score (points) after holding ``keep`` and playing on
        optimally.
    stop : bool
        True when all five dice are kept: stop and score now (see the box
        advice).
    """

    keep: tuple[int, ...]
    hold: tuple[bool, ...]
    expected: float
    stop: bool

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict: keep, hold, expected (4 decimals), stop."""
        return {
            "keep": list(self.keep),
            "hold": list(self.hold),
            "expected": round(self.expected, 4),
            "stop": self.stop,
        }


@dataclass(frozen=True, slots=True)
class BoxAdvice:
    """One legal box to score the final dice in.

    Attributes
    ----------
    box : str
        Box id.
    points : int
        Points written in the box (0 = scratch).
    yahtzee_bonus : int
        Yahtzee bonus this roll earns (0 or 100; the same for every box).
    expected : float
        Expected final score after scoring here and playing on optimally.
    """

    box: str
    points: int
    yahtzee_bonus: int
    expected: float

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict: box, points, yahtzee_bonus, expected (4 decimals)."""
        return {
            "box": self.box,
            "points": self.points,
            "yahtzee_bonus": self.yahtzee_bonus,
            "expected": round(self.expected, 4),
        }


def _check(table: StrategyTable, card: Card, dice: object, roll: object) -> tuple[tuple[int, ...], int]:
    d = check_dice(dice)  # type: ignore[arg-type]
    r = check_roll(roll)
    if is_full(table.ruleset, card):
        raise IllegalAdviceRequestError(
            f"the {table.ruleset.id} card is full ({len(card)} boxes), so there is nothing to "
            "advise; leave at least one box open"
        )
    return d, r


def advise_boxes(table: StrategyTable, card: Card, dice: tuple[int, ...], roll: int = 3) -> list[BoxAdvice]:
    """Every box the rules allow for ``dice`` now, best first.

    Parameters
    ----------
    table : StrategyTable
        Value table of the ruleset and variant being played.
    card : Card
        The player's card before scoring.
    dice : tuple of int, length 5
        The final dice.
    roll : int, optional
        Throw (1..3) the player stopped on (Generala servida on 1); default 3.

    Returns
    -------
    advice : list of BoxAdvice
        One per legal box, by decreasing ``expected`` (scorecard order on ties).

    Raises
    ------
    table.rules.InvalidDiceError, table.rules.InvalidRollError
        On bad dice or throw number.
    IllegalAdviceRequestError
        If the card is full.
    """
    d, r = _check(table, card, dice, roll)
    model = table.model
    bonus = model.bonus_for(card, d)
    out = []
    for box, points in model.options(card, d, r).items():
        after = model.after(card, d, box, r)
        out.append(BoxAdvice(box, points, bonus, table.expected_final(after)))
    order = {b: i for i, b in enumerate(table.ruleset.boxes)}
    out.sort(key=lambda a: (-a.expected, order[a.box]))
    return out


def advise_holds(table: StrategyTable, card: Card, dice: tuple[int, ...], roll: int) -> list[HoldAdvice]:
    """Every distinct hold after throw ``roll`` (1 or 2), best first.

    Parameters
    ----------
    table : StrategyTable
    card : Card
        The player's card at this turn.
    dice : tuple of int, length 5
        The dice just thrown.
    roll : {1, 2}
        The throw just made; a re-roll must still be allowed.

    Returns
    -------
    advice : list of BoxAdvice
        One per distinct multiset of held dice (up to 32), by decreasing
        ``expected``; keeping all five means stopping (scored with the best
        box).  On ties, fewer dice held comes first.

    Raises
    ------
    IllegalAdviceRequestError
        If ``roll`` is 3 (no re-roll left) or the card is full.
    """
    d, r = _check(table, card, dice, roll)
    if r == 3:
        raise IllegalAdviceRequestError("no re-roll is left after the third throw; ask for box advice instead")
    model = table.model
    m, g, u = (np.array([x], dtype=np.intp) for x in model.state_of(card))
    _, _, _, E2, E3 = roll_values(model, table.values, m, g, u)
    E = E2 if r == 1 else E3
    stop_now = _stop_value(table, card, d, r)
    banked = model.banked(card)
    out = []
    for keep in sub_multisets(d):
        if len(keep) == len(d):
            value, stop = stop_now, True
        else:
            value, stop = banked + float(E[len(keep)][INDEX[len(keep)][keep], 0]), False
        out.append(HoldAdvice(keep, hold_mask(d, keep), value, stop))
    out.sort(key=lambda a: (-a.expected, len(a.keep), a.keep))
    return out


def _stop_value(table: StrategyTable, card: Card, dice: tuple[int, ...], roll: int) -> float:
    return max(a.expected for a in advise_boxes(table, card, dice, roll))


def roll_value(table: StrategyTable, card: Card, dice: tuple[int, ...], roll: int) -> float:
    """Expected final score just after throw ``roll`` shows ``dice``, playing optimally.

    The best of every hold and of stopping (on throw 3: the best box).
    """
    if check_roll(roll) == 3:
        return advise_boxes(table, card, dice, 3)[0].expected
    return advise_holds(table, card, dice, roll)[0].expected


__all__ = ["BoxAdvice", "HoldAdvice", "advise_boxes", "advise_holds", "roll_value"]
