"""The exact distribution of a final score when few boxes are left, under the optimal (max-mean) policy.

Near the end a final score is far from normal (one box left: a Yacht is 0 or
50), so :mod:`table.strategy.win_chances` uses this distribution for a card
with at most :data:`EXACT_OPEN` open boxes.  It follows the policy of the value
tables (every choice by its mean, ties to the first option as the solver
meets them) and carries a probability per whole point instead of the two
moments of :mod:`table.strategy.moments`: each box's points shift the
distribution of the state it leads to; a throw averages distributions
(:func:`~table.strategy.solver.keeper_values`, linear in its columns); a hold
or stop takes the chosen option's distribution.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import numpy.typing as npt

from table.rules import Card
from table.strategy._dice import ROLL_PROB, ROLLS
from table.strategy.moments import Pair, _stop_or_keep
from table.strategy.solver import keeper_values
from table.strategy.tables import StrategyTable

Array = npt.NDArray[np.float64]

#: Open boxes up to which the exact distribution is used by default: a new card with three open boxes
#: costs 0.3-0.8 s on this loaded 2-core machine (memoised per state; two boxes 0.1-0.3 s, one 16-60 ms);
#: exact up to two boxes left 3-box positions off by up to 7.8 pp, up to three 2.6 (docs/overlay.md).
EXACT_OPEN = 3
#: States whose whole turn is kept, least recently used first: only the current player's throws look
#: theirs up again (the others' feed a start distribution once); each is 2.7 MB at 456 points (Yahtzee),
#: and 8 filled 21 MB of a soak's table in its first late game.
MEMO_TURNS = 3
#: Start distributions kept ((points,) each, 3.6 KB at 456 points): about 14 new states a game.
MEMO_STARTS = 4096


class LateGame:
    """Exact distributions of the points still to come for the cards of one table (memoised per state).

    ``points`` (int): length of each distribution (points 0 .. points - 1 still to come), at least the
    most the open boxes of the cards asked about can still score.
    """

    def __init__(self, table: StrategyTable, points: int) -> None:
        self.table = table
        self.model = table.model
        self.points = points
        # start distributions (small) of every state met; whole turns ((252, points) each, 1-2 MB) of a few
        self._starts: dict[tuple[int, int, int], Array] = {}
        self._turns: OrderedDict[tuple[int, int, int], tuple[Pair, Pair, Pair, Array]] = OrderedDict()

    def start(self, card: Card) -> Array:
        """Distribution (shape ``(points,)``) of the points still to come from the start of ``card``'s next turn."""
        if len(card) >= self.model.n_boxes:
            out = np.zeros(self.points)
            out[int(round(float(self.table.values[self.model.state_of(card)])))] = 1.0  # the upper bonus, or 0
            return out
        state = self.model.state_of(card)
        if state not in self._starts:
            if len(self._starts) > MEMO_STARTS:
                self._starts.clear()
            self._starts[state] = self.turn(card)[3]
        return self._starts[state]

    def turn(self, card: Card) -> tuple[Pair, Pair, Pair, Array]:
        """``(W1, W2, W3, start)``: (mean (252, 1), distribution (252, points)) of each roll after throws 1-3."""
        state = self.model.state_of(card)
        if state not in self._turns:
            W3 = self._stops(card, 3)
            stops = [W3 if self.model.same_stop(r) else self._stops(card, r) for r in (1, 2)]
            E3 = list(zip(keeper_values(W3[0]), keeper_values(W3[1])))
            W2 = _stop_or_keep(stops[1], E3)
            E2 = list(zip(keeper_values(W2[0]), keeper_values(W2[1])))
            W1 = _stop_or_keep(stops[0], E2)
            self._turns[state] = (W1, W2, W3, ROLL_PROB @ W1[1])
            while len(self._turns) > MEMO_TURNS:
                self._turns.popitem(last=False)  # the least recently used
        self._turns.move_to_end(state)
        return self._turns[state]

    def scored(self, card: Card, dice: tuple[int, ...], roll: int) -> Array:
        """Distribution of the points still to come when ``dice`` are scored now (throw ``roll``) in their best box."""
        model, banked = self.model, self.model.banked(card)
        best = None
        for box in model.options(card, dice, roll):
            after = model.after(card, dice, box, roll)
            gain = model.banked(after) - banked
            value = gain + float(self.table.values[model.state_of(after)])
            if best is None or value > best[0]:
                best = (value, gain, after)
        assert best is not None
        out = np.zeros(self.points)
        out[best[1] :] = self.start(best[2])[: self.points - best[1]]
        return out

    def _stops(self, card: Card, roll: int) -> Pair:
        """Mean and distribution of scoring each roll in its best box (by mean) on throw ``roll``."""
        model, values = self.model, self.table.values
        banked = model.banked(card)
        mean = np.empty((len(ROLLS), 1))
        dist = np.zeros((len(ROLLS), self.points))
        for i, dice in enumerate(ROLLS):
            best = None
            for box in model.options(card, dice, roll):
                after = model.after(card, dice, box, roll)
                gain = model.banked(after) - banked  # the box's points and any Yahtzee bonus
                value = gain + float(values[model.state_of(after)])
                if best is None or value > best[0]:
                    best = (value, gain, after)
            assert best is not None
            mean[i, 0] = best[0]
            rest = self.start(best[2])
            dist[i, best[1] :] = rest[: self.points - best[1]]
        return mean, dist


def points_bound(table: StrategyTable, open_boxes: int = EXACT_OPEN) -> int:
    """Length of a distribution that holds what any ``open_boxes`` boxes can still score (with bonuses)."""
    model = table.model
    tops = sorted((int(model.scores[:, :, b, :].max()) for b in range(model.n_boxes)), reverse=True)
    return sum(tops[:open_boxes]) + open_boxes * model.bonus + model.upper_bonus_points + 1
