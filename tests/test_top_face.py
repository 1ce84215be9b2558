"""The top face as a shape: outlines of rendered dice, and cocked and stacked dice told apart (issue 37)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.reader_stacked import cocked_or_stacked
from vision.reading import UnknownReason
from vision.render._die import DieLook, Light
from vision.render._leaning import draw_leaning_die, leaning_outline, leaning_vertices, project
from vision.top_face import outline_top_face

SIDE = 50.0
CAM_H = SIDE / 0.08  # the perturbation renders' camera: 12.5 die sides above the floor
SIZE = (640, 480)
ORIGIN = (SIZE[0] / 2, SIZE[1] / 2)
#: Four flat dice: floor position (x, y), yaw in degrees and value.
FLAT = (((150, 130), 20, 3), ((470, 120), 65, 5), ((140, 360), 40, 2), ((480, 350), 10, 6))
RED = DieLook((0.15, 0.15, 0.75), (0.95, 0.95, 0.95), gloss=0.2)
LIGHT = Light((0.2, -0.3, 0.93), ambient=0.5)


def _flat_vertices(base, yaw: float) -> np.ndarray:
    verts = leaning_vertices(base, SIDE, yaw, 0.0)
    verts[:, 0] -= SIDE / 2  # leaning_vertices puts the pivot edge at the base
    return verts


def _box(verts: np.ndarray) -> tuple[int, int, int, int]:
    outline = leaning_outline(verts, ORIGIN, CAM_H)
    x0, y0 = np.floor(outline.min(axis=0)).astype(int)
    x1, y1 = np.ceil(outline.max(axis=0)).astype(int)
    return int(x0), int(y0), int(x1 - x0), int(y1 - y0)


def _scene(extra: str, base: tuple[float, float] = (310.0, 250.0)) -> tuple[np.ndarray, list, list[np.ndarray]]:
    """Red dice on green cloth: the four flat dice and one more at `base` (``"flat"`` or ``"cocked"``).

    Returns the picture (BGR uint8), every die's box (the extra one last) and their world corners.
    """
    img = np.ones((SIZE[1], SIZE[0], 3), np.float32) * np.float32((0.25, 0.45, 0.2))
    img += np.random.default_rng(0).normal(0, 0.01, img.shape).astype(np.float32)
    dice = [(_flat_vertices(base, yaw), value) for base, yaw, value in FLAT]
    if extra == "flat":
        dice.append((_flat_vertices(base, 30.0), 4))
    elif extra == "cocked":
        dice.append((leaning_vertices(base, SIDE, 30.0, 30.0), 4))  # resting on an edge, tilted 30 degrees
    for verts, value in dice:
        draw_leaning_die(img, verts, RED, LIGHT, value, ORIGIN, CAM_H, 0.5)
    img = cv2.GaussianBlur(img, (0, 0), 0.7)
    image = np.clip(img * 255 + 0.5, 0, 255).astype(np.uint8)
    boxes = [_box(v) for v, _ in dice]
    return image, boxes, [v for v, _ in dice]


def _polygon_iou(a: np.ndarray, b: np.ndarray) -> float:
    inter, _ = cv2.intersectConvexConvex(a.astype(np.float32), b.astype(np.float32))
    union = cv2.contourArea(a.astype(np.float32)) + cv2.contourArea(b.astype(np.float32)) - inter
    return float(inter / union)


def test_outline_of_a_flat_die_is_its_true_top_face():
    image, boxes, verts = _scene("flat")
    for box, v in zip(boxes, verts):
        face = outline_top_face(image, box)
        assert face is not None
        true_top = project(v[4:8], ORIGIN, CAM_H)[[0, 1, 3, 2]]  # the top face's corners, around it
        # the outline runs a little inside the true edge (the rounded rim is shaded darker): IoU 0.8
        assert _polygon_iou(face.quad, true_top) >= 0.75
        assert np.hypot(*(face.quad.mean(axis=0) - true_top.mean(axis=0))) < 0.1 * SIDE
        assert face.aspect >= 0.9  # a flat die's top face is square in the picture
        assert cv2.contourArea(face.body) >= cv2.contourArea(face.quad)  # the body holds the face


@pytest.mark.parametrize("base", [(310.0, 250.0), (230.0, 260.0), (330.0, 170.0), (400.0, 260.0)])
def test_a_die_cocked_30_degrees_is_leaning_and_flat_ones_are_not(base):
    for extra, verdict in (("flat", None), ("cocked", UnknownReason.LEANING)):
        image, boxes, _ = _scene(extra, base)
        verdicts, faces = cocked_or_stacked(image, boxes)
        assert verdicts == [None] * 4 + [verdict]
        assert len(faces) == len(boxes)


def test_too_few_dice_are_not_judged():
    image, boxes, _ = _scene("cocked")
    assert cocked_or_stacked(image, boxes[-2:])[0] == [None, None]  # nothing to compare the cocked one with


def test_reader_names_a_cocked_die_and_reads_flat_ones():
    from vision.reader import read_image

    flat = read_image(_scene("flat")[0])
    assert sorted(d.value for d in flat.dice) == [2, 3, 4, 5, 6]
    cocked = read_image(_scene("cocked")[0])
    assert [d.reason for d in cocked.dice if d.value is None] == [UnknownReason.LEANING]
    assert sorted(d.value for d in cocked.dice if d.value is not None) == [2, 3, 5, 6]
    assert any("leaning" in p for p in cocked.problems)


def test_reader_names_a_stacked_die():
    """A render of the perturbation suite: four flat dice, one with another lying on it, turned."""
    from vision.lab.evaluate import match_dice
    from vision.lab.perturb_suite import perturbed
    from vision.reader import read_image

    pic = perturbed("stacked", [], seed=0, renders=4)[3]
    reading = read_image(pic.image)
    pairs = match_dice([d.box for d in reading.dice], [t.box for t in pic.dice])
    by_truth = {j: reading.dice[i] for i, j in pairs}
    stacked = [by_truth[j] for j, t in enumerate(pic.dice) if t.unreadable is not None and j in by_truth]
    assert [d.reason for d in stacked] == [UnknownReason.STACKED]
    assert "dice stacked: separate them" in reading.problems
    flat = [(by_truth[j].value, t.value) for j, t in enumerate(pic.dice) if t.unreadable is None]
    assert all(read == true for read, true in flat) and len(flat) == 3


def test_annotate_outlines_the_top_faces():
    from vision.annotate import annotate_reading
    from vision.reading import DieReading, ImageReading
    from vision.top_face import OUTLINE_COLOUR

    image, boxes, _ = _scene("flat")
    reading = ImageReading(tuple(DieReading(None, box, 0.5, "low confidence") for box in boxes))
    out = annotate_reading(image, reading)
    near = np.abs(out.astype(int) - OUTLINE_COLOUR).max(axis=2) < 60  # drawn anti-aliased
    cyan = near & (np.abs(image.astype(int) - OUTLINE_COLOUR).max(axis=2) >= 60)  # red dice, green cloth: none
    for x, y, w, h in boxes:  # each die's outline drawn inside its box
        assert cyan[y : y + h, x : x + w].sum() >= 20
    assert not cyan[:60, 250:400].any()  # nothing drawn on the bare floor
