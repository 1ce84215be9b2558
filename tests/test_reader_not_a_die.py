"""Dice that are dice (issue 37, item 3): buttons, coins, domino halves and light specks are left out of the reading."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.lab.dataset import DEFAULT_DEV_DIR, load_dataset
from vision.lab.perturb_compose import _draw_button, _draw_domino, _draw_key
from vision.reader_not_a_die import body_not_a_die, body_runs_on, light_specks, round_body

needs_dev = pytest.mark.skipif(not (DEFAULT_DEV_DIR / "labels.json").exists(), reason="the DEV photos are not here")


def _floor(colour=(150, 160, 165)) -> np.ndarray:
    return np.full((240, 240, 3), colour, np.uint8)


def _die(image: np.ndarray, at, side: int, body=(225, 230, 235), pip=(25, 25, 25), value=4, angle=0.0):
    """Draw a rounded-square die face (corner radius a fifth of `side`) with `value` pips, turned by `angle`
    degrees, its box's corner at `at` (x, y); its box (x, y, w, h)."""
    b = int(np.ceil(side * (abs(np.cos(np.radians(angle))) + abs(np.sin(np.radians(angle))))))
    ss, c = 4, 2 * b  # drawn 4 times larger, centre of the canvas
    face = np.zeros((ss * b, ss * b), np.uint8)
    half, r = ss * side // 2, ss * side // 5
    cv2.rectangle(face, (c - half + r, c - half), (c + half - r, c + half), 255, -1)
    cv2.rectangle(face, (c - half, c - half + r), (c + half, c + half - r), 255, -1)
    for cx, cy in ((c - half + r, c - half + r), (c + half - r, c - half + r), (c - half + r, c + half - r)):
        cv2.circle(face, (cx, cy), r, 255, -1)
    cv2.circle(face, (c + half - r, c + half - r), r, 255, -1)
    pips = np.zeros_like(face)
    spots = {1: [(0, 0)], 2: [(-1, -1), (1, 1)], 4: [(-1, -1), (1, -1), (-1, 1), (1, 1)]}[value]
    for px, py in spots:
        cv2.circle(
            pips, (int(c + px * 0.27 * ss * side), int(c + py * 0.27 * ss * side)), int(0.1 * ss * side), 255, -1
        )
    turn = cv2.getRotationMatrix2D((c, c), angle, 1.0)
    face, pips = (cv2.warpAffine(m, turn, (ss * b, ss * b)) for m in (face, pips))
    face, pips = (cv2.resize(m, (b, b), interpolation=cv2.INTER_AREA)[..., None] / 255.0 for m in (face, pips))
    colour = np.array(body) * (1 - pips) + np.array(pip) * pips
    x, y = at
    patch = image[y : y + b, x : x + b].astype(np.float64)
    image[y : y + b, x : x + b] = (patch * (1 - face) + colour * face + 0.5).astype(np.uint8)
    return x, y, b, b


@pytest.mark.parametrize("angle", [0.0, 20.0, 45.0])
@pytest.mark.parametrize("value", [1, 2, 4])
def test_a_die_drawn_on_cloth_is_a_die_at_any_turn(value, angle):
    image = _floor()
    box = _die(image, (80, 80), 60, value=value, angle=angle)
    assert not round_body(image, box)
    assert not body_runs_on(image, box)
    assert not light_specks(image, box)


@pytest.mark.parametrize("seed", range(4))
def test_a_button_is_round_and_left_out(seed):
    image = _floor()
    _draw_button(image, (90, 90, 60, 60), np.random.default_rng(seed))
    assert round_body(image, (90, 90, 60, 60)) and body_not_a_die(image, (90, 90, 60, 60))
    assert round_body(image, (96, 96, 48, 48))  # a box inside the button: its body is round all the same


def test_a_coin_is_round():
    image = _floor((60, 70, 80))
    cv2.circle(image, (120, 120), 30, (170, 170, 168), -1, cv2.LINE_AA)
    assert round_body(image, (90, 90, 61, 61))


@pytest.mark.parametrize("side", [50, 120])  # 120: brought down to WORK_SIDE_PX first
@pytest.mark.parametrize("seed", range(6))
def test_a_domino_half_runs_on_past_its_box(seed, side):
    image = np.full((400, 400, 3), (150, 160, 165), np.uint8)
    _draw_domino(image, (60, 60, side, side), np.random.default_rng(seed))
    half = (60, 60, side, side)  # the domino lies across or along from here, twice as long
    assert body_runs_on(image, half) and body_not_a_die(image, half)


def test_light_specks_on_dark_cloth_are_not_a_die_but_a_black_die_with_its_body_is():
    cloth = _floor((40, 45, 50))
    specks = cloth.copy()
    for cx, cy in ((105, 105), (135, 133)):
        cv2.circle(specks, (cx, cy), 3, (250, 250, 250), -1, cv2.LINE_AA)
    assert light_specks(specks, (90, 90, 60, 60)) and body_not_a_die(specks, (90, 90, 60, 60))
    assert not light_specks(cloth, (90, 90, 60, 60))  # nothing there at all
    white_on_white = _floor((225, 230, 235))
    box = _die(white_on_white, (90, 90), 60, body=(228, 232, 236), value=2)  # dark pips, a body the floor's colour
    assert not light_specks(white_on_white, box)


def test_keys_are_square_like_dice_and_not_told_apart():
    # the rules' known gap (docs/perturbations.md): a key's body is a square that ends at its box
    image = _floor()
    _draw_key(image, (90, 90, 60, 60), np.random.default_rng(0))
    assert not round_body(image, (90, 90, 60, 60)) and not body_runs_on(image, (90, 90, 60, 60))


def test_a_box_filling_the_picture_is_not_judged():
    image = _floor()
    assert not body_not_a_die(image, (0, 0, 240, 240))
    assert not body_not_a_die(image, (10, 10, 3, 3))


@needs_dev
def test_no_labelled_dev_die_is_left_out():
    from vision.images import load_image

    photos = load_dataset(DEFAULT_DEV_DIR)[::3]
    left_out = []
    for photo in photos:
        image = load_image(photo.path)
        left_out += [(photo.path.name, d.box) for d in photo.dice if body_not_a_die(image, d.box)]
    assert sum(len(p.dice) for p in photos) > 250
    assert not left_out


@needs_dev
def test_buttons_and_dominoes_among_real_dice_get_no_value():
    from vision.lab.perturb_suite import perturbed
    from vision.lab.stress import score_rendered
    from vision.reader import read_image

    # benchmarks/perturbations.py --quick, condition clutter, seed 0: picture 11 (a two-hole button read 2) and
    # 23 (two domino halves read 3, one read 1): 4 valued extras before vision.reader_not_a_die. A domino whose
    # two halves are both boxed is a known gap: each half has a "die" beside it, and dice touching edge to edge
    # (held dice side by side) are not judged by the run-on rule (vision.reader_not_a_die.beside_another)
    pics = perturbed("clutter", load_dataset(DEFAULT_DEV_DIR)[::4])
    for k, most in ((11, 0), (23, 2)):
        counts = score_rendered(pics[k], read_image(pics[k].image))
        assert counts.extra_valued <= most and counts.wrong == 0, (k, counts)
        assert counts.right >= counts.dice - 1, (k, counts)


def test_black_dice_on_black_cloth_are_dice_not_specks():
    # a black die's body is the cloth's colour and its pips are light spots, as dust is; its lit edges are not
    from vision.reader import read_image
    from vision.render import render_tray

    tray = render_tray([1, 2, 3, 4, 5], seed=3, style="round")  # five black dice in a black tray
    values = [d.value for d in read_image(tray.image).dice if d.value is not None]
    assert len(values) >= 4 and set(values) <= {1, 2, 3, 4, 5}, values
