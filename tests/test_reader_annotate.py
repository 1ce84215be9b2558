"""vision.annotate: read dice and unknown dice are drawn in different colours, legibly."""

import numpy as np

from vision.annotate import MIN_DRAWING_PX, READ_COLOUR, UNKNOWN_COLOUR, annotate_reading
from vision.reading import DieReading, ImageReading


def test_annotate_colours_read_and_unknown_dice_apart():
    image = np.full((480, 640, 3), 90, np.uint8)
    reading = ImageReading((DieReading(3, (50, 100, 60, 60), 0.99), DieReading(None, (250, 100, 60, 60), 0.4, "low confidence")))
    out = annotate_reading(image, reading)
    assert out.shape == image.shape and out.dtype == np.uint8
    assert tuple(out[130, 50]) == READ_COLOUR  # left edge of the read die's box
    assert tuple(out[130, 250]) == UNKNOWN_COLOUR  # left edge of the unknown die's box
    assert np.array_equal(image, np.full((480, 640, 3), 90, np.uint8))  # input untouched


def test_annotate_writes_problems_on_top():
    image = np.full((480, 640, 3), 90, np.uint8)
    out = annotate_reading(image, ImageReading((), ("no dice found",)))
    assert (out[:20, :100] != 90).any() and (out[200:, :] == 90).all()


def test_annotate_enlarges_a_small_photo_and_its_boxes():
    image = np.full((150, 200, 3), 90, np.uint8)
    out = annotate_reading(image, ImageReading((DieReading(3, (20, 40, 30, 30), 0.99),)))
    k = -(-MIN_DRAWING_PX // 200)
    assert out.shape == (150 * k, 200 * k, 3)
    assert tuple(out[40 * k + 15 * k, 20 * k]) == READ_COLOUR


def test_annotate_wraps_a_long_problem_to_the_picture_width():
    image = np.full((480, 640, 3), 90, np.uint8)
    problem = "dice only about 10 px across in the picture: move the camera closer or use a bigger photo " * 2
    out = annotate_reading(image, ImageReading((), (problem.strip(),)))
    banner = np.nonzero((out != 90).any(axis=2))
    assert banner[1].max() < 640 - 1  # nothing runs off the right edge
    assert banner[0].max() > 40  # it took more than one line
