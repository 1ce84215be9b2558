"""Objects that are not dice, drawn beside the dice of a render (vision.render.add_clutter)."""

from __future__ import annotations

import numpy as np
import pytest

from vision.render import add_clutter, render_randomised


def _render(seed: int):
    tray = render_randomised([1, 2, 3, 4, 5], seed=seed, condition="plain")
    return tray.image, [d.box for d in tray.dice]


@pytest.mark.parametrize("seed", range(6))
def test_clutter_is_drawn_beside_the_dice_and_leaves_the_dice_alone(seed):
    image, boxes = _render(seed)
    out = add_clutter(image, np.random.default_rng(seed), boxes, count=3)
    assert out.shape == image.shape and out.dtype == np.uint8
    change = np.abs(out.astype(np.int16) - image.astype(np.int16)).max(axis=2)
    inside = np.zeros(change.shape, bool)
    for x, y, w, h in boxes:
        inside[y : y + h, x : x + w] = True
    assert (change[~inside] > 40).sum() > 200, "no object was drawn"
    # an object never covers a die: only the soft glow of a lit edge may reach one
    for x, y, w, h in boxes:
        assert np.median(change[y : y + h, x : x + w]) < 12


def test_clutter_repeats_by_seed_and_does_not_touch_its_input():
    image, boxes = _render(3)
    before = image.copy()
    first = add_clutter(image, np.random.default_rng(11), boxes)
    again = add_clutter(image, np.random.default_rng(11), boxes)
    assert np.array_equal(first, again)
    assert np.array_equal(image, before)
    assert not np.array_equal(first, add_clutter(image, np.random.default_rng(12), boxes))


def test_no_clutter_where_there_is_no_clear_place():
    image, _ = _render(1)
    whole = [(0, 0, image.shape[1], image.shape[0])]
    assert np.array_equal(add_clutter(image, np.random.default_rng(0), whole, count=3), image)


@pytest.mark.parametrize("bad", [np.zeros((10, 10), np.uint8), np.zeros((10, 10, 3), np.float32), "image"])
def test_clutter_refuses_what_is_not_a_colour_picture(bad):
    with pytest.raises(ValueError, match="uint8 BGR"):
        add_clutter(bad, np.random.default_rng(0), [])


def test_the_clutter_condition_adds_objects_and_random_renders_never_do():
    from vision.render import Conditions

    bare = render_randomised([1, 2, 3, 4, 5], seed=5, conditions=Conditions())
    cluttered = render_randomised([1, 2, 3, 4, 5], seed=5, conditions=Conditions(clutter=True))
    assert bare.dice == cluttered.dice
    assert not np.array_equal(bare.image, cluttered.image)
    assert not any(Conditions.sample(np.random.default_rng(s)).clutter for s in range(200))
    assert Conditions.sample(np.random.default_rng(0), "clutter").clutter
