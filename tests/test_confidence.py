"""vision.confidence: the isotonic confidence map and the packaged one."""

from __future__ import annotations

import numpy as np
import pytest

from vision.confidence import ConfidenceMap, default_confidence_map, fit_isotonic


def test_fit_pools_violators_and_smooths_towards_one_half():
    # raw 0.2: 1 of 4 right; raw 0.5: 3 of 4; raw 0.9: 4 of 4 -> already increasing, three blocks
    probs = [0.2] * 4 + [0.5] * 4 + [0.9] * 4
    right = [1, 0, 0, 0] + [1, 1, 1, 0] + [1, 1, 1, 1]
    m = fit_isotonic(probs, right)
    assert m.raw == pytest.approx((0.2, 0.5, 0.9))
    assert m.calibrated == pytest.approx((2 / 6, 4 / 6, 5 / 6))
    assert m(0.35) == pytest.approx((2 / 6 + 4 / 6) / 2)
    assert m(0.0) == pytest.approx(2 / 6) and m(1.0) == pytest.approx(5 / 6)


def test_fit_merges_a_decreasing_pair_into_one_block():
    m = fit_isotonic([0.4, 0.4, 0.8, 0.8], [1, 1, 0, 0])
    assert m.raw == pytest.approx((0.6,)) and m.calibrated == pytest.approx((3 / 6,))


def test_fit_is_monotone_on_random_outcomes():
    rng = np.random.default_rng(3)
    p = rng.uniform(0, 1, 500)
    m = fit_isotonic(p, rng.uniform(0, 1, 500) < p)
    grid = [m(x) for x in np.linspace(0, 1, 101)]
    assert all(b >= a - 1e-12 for a, b in zip(grid, grid[1:]))
    assert all(0 < g < 1 for g in grid)


def test_small_blocks_are_pooled_with_their_smaller_neighbour():
    # raw 0.2: 1 of 4 right; 0.5: 3 of 4; 0.9: 4 of 4 (three blocks of 4); then 0.95: 20 of 20
    probs = [0.2] * 4 + [0.5] * 4 + [0.9] * 4 + [0.95] * 20
    right = [1, 0, 0, 0] + [1, 1, 1, 0] + [1] * 4 + [1] * 20
    assert len(fit_isotonic(probs, right).raw) == 3  # 0.9 and 0.95 are one block of right answers
    m = fit_isotonic(probs, right, min_block=8)  # 0.2 (4) joins 0.5 (4): 4 of 8 right
    assert m.raw == pytest.approx((0.35, (4 * 0.9 + 20 * 0.95) / 24))
    assert m.calibrated == pytest.approx((5 / 10, 25 / 26))
    one = fit_isotonic(probs, right, min_block=len(probs))
    assert one.calibrated == pytest.approx(((1 + 3 + 24 + 1) / (32 + 2),))
    grid = [fit_isotonic(probs, right, min_block=k)(x) for k in (1, 5, 9, 13) for x in np.linspace(0, 1, 21)]
    for k in range(4):
        curve = grid[21 * k : 21 * (k + 1)]
        assert all(b >= a - 1e-12 for a, b in zip(curve, curve[1:]))
    with pytest.raises(ValueError, match="min_block must be 1 or more"):
        fit_isotonic(probs, right, min_block=0)


@pytest.mark.parametrize(
    "raw, cal, match",
    [
        ((), (), "at least one"),
        ((0.2, 0.1), (0.3, 0.4), "increase"),
        ((0.1, 0.2), (0.5, 0.4), "not decrease"),
        ((0.1, 1.2), (0.5, 0.6), r"\[0, 1\]"),
    ],
)
def test_bad_maps_are_refused(raw, cal, match):
    with pytest.raises(ValueError, match=match):
        ConfidenceMap(raw, cal)


def test_fit_needs_matching_outcomes():
    with pytest.raises(ValueError, match="as many outcomes"):
        fit_isotonic([0.5, 0.6], [True])


def test_packaged_map_is_a_valid_monotone_map():
    m = default_confidence_map()
    values = [m(x) for x in (0.0, 0.3, 0.6, 0.9, 1.0)]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert values == sorted(values)


def test_packaged_map_was_fitted_on_every_dev_fold_held_out():
    # `dicetable eval` on DEV points here for the held-out estimate: every fold must be there
    import json

    from vision.confidence import DEFAULT_MAP_PATH
    from vision.lab.training.data import DEV_FOLDS
    from vision.reader import VALUE_THRESHOLD

    doc = json.loads(DEFAULT_MAP_PATH.read_text(encoding="utf-8"))
    assert doc["value_threshold"] == VALUE_THRESHOLD  # refit the map when the threshold moves
    folds = doc["fold_metrics"]
    assert sorted(folds) == [str(k) for k in range(DEV_FOLDS)]
    for fold in folds.values():
        assert 0.0 < fold["accuracy"] <= 1.0 and 0.0 <= fold["silent_error_rate"] < 0.05
        assert "twin" in fold["face_model"] and "twin" in fold["pip_model"]
