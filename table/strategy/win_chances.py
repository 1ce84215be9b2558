"""Each player's chance to win from the position now, assuming optimal solitaire play from here.

Every player is taken to play the rest of the game alone, maximising their own
expected final score (what the strategy tables hold); the players' final
scores are then independent.  Each one's final score is a mixture of two
normals rounded to whole points: "the lump box (the 50 of five of a kind)
still scored" and "not", with the weights, means and variances the tables
hold (:mod:`table.strategy.moments`); one normal where that box is decided
or the table file has no lump statistics.  With at most
:data:`~table.strategy.late_game.EXACT_OPEN` boxes open, where that shape is
worst, the exact distribution instead (:mod:`table.strategy.late_game`); a
player whose card is full has their total for sure.  ``P(win)`` of player ``i`` is the chance their score
beats every other's, a tie for first between ``t + 1`` players counting
``1 / (t + 1)`` to each, so the chances always sum to 1.

The player whose turn is under way is valued from the dice now (after throw
1, 2 or 3, optimal holds and box from here: the solver's within-turn values,
exact), the others from the start of their next turn.

How far this is from Monte Carlo games of the optimal bot:
``benchmarks/win_chances.py`` and ``docs/overlay.md``.

Examples
--------
>>> [round(p, 3) for p in win_probabilities([210.0, 200.0], [900.0, 900.0])]
[0.593, 0.407]
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from table.rules import Card
from table.strategy._dice import INDEX, N_DICE
from table.strategy.late_game import EXACT_OPEN, LateGame, points_bound
from table.strategy.moments import roll_moments
from table.strategy.tables import StrategyTable

#: Standard deviations kept on each side of every mean (the normal's tail past 8 sd is below 1e-15).
SPAN_SD = 8.0
#: A mixture's component lighter than this is left out (its float32 moments are noise by then).
MIN_WEIGHT = 1e-4


def _normal_cdf(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Standard normal CDF, through erfc of Numerical Recipes' ``erfcc`` (relative error < 1.2e-7)."""
    z = np.abs(x) / np.sqrt(2.0)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = -z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (
        0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))))  # fmt: skip
    erfc = t * np.exp(poly)
    return np.where(x >= 0, 1.0 - 0.5 * erfc, 0.5 * erfc)


def normal_pmfs(means: Sequence[float], variances: Sequence[float], low: int, high: int) -> npt.NDArray[np.float64]:
    """Normals rounded to whole points ``low..high`` (shape (n, high - low + 1), rows sum to 1).

    A variance of 0 is a sure score (a full card).
    """
    mu = np.asarray(means, dtype=np.float64)
    sd = np.sqrt(np.maximum(np.asarray(variances, dtype=np.float64), 0.0))
    edges = np.arange(low, high + 2, dtype=np.float64) - 0.5  # edges of the whole points low..high
    point = sd < 1e-6
    z = (edges[None, :] - mu[:, None]) / np.where(point, 1.0, sd)[:, None]
    cdf = _normal_cdf(z)
    cdf[point] = (edges[None, :] > mu[point, None]).astype(np.float64)
    pmf = np.diff(cdf, axis=1)
    return pmf / pmf.sum(axis=1, keepdims=True)


def span(means: Sequence[float], variances: Sequence[float]) -> tuple[int, int]:
    """Whole points ``(low, high)`` that hold every normal but a tail under 1e-15."""
    mu = np.asarray(means, dtype=np.float64)
    sd = np.sqrt(np.maximum(np.asarray(variances, dtype=np.float64), 0.0))
    return int(np.floor(np.min(mu - SPAN_SD * sd))) - 1, int(np.ceil(np.max(mu + SPAN_SD * sd))) + 1


def combine(pmf: npt.NDArray[np.float64]) -> list[float]:
    """P(win) of independent players with score distributions ``pmf`` (n, K), ties split equally.

    For player ``i`` and score ``k``: the others each score below ``k`` (``L_j``)
    or tie at ``k`` (``p_j``); with ``t`` ties ``i`` wins ``1 / (t + 1)``, which
    is the integral over ``z`` in [0, 1] of ``prod_{j != i} (L_j + p_j z)``: a
    polynomial of degree ``n - 1``, integrated exactly by Gauss-Legendre with
    ``ceil(n / 2)`` nodes.  The products over ``j != i`` are prefix times suffix products.
    """
    n, k = pmf.shape
    below = np.cumsum(pmf, axis=1) - pmf  # P(score < k)
    x, w = np.polynomial.legendre.leggauss(max(1, (n + 1) // 2))
    z, w = (x + 1) / 2, w / 2  # nodes and weights on [0, 1]
    A = below[None, :, :] + pmf[None, :, :] * z[:, None, None]  # (nodes, n, K)
    ones = np.ones((z.size, 1, k))
    before = np.cumprod(np.concatenate([ones, A[:, :-1]], axis=1), axis=1)  # prod over j < i
    after = np.cumprod(np.concatenate([ones, A[:, :0:-1]], axis=1), axis=1)[:, ::-1]  # prod over j > i
    share = np.einsum("q,qnk->nk", w, before * after)
    return [float(v) for v in np.einsum("nk,nk->n", pmf, share)]


Components = Sequence[tuple[float, float, float]]


def mixture_pmfs(players: Sequence[Components], low: int, high: int) -> npt.NDArray[np.float64]:
    """Each player's mixture of normals, given as ``(weight, mean, variance)`` components, on ``low..high``."""
    comps = [c for p in players for c in p]
    weights = np.array([c[0] for c in comps])[:, None]
    rows = normal_pmfs([c[1] for c in comps], [c[2] for c in comps], low, high) * weights
    seat = np.repeat(np.arange(len(players)), [len(p) for p in players])
    out = np.zeros((len(players), rows.shape[1]))
    np.add.at(out, seat, rows)
    return out / out.sum(axis=1, keepdims=True)


def split(banked: float, stats: Sequence[float], lump: bool = True) -> list[tuple[float, float, float]]:
    """``(weight, mean, variance)`` of the final score from the points to come's ``(V, S, A, B, C)``.

    Two normals, "lump box still scored" (weight ``A``) and "not" (see :mod:`table.strategy.moments`);
    one where either is under :data:`MIN_WEIGHT` or ``lump`` is False.
    """
    v, s, a, b, c = (float(x) for x in stats)
    if not lump or a < MIN_WEIGHT or a > 1.0 - MIN_WEIGHT:
        return [(1.0, banked + v, max(0.0, s - v * v))]
    m1, m0 = b / a, (v - b) / (1.0 - a)
    return [
        (a, banked + m1, max(0.0, c / a - m1 * m1)),
        (1.0 - a, banked + m0, max(0.0, (s - c) / (1.0 - a) - m0 * m0)),
    ]


def win_probabilities(means: Sequence[float], variances: Sequence[float]) -> list[float]:
    """P(win) of each player from the mean and variance of their final score (see the module)."""
    if not means:
        return []
    return combine(normal_pmfs(means, variances, *span(means, variances)))


#: (table's id, state) -> the within-turn moments of that turn-start state (a turn's throws share them),
#: least recently used first.
_ROLLS: OrderedDict[tuple[int, tuple[int, int, int]], tuple[StrategyTable, Any]] = OrderedDict()
#: Only the player whose turn it is has throws to value: 8 entries (26 KB each for Yahtzee) keep a few
#: turns and tables, and the current turn's is never dropped (the old bound cleared all 65 at once).
ROLLS_KEPT = 8
#: (table's id) -> (table, its (S, A, B, C) stacked, float32: shape ``model.shape + (4,)``) for the within-turn moments.
_STATS: dict[int, tuple[StrategyTable, npt.NDArray[np.float32]]] = {}


def _stats(table: StrategyTable) -> npt.NDArray[np.float32]:
    hit = _STATS.get(id(table))
    if hit is None or hit[0] is not table:
        if len(_STATS) > 2:
            _STATS.clear()
        assert table.second is not None
        if table.lump is None:
            stacked = table.second
        else:
            stacked = np.concatenate([table.second[..., None], table.lump], axis=-1).astype(np.float32)
        hit = _STATS[id(table)] = (table, stacked)
    return hit[1]


def _roll_pairs(table: StrategyTable, state: tuple[int, int, int]) -> Any:
    key = (id(table), state)
    hit = _ROLLS.get(key)
    if hit is None or hit[0] is not table:  # (an id can be reused once a table is gone)
        m, g, u = (np.array([x], dtype=np.intp) for x in state)
        hit = _ROLLS[key] = (table, roll_moments(table.model, table.values, _stats(table), m, g, u))  # type: ignore[arg-type]
        while len(_ROLLS) > ROLLS_KEPT:
            _ROLLS.popitem(last=False)
    _ROLLS.move_to_end(key)
    return hit[1]


def player_moments(table: StrategyTable, card: Card, dice: Sequence[int] = (), roll: int = 0) -> tuple[float, float]:
    """Mean and variance of a player's final score under optimal play from here.

    Parameters
    ----------
    table : StrategyTable
        With its second moment (format 2).
    card : Card
        The player's card.
    dice, roll : optional
        The player's turn in progress: the five dice after throw ``roll`` (1..3);
        ``roll`` 0 (default) values the card at the start of its next turn.
    """
    (_, mean, var), *_ = player_mixture(table, card, dice, roll, lump=False)
    return mean, var


def player_mixture(
    table: StrategyTable, card: Card, dice: Sequence[int] = (), roll: int = 0, *, lump: bool = True
) -> list[tuple[float, float, float]]:
    """A player's final score as one or two normals ``(weight, mean, variance)`` (:func:`split`)."""
    banked = table.model.banked(card)
    state = table.model.state_of(card)
    none = [0.0, 0.0, 0.0] if table.lump is None else []  # a table file without the lump statistics: one normal
    lump = lump and table.lump is not None
    if roll == 0 or len(dice) != N_DICE or len(card) >= table.model.n_boxes:
        assert table.second is not None
        extra = none or list(table.lump[state])  # type: ignore[index]
        return split(banked, [table.values[state], table.second[state], *extra], lump)
    pairs = _roll_pairs(table, state)[roll - 1]  # W1, W2, W3
    row = INDEX[N_DICE][tuple(sorted(dice))]
    return split(banked, [pairs[0][row, 0], *np.atleast_1d(pairs[1][row, 0]), *none], lump)


def win_chances(
    table: StrategyTable,
    cards: Sequence[Card],
    current: int | None = None,
    dice: Sequence[int] = (),
    roll: int = 0,
    *,
    exact_open: int = EXACT_OPEN,
    lump: bool = True,
) -> list[float]:
    """Each player's chance to win (sums to 1) from their cards and the turn in progress.

    Parameters
    ----------
    table : StrategyTable
        The ruleset and variant being played.
    cards : sequence of Card
        One per player, in seat order.
    current : int, optional
        Seat whose turn is under way (None: everyone valued at the start of a turn).
    dice, roll
        That turn's dice and throw (see :func:`player_moments`).
    exact_open : int, optional
        Cards with at most this many open boxes get their exact distribution (0: normals only).
    lump : bool, optional
        Two normals split on the lump box (default) or one normal per player.
    """
    n_boxes = table.model.n_boxes
    exact: dict[int, tuple[int, npt.NDArray[np.float64]]] = {}  # seat -> (points banked, distribution of the rest)
    normal: dict[int, list[tuple[float, float, float]]] = {}
    for i, card in enumerate(cards):
        turn = (dice, roll) if i == current else ((), 0)
        left = n_boxes - len(card) - (1 if turn[1] == 3 and len(dice) == N_DICE else 0)  # boxes open after this throw
        if left <= exact_open:
            exact[i] = (table.model.banked(card), _late_pmf(table, card, *turn, exact_open))
        else:
            normal[i] = player_mixture(table, card, *turn, lump=lump)
    lows, highs = [b for b, _ in exact.values()], [b + p.size - 1 for b, p in exact.values()]
    if normal:
        comps = [c for p in normal.values() for c in p]
        low, high = span([c[1] for c in comps], [c[2] for c in comps])
        lows.append(low)
        highs.append(high)
    low, high = min(lows), max(highs)
    pmf = np.zeros((len(cards), high - low + 1))
    if normal:
        seats = list(normal)
        pmf[seats] = mixture_pmfs([normal[i] for i in seats], low, high)
    for i, (banked, rest) in exact.items():
        pmf[i, banked - low : banked - low + rest.size] = rest
    return combine(pmf)


#: (table's id) -> (table, its LateGame): exact late distributions, memoised per state across calls.
_LATE: dict[int, tuple[StrategyTable, LateGame]] = {}


def _late_pmf(
    table: StrategyTable, card: Card, dice: Sequence[int], roll: int, exact_open: int
) -> npt.NDArray[np.float64]:
    hit = _LATE.get(id(table))
    if hit is None or hit[0] is not table or hit[1].points < points_bound(table, exact_open + 1):
        hit = _LATE[id(table)] = (table, LateGame(table, points_bound(table, exact_open + 1)))
    late = hit[1]
    if roll == 0 or len(dice) != N_DICE or len(card) >= table.model.n_boxes:
        return late.start(card)
    if roll == 3:  # the box is chosen now: the card after it, exact
        return late.scored(card, tuple(dice), 3)
    return late.turn(card)[roll - 1][1][INDEX[N_DICE][tuple(sorted(dice))]]


def win_chances_for(state: Any) -> list[float] | None:
    """Each seat's chance to win a :class:`~table.game.GameState` now, or None.

    None for a free-roll game or a ruleset / joker variant with no strategy
    table (shipped or in the cache: this never builds one).  A finished game
    gives its result (1 to the winner, shared on a tie).  Pure apart from
    loading the table once per process; a few ms (``benchmarks/win_chances.py``).
    """
    from table.game import GameMode
    from table.rules import find_ruleset
    from table.strategy.errors import StrategyError
    from table.strategy.tables import get_table

    if state is None or state.mode is not GameMode.SCORECARD or not state.cards:
        return None
    try:
        rs = find_ruleset(state.ruleset)
        table = get_table(rs, state.joker if rs.has_yahtzee_bonus else None, build=False)
    except (FileNotFoundError, StrategyError, ValueError):
        return None
    if table.second is None:
        return None
    turn = state.turn
    if turn is None or not turn.roll or len(turn.dice) != N_DICE or not all(1 <= d <= 6 for d in turn.dice):
        return win_chances(table, state.cards)
    return win_chances(table, state.cards, turn.player, turn.dice, turn.roll)
