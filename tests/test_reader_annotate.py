"""vision.annotate: read dice and unknown dice are drawn in different colours."""

import numpy as np

from vision.annotate import READ_COLOUR, UNKNOWN_COLOUR, annotate_reading
from vision.reading import DieReading, ImageReading


def test_annotate_colours_read_and_unknown_dice_apart():
    image = np.full((300, 400, 3), 90, np.uint8)
    reading = ImageReading((DieReading(3, (50, 100, 60, 60), 0.99), DieReading(None, (250, 100, 60, 60), 0.4, "low confidence")))
    out = annotate_reading(image, reading)
    assert out.shape == image.shape and out.dtype == np.uint8
    assert tuple(out[130, 50]) == READ_COLOUR  # left edge of the read die's box
    assert tuple(out[130, 250]) == UNKNOWN_COLOUR  # left edge of the unknown die's box
    assert np.array_equal(image, np.full((300, 400, 3), 90, np.uint8))  # input untouched


def test_annotate_writes_problems_on_top():
    image = np.full((300, 400, 3), 90, np.uint8)
    out = annotate_reading(image, ImageReading((), ("no dice found",)))
    assert (out[:20, :100] != 90).any() and (out[200:, :] == 90).all()
