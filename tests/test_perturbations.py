"""The perturbation suite (issue 37, item 6): seeded edits of DEV photos and renders, and the reader's floors on a
small subset of it (every 13th DEV photo, 13 photos and 76 dice; 6 renders per rendered condition)."""

from __future__ import annotations

import numpy as np
import pytest

from vision.lab.dataset import DEFAULT_DEV_DIR, load_dataset
from vision.lab.perturb_suite import PERTURBATIONS, perturbed, run_condition

#: Per condition: (least accuracy on the dice that should be read, most silent errors), from
#: ``tests/test_perturbations.py``'s subset as measured on 2026-12-03 (accuracy less 0.05, rounded down; silent
#: errors as measured). Clutter, cocked and stacked dice are the issue's open gaps: their limits are today's
#: counts (11 keys, tiles and domino halves given a value; 1 of 6 cocked and 1 of 12 stacked dice given one,
#: since the top face's shape is judged against the die's own set: vision.reader_stacked), so that they can only
#: go down.
FLOORS: dict[str, tuple[float, int]] = {
    # 58/76 right, 17 unknown; glints painted over before reading (vision/reader_glare.py). 1 wrong since face
    # reader v9: a glint beside nell_IMG_20191209_095348's blue 1 read as a second pip (2, stated 0.81), which v8
    # left unknown; the full glare run has as many wrong values as v8's (24, docs/perturbations.md)
    "glare": (0.71, 1),
    "hard_shadow": (0.93, 0),  # 75/76
    "round_shadow": (0.93, 0),  # 75/76
    "tilt_35_50": (0.76, 0),  # 62/76
    "touching_0px": (0.93, 0),  # 88/89
    "white_card": (0.93, 0),  # 97/99, 1 missed (82/99 and 14 missed before vision.detect_cards' closer look)
    # 76/76; keys, tiles and domino halves boxed side by side given a value (28 before vision.reader_not_a_die; 7
    # before dice beside another die were exempted from its run-on rule, for held dice side by side; 17 before face
    # reader v9 learned drawn clutter as class 0, vision.lab.training.not_dice)
    "clutter": (0.95, 11),
    "dust_ev_plus1": (0.81, 0),  # 66/76, 7 missed; no speck given a value (vision.reader_not_a_die)
    "cocked_15_45": (0.95, 1),  # 24/24 flat dice right; 1 of 6 cocked dice given a value (4 before reader_stacked)
    "stacked": (0.95, 1),  # 18/18 flat dice right; 1 of 12 stacked dice given a value (6 before reader_stacked)
}


@pytest.fixture(scope="module")
def photos():
    if not (DEFAULT_DEV_DIR / "labels.json").exists():
        pytest.skip("the DEV photos are not here")
    return load_dataset(DEFAULT_DEV_DIR)[::13]


@pytest.mark.parametrize("condition", sorted(FLOORS))
def test_reader_floors_on_the_perturbation_suite(photos, condition):
    from vision.reader import read_image

    counts = run_condition(condition, photos, read_image, seed=0, renders=6)
    floor, silent = FLOORS[condition]
    assert counts.images >= 6 and counts.dice >= 18
    assert counts.accuracy >= floor, counts
    assert counts.silent <= silent, counts


@pytest.mark.parametrize("condition", PERTURBATIONS)
def test_every_condition_is_seeded_and_keeps_its_truth_in_the_picture(photos, condition):
    first = perturbed(condition, photos[:3], seed=1, renders=2)
    again = perturbed(condition, photos[:3], seed=1, renders=2)
    assert first and len(first) == len(again)
    for a, b in zip(first, again):
        assert a.image.dtype == np.uint8 and a.image.ndim == 3 and np.array_equal(a.image, b.image)
        assert a.dice == b.dice
        h, w = a.image.shape[:2]
        for t in a.dice:
            x, y, bw, bh = t.box
            assert 1 <= t.value <= 6 and x >= 0 and y >= 0 and x + bw <= w and y + bh <= h and bw > 0 and bh > 0
    if condition not in ("none", "ev_plus1", "ev_minus1", "warm", "cool", "cocked_15_45", "stacked"):  # no draws
        other = perturbed(condition, photos[:3], seed=2, renders=2)
        assert any(not np.array_equal(a.image, b.image) for a, b in zip(first, other)), "the seed changes nothing"


def test_edits_add_the_dice_they_paste_and_renders_label_what_must_get_no_value(photos):
    cards = [(p, perturbed("white_card", [p], seed=0)) for p in photos]
    photo, (card,) = next((p, c) for p, c in cards if c)
    assert len(card.dice) == len(photo.dice) + 2
    touching = perturbed("touching_0px", photos[:1], seed=0)[0]
    assert len(touching.dice) == len(photos[0].dice) + 1
    stacked = perturbed("stacked", [], seed=0, renders=1)[0]
    assert sum(t.unreadable is not None for t in stacked.dice) == 2 and len(stacked.dice) == 5


def test_an_unknown_condition_is_named_with_the_choices():
    with pytest.raises(ValueError, match="unknown condition 'fog'.*glare"):
        perturbed("fog", [])
