"""The pip finder (vision.pips): the packaged model, the layout fit on its marks, and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.face import CROP_SIZE
from vision.lab.training.synth import PIP_LAYOUTS, fixed_probe_crops, plain_face
from vision.pips import (
    DEFAULT_MODEL_PATH,
    PipFinder,
    PipModelError,
    default_pip_finder,
    holds_layout_of,
    layouts_on_map,
    marked_peaks,
    marked_pips,
)


@pytest.fixture(scope="module")
def finder() -> PipFinder:
    return default_pip_finder()


def _drawn_map(value: int, *, spacing: float = 11.0, radius: float = 3.5, angle_deg: float = 0.0) -> np.ndarray:
    """A hand-made pip map: discs of 1.0 at the layout of `value`, centred in a 64 px crop."""
    m = np.zeros((CROP_SIZE, CROP_SIZE), np.float32)
    a = np.deg2rad(angle_deg)
    for px, py in PIP_LAYOUTS[value]:
        x = 31.5 + spacing * (px * np.cos(a) - py * np.sin(a))
        y = 31.5 + spacing * (px * np.sin(a) + py * np.cos(a))
        cv2.circle(m, (int(round(x)), int(round(y))), int(round(radius)), 1.0, -1)
    return m


@pytest.mark.parametrize("value", range(1, 7))
@pytest.mark.parametrize("angle", [0, 20, 45])
def test_layout_fit_names_exactly_the_drawn_value(value, angle):
    assert layouts_on_map(_drawn_map(value, angle_deg=angle), 0.15) == {value}


def test_layout_fit_refuses_an_empty_map_and_a_smear():
    assert layouts_on_map(np.zeros((64, 64), np.float32), 0.15) == set()
    smear = np.zeros((64, 64), np.float32)
    smear[20:44, 20:44] = 1.0  # one big blob is not a pip layout
    assert layouts_on_map(smear, 0.15) == set()


def test_an_extra_pip_spoils_a_layout():
    four = _drawn_map(4)
    cv2.circle(four, (32, 32), 3, 1.0, -1)  # a centre pip: this is a 5, not a 4
    assert layouts_on_map(four, 0.15) == {5}


def _faint_map(value: int, height: float, *, spacing: float = 11.0, angle_deg: float = 0.0) -> np.ndarray:
    """Gaussian marks of `height` (sigma 1.6 px) at the layout of `value`: too thin for blobs of a pip's size."""
    yy, xx = np.mgrid[0:CROP_SIZE, 0:CROP_SIZE].astype(np.float32)
    m = np.zeros((CROP_SIZE, CROP_SIZE), np.float32)
    a = np.deg2rad(angle_deg)
    for px, py in PIP_LAYOUTS[value]:
        x = 31.5 + spacing * (px * np.cos(a) - py * np.sin(a))
        y = 31.5 + spacing * (px * np.sin(a) + py * np.cos(a))
        m = np.maximum(m, height * np.exp(-((xx - x) ** 2 + (yy - y) ** 2) / (2 * 1.6**2)))
    return m


@pytest.mark.parametrize("value", range(2, 7))
def test_faint_marks_are_read_by_their_peaks(value):
    faint = _faint_map(value, 0.45, angle_deg=15)
    assert len(marked_pips(faint, 0.15, 0.3)) == 0  # no mark big enough for a blob
    assert len(marked_peaks(faint, 0.15, 0.5)) == 0  # nothing as high as the split thresholds
    peaks = marked_peaks(faint, 0.15, 0.3)
    assert len(peaks) == value and np.all(peaks[:-1, 2] >= peaks[1:, 2])  # one peak per pip, highest first
    assert layouts_on_map(faint, 0.15) == {value}


def test_holds_layout_of_answers_as_layouts_on_map():
    # the reader's fast check must agree with the full set, on clean, faint, spoiled and empty maps
    four_plus = _drawn_map(4)
    cv2.circle(four_plus, (32, 32), 3, 1.0, -1)
    maps = [_drawn_map(v, angle_deg=a) for v in range(1, 7) for a in (0, 30)]
    maps += [_faint_map(v, 0.45, angle_deg=15) for v in range(2, 7)] + [four_plus, np.zeros((64, 64), np.float32)]
    for m in maps:
        found = layouts_on_map(m, 0.15)
        assert [holds_layout_of(m, 0.15, v) for v in range(1, 7)] == [v in found for v in range(1, 7)]


def test_peaks_do_not_make_a_lone_faint_mark_a_one_nor_a_line_a_layout():
    assert layouts_on_map(_faint_map(1, 0.45), 0.15) == set()  # a 1 needs a blob of a pip's size
    line = np.zeros((64, 64), np.float32)
    for x in (14, 24, 34, 44, 54):
        cv2.circle(line, (x, 32), 2, 0.4, -1)
    assert layouts_on_map(line, 0.15) == set()  # five peaks in a row are no 5


def test_predict_shapes_and_range(finder):
    crops = [plain_face(v) for v in range(1, 7)]
    maps = finder.predict(crops)
    assert maps.shape == (6, CROP_SIZE, CROP_SIZE) and maps.dtype == np.float32
    assert float(maps.min()) >= 0.0 and float(maps.max()) <= 1.0
    assert finder.predict([]).shape == (0, CROP_SIZE, CROP_SIZE)


@pytest.mark.parametrize("value", range(1, 7))
def test_clean_faces_show_their_layout(finder, value):
    for angle in (0, 30):
        m = finder.predict([plain_face(value, angle_deg=angle)])[0]
        assert layouts_on_map(m, 0.15) == {value}


def test_no_pips_on_blank_crops(finder):
    rng = np.random.default_rng(5)
    blanks = [np.full((64, 64, 3), 128, np.uint8), plain_face(0), rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)]
    for m in finder.predict(blanks):
        assert layouts_on_map(m, 0.15) == set()


def test_fixed_probes_match_training_time_answers(finder):
    """The exported model gives the answers recorded when it was trained (same ONNX, same crops)."""
    meta = json.loads(DEFAULT_MODEL_PATH.with_suffix(".json").read_text(encoding="utf-8"))
    crops, names = fixed_probe_crops()
    maps = finder.predict(crops)
    for name, m in zip(names, maps):
        rec = meta["fixed_probes"][name]
        assert sorted(layouts_on_map(m, 0.15)) == rec["layouts"], name
        assert abs(int((m >= 0.5).sum()) - rec["pip_pixels"]) <= max(3, rec["pip_pixels"] // 20), name


def test_missing_and_corrupt_models_say_how_to_fix(tmp_path: Path):
    with pytest.raises(PipModelError, match="does not exist.*train_pips"):
        PipFinder(tmp_path / "nope.onnx")
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not an onnx file")
    with pytest.raises(PipModelError, match="could not be loaded.*train_pips"):
        PipFinder(bad)


@pytest.mark.parametrize("angle", [30, 120])
@pytest.mark.parametrize("value", range(1, 7))
def test_labelled_layout_fit_finds_faint_pips_where_they_are(value, angle):
    from vision.lab.training.pip_data import fit_layout_on_map

    # at 120 degrees a 2 lies on the other diagonal and a 6's rows turn: 2, 3 and 6 repeat only every 180
    faint = 0.35 * _drawn_map(value, angle_deg=angle)  # too faint for any blob threshold of pips_from_map
    pips = fit_layout_on_map(faint, value, 0.15)
    assert pips is not None and pips.shape == (value, 3)
    marks = faint[np.round(pips[:, 1]).astype(int), np.round(pips[:, 0]).astype(int)]
    assert np.all(marks > 0)  # every fitted pip lies on a drawn pip


def test_labelled_layout_fit_refuses_a_layout_the_map_contradicts():
    from vision.lab.training.pip_data import fit_layout_on_map

    four = _drawn_map(4)
    assert fit_layout_on_map(four, 5, 0.15) is None  # a 5's centre pip is not marked
    assert fit_layout_on_map(four, 2, 0.15) is None  # a 2 leaves two marked corners unexplained
    assert fit_layout_on_map(np.zeros((64, 64), np.float32), 3, 0.15) is None


def _marks(points, radius: int = 3) -> np.ndarray:
    """A pip map with a disc of 1.0 at each (x, y) px of a 64 px crop."""
    m = np.zeros((CROP_SIZE, CROP_SIZE), np.float32)
    for x, y in points:
        cv2.circle(m, (int(round(x)), int(round(y))), radius, 1.0, -1)
    return m


def _face(value: int, cx: float = 28.0, cy: float = 31.5, spacing: float = 9.0):
    return [(cx + spacing * px, cy + spacing * py) for px, py in PIP_LAYOUTS[value]]


# two pips of a side face beyond the right edge of a face centred at x = 28 (spacing 9 px)
_RIGHT_SIDE = [(28 + 9 * 2.6, 31.5 - 6), (28 + 9 * 2.6, 31.5 + 6)]


@pytest.mark.parametrize("value", [4, 5, 6])
def test_side_face_marks_are_left_out_only_on_the_side_facing_the_principal_point(value):
    m = _marks(_face(value) + _RIGHT_SIDE)
    assert layouts_on_map(m, 0.15) == set()  # the exact count: value + 2 marks hold nothing
    assert not holds_layout_of(m, 0.15, value)  # nor without a direction to the principal point
    assert holds_layout_of(m, 0.15, value, side_faces_towards=(100.0, 0.0))  # side faces seen to the right
    assert holds_layout_of(m, 0.15, value, side_faces_towards=(60.0, 60.0))  # 45 degrees off
    assert not holds_layout_of(m, 0.15, value, side_faces_towards=(0.0, 100.0))  # 90 degrees off: not a side face
    assert not holds_layout_of(m, 0.15, value, side_faces_towards=(-100.0, 0.0))  # the far side: a leaning die's face
    assert not holds_layout_of(m, 0.15, value - 1, side_faces_towards=(100.0, 0.0))  # no other value gets in


def test_marks_inside_a_face_or_beyond_its_corner_are_no_side_face():
    right = (100.0, 0.0)
    near = _marks(_face(4, cx=31.5) + [(31.5 + 9 * 1.5, 31.5)])  # inside the face: a pip the layout lacks
    assert not holds_layout_of(near, 0.15, 4, side_faces_towards=right)
    corner = _marks(_face(4) + [(28 + 9 * 2.4, 31.5 + 9 * 2.4)])  # beyond the corner, not beside an edge
    assert not holds_layout_of(corner, 0.15, 4, side_faces_towards=(1.0, 1.0))


def test_lines_are_never_held_with_marks_left_out():
    right = (100.0, 0.0)
    # a 6 whose middle pip of one column went unmarked: its full column is a line like a 3, with the
    # other column beside it; and a 2 is any two marks
    six = _face(6, cx=31.5)
    for k in range(6):
        m = _marks(six[:k] + six[k + 1 :])
        assert not any(
            holds_layout_of(m, 0.15, v, side_faces_towards=d)
            for v in (2, 3)
            for d in (right, (0.0, 100.0), (-100.0, 0.0), (0.0, -100.0))
        )
    two = _marks(_face(2) + _RIGHT_SIDE)
    assert not holds_layout_of(two, 0.15, 2, side_faces_towards=right)
