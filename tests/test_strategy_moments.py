"""The second moment of the points to come: the solver's recursion against an independent brute force.

For a card with one open box (the last turn) the brute force below follows
every throw and every hold in plain Python, with the max-mean policy, and must
give the tables' mean and variance of the final total.  Tables come from the
package (format 2: they carry the second moment).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

from table.rules import Card, card_total
from table.strategy import get_table
from table.strategy._dice import ROLLS, sub_multisets
from table.strategy.errors import StaleTablesError
from table.strategy.model import Model
from table.strategy.moments import solve_moments
from table.strategy.solver import solve
from table.strategy.tables import PACKAGE_DATA, file_name, load_table


def _outcomes(n: int) -> list[tuple[tuple[int, ...], float]]:
    counts = Counter(tuple(sorted(t)) for t in itertools.product(range(1, 7), repeat=n))
    return [(k, c / 6**n) for k, c in counts.items()]


def brute_last_turn(model: Model, card: Card) -> tuple[float, float]:
    """Mean and variance of the final total of ``card`` (one box open) under max-mean play."""

    def stop(dice: tuple[int, ...], roll: int) -> tuple[float, float]:
        best = None
        for box in model.options(card, dice, roll):
            y = card_total(model.ruleset, model.after(card, dice, box, roll))
            if best is None or y > best:
                best = y
        assert best is not None
        return float(best), float(best) ** 2

    def keep_value(keep: tuple[int, ...], after: dict[tuple[int, ...], tuple[float, float]]) -> tuple[float, float]:
        m = s = 0.0
        for rest, p in _outcomes(5 - len(keep)):
            a, b = after[tuple(sorted(keep + rest))]
            m, s = m + p * a, s + p * b
        return m, s

    W = {d: stop(d, 3) for d in ROLLS}
    for roll in (2, 1):
        cache: dict[tuple[int, ...], tuple[float, float]] = {}
        nxt = {}
        for d in ROLLS:
            best = stop(d, roll)
            for keep in sub_multisets(d):
                if len(keep) == 5:
                    continue
                if keep not in cache:
                    cache[keep] = keep_value(keep, W)
                if cache[keep][0] > best[0] + 1e-9:
                    best = cache[keep]
            nxt[d] = best
        W = nxt
    m, s = keep_value((), W)
    return m, s - m * m


CASES = [
    ("yacht", None, {b: 0 for b in Model.of("yacht").ruleset.boxes if b != "yacht"}),
    ("generala", None, {b: 0 for b in Model.of("generala").ruleset.boxes if b != "escalera"}),
    # joker: a bonus Yahtzee (+100) over a 50 can go in chance
    (
        "yahtzee",
        "forced",
        {b: (50 if b == "yahtzee" else 0) for b in Model.of("yahtzee").ruleset.boxes if b != "chance"},
    ),
    # upper bonus: 45 in the upper boxes, three sixes reach 63
    (
        "yahtzee",
        "none",
        {"aces": 3, "twos": 6, "threes": 9, "fours": 12, "fives": 15}
        | {b: 0 for b in Model.of("yahtzee").ruleset.boxes[6:]},
    ),
]


@pytest.mark.parametrize(("rules", "variant", "boxes"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_last_turn_moments_match_brute_force(rules: str, variant: str | None, boxes: dict[str, int]) -> None:
    table = get_table(rules, variant, build=False)
    card = Card(boxes)
    mean, var = table.final_moments(card)
    want_mean, want_var = brute_last_turn(table.model, card)
    assert mean == pytest.approx(want_mean, abs=1e-3)
    assert var == pytest.approx(want_var, rel=1e-4, abs=1e-2)
    assert var > 1.0  # a real spread, not a degenerate case


def test_moments_solver_keeps_the_means_and_gives_positive_variances() -> None:
    model = Model.of("generala")
    V, S = solve_moments(model)
    assert np.array_equal(np.isnan(V), np.isnan(solve(model)))
    assert np.nanmax(np.abs(V - solve(model))) == 0.0
    var = S - V * V
    reach = ~np.isnan(V)
    assert np.all(var[reach] > -1e-6)
    full = (1 << model.n_boxes) - 1
    assert np.all(np.abs(var[full][reach[full]]) < 1e-9)  # nothing left to roll: no spread


def test_a_format_1_table_is_stale(tmp_path) -> None:
    import json

    model = Model.of("chaser")
    table = load_table(PACKAGE_DATA / file_name("chaser", "standard"), model)
    old = tmp_path / "chaser-standard.npz"
    meta = table.meta() | {"format": 1}
    np.savez_compressed(old, values=table.values.astype(np.float32), meta=np.array(json.dumps(meta)))
    with pytest.raises(StaleTablesError, match="stale"):
        load_table(old, model)
    assert math.isfinite(table.final_moments(Card.empty())[1])


@pytest.mark.parametrize("rules", ["yacht", "generala"])
def test_lump_statistics_on_the_last_turn_match_the_exact_distribution(rules: str) -> None:
    """One box open, the lump box: the points to come are its score, so ``A = P(X > 0)``, ``B = E[X]``,
    ``C = E[X**2]`` of the exact distribution (:mod:`table.strategy.late_game`, plain Python)."""
    from table.strategy.late_game import LateGame
    from table.strategy.moments import lump_box

    table = get_table(rules, build=False)
    model = table.model
    lump = model.ruleset.boxes[lump_box(model)]
    assert lump in ("yacht", "generala")
    card = Card({b: 0 for b in model.ruleset.boxes if b != lump})
    pmf = LateGame(table, 200).start(card)
    k = np.arange(pmf.size)
    a, b, c = table.lump[model.state_of(card)]
    assert (a, b, c) == (
        pytest.approx(1 - pmf[0], rel=1e-5),
        pytest.approx(pmf @ k, rel=1e-5),
        pytest.approx(pmf @ k**2, rel=1e-5),
    )
    assert 0.01 < a < 0.99
    other = Card({b: 0 for b in model.ruleset.boxes if b not in (lump, "aces")} | {lump: 50})
    assert np.all(table.lump[model.state_of(other)] == 0.0)  # the lump box decided: nothing to split


def test_lump_statistics_are_a_consistent_split() -> None:
    """``A`` is a probability and both parts have a non-negative variance, wherever the state is reachable."""
    model = Model.of("chaser")
    V, Q = solve_moments(model, lump=True)
    reach = ~np.isnan(V)
    S, A, B, C = (Q[..., i][reach] for i in range(4))
    assert np.all((A >= -1e-12) & (A <= 1 + 1e-12))
    mid = (A > 1e-6) & (A < 1 - 1e-6)
    m1, m0 = B[mid] / A[mid], (V[reach][mid] - B[mid]) / (1 - A[mid])
    assert np.all(C[mid] / A[mid] - m1**2 > -1e-6)
    assert np.all((S[mid] - C[mid]) / (1 - A[mid]) - m0**2 > -1e-6)
    assert np.allclose(S, solve_moments(model)[1][reach], rtol=1e-12, atol=0)  # S unchanged by the extra statistics
