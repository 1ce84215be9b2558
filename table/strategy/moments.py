"""Mean and second moment of the points still to come, under the optimal (max-mean) policy.

The same backward induction as :mod:`table.strategy.solver`, carrying a second
array beside each value: ``S = E[X**2]`` of the points ``X`` still to come.  The
policy is the solver's (every choice maximises the mean; on a tie the first
option the solver meets); the second moment follows the option chosen:

- a choice (box, keeper, stop or re-roll): the chosen option's moments;
- a throw (chance node): the probability-weighted mean of both moments;
- a box scoring ``r`` points now before ``X'``:
  ``E[(r + X')**2] = r**2 + 2 r E[X'] + E[X'**2]``.

So ``S - V**2`` is the variance of the final score from a state, which
:mod:`table.strategy.win_chances` turns into each player's chance to win.

With ``lump=True`` three more numbers ride along for the *lump box*
(:func:`lump_box`: the five-of-a-kind box, worth 50 and the doorway to
bonuses, so the final score is two humps): with ``I`` = 1 if that box is
still to be scored above 0 from here, ``A = E[I]``, ``B = E[X I]`` and
``C = E[X**2 I]``.  Scoring ``r`` in the lump box sets ``I = [r > 0]``;
any other box keeps ``I`` and shifts ``X`` by ``r`` as above.  They split
the final score into "lump scored" and "not" (a mixture of two normals).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from table.strategy._dice import FIVE_OF_A_KIND_ROWS, N_DICE, N_PARENTS, PARENT, ROLL_PROB, ROLLS
from table.strategy.model import Model
from table.strategy.solver import CHUNK, keeper_values, level_states

Array = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]
#: A pair (mean, second moment) of arrays of one shape.
Pair = tuple[Array, Array]

_KS = np.arange(6, dtype=np.intp)
_FACE_COUNT = [np.zeros(len(ROLLS), dtype=np.intp)] + [
    np.array([r.count(f) for r in ROLLS], dtype=np.intp) for f in range(1, 7)
]


def lump_box(model: Model) -> int:
    """The box whose 0-or-plenty score splits the final score most: the flag box (Yahtzee, Generala) if any,
    else the box with the highest top score (Yacht, Yatzy: their 50; Chaser: Chase Off's 50)."""
    if model.flag_box is not None:
        return model.flag_box
    return int(np.argmax([model.scores[:, :, b, :].max() for b in range(model.n_boxes)]))


def _take_better(best: Array, best2: Array, cand: Array, cand2: Array) -> None:
    """Where ``cand`` beats ``best`` (strictly), copy both moments over (in place).

    ``best2`` may carry a trailing axis of statistics (``(..., q)``) beyond ``best``'s shape.
    """
    better = cand > best
    np.copyto(best, cand, where=better)
    np.copyto(best2, cand2, where=better[..., None] if best2.ndim > best.ndim else better)


def _scored(pts: Array, nv: Array, ns: Array, lump: bool = False) -> Pair:
    """Moments of ``pts + X'`` from those of ``X'`` (broadcasting).

    ``ns``: ``E[X'**2]``, or ``(..., 4)`` statistics ``(S, A, B, C)`` (see the module) with ``lump`` True
    when the box scored is the lump box.
    """
    if ns.ndim == np.ndim(nv):
        return pts + nv, pts * pts + 2.0 * pts * nv + ns
    mean = pts + nv
    p, v = np.asarray(pts, dtype=np.float64)[..., None], np.asarray(nv)[..., None]
    out = np.empty(np.broadcast_shapes(np.shape(mean), ns.shape[:-1]) + (4,))
    out[..., :1] = p * (p + 2.0 * v) + ns[..., :1]
    if lump:
        hit = p > 0
        out[..., 1:2] = hit
        out[..., 2:3] = hit * (p + v)
        out[..., 3:4] = hit * out[..., :1]
    else:
        a, b = ns[..., 1:2], ns[..., 2:3]
        out[..., 1:2] = a
        out[..., 2:3] = p * a + b
        out[..., 3:4] = p * (p * a + 2.0 * b) + ns[..., 3:4]
    return mean, out


def stop_moments(model: Model, V: Array, S: Array, m: IntArray, g: IntArray, u: IntArray, roll: int) -> Pair:
    """Moments of stopping on each roll and scoring the best box (by mean); shapes (252, S).

    As :func:`table.strategy.solver.stop_values`, with ``S`` the second-moment table.
    """
    scores = model.float_scores[roll - 1]
    cap = model.cap
    upper = dict(zip(model.upper_bits, range(1, 7)))
    best = np.full((scores.shape[-1], m.size), -np.inf)
    best2 = np.zeros(best.shape + S.shape[len(model.shape) :])
    lump = lump_box(model) if S.ndim > len(model.shape) else -1
    for b in range(model.n_boxes):
        bit = 1 << b
        open_ = (m & bit) == 0
        if not open_.any():
            continue
        m2 = m | bit
        if b in model.flag_dependent_boxes:
            pts = scores[g, b].T
            nv, ns = V[m2, g, u][None, :], S[m2, g, u][None]
        else:
            pts = scores[0, b][:, None]
            if b in upper:
                face = upper[b]
                idx = (m2[None, :], g[None, :], np.minimum(u[None, :] + face * _KS[:, None], cap))
                rows = _FACE_COUNT[face]
                nv, ns = V[idx][rows], S[idx][rows]
            elif b == model.flag_box:
                nv = np.repeat(V[m2, 0, u][None, :], pts.shape[0], axis=0)
                ns = np.repeat(S[m2, 0, u][None], pts.shape[0], axis=0)
                fifty = np.nonzero(pts[:, 0] == 50)[0]
                nv[fifty], ns[fifty] = V[m2, 1, u], S[m2, 1, u]
            else:
                nv, ns = V[m2, g, u][None, :], S[m2, g, u][None]
        cand, cand2 = _scored(pts, nv, ns, b == lump)
        cand = np.where(open_[None, :], cand, -np.inf)
        _take_better(best, best2, cand, np.broadcast_to(cand2, best2.shape))
    if model.has_bonus:
        _joker_moments(model, V, S, m, g, u, best, best2)
    return best, best2


def _joker_moments(
    model: Model, V: Array, S: Array, m: IntArray, g: IntArray, u: IntArray, best: Array, best2: Array
) -> None:
    """Overwrite the five-of-a-kind rows where the roll is a bonus Yahtzee (as the solver does)."""
    yb = model.flag_box
    assert yb is not None and model.joker is not None
    sel = np.nonzero((m >> yb) & 1)[0]
    if not sel.size:
        return
    ms, gs, us = m[sel], g[sel], u[sel]
    upper = set(model.upper_bits)
    bonus = (model.bonus * gs).astype(np.float64)
    for fi in range(6):
        jp = model.joker[ms, fi].astype(np.intp)
        top, top2 = np.full(sel.size, -np.inf), np.zeros((sel.size,) + S.shape[len(model.shape) :])
        for b in range(model.n_boxes):
            p = jp[:, b]
            legal = p >= 0
            if not legal.any():
                continue
            u2 = np.minimum(us + np.maximum(p, 0), model.cap) if b in upper else us
            nxt = (ms | (1 << b), gs, u2)
            cand, cand2 = _scored(p.astype(np.float64), V[nxt], S[nxt])
            _take_better(top, top2, np.where(legal, cand, -np.inf), cand2)
        mean, second = _scored(bonus, top, top2)
        best[FIVE_OF_A_KIND_ROWS[fi], sel] = mean
        best2[FIVE_OF_A_KIND_ROWS[fi], sel] = second


def best_keeper_moments(E: list[Array], E2: list[Array]) -> Pair:
    """For each roll, the moments of its sub-multiset keeper with the largest mean; shapes (252, S)."""
    M, M2 = E[0], E2[0]
    for k in range(1, N_DICE + 1):
        parent = PARENT[k]
        assert parent is not None
        Mk, M2k = M[parent[:, 0]], M2[parent[:, 0]]
        _take_better(Mk, M2k, E[k], E2[k])
        for j in range(1, 6):
            rows = N_PARENTS[k][j]
            if rows:
                _take_better(Mk[:rows], M2k[:rows], M[parent[:rows, j]], M2[parent[:rows, j]])
        M, M2 = Mk, M2k
    return M, M2


def roll_moments(
    model: Model, V: Array, S: Array, m: IntArray, g: IntArray, u: IntArray
) -> tuple[Pair, Pair, Pair, list[Pair], list[Pair]]:
    """Moments of each roll just after throws 1, 2, 3, and of each keeper before throws 2 and 3.

    Returns ``(W1, W2, W3, E2, E3)`` like :func:`table.strategy.solver.roll_values`, each
    entry a (mean, second moment) pair; ``E2[k]`` and ``E3[k]`` are pairs of shape (n_k, S).
    """
    W3 = stop_moments(model, V, S, m, g, u, 3)
    stops = [W3 if model.same_stop(r) else stop_moments(model, V, S, m, g, u, r) for r in (1, 2)]
    E3 = list(zip(keeper_values(W3[0]), _keepers(W3[1])))
    W2 = _stop_or_keep(stops[1], E3)
    E2 = list(zip(keeper_values(W2[0]), _keepers(W2[1])))
    W1 = _stop_or_keep(stops[0], E2)
    return W1, W2, W3, E2, E3


def _keepers(W: Array) -> list[Array]:
    """:func:`keeper_values` of a (252, S) or (252, S, q) array (the statistics' axis rides along)."""
    if W.ndim == 2:
        return keeper_values(W)
    return [e.reshape(e.shape[0], *W.shape[1:]) for e in keeper_values(W.reshape(W.shape[0], -1))]


def _stop_or_keep(stop: Pair, E: list[Pair]) -> Pair:
    keep, keep2 = best_keeper_moments([e[0] for e in E], [e[1] for e in E])
    best, best2 = stop[0].copy(), stop[1].copy()
    _take_better(best, best2, keep, keep2)
    return best, best2


def terminal_moments(model: Model, u: IntArray, q: int = 1) -> Pair:
    """Moments at a full card: the upper bonus (paid at the end) or 0; ``q`` 4: with ``A = B = C = 0``."""
    v = np.where(u >= model.cap, model.upper_bonus_points, 0).astype(np.float64) if model.cap else np.zeros(u.size)
    if q == 1:
        return v, v * v
    return v, np.stack([v * v] + [np.zeros(u.size)] * (q - 1), axis=-1)


def solve_moments(model: Model, progress: Callable[[int, int], None] | None = None, *, lump: bool = False) -> Pair:
    """The mean table ``V`` (equal to :func:`table.strategy.solver.solve`'s) and the second-moment table ``S``.

    Both of shape ``model.shape``, float64, NaN for unreachable states.  ``lump``: ``S`` of shape
    ``model.shape + (4,)`` holding ``(S, A, B, C)`` (see the module).
    """
    q = 4 if lump else 1
    V = np.full(model.shape, np.nan)
    S = np.full(model.shape + ((q,) if lump else ()), np.nan)
    n = model.n_boxes
    levels = [level_states(model, k) for k in range(n + 1)]
    total = sum(lv[0].size for lv in levels)
    m, g, u = levels[n]
    V[m, g, u], S[m, g, u] = terminal_moments(model, u, q)
    done = m.size
    if progress:
        progress(done, total)
    for k in range(n - 1, -1, -1):
        m, g, u = levels[k]
        for start in range(0, m.size, CHUNK):
            sl = slice(start, start + CHUNK)
            W1 = roll_moments(model, V, S, m[sl], g[sl], u[sl])[0]
            V[m[sl], g[sl], u[sl]] = ROLL_PROB @ W1[0]
            S[m[sl], g[sl], u[sl]] = np.tensordot(ROLL_PROB, W1[1], axes=(0, 0))
            done += m[sl].size
            if progress:
                progress(done, total)
    return V, S
