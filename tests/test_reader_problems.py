"""vision.reader_problems._dice_problems: in a blurred or too bright frame, a 'leaning' die is not blamed on leaning."""

import cv2
import numpy as np

from vision.reader_problems import _dice_problems
from vision.reading import DieReading, UnknownReason

LEAN = "1 die leaning on the wall or another die: re-roll or nudge it flat"


def _crops(sigma: float) -> list[np.ndarray]:
    """Two 64x64 face crops with pips, sharp (sigma 0) or blurred by a Gaussian of `sigma` px."""
    crop = np.full((64, 64, 3), 230, np.uint8)
    for cx, cy in ((18, 18), (46, 46), (32, 32)):
        cv2.circle(crop, (cx, cy), 6, (20, 20, 20), -1)
    if sigma:
        crop = cv2.GaussianBlur(crop, (0, 0), sigma)
    return [crop, crop.copy()]


DICE = [DieReading(3, (10, 10, 60, 60), 0.99), DieReading(None, (100, 10, 60, 60), 0.3, UnknownReason.LEANING)]


def test_a_leaning_die_in_a_sharp_well_lit_frame_is_said_to_lean():
    assert _dice_problems(DICE, _crops(0)) == [LEAN]


def test_in_a_too_bright_frame_it_is_unreadable_not_leaning():
    assert _dice_problems(DICE, _crops(0), too_bright=True) == ["1 die unreadable: re-roll or adjust"]


def test_in_a_blurred_frame_it_is_unreadable_not_leaning():
    problems = _dice_problems(DICE, _crops(4))
    assert problems == [
        "frame blurred: wait for the dice to settle or check the focus",
        "1 die unreadable: re-roll or adjust",
    ]


def test_dice_all_read_in_a_bright_frame_add_no_dice_problem():
    assert _dice_problems(DICE[:1], _crops(0), too_bright=True) == []
