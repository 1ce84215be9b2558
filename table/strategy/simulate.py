"""Monte Carlo continuations of a card under the optimal bot's play (for checks, not for the table).

:class:`MemoOptimalBot` makes the same choices as
:class:`~table.strategy.bots.OptimalBot` (the first of
:func:`~table.strategy.advice.advise_holds` / ``advise_boxes``), remembered per
(turn-start state, dice, throw): a choice depends on nothing else, so the many
continuations of one position mostly look their choices up.
:func:`play_out` plays a card to its end from the start of a turn or from a
turn in progress, rolling virtual dice.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from table.rules import Card, card_total
from table.strategy.advice import advise_boxes, advise_holds
from table.strategy.tables import StrategyTable


class MemoOptimalBot:
    """The optimal bot's choices, remembered (see the module). ``table``: the ruleset's value table."""

    level = "optimal"

    def __init__(self, table: StrategyTable) -> None:
        self.table = table
        self.model = table.model
        self._holds: dict[tuple[object, ...], tuple[int, ...]] = {}
        self._boxes: dict[tuple[object, ...], str] = {}

    def choose_keep(self, card: Card, dice: tuple[int, ...], roll: int) -> tuple[int, ...] | None:
        """Faces to keep after throw ``roll`` (1 or 2), or None to stop and score now."""
        key = (self.model.state_of(card), tuple(sorted(dice)), roll)
        if key not in self._holds:
            best = advise_holds(self.table, card, dice, roll)[0]
            self._holds[key] = None if best.stop else best.keep  # type: ignore[assignment]
        return self._holds[key]

    def choose_box(self, card: Card, dice: tuple[int, ...], roll: int) -> str:
        """The box to score ``dice`` in."""
        key = (self.model.state_of(card), tuple(sorted(dice)), roll)
        if key not in self._boxes:
            self._boxes[key] = advise_boxes(self.table, card, dice, roll)[0].box
        return self._boxes[key]


def play_out(bot: MemoOptimalBot, card: Card, rng: np.random.Generator, dice: Sequence[int] = (), roll: int = 0) -> int:
    """Final total of ``card`` played to the end by ``bot`` (upper bonus and Yahtzee bonuses included).

    ``dice`` and ``roll`` (1..3): a turn in progress to finish first; ``roll`` 0 starts a new turn.
    """
    model = bot.model
    d = tuple(int(x) for x in dice)
    r = roll
    while len(card) < model.n_boxes:
        if r == 0:
            d, r = tuple(int(x) for x in rng.integers(1, 7, size=5)), 1
        while r < 3:
            keep = bot.choose_keep(card, d, r)
            if keep is None:
                break
            d = keep + tuple(int(x) for x in rng.integers(1, 7, size=5 - len(keep)))
            r += 1
        card = model.after(card, d, bot.choose_box(card, d, r), r)
        r = 0
    return card_total(model.ruleset, card)
