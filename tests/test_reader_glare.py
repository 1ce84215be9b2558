"""Glints are not pips (issue 37): glints are painted over before the dice are read, white pips are left alone, and a
glint that may hide a pip leaves the die unknown."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.face import CROP_SIZE, crop_die
from vision.lab.dataset import DEFAULT_DEV_DIR, load_dataset
from vision.reader_agreement import FACE_CROP_MARGIN
from vision.reader_glare import glare_free_crops, glint_may_hide_pip
from vision.reader_glints import glint_spots

BOX = (30, 30, 60, 60)
MARGIN = FACE_CROP_MARGIN


def _face(body, pip, value=2, glint=None):
    """A 120 px photo with one 60 px die (`body` colour) showing `value` pips of `pip` colour; a glint at `glint`."""
    img = np.full((120, 120, 3), 200, np.uint8)
    cv2.rectangle(img, (30, 30), (90, 90), body, -1)
    cells = {2: ((-1, -1), (1, 1)), 4: ((-1, -1), (1, -1), (-1, 1), (1, 1))}[value]
    for i, j in cells:
        cv2.circle(img, (60 + 16 * i, 60 + 16 * j), 6, pip, -1)
    if glint is not None:
        cv2.ellipse(img, glint, (5, 2), 30, 0, 360, (255, 255, 255), -1)
    return img


class _MarksWhatStandsOut:
    """A pip finder that marks every pixel far from the face's colour (it marks glints too, as the real one can)."""

    def predict(self, crops):
        out = []
        for c in crops:
            face = np.median(c[CROP_SIZE // 3 : -CROP_SIZE // 3, CROP_SIZE // 3 : -CROP_SIZE // 3].reshape(-1, 3), 0)
            far = np.abs(c.astype(np.float32) - face).max(axis=2) > 60
            inside = np.zeros_like(far)
            inside[8:-8, 8:-8] = True  # the die, not the floor around it
            out.append((far & inside).astype(np.float32))
        return np.stack(out)


class _ReadsNothing:
    def predict(self, crops):
        return np.tile([0.9, 0.02, 0.02, 0.02, 0.02, 0.01, 0.01], (len(crops), 1))


def _cleaned(img):
    crop = crop_die(img, BOX, margin=MARGIN)
    (out,), (glints,) = glare_free_crops(_MarksWhatStandsOut(), _ReadsNothing(), img, [BOX], [crop], MARGIN)
    return crop, out, glints


def test_a_glint_on_a_dark_die_with_red_pips_is_painted_over():
    crop, out, glints = _cleaned(_face((50, 40, 40), (40, 40, 170), glint=(60, 60)))
    assert len(glints) == 1 and abs(glints[0, 0]) < 0.03 and abs(glints[0, 1]) < 0.03
    assert crop.min(axis=2).max() >= 245  # the glint is in the crop as cut ...
    assert out[8:-8, 8:-8].min(axis=2).max() < 150  # ... and gone from the die in the crop that is read
    # the red pips are still there, where they were
    for i, j in ((-1, -1), (1, 1)):
        y, x = (np.array([j, i]) * 16 / 60 * 60 / (1 + 2 * MARGIN) / 60 * CROP_SIZE + CROP_SIZE / 2).astype(int)
        assert out[y, x, 2] > 140 and out[y, x, 0] < 80


def test_white_pips_are_left_alone_and_a_streak_on_a_white_pipped_die_is_not_a_pip():
    crop, out, glints = _cleaned(_face((50, 40, 40), (255, 255, 255)))
    assert len(glint_spots(_face((50, 40, 40), (255, 255, 255)), BOX)) == 2  # white pips are such spots ...
    assert len(glints) == 0 and out is crop  # ... and stay pips
    img = _face((50, 40, 40), (225, 225, 225), value=4)  # light pips, not blown out
    cv2.line(img, (52, 60), (68, 60), (255, 255, 255), 2)  # a thin streak in the middle: no disc
    crop, out, glints = _cleaned(img)
    assert len(glints) == 1 and abs(glints[0, 0]) < 0.05 and abs(glints[0, 1]) < 0.05
    centre = CROP_SIZE // 2
    assert out[centre, centre].min() < 150 and out[centre - 15, centre - 15].min() > 200  # streak gone, pip kept


def _map(cells, spacing=0.25, turn=0.0):
    """A pip finder map (CROP_SIZE px, margin MARGIN) with a pip (radius 0.06 box sides) at each grid cell."""
    m = np.zeros((CROP_SIZE, CROP_SIZE), np.float32)
    box = CROP_SIZE / (1 + 2 * MARGIN)
    c, s = np.cos(turn), np.sin(turn)
    for i, j in cells:
        x, y = spacing * (c * i - s * j), spacing * (s * i + c * j)
        cv2.circle(m, (round(CROP_SIZE / 2 + x * box), round(CROP_SIZE / 2 + y * box)), round(0.06 * box), 1.0, -1)
    return m


FOUR = ((-1, -1), (1, -1), (-1, 1), (1, 1))


@pytest.mark.parametrize("turn", [0.0, 0.4])
def test_a_glint_may_hide_a_pip_only_where_a_pip_would_make_another_face(turn):
    four = _map(FOUR, turn=turn)
    glint = np.array([[0.0, 0.0, 0.06]])
    assert glint_may_hide_pip(four, MARGIN, 4, glint)  # the middle of a 4: a 5's middle pip
    c, s = np.cos(turn), np.sin(turn)
    edge = np.array([[0.25 * c, 0.25 * s, 0.06]])
    assert not glint_may_hide_pip(four, MARGIN, 4, edge)  # a 4 and one pip on an edge make no face
    corner = np.array([[0.25 * (c - s), 0.25 * (s + c), 0.06]])
    assert not glint_may_hide_pip(four, MARGIN, 4, corner)  # on a pip that is seen
    assert not glint_may_hide_pip(four, MARGIN, 4, np.array([[0.0, 0.0, 0.01]]))  # too small to cover a pip
    two = _map(((-1, -1), (1, 1)), turn=turn)
    assert glint_may_hide_pip(two, MARGIN, 2, glint)  # a 3's middle pip
    six = _map(FOUR + ((-1, 0), (1, 0)), turn=turn)
    assert not glint_may_hide_pip(six, MARGIN, 6, glint)  # no face has seven pips
    assert not glint_may_hide_pip(four, MARGIN, 4, np.zeros((0, 3)))


@pytest.fixture(scope="module")
def photos():
    if not (DEFAULT_DEV_DIR / "labels.json").exists():
        pytest.skip("the DEV photos are not here")
    return {p.path.name: p for p in load_dataset(DEFAULT_DEV_DIR)}


@pytest.mark.parametrize(
    "name",
    [
        "nell_IMG_20191208_111316.jpg",  # a smoky 3 with red pips: a glint beside a pip read 1 before
        "nell_IMG_20191209_095522.jpg",
        "nell_IMG_20191208_112322.jpg",
    ],
)
def test_glare_edits_of_dev_photos_read_no_wrong_value(photos, name):
    from vision.lab.perturb_suite import perturbed
    from vision.lab.stress import score_rendered
    from vision.reader import read_image

    pic = perturbed("glare", [photos[name]])[0]
    counts = score_rendered(pic, read_image(pic.image))
    assert counts.wrong == 0 and counts.extra_valued == 0, counts
    assert counts.right >= counts.dice // 2, counts  # a glint that is not a pip is ignored, not only made unknown
