"""vision.annotate: read dice and unknown dice are drawn in different colours, legibly."""

import numpy as np

from vision.annotate import MIN_DRAWING_PX, READ_COLOUR, UNKNOWN_COLOUR, annotate_reading
from vision.reading import DieReading, ImageReading


def test_annotate_colours_read_and_unknown_dice_apart():
    image = np.full((480, 640, 3), 90, np.uint8)
    reading = ImageReading(
        (DieReading(3, (50, 100, 60, 60), 0.99), DieReading(None, (250, 100, 60, 60), 0.4, "low confidence"))
    )
    out = annotate_reading(image, reading)
    assert out.shape == image.shape and out.dtype == np.uint8
    assert tuple(out[130, 50]) == READ_COLOUR  # left edge of the read die's box
    assert tuple(out[130, 250]) == UNKNOWN_COLOUR  # left edge of the unknown die's box
    assert np.array_equal(image, np.full((480, 640, 3), 90, np.uint8))  # input untouched


def test_annotate_writes_problems_on_top():
    image = np.full((480, 640, 3), 90, np.uint8)
    out = annotate_reading(image, ImageReading((), ("no dice found",)))
    band = out.shape[0] - 480
    assert 10 < band < 60 and out.shape[1:] == (640, 3)
    assert (out[:band] != 90).any() and (out[band:] == 90).all()


def test_problems_never_hide_a_die_or_its_value():
    # three problems on a small photo with dice along its top edge: they go on a band above the photo
    image = np.full((150, 200, 3), 90, np.uint8)
    dice = (DieReading(3, (20, 2, 30, 30), 0.99), DieReading(None, (120, 5, 30, 30), 0.4, "low confidence"))
    problems = (
        "frame blurred: wait for the dice to settle or check the focus",
        "dice only about 15 px across in the picture: move the camera closer or use a bigger photo",
        "1 die unreadable: re-roll or adjust",
    )
    plain = annotate_reading(image, ImageReading(dice))
    out = annotate_reading(image, ImageReading(dice, problems))
    band = out.shape[0] - plain.shape[0]
    assert band > 0 and np.array_equal(out[band:], plain)
    assert ((out[:band] > 150).any(axis=2)).sum(axis=1).nonzero()[0].size > 3 * 5  # three lines of text written


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
    text = np.nonzero((out > 150).any(axis=2))
    assert out.shape[1] == 640 and text[1].max() < 640 - 1  # nothing runs off the right edge
    one_line = annotate_reading(image, ImageReading((), ("no dice found",))).shape[0] - 480
    assert out.shape[0] - 480 >= 2 * one_line  # it took more than one line


def test_an_unknown_die_is_labelled_with_why():
    from vision.reading import UnknownReason, short_reason

    assert all(reason.short and len(reason.short) <= 6 for reason in UnknownReason)
    assert short_reason("cut off by the picture's edge") == "cut" and short_reason("glare on the face") == "glare"
    assert short_reason("smudge on the lens") == "smudge"  # a text that is no UnknownReason: its first 6 letters
    image = np.full((480, 640, 3), 90, np.uint8)
    box = (300, 200, 60, 60)

    def label_width(reason):
        out = annotate_reading(image, ImageReading((DieReading(None, box, 0.4, reason),)))
        tag = (out[:200] == UNKNOWN_COLOUR).all(axis=2)  # the filled tag above the box
        return int(np.ptp(np.nonzero(tag.any(axis=0))[0]))

    assert label_width("low confidence") > 2 * label_width(None)


def test_a_die_filling_the_picture_keeps_its_value_in_view():
    # a close-up cut to the die's outline: no room above or below the box, so the value goes inside its top edge
    image = np.full((500, 500, 3), 90, np.uint8)
    out = annotate_reading(image, ImageReading((DieReading(6, (0, 0, 500, 500), 0.99),)))
    corner = out[2:25, 2:25]
    assert (corner == READ_COLOUR).all(axis=2).sum() > 40  # the filled tag behind the value, past the box's edge
    assert (corner > 200).all(axis=2).sum() > 5  # the value's white strokes
    # a die at the right edge: its tag "? unsure" is moved left into the picture instead of being cut off
    out = annotate_reading(image, ImageReading((DieReading(None, (470, 200, 30, 30), 0.4, "low confidence"),)))
    tag = (out[180:200, :] == UNKNOWN_COLOUR).all(axis=2)
    assert tag.sum() > 300 and tag.any(axis=0).nonzero()[0].min() < 460


def test_a_label_covers_no_neighbouring_die():
    """A die between two touching neighbours (above and below) gets its label beside it, not over a neighbour."""
    image = np.full((480, 640, 3), 90, np.uint8)
    above, middle, below = (300, 138, 60, 60), (300, 200, 60, 60), (300, 262, 60, 60)
    dice = (
        DieReading(5, above, 0.99),
        DieReading(None, middle, 0.4, "low confidence"),
        DieReading(2, below, 0.99),
    )
    out = annotate_reading(image, ImageReading(dice))
    orange = (out == UNKNOWN_COLOUR).all(axis=2)
    for x, y, w, h in (above, below):  # inside each neighbour (its border lines left out): none of the middle's label
        assert not orange[y + 3 : y + h - 2, x + 3 : x + w - 2].any()
    x, y, w, h = middle
    label = orange.copy()
    label[y - 2 : y + h + 3, x - 2 : x + w + 3] = False  # its own box
    assert label.sum() > 100  # the label was drawn, outside the three boxes
    green = (out == READ_COLOUR).all(axis=2)  # nor does a neighbour's label (the one below goes below it)
    assert not green[y + 3 : y + h - 2, x + 3 : x + w - 2].any()
