"""Backward induction over turn-start states: the optimal solitaire value table.

``V[mask, flag, upper]`` is the expected number of points still to come (upper
bonus included, paid at the end) when a turn starts in that state and the
player maximises the expected final score.  See :mod:`table.strategy.model`
for the state layout.

Within one turn, for a batch of states at once (arrays of shape (252, S): one
row per distinct roll, one column per state):

1. ``W3[R] = stop(R, roll 3)``: the best legal box, its points, the Yahtzee
   bonus if any, plus ``V`` of the state it leads to.
2. Keeper values ``E[K]`` for the 462 keepers ``K``: ``E[R] = W[R]`` for five
   dice, and ``E[K]`` is the mean over a sixth-face ``f`` of ``E[K + f]``.
3. ``W2[R] = max(stop(R, roll 2), max over K within R of E[K])`` (a running
   maximum over sub-multisets), and the same again for ``W1``.
4. The state's value is the mean of ``W1`` over the first throw.

References
----------
.. [1] T. Verhoeff, "Optimal solitaire Yahtzee advisor and Yahtzee
   proficiency test", 1999 (254.5896 with bonus and free-choice joker).
.. [2] J. Glenn, "An optimal strategy for Yahtzee", Loyola College in
   Maryland, CS-TR-0002, 2006 (245.87 without bonus and joker).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from table.strategy._dice import (
    CHILD,
    FIVE_OF_A_KIND_ROWS,
    LEVELS,
    N_DICE,
    N_PARENTS,
    PARENT,
    ROLL_PROB,
    ROLLS,
)
from table.strategy.model import Model

Array = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]

#: States evaluated together: small enough for the (252, CHUNK) arrays to stay in
#: the CPU cache (2048 was 5x slower than 256 here), large enough to amortise Python.
CHUNK = 256

_KS = np.arange(6, dtype=np.intp)
#: _FACE_COUNT[f][r]: how many dice of roll r show face f (index 0 unused).
_FACE_COUNT = [np.zeros(len(ROLLS), dtype=np.intp)] + [
    np.array([r.count(f) for r in ROLLS], dtype=np.intp) for f in range(1, 7)
]


def stop_values(
    model: Model,
    V: npt.NDArray[np.floating],
    m: IntArray,
    g: IntArray,
    u: IntArray,
    roll: int,
    *,
    out: Array | None = None,
    scratch: Array | None = None,
) -> Array:
    """Value of stopping on each roll and scoring the best legal box.

    Parameters
    ----------
    model : Model
    V : ndarray of shape ``model.shape``
        Value table; must hold every state one more box filled than ``m``.
    m, g, u : ndarray of shape (S,), dtype intp
        Masks, flags and capped upper sums of the states.
    roll : int
        Throw number 1..3 on which the player stops (Generala's servida).
    out, scratch : ndarray of shape (252, S), optional
        Buffers for the result and a temporary (the solver reuses them).

    Returns
    -------
    W : ndarray of shape (252, S), dtype float64
        Points of the best box plus its Yahtzee bonus plus ``V`` after it;
        ``-inf`` where no box is open.
    """
    scores = model.float_scores[roll - 1]
    cap = model.cap
    upper = dict(zip(model.upper_bits, range(1, 7)))
    n_rolls = scores.shape[-1]
    best = np.empty((n_rolls, m.size)) if out is None else out
    best.fill(-np.inf)
    cand = np.empty_like(best) if scratch is None else scratch
    for b in range(model.n_boxes):
        bit = 1 << b
        open_ = (m & bit) == 0
        if not open_.any():
            continue
        m2 = m | bit
        if b in model.flag_dependent_boxes:
            # Points depend on the flag (Doble Generala): the general path.
            np.add(scores[g, b].T, V[m2, g, u][None, :], out=cand)
            cand[:, ~open_] = -np.inf
        else:
            pts = scores[0, b][:, None]
            if b in upper:
                # Only six distinct upper sums follow: gather those, then expand by face count.
                face = upper[b]
                small = V[m2[None, :], g[None, :], np.minimum(u[None, :] + face * _KS[:, None], cap)]
                small[:, ~open_] = -np.inf
                np.take(small, _FACE_COUNT[face], axis=0, out=cand)
                cand += pts
            elif b == model.flag_box:
                np.add(pts, np.where(open_, V[m2, 0, u], -np.inf)[None, :], out=cand)
                fifty = np.nonzero(pts[:, 0] == 50)[0]
                cand[fifty] = pts[fifty] + np.where(open_, V[m2, 1, u], -np.inf)[None, :]
            else:
                np.add(pts, np.where(open_, V[m2, g, u], -np.inf)[None, :], out=cand)
        np.maximum(best, cand, out=best)
    if model.has_bonus:
        _joker_stop_values(model, V, m, g, u, best)
    return best


def _joker_stop_values(
    model: Model, V: npt.NDArray[np.floating], m: IntArray, g: IntArray, u: IntArray, best: Array
) -> None:
    """Overwrite the five-of-a-kind rows of ``best`` where the roll is a bonus Yahtzee."""
    yb = model.flag_box
    assert yb is not None and model.joker is not None
    sel = np.nonzero((m >> yb) & 1)[0]
    if not sel.size:
        return
    ms, gs, us = m[sel], g[sel], u[sel]
    upper = set(model.upper_bits)
    for fi in range(6):
        jp = model.joker[ms, fi].astype(np.intp)  # (s, n_boxes), -1 = not allowed
        top = np.full(sel.size, -np.inf)
        for b in range(model.n_boxes):
            p = jp[:, b]
            legal = p >= 0
            if not legal.any():
                continue
            u2 = np.minimum(us + np.maximum(p, 0), model.cap) if b in upper else us
            nxt = V[ms | (1 << b), gs, u2]
            np.maximum(top, np.where(legal, p + nxt, -np.inf), out=top)
        best[FIVE_OF_A_KIND_ROWS[fi], sel] = top + model.bonus * gs


class Workspace:
    """Arrays for one batch of ``size`` states, reused from chunk to chunk.

    Allocating the (252, S) temporaries afresh for every chunk cost more
    system time (page faults) than the arithmetic; the solver keeps one
    workspace per batch size instead.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        n = [len(level) for level in LEVELS]
        self.E = [[np.empty((n[k], size)) for k in range(N_DICE)] for _ in range(2)]
        self.M = [np.empty((n[k], size)) for k in range(N_DICE + 1)]
        self.W = [np.empty((n[N_DICE], size)) for _ in range(3)]
        self.stop = [np.empty((n[N_DICE], size)) for _ in range(2)]
        self.tmp = np.empty((n[N_DICE], size))


def keeper_values(W: Array, *, out: list[Array] | None = None, tmp: Array | None = None) -> list[Array]:
    """Expected value of holding each keeper before a throw.

    Parameters
    ----------
    W : ndarray of shape (252, S)
        Value of each roll after the throw.
    out : list of 5 ndarrays, optional
        Buffers of shape (n_k, S) for levels 0..4.
    tmp : ndarray of shape (252, S), optional
        Scratch buffer.

    Returns
    -------
    E : list of 6 ndarrays, ``E[k]`` of shape (n_k, S)
        ``E[k][i]``: value of holding multiset ``LEVELS[k][i]`` and throwing
        the other ``5 - k`` dice; ``E[5]`` is ``W``.
    """
    size = W.shape[1]
    if tmp is None:
        tmp = np.empty_like(W)
    E: list[Array] = [W] * (N_DICE + 1)
    for k in range(N_DICE - 1, -1, -1):
        child = CHILD[k]
        n = child.shape[0]
        acc = out[k] if out is not None else np.empty((n, size))
        t = tmp[:n]
        np.take(E[k + 1], child[:, 0], axis=0, out=acc, mode="clip")
        for j in range(1, 6):
            np.take(E[k + 1], child[:, j], axis=0, out=t, mode="clip")
            acc += t
        acc /= 6.0
        E[k] = acc
    return E


def best_keeper(E: list[Array], *, out: list[Array] | None = None, tmp: Array | None = None) -> Array:
    """For each roll, the largest ``E`` over every sub-multiset of it (shape (252, S)).

    ``out`` (buffers of shape (n_k, S) for levels 0..5) and ``tmp`` (252, S)
    are optional scratch space.
    """
    size = E[N_DICE].shape[1]
    if tmp is None:
        tmp = np.empty_like(E[N_DICE])
    M = E[0]
    for k in range(1, N_DICE + 1):
        parent = PARENT[k]
        assert parent is not None
        n = parent.shape[0]
        Mk = out[k] if out is not None else np.empty((n, size))
        np.take(M, parent[:, 0], axis=0, out=Mk, mode="clip")
        np.maximum(Mk, E[k], out=Mk)
        for j in range(1, 6):
            rows = N_PARENTS[k][j]
            if rows:
                t = tmp[:rows]
                np.take(M, parent[:rows, j], axis=0, out=t, mode="clip")
                np.maximum(Mk[:rows], t, out=Mk[:rows])
        M = Mk
    return M


def roll_values(
    model: Model, V: npt.NDArray[np.floating], m: IntArray, g: IntArray, u: IntArray, ws: Workspace | None = None
) -> tuple[Array, Array, Array, list[Array], list[Array]]:
    """Values of each roll on throws 1, 2, 3 and the keeper values before throws 2 and 3.

    Parameters
    ----------
    model, V, m, g, u
        As for :func:`stop_values`.
    ws : Workspace, optional
        Buffers for ``m.size`` states; the results live in it until the next call.

    Returns
    -------
    W1, W2, W3 : ndarray of shape (252, S)
        Value of each roll just after throw 1, 2, 3 (best of stopping and
        holding), plus points to come.
    E2, E3 : list of ndarray
        Keeper values (see :func:`keeper_values`) before throws 2 and 3.
    """
    if ws is None:
        ws = Workspace(m.size)
    W3 = stop_values(model, V, m, g, u, 3, out=ws.W[2], scratch=ws.tmp)
    stop2 = W3 if model.same_stop(2) else stop_values(model, V, m, g, u, 2, out=ws.stop[0], scratch=ws.tmp)
    stop1 = W3 if model.same_stop(1) else stop_values(model, V, m, g, u, 1, out=ws.stop[1], scratch=ws.tmp)
    E3 = keeper_values(W3, out=ws.E[1], tmp=ws.tmp)
    W2 = np.maximum(stop2, best_keeper(E3, out=ws.M, tmp=ws.tmp), out=ws.W[1])
    E2 = keeper_values(W2, out=ws.E[0], tmp=ws.tmp)
    W1 = np.maximum(stop1, best_keeper(E2, out=ws.M, tmp=ws.tmp), out=ws.W[0])
    return W1, W2, W3, E2, E3


def turn_start_values(
    model: Model, V: npt.NDArray[np.floating], m: IntArray, g: IntArray, u: IntArray, ws: Workspace | None = None
) -> Array:
    """Expected points to come from the start of a turn in each state (shape (S,))."""
    W1 = roll_values(model, V, m, g, u, ws)[0]
    return ROLL_PROB @ W1


def level_states(model: Model, filled: int) -> tuple[IntArray, IntArray, IntArray]:
    """Every reachable state with ``filled`` boxes filled, as arrays ``(m, g, u)``."""
    reach: dict[int, IntArray] = {}
    upper_mask = sum(1 << b for b in model.upper_bits)
    ms, gs, us = [], [], []
    for mask in range(1 << model.n_boxes):
        if mask.bit_count() != filled:
            continue
        key = mask & upper_mask
        if key not in reach:
            reach[key] = model.reachable_upper(mask)
        ups = reach[key]
        flags = (0,) if model.flag_box is None or not mask >> model.flag_box & 1 else (0, 1)
        for flag in flags:
            ms.append(np.full(ups.size, mask, dtype=np.intp))
            gs.append(np.full(ups.size, flag, dtype=np.intp))
            us.append(ups)
    return np.concatenate(ms), np.concatenate(gs), np.concatenate(us)


def solve(model: Model, progress: Callable[[int, int], None] | None = None) -> Array:
    """Build the value table of ``model`` by backward induction.

    Parameters
    ----------
    model : Model
    progress : callable, optional
        Called as ``progress(done, total)`` with counts of states.

    Returns
    -------
    V : ndarray of shape ``model.shape``, dtype float64
        Expected points to come from each turn-start state; NaN for
        unreachable states.  ``V[0, 0, 0]`` is the expected final score of a
        game under optimal play.
    """
    V = np.full(model.shape, np.nan)
    n = model.n_boxes
    levels = [level_states(model, k) for k in range(n + 1)]
    total = sum(lv[0].size for lv in levels)
    m, g, u = levels[n]
    V[m, g, u] = np.where(u >= model.cap, model.upper_bonus_points, 0) if model.cap else 0.0
    done = m.size
    spaces: dict[int, Workspace] = {}
    if progress:
        progress(done, total)
    for k in range(n - 1, -1, -1):
        m, g, u = levels[k]
        for start in range(0, m.size, CHUNK):
            sl = slice(start, start + CHUNK)
            size = m[sl].size
            if size not in spaces:
                spaces[size] = Workspace(size)
            V[m[sl], g[sl], u[sl]] = turn_start_values(model, V, m[sl], g[sl], u[sl], spaces[size])
            done += m[sl].size
            if progress:
                progress(done, total)
    return V
