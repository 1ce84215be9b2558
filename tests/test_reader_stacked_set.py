"""Stacked and cocked dice told by their set: a face bigger than its own set's in a close camera, two faces as one."""

from __future__ import annotations

import numpy as np

from vision.reader_stacked import bigger_than_its_set, judge_faces, parallax, two_faces_as_one
from vision.reading import UnknownReason
from vision.top_face import TopFace

RED = (120.0, 190.0, 170.0)  # 8-bit Lab of a red die's face
GREEN = (150.0, 90.0, 160.0)


def _face(centre, side, *, aspect=1.0, colour=RED, towards=None, height=0.0) -> TopFace:
    """An upright top face at `centre` (px); its body shows a side face `height` times its distance to `towards`."""
    cx, cy = centre
    h = side / 2
    quad = np.float32([[cx - h, cy - h], [cx + h, cy - h], [cx + h, cy + h * (2 * aspect - 1)], [cx - h, cy + h]])
    normals = [np.float32(n) for n in ((1, 0), (-1, 0), (0, 1), (0, -1))]
    widths = [2.0, 2.0, 2.0, 2.0]  # a bevel's width, px
    if towards is not None:
        d = np.asarray(towards, np.float32) - np.float32(centre)
        k = int(np.argmax([float(np.dot(n, d)) for n in normals]))
        widths[k] += height * float(np.hypot(*d))
    return TopFace(quad, quad, aspect, 0.95, side, tuple(zip(normals, widths)), colour)


def _picture(sides, centres, *, height, colours=None, aspects=None):
    pp = (320.0, 240.0)
    colours = colours or [RED] * len(sides)
    aspects = aspects or [1.0] * len(sides)
    faces = [
        _face(c, s, aspect=a, colour=col, towards=pp, height=height)
        for c, s, a, col in zip(centres, sides, aspects, colours)
    ]
    towards = [np.float32(pp) - f.quad.mean(axis=0) for f in faces]
    return faces, towards


CENTRES = [(100.0, 80.0), (560.0, 90.0), (90.0, 420.0), (540.0, 400.0), (200.0, 300.0)]


def test_parallax_is_the_side_face_width_over_the_distance_to_the_principal_point():
    face = _face((100.0, 80.0), 50.0, towards=(320.0, 240.0), height=0.08)
    towards = np.float32((320.0, 240.0)) - face.quad.mean(axis=0)
    assert abs(parallax(face, towards) - 0.08) < 0.005  # the bevel (2 px each side) taken off
    assert parallax(face, np.float32((30.0, 20.0))) is None  # within two sides of it: no side face to go by


def test_a_die_a_height_nearer_a_close_camera_than_its_set_is_stacked():
    faces, towards = _picture([50, 50, 50, 50, 54.5], CENTRES, height=0.08)  # 1.09: one die height up at 12.5
    ok = [True] * 5
    assert bigger_than_its_set(4, faces, ok, 0.08)
    assert judge_faces(faces, towards) == [None] * 4 + [UnknownReason.STACKED]


def test_a_bigger_die_is_not_stacked_under_a_far_camera_nor_beside_another_set():
    # top-down from far: a die one height up would show 1-2 % bigger, so a 9 % bigger face is another die
    faces, towards = _picture([50, 50, 50, 50, 54.5], CENTRES, height=0.005)
    assert judge_faces(faces, towards) == [None] * 5
    # a close camera, but the big die's set is its colour alone (dice of mixed sets come in mixed sizes)
    faces, towards = _picture([50, 50, 50, 50, 54.5], CENTRES, height=0.08, colours=[GREEN] * 4 + [RED])
    assert judge_faces(faces, towards) == [None] * 5
    # nor within a set of mixed sizes
    faces, towards = _picture([44, 50, 56, 50, 54.5], CENTRES, height=0.08)
    assert not bigger_than_its_set(4, faces, [True] * 5, 0.08)
    # nor under a camera looking across the table (faces foreshortened: nearer dice are bigger)
    faces, towards = _picture([50, 50, 50, 50, 54.5], CENTRES, height=0.08, aspects=[0.85] * 5)
    assert not bigger_than_its_set(4, faces, [True] * 5, 0.08)


def test_an_oblong_face_longer_than_its_sets_side_is_two_faces_in_one_light():
    faces, towards = _picture([50, 50, 50, 50, 66], CENTRES, height=0.0, aspects=[1.0] * 4 + [0.78])
    assert two_faces_as_one(4, faces, [True] * 5)
    assert judge_faces(faces, towards)[4] == UnknownReason.LEANING
    # a square bigger face is no such thing (and without parallax not stacked either)
    faces, towards = _picture([50, 50, 50, 50, 66], CENTRES, height=0.0)
    assert not two_faces_as_one(4, faces, [True] * 5)
    assert judge_faces(faces, towards) == [None] * 5


def test_a_stacked_die_shows_the_close_camera_by_its_own_side_face():
    # the other dice lie under the camera (no side face to measure), the stacked one far out shows its own
    centres = [(300.0, 230.0), (345.0, 250.0), (320.0, 205.0), (90.0, 420.0)]
    faces, towards = _picture([50, 50, 50, 54.5], centres, height=0.16)
    assert [parallax(f, t) for f, t in zip(faces[:3], towards[:3])] == [None] * 3
    assert judge_faces(faces, towards)[3] == UnknownReason.STACKED
    faces, towards = _picture([50, 50, 50, 54.5], centres, height=0.0)  # far from the camera: another die
    assert judge_faces(faces, towards)[3] is None


def test_flat_dice_touching_one_another_are_not_leaning():
    """The stress set's touching dice (flat, side by side as held dice lie): a neighbour's body is not theirs."""
    from vision.reader_stacked import cocked_or_stacked
    from vision.render import render_randomised

    rng = np.random.default_rng(0)  # the draws of vision.lab.stress.run_stress, seed 0
    judged = 0
    for _ in range(7):
        values = [int(v) for v in rng.integers(1, 7, 5)]
        tray = render_randomised(values, seed=int(rng.integers(2**31)), condition="touching")
        verdicts, _ = cocked_or_stacked(np.asarray(tray.image), [t.box for t in tray.dice])
        judged += sum(v is not None for v in verdicts)
    assert judged == 0  # 5 of these 35 dice were called leaning when the body ran into the neighbour's box
