"""vision.lab.training.not_dice: drawn die-sized things that are not dice (class-0 training crops)."""

from __future__ import annotations

import numpy as np
import pytest

from vision.lab.training.not_dice import KIND_WEIGHTS, KINDS, draw_not_die, not_dice_set


def test_set_shapes_dtypes_and_labels():
    crops, labels, kinds = not_dice_set(12, seed=1, size=96)
    assert crops.shape == (12, 96, 96, 3) and crops.dtype == np.uint8
    assert labels.shape == (12,) and labels.dtype == np.int64 and not labels.any()
    assert kinds.shape == (12,) and set(kinds.tolist()) <= set(KINDS)
    assert len(KINDS) == len(KIND_WEIGHTS)


def test_same_seed_same_crops_other_seed_other_crops():
    a, _, ka = not_dice_set(6, seed=3)
    b, _, kb = not_dice_set(6, seed=3)
    c, _, _ = not_dice_set(6, seed=4)
    assert np.array_equal(a, b) and np.array_equal(ka, kb)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_draws_an_object_in_the_box(kind):
    # On a flat grey background the object must change the centre of the crop (not empty) and
    # leave the corners (it is die-sized: its box is size / (1.6 * 1.3) px, about half the crop).
    bg = np.full((96, 96, 3), 128, np.uint8)
    for seed in range(3):
        crop = draw_not_die(kind, np.random.default_rng(seed), background=bg).astype(np.float64)
        corners = np.concatenate([crop[:8, :8], crop[:8, -8:], crop[-8:, :8], crop[-8:, -8:]])
        changed = np.abs(crop - 128).max(axis=2) > 12
        assert changed[30:66, 30:66].mean() > 0.3, kind
        if kind != "domino":  # a boxed domino half runs on past its box, maybe into a corner
            assert np.abs(corners - 128).max() < 60, kind


def test_backgrounds_are_used():
    bgs = np.zeros((2, 64, 64, 3), np.uint8)
    bgs[:, :, :, 2] = 255  # pure red tables
    crops, _, _ = not_dice_set(20, seed=5, backgrounds=bgs)
    corner = crops[:, :4, :4].reshape(len(crops), -1, 3).mean(axis=1)
    red = (corner[:, 2] > 150) & (corner[:, 0] < 80)
    assert 0 < red.sum() < len(crops)  # about half on the given backgrounds, the rest on drawn tables


def test_a_boxed_domino_half_runs_on_past_its_crop():
    # The crop of a domino half must never be a lone die-like square: the body runs on past the
    # nominal crop (the central 96 / 1.6 = 60 px of the context crop), so the reader sees the
    # dividing line and the other half's start. Whole dominoes (about 3 in 10) fit their box.
    bg = np.full((96, 96, 3), 128, np.uint8)
    ran_on = 0
    for seed in range(20):
        crop = draw_not_die("domino", np.random.default_rng(seed), background=bg).astype(np.float64)
        body = np.abs(crop - 128).max(axis=2) > 20
        body[16:80, 16:80] = False
        ran_on += int(body.sum() > 20)
    assert ran_on >= 10
