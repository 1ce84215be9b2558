"""The synthetic tray renderer: determinism, pips, placement, touching, bad input."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import cv2
import numpy as np
import pytest

from vision.render import (
    DICE_COLOURS,
    MAX_DICE,
    STYLES,
    RenderedTray,
    TrayScene,
    render_die_crop,
    render_tray,
)


def _luma(bgr) -> float:
    b, g, r = bgr
    return 0.114 * b + 0.587 * g + 0.299 * r


def count_pips(image: np.ndarray, die) -> int:
    """Count pip blobs on the top face of a rendered die after Otsu thresholding."""
    gray = cv2.cvtColor(np.asarray(image), cv2.COLOR_BGR2GRAY)
    m = cv2.getRotationMatrix2D(die.centre_xy, -die.angle_deg, 1.0)
    upright = cv2.warpAffine(gray, m, (gray.shape[1], gray.shape[0]), flags=cv2.INTER_LINEAR)
    half = 0.39 * die.face_px
    cx, cy = die.centre_xy
    x0, x1 = int(round(cx - half)), int(round(cx + half))
    y0, y1 = int(round(cy - half)), int(round(cy + half))
    crop = upright[y0:y1, x0:x1]
    body, pip = DICE_COLOURS[die.colour]
    _, mask = cv2.threshold(crop, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    if _luma(pip) < _luma(body):
        mask = 255 - mask
    n, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    pip_area = np.pi * (0.095 * die.face_px) ** 2
    return sum(1 for i in range(1, n) if stats[i, cv2.CC_STAT_AREA] > 0.3 * pip_area)


def _gap(a, b) -> float:
    a = np.float32(a).reshape(-1, 1, 2)
    b = np.float32(b).reshape(-1, 1, 2)
    d = min(-cv2.pointPolygonTest(b, (float(x), float(y)), True) for x, y in a[:, 0])
    return min(d, min(-cv2.pointPolygonTest(a, (float(x), float(y)), True) for x, y in b[:, 0]))


def test_same_seed_same_image_and_truth():
    a = render_tray([1, 2, 3, 4, 5], seed=11)
    b = render_tray([1, 2, 3, 4, 5], seed=11)
    assert np.array_equal(a.image, b.image)
    assert a.dice == b.dice
    c = render_tray([1, 2, 3, 4, 5], seed=12)
    assert not np.array_equal(a.image, c.image)


def test_generator_seed_is_used_and_advanced():
    rng = np.random.default_rng(3)
    a = render_tray([6, 6], seed=rng)
    b = render_tray([6, 6], seed=rng)
    assert not np.array_equal(a.image, b.image)
    again = render_tray([6, 6], seed=np.random.default_rng(3))
    assert np.array_equal(a.image, again.image)


@pytest.mark.parametrize("style", STYLES)
def test_image_shape_dtype_and_values(style):
    tray = render_tray([5, 4, 3], seed=2, style=style, size=(320, 240))
    assert isinstance(tray, RenderedTray)
    assert tray.image.shape == (240, 320, 3) and tray.image.dtype == np.uint8
    assert tray.values == (5, 4, 3)
    assert tray.style == style
    assert all(d.colour in DICE_COLOURS for d in tray.dice)
    assert all(0.0 <= d.angle_deg < 360.0 for d in tray.dice)


@pytest.mark.parametrize("seed", range(8))
def test_every_face_has_the_right_number_of_pips(seed):
    values = [1, 2, 3, 4, 5, 6]
    tray = render_tray(values, seed=seed, style=STYLES[seed % len(STYLES)])
    counted = [count_pips(tray.image, d) for d in tray.dice]
    assert counted == values


def test_pips_are_counted_in_a_clean_image_too():
    tray = render_tray([6, 5, 4, 3, 2, 1], seed=40, noise=0, blur=0, jpeg=False)
    assert [count_pips(tray.image, d) for d in tray.dice] == [6, 5, 4, 3, 2, 1]


def test_pip_counter_looks_where_the_truth_says():
    # Guard that the check can fail: the 6's truth moved onto the 1 counts one pip.
    tray = render_tray([6, 1], seed=5, noise=0)
    six, one = tray.dice
    moved = dataclasses.replace(six, centre_xy=one.centre_xy, angle_deg=one.angle_deg, colour=one.colour)
    assert count_pips(tray.image, six) == 6
    assert count_pips(tray.image, moved) == 1


@pytest.mark.parametrize("n,seed", [(1, 0), (5, 1), (12, 2), (MAX_DICE, 3), (MAX_DICE, 4)])
def test_boxes_inside_the_image_and_dice_do_not_overlap(n, seed):
    values = [(i % 6) + 1 for i in range(n)]
    tray = render_tray(values, seed=seed)
    h, w = tray.image.shape[:2]
    for d in tray.dice:
        x, y, bw, bh = d.box
        assert 0 <= x and 0 <= y and x + bw <= w and y + bh <= h
        assert 20 <= bw <= 120 and 20 <= bh <= 120
        cx, cy = d.centre_xy
        assert x <= cx <= x + bw and y <= cy <= y + bh
    for i in range(n):
        for j in range(i + 1, n):
            area, _ = cv2.intersectConvexConvex(np.float32(tray.dice[i].outline), np.float32(tray.dice[j].outline))
            assert area < 0.5, (i, j, area)


def test_default_dice_size_fits_a_pi_camera_view():
    sides = [max(d.box[2:]) for s in range(5) for d in render_tray([1, 2, 3, 4, 5], seed=s).dice]
    assert 40 <= min(sides) and max(sides) <= 85


@pytest.mark.parametrize("seed", range(6))
def test_touching_option_makes_touching_dice(seed):
    tray = render_tray([2, 3, 4, 5, 6], seed=seed, touching=True)
    gaps = [_gap(tray.dice[i].outline, tray.dice[j].outline) for i in range(5) for j in range(i + 1, 5)]
    assert min(gaps) <= 1.0
    assert tray.touching and all(_gap(tray.dice[i].outline, tray.dice[j].outline) <= 1.0 for i, j in tray.touching)


def test_without_touching_most_layouts_have_gaps():
    trays = [render_tray([1, 2, 3, 4, 5], seed=s) for s in range(6)]
    assert sum(1 for t in trays if not t.touching) >= 4


@pytest.mark.parametrize(
    "values,match",
    [
        ([], "empty"),
        ([0, 1], "impossible"),
        ([1, 7], "impossible"),
        ([1, 2.5], "impossible"),
        ([True], "impossible"),
        ([1] * (MAX_DICE + 1), "too many dice"),
    ],
)
def test_bad_values_raise_value_error(values, match):
    with pytest.raises(ValueError, match=match):
        render_tray(values)


def test_too_many_big_dice_raise_value_error():
    with pytest.raises(ValueError, match="too many dice for the tray"):
        render_tray([6] * 30, die_px=120, seed=1)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"style": "lava"}, "unknown tray style"),
        ({"size": (10, 10)}, "size"),
        ({"die_px": 2}, "die_px"),
        ({"noise": -1}, "noise"),
        ({"seed": "x"}, "seed"),
    ],
)
def test_bad_options_raise_value_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        render_tray([1, 2], **kwargs)


@pytest.mark.parametrize("value", range(1, 7))
def test_die_crop(value):
    crop = render_die_crop(value, seed=value, size=64)
    again = render_die_crop(value, seed=value, size=64)
    assert crop.image.shape == (64, 64, 3) and crop.image.dtype == np.uint8
    assert np.array_equal(crop.image, again.image)
    (die,) = crop.dice
    assert die.value == value
    cx, cy = die.centre_xy
    assert 16 < cx < 48 and 16 < cy < 48
    assert 30 < die.face_px < 64
    big = render_die_crop(value, seed=value, size=160, noise=0)
    assert count_pips(big.image, big.dice[0]) == value


def test_die_crop_bad_input():
    with pytest.raises(ValueError, match="impossible"):
        render_die_crop(9)
    with pytest.raises(ValueError, match="size"):
        render_die_crop(3, size=4)


def test_vision_render_does_not_import_table():
    code = "import sys, vision.render; print(any(m == 'table' or m.startswith('table.') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_scene_keeps_held_dice_where_they_lie():
    scene = TrayScene(seed=8, n_dice=5)
    first = scene.layout([3, 3, 5, 1, 6], seed=1)
    second = scene.layout([3, 3, 2, 2, 4], seed=2, keep={0: first[0], 1: first[1]})
    assert second[:2] == first[:2]
    assert [p.value for p in second] == [3, 3, 2, 2, 4]
    assert {p.base_xy for p in second[2:]}.isdisjoint({p.base_xy for p in first[2:]})
    a, b = scene.render(first, seed=1), scene.render(second, seed=2)
    assert a.dice[0].box == b.dice[0].box and a.dice[0].colour == b.dice[0].colour
    assert [count_pips(b.image, d) for d in b.dice] == [3, 3, 2, 2, 4]


def test_scene_rejects_a_kept_die_that_does_not_match():
    scene = TrayScene(seed=8, n_dice=5)
    first = scene.layout([3, 3, 5, 1, 6], seed=1)
    with pytest.raises(ValueError, match="does not match"):
        scene.layout([4, 3, 5, 1, 6], seed=2, keep={0: first[0]})


def test_nudge_moves_dice_a_little_without_overlap():
    scene = TrayScene(seed=9, n_dice=5)
    first = scene.layout([1, 2, 3, 4, 5], seed=1, touching=True)
    moved = scene.nudge(first, seed=3, max_px=4)
    assert [p.value for p in moved] == [1, 2, 3, 4, 5]
    assert moved != first
    for p, q in zip(first, moved):
        assert abs(p.base_xy[0] - q.base_xy[0]) <= 4 and abs(p.base_xy[1] - q.base_xy[1]) <= 4
    tray = scene.render(moved, seed=4)
    for i in range(5):
        for j in range(i + 1, 5):
            area, _ = cv2.intersectConvexConvex(np.float32(tray.dice[i].outline), np.float32(tray.dice[j].outline))
            assert area < 0.5


# ----------------------------------------------------------------- render_randomised (issue 7 item 1)

from vision.render import CONDITIONS, Conditions, Unreadable, render_randomised  # noqa: E402


def test_render_tray_dice_are_readable_and_unconditioned():
    tray = render_tray([1, 2, 3], seed=4)
    assert tray.condition == "" and all(d.unreadable is None for d in tray.dice)


@pytest.mark.parametrize("condition", CONDITIONS)
def test_randomised_condition_is_deterministic_with_truth_inside_the_image(condition):
    a = render_randomised([2, 3, 4, 5, 6], seed=3, condition=condition)
    b = render_randomised([2, 3, 4, 5, 6], seed=3, condition=condition)
    assert np.array_equal(a.image, b.image) and a.dice == b.dice
    assert a.image.shape == (480, 640, 3) and a.image.dtype == np.uint8 and a.condition == condition
    for d in a.dice:
        x, y, w, h = d.box
        assert 0 <= x and 0 <= y and x + w <= 640 and y + h <= 480 and w > 0 and h > 0
    readable = [d for d in a.dice if d.unreadable is None]
    assert len(readable) >= 3


@pytest.mark.parametrize("seed", range(3))
def test_leaning_and_border_conditions_label_the_last_die(seed):
    lean = render_randomised([1, 2, 3, 4, 5], seed=seed, condition="leaning")
    assert [d.unreadable for d in lean.dice] == [None] * 4 + [Unreadable.LEANING]
    # A leaning die shows a side face too: its outline covers more than a flat die's.
    areas = [cv2.contourArea(np.float32(d.outline)) for d in lean.dice]
    assert areas[-1] > 1.05 * np.median(areas[:4])
    cut = render_randomised([1, 2, 3, 4, 5], seed=seed, condition="border")
    last = cut.dice[-1]
    assert last.unreadable == Unreadable.PARTIAL and last.value == 5
    x, y, w, h = last.box
    assert x == 0 or y == 0 or x + w == 640 or y + h == 480


def test_randomised_dice_show_their_pips():
    # The pip counter of this file finds the right count on plain and dark dice.
    for condition in ("plain", "dark_dice"):
        tray = render_randomised(
            [1, 2, 3, 4, 5, 6],
            seed=1,
            conditions=Conditions(
                surface="white_card" if condition == "dark_dice" else "tray_round",
                look="dark" if condition == "dark_dice" else "solid",
                noise=0.0,
                blur=0.3,
            ),
        )
        found = [count_pips(tray.image, d) for d in tray.dice if d.colour in DICE_COLOURS]
        assert found == [d.value for d in tray.dice if d.colour in DICE_COLOURS]


def test_perspective_moves_the_boxes_with_the_image():
    flat = render_randomised([1, 2, 3, 4, 5], seed=2, conditions=Conditions(noise=0.0))
    tilted = render_randomised([1, 2, 3, 4, 5], seed=2, conditions=Conditions(noise=0.0, tilt_deg=25.0))
    assert not np.array_equal(flat.image, tilted.image)
    moved = [
        abs(a.centre_xy[0] - b.centre_xy[0]) + abs(a.centre_xy[1] - b.centre_xy[1])
        for a, b in zip(flat.dice, tilted.dice)
    ]
    assert max(moved) > 10
    grey = cv2.cvtColor(np.asarray(tilted.image), cv2.COLOR_BGR2GRAY).astype(np.float32)
    floor = float(np.median(grey))
    for d in tilted.dice:  # each die's box still holds the die: it differs from the floor
        if d.unreadable is None:
            x, y, w, h = d.box
            assert float(np.abs(grey[y : y + h, x : x + w] - floor).mean()) > 10


def test_random_conditions_vary_and_bad_conditions_raise():
    surfaces = {render_randomised([1, 2], seed=s).style for s in range(6)}
    assert len(surfaces) >= 3
    a, b = render_randomised([4, 4, 1], seed=9), render_randomised([4, 4, 1], seed=9)
    assert np.array_equal(a.image, b.image) and a.dice == b.dice and a.condition == "random"
    small = render_randomised([1, 2, 3], seed=1, condition="leaning", size=(320, 240))
    assert small.image.shape == (240, 320, 3) and small.dice[-1].unreadable == Unreadable.LEANING
    with pytest.raises(ValueError, match="unknown condition 'fog'"):
        render_randomised([1, 2], condition="fog")
    with pytest.raises(ValueError, match="tilt_deg must be 0-30"):
        Conditions(tilt_deg=40.0)
    with pytest.raises(ValueError, match="unknown surface"):
        Conditions(surface="carpet")


def test_training_samples_from_randomised_renders():
    from vision.lab.training.render_data import render_samples

    crops, labels = render_samples(3, seed=1, randomised=True)
    assert crops.ndim == 4 and crops.dtype == np.uint8 and len(crops) == len(labels)
    assert (labels > 0).any() and (labels == 0).any() and set(labels.tolist()) <= set(range(7))


def test_training_samples_skip_a_render_whose_dice_all_fell_outside(monkeypatch):
    import vision.lab.training.render_data as render_data
    from vision.render import RenderedTray

    real = render_data.render_randomised
    calls = []

    def first_one_empty(values, seed):
        calls.append(seed)
        tray = real(values, seed=seed)
        return RenderedTray(image=tray.image, dice=(), style=tray.style, touching=()) if len(calls) == 1 else tray

    monkeypatch.setattr(render_data, "render_randomised", first_one_empty)
    crops, labels = render_data.render_samples(2, seed=1, randomised=True)
    assert len(calls) == 2 and len(crops) == len(labels) and (labels > 0).any()


@pytest.mark.parametrize("style", ["round", "box"])
def test_tray_scale_draws_the_same_tray_faster(style):
    full = TrayScene(seed=5, style=style)
    half = TrayScene(seed=5, style=style, tray_scale=2)
    assert full._tray.floor.kind == half._tray.floor.kind
    assert np.allclose(full._tray.floor.params, half._tray.floor.params, atol=1.5)
    a, b = (
        np.asarray(full.render([], seed=1, noise=0, blur=0, jpeg=False).image),
        np.asarray(half.render([], seed=1, noise=0, blur=0, jpeg=False).image),
    )
    assert a.shape == b.shape
    assert float(np.median(np.abs(a.astype(int) - b.astype(int)))) < 25  # same tray, other texture draws
    with pytest.raises(ValueError, match="tray_scale must be a whole number 1-8"):
        TrayScene(tray_scale=0)


@pytest.mark.parametrize("tilt", [0.0, 20.0])
def test_top_face_pips_lie_on_the_drawn_pips(tilt):
    from vision.lab.training.render_data import top_face_pips

    tray = render_randomised(
        [1, 2, 3, 4, 5, 6],
        seed=4,
        conditions=Conditions(surface="white_card", look="solid", noise=0.0, blur=0.3, tilt_deg=tilt),
    )
    img = np.asarray(tray.image, np.float64)
    on_pip = []
    for d in tray.dice:
        if d.unreadable is not None:
            continue
        body, pip = (np.asarray(c, np.float64) * 255 for c in DICE_COLOURS[d.colour])
        pips = top_face_pips(d)
        assert pips.shape == (d.value, 3) and np.all(pips[:, 2] > 0)
        for x, y, _ in pips:
            c = img[int(round(y)), int(round(x))]
            on_pip.append(np.linalg.norm(c - pip) < np.linalg.norm(c - body))
    assert len(on_pip) >= 8 and np.mean(on_pip) >= (1.0 if tilt == 0 else 0.9)


def test_rendered_pip_targets_are_cached_with_the_crops(tmp_path):
    from vision.lab.training.render_data import cached_render_samples

    crops, labels, pips = cached_render_samples(2, 3, tmp_path, randomised=True, with_pips=True)
    assert len(crops) == len(labels) == len(pips) and len(list(tmp_path.glob("*.npz"))) == 1
    for v, p in zip(labels, pips):  # a face value's crop has that many pips, other crops none
        assert p.shape == (int(v), 3) or (v == 0 and p.shape == (0, 3))
    again = cached_render_samples(2, 3, tmp_path, randomised=True, with_pips=True)
    assert np.array_equal(again[0], crops) and np.array_equal(again[1], labels)
    assert all(np.allclose(a, b) for a, b in zip(again[2], pips))


@pytest.mark.parametrize("seed", range(4))
def test_translucent_dice_show_their_side_faces_pips_inside_the_top_edges(seed):
    """A translucent die shows each side face's pips through its top, just inside that edge, never at the centre."""
    import numpy as np

    from vision.render._die import DieLook, DiePose
    from vision.render._effects import _side_pips_seen_through

    face = 60.0
    pose = DiePose((100.0, 100.0), 0.0, face, 0.1, (100.0, 100.0))  # straight under the camera
    look = DieLook((0.24, 0.24, 0.26), (0.16, 0.13, 0.72))
    layer = _side_pips_seen_through(200, 200, pose, look, 1, np.random.default_rng(seed))
    assert layer.dtype == np.float32 and layer.shape == (200, 200)
    assert 0.0 <= float(layer.min()) and float(layer.max()) <= 1.0
    cx, cy, top = pose.at(pose.s_top)
    half = top / 2.0
    peak = float(layer.max())
    centre = layer[int(cy - 0.12 * top) : int(cy + 0.12 * top), int(cx - 0.12 * top) : int(cx + 0.12 * top)]
    assert float(centre.max()) <= 0.1 * peak  # the top face's own pips are there, not the sides'
    outside = np.concatenate([layer[:, : int(cx - half) - 8].ravel(), layer[:, int(cx + half) + 8 :].ravel()])
    assert float(outside.max()) <= 0.02 * peak  # nothing drawn beyond the die
    band = int(round(0.35 * top))
    edges = {  # inside each edge of the top face: +u (right), +v (down), -u (left), -v (up)
        "right": layer[int(cy - half) : int(cy + half), int(cx + half) - band : int(cx + half) + 2],
        "down": layer[int(cy + half) - band : int(cy + half) + 2, int(cx - half) : int(cx + half)],
        "left": layer[int(cy - half) : int(cy + half), int(cx - half) - 2 : int(cx - half) + band],
        "up": layer[int(cy - half) - 2 : int(cy - half) + band, int(cx - half) : int(cx + half)],
    }
    for side, patch in edges.items():
        assert float(patch.max()) >= 0.5 * peak, f"no side-face pip shows inside the {side} edge"
