"""Tray geometry: homography from corners or markers, rectification, bump measurement."""

from __future__ import annotations

import numpy as np
import pytest

from vision.sources import _world as world
from vision.sources.synthetic import CameraPose, ScriptedRoll, SyntheticSource
from vision.tray import (
    CalibrationFailed,
    MarkerLayout,
    TrayGeometry,
    detect_markers,
    fit_tray,
    marker_shift_px,
    quad_mask,
)

CORNERS = [(100.0, 80.0), (540.0, 90.0), (530.0, 410.0), (95.0, 400.0)]


def test_corners_round_trip():
    geo = TrayGeometry.from_corners(CORNERS, width_mm=200, height_mm=150, px_per_mm=2.5)
    assert geo.size_px == (500, 375)
    np.testing.assert_allclose(geo.corners_px, CORNERS, atol=1e-6)
    pts = np.array([(10.0, 20.0), (150.0, 140.0)])
    np.testing.assert_allclose(geo.image_to_tray(geo.tray_to_image(pts)), pts, atol=1e-9)
    np.testing.assert_allclose(geo.image_to_tray(CORNERS[2]), (200.0, 150.0), atol=1e-6)


def test_geometry_repr_rebuilds_and_compares():
    geo = TrayGeometry.from_corners(CORNERS, width_mm=200, height_mm=150, px_per_mm=2.5)
    again = TrayGeometry(geo.homography, 200.0, 150.0, 2.5)
    assert again == geo
    np.testing.assert_allclose(again.matrix, geo.matrix)


@pytest.mark.parametrize(
    "corners, words",
    [
        (CORNERS[::-1], "do not outline the tray"),
        (CORNERS[:3], r"4 \(x, y\) image points"),
        ([(0, 0), (5, 0), (5, 5), (0, 5)], "at least 20 px apart"),
    ],
)
def test_bad_corners(corners, words):
    with pytest.raises(ValueError, match=words):
        TrayGeometry.from_corners(corners, width_mm=200, height_mm=150, px_per_mm=2.5)


def test_bad_scale_and_size():
    with pytest.raises(ValueError, match="px_per_mm"):
        TrayGeometry.from_corners(CORNERS, width_mm=200, height_mm=150, px_per_mm=100)
    with pytest.raises(ValueError, match="tray size"):
        TrayGeometry.from_corners(CORNERS, width_mm=5, height_mm=150, px_per_mm=2)


def test_marker_layout_checks():
    with pytest.raises(ValueError, match="4 distinct ids"):
        MarkerLayout.at_corners(200, 150, ids=(0, 1, 1, 2))
    with pytest.raises(ValueError, match="unknown ArUco dictionary"):
        MarkerLayout.at_corners(200, 150, dictionary="DICT_9X9")
    layout = MarkerLayout.at_corners(200, 150, size_mm=16)
    np.testing.assert_allclose(layout.corners_mm(0)[0], (-18.0, -18.0))


@pytest.fixture(scope="module")
def bumped_source():
    script = [ScriptedRoll(values=(1, 2, 3, 4, 5), tumble_frames=8, rest_frames=8)]
    return SyntheticSource(seed=9, script=script, idle_frames=2)


@pytest.mark.parametrize("pose", [CameraPose(), CameraPose(15, 0, 0), CameraPose(0, -15, 2.0)])
def test_fit_tray_from_markers_matches_the_truth(bumped_source, pose):
    src = bumped_source
    src._states = [s.__class__(s.dice, s.hand, pose, s.light, s.roll, s.phase) for s in src._states]
    image = src.render_state(src.frame_count - 1)
    found = detect_markers(image)
    assert sorted(found) == [0, 1, 2, 3]
    geo = fit_tray(found, world.MARKERS, width_mm=200, height_mm=150, px_per_mm=2.8)
    assert geo
    truth = src.geometry(pose)
    assert np.abs(geo.corners_px - truth.corners_px).max() < 1.5
    assert marker_shift_px(geo, world.MARKERS, found) < 1.5
    # rectified: every die's centre is bright (a die face on dark felt)
    rect = geo.rectify(image)
    assert rect.shape == (420, 560, 3)
    for d in src.truth(src.frame_count - 1).dice:
        x, y = (int(round(v * 2.8)) for v in d.centre_mm)
        assert np.median(rect[y - 12 : y + 13, x - 12 : x + 13]) > 150, d  # the die face, not the felt


def test_marker_shift_measures_a_bump(bumped_source):
    src = SyntheticSource(seed=9, script=[ScriptedRoll(values=(1,), tumble_frames=6, rest_frames=8)], idle_frames=1)
    src._states = [s.__class__(s.dice, s.hand, CameraPose(15, 0, 0), s.light, s.roll, s.phase) for s in src._states]
    found = detect_markers(src.render_state(0))
    assert 13 < marker_shift_px(src.geometry(), world.MARKERS, found) < 17
    assert marker_shift_px(src.geometry(), world.MARKERS, {}) is None


def test_fit_tray_with_a_covered_marker_says_which():
    src = SyntheticSource(seed=9, script=[ScriptedRoll(values=(1,), tumble_frames=6, rest_frames=8)], idle_frames=1)
    found = detect_markers(src.render_state(0))
    del found[2]
    fit = fit_tray(found, world.MARKERS, width_mm=200, height_mm=150, px_per_mm=2.8)
    assert not fit and isinstance(fit, CalibrationFailed)
    assert "found 3 of 4" in fit.reason and "bottom-right (id 2)" in fit.reason


def test_fit_tray_rejects_a_wrong_layout():
    src = SyntheticSource(seed=9, script=[ScriptedRoll(values=(1,), tumble_frames=6, rest_frames=8)], idle_frames=1)
    found = detect_markers(src.render_state(0))
    wrong = MarkerLayout.at_corners(200, 150, size_mm=30)
    fit = fit_tray(found, wrong, width_mm=200, height_mm=150, px_per_mm=2.8)
    assert not fit and "do not match the layout" in str(fit)


def test_quad_mask_covers_the_floor():
    geo = TrayGeometry.from_corners(CORNERS, width_mm=200, height_mm=150, px_per_mm=2.5)
    mask = quad_mask(geo, (480, 640))
    assert mask[240, 320] == 255 and mask[10, 10] == 0
