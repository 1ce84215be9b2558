"""vision.lab.confidence_suite and the fitting command: which values are right, the reliability per condition."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vision.confidence_model import FEATURES
from vision.lab.confidence_suite import (
    ValuedDie,
    draw_reliability_grid,
    format_reliability,
    reliability_table,
    valued_outcomes,
)
from vision.lab.perturb import Perturbed, Truth
from vision.lab.training import fit_confidence_model as fitter
from vision.reading import DieReading, ImageReading
from vision.render import Unreadable


def test_a_value_is_right_only_on_a_flat_die_of_that_value():
    pic = Perturbed(
        np.zeros((100, 200, 3), np.uint8),
        (Truth(3, (10, 10, 30, 30)), Truth(5, (60, 10, 30, 30)), Truth(2, (110, 10, 30, 30), Unreadable.LEANING)),
    )
    reading = ImageReading(
        (
            DieReading(3, (11, 10, 30, 30), 0.9),  # right
            DieReading(6, (60, 11, 30, 30), 0.8),  # wrong value
            DieReading(2, (110, 10, 30, 30), 0.7),  # a value on a stacked die: wrong even if it is its face
            DieReading(None, (160, 60, 30, 30), 0.3, "low confidence"),  # no value: not counted
            DieReading(1, (160, 10, 30, 30), 0.6),  # a value where no die is
        )
    )
    assert valued_outcomes(pic, reading) == [(0, True), (1, False), (2, False), (4, False)]


def _rows():
    rows = [ValuedDie("glare", c, ok, None) for c, ok in [(0.95, True)] * 8 + [(0.95, False)] * 2]
    rows += [ValuedDie("none", 0.99, True, None)] * 20 + [ValuedDie("clutter", 0.45, False, None)] * 3
    return rows


def test_reliability_per_condition_bins_stated_against_observed():
    table = reliability_table(_rows())
    assert list(table) == ["glare", "none", "clutter", "all"]
    top = table["glare"]["bins"][-1]
    assert (top["count"], top["mean_confidence"], top["accuracy"]) == (10, 0.95, 0.8)
    assert table["glare"]["wrong"] == 2 and table["glare"]["ece"] == pytest.approx(0.15)
    assert table["clutter"]["bins"][4]["count"] == 3 and table["clutter"]["bins"][4]["accuracy"] == 0.0
    assert table["all"]["dice"] == 33 and table["all"]["wrong"] == 5
    lines = format_reliability(table)
    assert any(line.strip().startswith("glare") and "0.90-1.00: 95.0/80.0% (10)" in line for line in lines)
    assert any(line.strip().startswith("clutter") and "0.40-0.50: 45.0/0.0% (3)" in line for line in lines)
    grid = draw_reliability_grid(table, columns=2, tile=(320, 300))
    assert grid.shape == (40 + 2 * 300, 2 * 320, 3) and grid.dtype == np.uint8


def test_the_fitting_command_refits_from_saved_rows_and_keeps_the_map(tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 2000
    feats = np.zeros((n, len(FEATURES)))
    feats[:, 0] = rng.uniform(1, 6, n)
    feats[:, FEATURES.index("det_doubt")] = rng.uniform(0, 1, n)
    right = rng.uniform(0, 1, n) < 1 / (1 + np.exp(-(4 - 5 * feats[:, FEATURES.index("det_doubt")])))
    conds = np.array(["none", "clutter"] * (n // 2))
    np.savez(tmp_path / "rows.npz", features=feats, right=right, condition=conds, seed=1, command="made here")
    out = tmp_path / "conf.json"
    out.write_text(json.dumps({"map": {"raw": [0.5], "calibrated": [0.9]}}))
    assert fitter.main(["--from-data", str(tmp_path / "rows.npz"), "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["map"] == {"raw": [0.5], "calibrated": [0.9]}
    model = doc["model"]
    assert model["features"] == list(FEATURES) and model["rows_read_by"] == "made here"
    assert model["weights"][FEATURES.index("det_doubt")] < -2
    assert set(model["per_condition"]) == {"none", "clutter"}


def test_the_fitting_command_refuses_the_benchmarks_seed(tmp_path, capsys):
    with pytest.raises(SystemExit):
        fitter.main(["--seed", "0", "--out", str(tmp_path / "x.json")])
    assert "seed 0" in capsys.readouterr().err
