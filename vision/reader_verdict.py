"""The reader's rules for what a candidate box becomes: dropped, a value, or unknown with a reason.

A value needs the face reader sure enough (:data:`VALUE_THRESHOLD`) and the
pip finder agreeing (:mod:`vision.reader_agreement`). Before that, the boxes
alone set some dice aside (:func:`_box_reasons`): leaning, cut off by the
picture's edge, too small, or only part of a die; and some candidates are not
dice at all (a phantom the face reader calls "not a die", a speck far smaller
than the dice read, a pip inside a die read: :func:`_specks`).

Conventions: boxes are ``(x, y, w, h)`` in pixels of the photo, ``x`` right,
``y`` down.
"""

from __future__ import annotations

import numpy as np

from vision.detect_boxes import contained_in
from vision.reading import DieReading, UnknownReason

__all__ = [
    "VALUE_THRESHOLD",
    "DROP_NOT_A_DIE_PROB",
    "DROP_MAX_DETECTOR_SCORE",
    "SPECK_RATIO",
    "MIN_DIE_PX",
    "PART_RATIO",
    "LEANING_AREA_RATIO",
    "EDGE_PX",
    "EDGE_SHARE",
    "CUT_ASPECT",
    "CUT_SIDE_RATIO",
]

#: Least face-reader probability of the best face value (1-6) to give a value
#: (the pip finder must agree too). Chosen on the held-out DEV folds, counting a
#: silent error as ten unknown dice: at 0.75, 887 right and 5 wrong of 947
#: held-out dice; 0.7 read 2 more right and 1 more wrong. Re-tune when a network
#: is retrained (``benchmarks/tune_reader.py`` on the fold twins).
VALUE_THRESHOLD: float = 0.75

#: A candidate the face reader calls "not a die" at least this sure (on its
#: first look or its second) ... (every true DEV die the detector scored under
#: 0.6 got at most 0.023; the wood-grain spot of jim_input_dice5.jpg 0.897)
DROP_NOT_A_DIE_PROB: float = 0.80
#: ... and that the detector scored below this is dropped (a phantom).
DROP_MAX_DETECTOR_SCORE: float = 0.60

#: A candidate whose long side is under this share of the biggest die given a
#: value in the same photo is dropped: dice are all one size, seen from above
#: (a die leaning on a wall shows about 1.5 times bigger, a far die in an
#: oblique view about half), so it is a speck of dust or a pip (an 11 x 14 px
#: speck beside a 140 px die was read as a 1 at 0.99).
SPECK_RATIO: float = 0.25

#: A die whose box is under this many pixels across gets no value ("too small
#: in the picture"): its pips are a pixel or two. Without the rule, DEV dice
#: scaled to 12 px across got 7 wrong values for 245 right, at 14 px 1 for 278.
MIN_DIE_PX: float = 13.0

#: With 3 or more dice, a box whose long side is under this share of the median
#: is part of a die: the detector boxed a corner of a die touching another, and
#: its one pip read as a 1 at 0.99 (0.59 of the median). Whole dice given a
#: value are at least 0.63 of it in DEV photos warped to a 20 % tilt.
PART_RATIO: float = 0.6

#: A die box whose area is more than this times the median box area (with 3 or
#: more dice) is a die leaning on a wall or another die (its side faces show).
LEANING_AREA_RATIO: float = 1.9

#: A die box within this many pixels, or :data:`EDGE_SHARE` of its side, of
#: the picture's edge ...
EDGE_PX: float = 2.0
#: ... (the detector's box of a die cut by the edge can stop a few pixels short
#: of it: 5 and 7 px for boxes of 53-60 px in kingpi close-ups) ...
EDGE_SHARE: float = 0.15
#: ... whose short side is under this fraction of its long side is a die cut
#: off by the edge: the pips left can form another value's layout (a 5 cut to
#: one pip read as a 1). A whole die's box is near square at any rotation; the
#: three DEV dice that touch an edge have 0.92-0.96.
CUT_ASPECT: float = 0.8
#: ... or whose long side is under this fraction of the median side of the dice
#: wholly in view (when every box touches the edge, of the biggest square box)
#: is a corner of a die cut off by the edge, whose one pip reads as a 1: of 89
#: such neighbours of DEV dice cropped to fill 0.3 or 0.65 of the picture, 5
#: were given a wrong value without this rule, none with it.
CUT_SIDE_RATIO: float = 0.75


def _box_reasons(
    boxes: list[tuple[int, int, int, int]], probs: list[np.ndarray], forced: list[bool], width: int, height: int
) -> list[UnknownReason | None]:
    """Why each die gets no value, judged by its box (and, for leaning, how sure the face reader is); None: read it.

    Parameters
    ----------
    boxes : list of N (x, y, w, h)
        The dice's boxes, px.
    probs : list of N ndarray of shape (7,)
        The face reader's probabilities.
    forced : list of N bool
        Close-up dice whose pips were boxed as dice: ``"pip count disagrees"``.
    width, height : int
        The picture's size, px.

    Returns
    -------
    list of N UnknownReason or None
        Leaning (:data:`LEANING_AREA_RATIO`), cut off (:func:`_cut_by_edge`),
        too small (:data:`MIN_DIE_PX`), part of a die (:data:`PART_RATIO`), or
        pip count disagrees (`forced`), the first that applies.
    """
    areas = np.array([b[2] * b[3] for b in boxes], np.float64)
    median_area = float(np.median(areas))
    sides = [max(b[2], b[3]) for b in boxes]
    median_side = float(np.median(sides))
    whole = [s for b, s in zip(boxes, sides) if not _at_edge(b, width, height)]
    # with every box at the edge (a close-up cut tight), the biggest square one stands for a die in view
    whole_side = (
        float(np.median(whole))
        if whole
        else float(max((s for b, s in zip(boxes, sides) if _is_square(b)), default=0.0))
    )
    reasons: list[UnknownReason | None] = []
    for box, p, area, pips_disagree, side in zip(boxes, probs, areas, forced, sides):
        leaning = len(boxes) >= 3 and area > LEANING_AREA_RATIO * median_area
        if leaning and (p[0] > 0.2 or float(p[1:].max()) < 0.95):
            reasons.append(UnknownReason.LEANING)
        elif _cut_by_edge(box, width, height, whole_side):
            reasons.append(UnknownReason.CUT_OFF)
        elif side < MIN_DIE_PX:
            reasons.append(UnknownReason.TOO_SMALL)
        elif len(boxes) >= 3 and side < PART_RATIO * median_side:
            reasons.append(UnknownReason.PART_OF_A_DIE)
        elif pips_disagree:
            reasons.append(UnknownReason.PIPS_DISAGREE)  # a close-up die whose pips were boxed as dice
        else:
            reasons.append(None)
    return reasons


def _specks(dice: list[DieReading]) -> list[bool]:
    """Which dice are not dice: far smaller than a die given a value (:data:`SPECK_RATIO`), or part of one.

    Dice are one size; see :func:`_parts_of_sure_dice` for the parts.
    """
    sure_side = max((max(d.box[2], d.box[3]) for d in dice if d.value is not None), default=0)
    specks = [max(d.box[2], d.box[3]) < SPECK_RATIO * sure_side for d in dice]
    return [s or p for s, p in zip(specks, _parts_of_sure_dice(dice))]


def _at_edge(box: tuple[float, float, float, float], width: int, height: int) -> bool:
    """Whether a box reaches within :data:`EDGE_PX`, or :data:`EDGE_SHARE` of its side, of the picture's edge."""
    x, y, w, h = box
    near = max(EDGE_PX, EDGE_SHARE * max(w, h))
    return x <= near or y <= near or x + w >= width - near or y + h >= height - near


def _cut_by_edge(box: tuple[float, float, float, float], width: int, height: int, whole_side: float) -> bool:
    """Whether a die box touches the picture's edge (:func:`_at_edge`) and part of the die is outside.

    It is when the box is clearly not square (:data:`CUT_ASPECT`), or when its
    long side is under :data:`CUT_SIDE_RATIO` of `whole_side`, the median long
    side (px) of the boxes wholly in view (when every box touches the edge, as
    in a close-up cut tight, the long side of the biggest square box): a corner
    of a die in view. `box` is ``(x, y, w, h)`` and `width`, `height` the
    picture's size, px.
    """
    if not _at_edge(box, width, height):
        return False
    return not _is_square(box) or max(box[2], box[3]) < CUT_SIDE_RATIO * whole_side


def _is_square(box: tuple[float, float, float, float]) -> bool:
    """Whether an ``(x, y, w, h)`` box (px) is square enough for a whole die seen from above (:data:`CUT_ASPECT`)."""
    w, h = box[2], box[3]
    return min(w, h) >= CUT_ASPECT * max(w, h)


def _parts_of_sure_dice(dice: list[DieReading]) -> list[bool]:
    """Which dice lie inside a much bigger die given a value: a pip or a part of it, boxed by another look.

    The detector's containment rule (:func:`vision.detect_boxes.contained_in`)
    applied across its looks: a close-up die taken whole
    (:func:`vision.closeups.close_up_dice`) and a box of the coarse look around
    one of its pips. Found on a kingpi DEV die cut to its outline: the 1 was
    read, and its pip, 70 px in a 123 px die, read as another 1.

    Parameters
    ----------
    dice : list of N DieReading
        The readings, boxes in px.

    Returns
    -------
    list of N bool
    """
    sure = [d.box for d in dice if d.value is not None]
    if not sure:
        return [False] * len(dice)
    inside = contained_in(np.asarray([d.box for d in dice], np.float64), np.asarray(sure, np.float64))
    return [bool(row.any()) for row in inside]
