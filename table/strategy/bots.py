"""Computer players for every ruleset: easy, medium and optimal.

A bot only *decides*; whoever runs the game rolls its dice (a person on the
real tray, or a random source on screen) and feeds the result back.  The
protocol, for one turn:

1. After throw ``roll`` (1 or 2), call ``choose_hold(card, dice, roll)``; it
   returns one bool per die (True = hold).  All five held means *stop now*.
   Otherwise re-roll the dice not held.
2. After the last throw (3, or the throw it stopped on), call
   ``choose_box(card, dice, roll)``; it returns a box the rules allow.

Levels:

``easy``
    Scores the box worth the most points right now.  Holds the largest group
    of equal faces (the higher face on ties) and stops on five alike or once
    a box is worth 25 points or more.
``medium``
    Scores like ``easy``, but holds with one throw of look-ahead: the hold
    whose next throw gives the best expected immediate points (stopping if
    that beats every hold).
``optimal``
    Follows the value tables (:mod:`table.strategy.advice`): maximises the
    expected final score.

Examples
--------
>>> from table.rules import Card
>>> bot = make_bot("easy", "yacht")
>>> bot.choose_hold(Card.empty(), (2, 5, 5, 1, 5), 1)
(False, True, True, False, True)
>>> bot.choose_box(Card.empty(), (5, 5, 5, 5, 5), 3)
'yacht'
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt

from table.rules import Card, Ruleset, check_dice, check_roll, find_ruleset, possible_points
from table.strategy._dice import FIVE_OF_A_KIND_ROWS, INDEX, hold_mask, sub_multisets
from table.strategy.advice import advise_boxes, advise_holds
from table.strategy.errors import IllegalAdviceRequestError
from table.strategy.model import Model, check_variant
from table.strategy.solver import keeper_values
from table.strategy.tables import StrategyTable, get_table

#: Bot levels, weakest first.
BOT_LEVELS: tuple[str, ...] = ("easy", "medium", "optimal")


class Bot(Protocol):
    """What a game needs of a computer player (see the module docstring)."""

    level: str

    def choose_hold(self, card: Card, dice: tuple[int, ...], roll: int) -> tuple[bool, ...]:
        """Which dice to hold after throw ``roll`` (1 or 2); all True = stop."""
        ...

    def choose_box(self, card: Card, dice: tuple[int, ...], roll: int) -> str:
        """The box to score ``dice`` in, stopped on throw ``roll``."""
        ...


def _check_hold_request(dice: object, roll: object) -> tuple[tuple[int, ...], int]:
    d = check_dice(dice)  # type: ignore[arg-type]
    r = check_roll(roll)
    if r == 3:
        raise IllegalAdviceRequestError("no re-roll is left after the third throw; call choose_box instead")
    return d, r


class GreedyBot:
    """The ``easy`` bot: best immediate box, holds the largest group of alike dice.

    Parameters
    ----------
    ruleset : Ruleset or str
    variant : str, optional
        Yahtzee joker variant (``forced`` by default); see :func:`make_bot`.
    """

    level = "easy"

    def __init__(self, ruleset: Ruleset | str, variant: str | None = None) -> None:
        self.model = Model.of(ruleset, variant)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model.ruleset.id!r}, {self.model.variant!r})"

    def immediate(self, card: Card, dice: tuple[int, ...], roll: int) -> int:
        """Points of the best box for ``dice`` now, Yahtzee bonus included."""
        return max(self.model.options(card, dice, roll).values()) + self.model.bonus_for(card, dice)

    def choose_box(self, card: Card, dice: tuple[int, ...], roll: int) -> str:
        """The legal box with the most points; on ties, the one that can hold the least."""
        d = check_dice(dice)
        options = self.model.options(card, d, check_roll(roll))
        if not options:
            raise IllegalAdviceRequestError("the card is full; there is no box to choose")
        rs = self.model.ruleset
        return max(options, key=lambda b: (options[b], -max(possible_points(rs, b)), -rs.boxes.index(b)))

    def choose_hold(self, card: Card, dice: tuple[int, ...], roll: int) -> tuple[bool, ...]:
        """Hold the largest group of equal faces; hold all (stop) on 25+ points or five alike."""
        d, r = _check_hold_request(dice, roll)
        if len(set(d)) == 1 or self.immediate(card, d, r) >= 25:
            return (True,) * len(d)
        face = max(set(d), key=lambda f: (d.count(f), f))
        return tuple(x == face for x in d)


class LookaheadBot(GreedyBot):
    """The ``medium`` bot: greedy boxes, holds chosen with one throw of look-ahead."""

    level = "medium"

    def _immediate_all(self, card: Card) -> npt.NDArray[np.float64]:
        """Best immediate points of every roll (throw 3), shape (252,), from the score tables."""
        model = self.model
        mask, flag, _ = model.state_of(card)
        open_ = [b for b in range(model.n_boxes) if not mask >> b & 1]
        if not open_:
            raise IllegalAdviceRequestError("the card is full; there is nothing to hold for")
        W = model.scores[2, flag][open_].max(axis=0).astype(np.float64)
        if model.has_bonus and "yahtzee" in card.boxes:
            for row, face in zip(FIVE_OF_A_KIND_ROWS, range(1, 7)):
                W[row] = self.immediate(card, (face,) * 5, 3)
        return W

    def choose_hold(self, card: Card, dice: tuple[int, ...], roll: int) -> tuple[bool, ...]:
        """The hold maximising the expected best immediate points after one more throw."""
        d, r = _check_hold_request(dice, roll)
        E = keeper_values(self._immediate_all(card)[:, None])
        stop = self.immediate(card, d, r)
        best_keep, best_value = tuple(sorted(d)), float(stop)
        for keep in sub_multisets(d):
            if len(keep) == len(d):
                continue
            value = float(E[len(keep)][INDEX[len(keep)][keep], 0])
            if value > best_value + 1e-9:
                best_keep, best_value = keep, value
        return hold_mask(d, best_keep)


class OptimalBot:
    """The ``optimal`` bot: maximises the expected final score from the value tables.

    Parameters
    ----------
    ruleset : Ruleset or str
    variant : str, optional
    table : StrategyTable, optional
        Use this table instead of :func:`table.strategy.get_table` (which may
        build it on first use).
    """

    level = "optimal"

    def __init__(
        self, ruleset: Ruleset | str, variant: str | None = None, *, table: StrategyTable | None = None
    ) -> None:
        self.table = table if table is not None else get_table(ruleset, variant)

    def __repr__(self) -> str:
        return f"OptimalBot({self.table.ruleset.id!r}, {self.table.variant!r})"

    def choose_hold(self, card: Card, dice: tuple[int, ...], roll: int) -> tuple[bool, ...]:
        """The hold the tables rank first (all True when stopping is best)."""
        d, r = _check_hold_request(dice, roll)
        return advise_holds(self.table, card, d, r)[0].hold

    def choose_box(self, card: Card, dice: tuple[int, ...], roll: int) -> str:
        """The box the tables rank first."""
        return advise_boxes(self.table, card, dice, roll)[0].box


def make_bot(
    level: str, ruleset: Ruleset | str, variant: str | None = None, *, table: StrategyTable | None = None
) -> GreedyBot | OptimalBot:
    """A bot of ``level`` (``easy``, ``medium``, ``optimal``) for ``ruleset``.

    Parameters
    ----------
    level : str
        One of :data:`BOT_LEVELS`.
    ruleset : Ruleset or str
    variant : str, optional
        Yahtzee joker variant the game uses (default ``forced``).
    table : StrategyTable, optional
        For ``optimal``: a table already loaded.

    Raises
    ------
    ValueError
        If ``level`` is unknown.
    """
    rs = find_ruleset(ruleset) if isinstance(ruleset, str) else ruleset
    variant = check_variant(rs, variant)
    if level == "easy":
        return GreedyBot(rs, variant)
    if level == "medium":
        return LookaheadBot(rs, variant)
    if level == "optimal":
        return OptimalBot(rs, variant, table=table)
    raise ValueError(f"unknown bot level {level!r}; choose one of: {', '.join(BOT_LEVELS)}")


def play_solitaire(bot: Bot, ruleset: Ruleset | str, rng: np.random.Generator, variant: str | None = None) -> Card:
    """Play one solitaire game with ``bot`` rolling virtual dice; return the final card.

    Parameters
    ----------
    bot : Bot
    ruleset : Ruleset or str
    rng : numpy.random.Generator
        Source of the dice (seed it for repeatable games).
    variant : str, optional
        Variant whose rules place the boxes (default ``forced`` / ``standard``).
    """
    model = Model.of(ruleset, variant)
    card = Card.empty()
    for _ in model.ruleset.boxes:
        dice = tuple(int(x) for x in rng.integers(1, 7, size=5))
        roll = 1
        while roll < 3:
            hold = bot.choose_hold(card, dice, roll)
            if all(hold):
                break
            dice = tuple(d if h else int(rng.integers(1, 7)) for d, h in zip(dice, hold))
            roll += 1
        box = bot.choose_box(card, dice, roll)
        card = model.after(card, dice, box, roll)
    return card
