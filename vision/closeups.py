"""Close-up dice: is a big box of the detector's coarse look one die, or a group of dice?

A die that fills much of the picture is several times the size the die
detector's main look was trained on, and that look boxes its pips (or pairs of
them) as small "dice", read as 1s and 2s. The detector's coarse look
(:meth:`vision.detect.DieDetector.large_candidates`) offers such a die whole,
but it also offers groups of dice (a tray in a bigger photo) the same way.
:func:`close_up_dice` tells them apart from what the face reader and the pip
finder say of the big box and of the boxes inside it; :func:`same_die_boxes`
finds the main look's boxes that are a taken close-up die again.

Measured with ``python benchmarks/close_ups.py`` (the 300 close-ups of
``../shared/dice-images/dev/single``, DEV dice cropped to fill 0.2-0.9 of the
picture, rendered trays in bigger photos, tiled wide views); the measurements
behind each rule are in ``docs/reader.md``.

Conventions: boxes are ``(x, y, w, h)`` in pixels of the photo.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from vision.detect_boxes import CONTAINED_SHARE, DEFAULT_NMS_IOU, box_intersections, box_iou
from vision.detect_coarse import LargeCandidate

__all__ = [
    "PIP_BOX_SHARE",
    "SAME_DIE_SHARE",
    "PIP_BOX_MAX_PROB",
    "FACE_LIKE_PROB",
    "close_up_dice",
    "same_die_boxes",
]


#: Least long side of a box inside a close-up die's box, as a share of the
#: die's long side, for it to be one of its pips (a pip or two boxed by the
#: detector's main look): such boxes were 0.21-0.79 of the die in sampled
#: ``dev/single`` close-ups, dice inside a tray's box 0.07-0.26 of it.
PIP_BOX_SHARE: float = 0.15
#: A box inside a large candidate at least this share of its long side is the
#: same die boxed more tightly, or part of it, not a pip; it does not count
#: in the judgment (read surely as another value, such off-centre parts of a
#: die, two pips of a 4 read as a 2, left 9 ``dev/single`` dice unknown).
SAME_DIE_SHARE: float = 0.6
#: A box inside a large candidate read as a 1 or 2 with at least this
#: probability is a die, not a pip (:func:`close_up_dice`): on the sampled
#: close-ups a pip or two boxed alone was read at 0.18-0.91, the dice inside
#: trays at 0.91-0.98. Read as more than the big box's value below it, such a
#: box is a pip and does not veto the big box.
PIP_BOX_MAX_PROB: float = 0.93
#: A box inside a large candidate counts (as a pip or a die) only when the face
#: reader's best value has at least this probability; below it, a speck or an
#: edge of the die that the close-up judgment ignores.
FACE_LIKE_PROB: float = 0.5


def close_up_dice(
    large: tuple[LargeCandidate, ...],
    boxes: list[tuple[int, int, int, int]],
    probs: np.ndarray,
    first_look: np.ndarray,
    first: int,
    value_threshold: float,
    pips_agree: Callable[[list[int], list[int]], list[bool]],
) -> tuple[list[int], list[int]]:
    """Which large candidates are one close-up die, not a group of dice.

    A large box from the detector's coarse look
    (:meth:`vision.detect.DieDetector.large_candidates`) is either one die too
    big for the detector's main look, whose pips were boxed as small "dice",
    or a group of dice (a tray in a wider photo), whose boxes inside are dice.
    Only the boxes inside that look like a face count (best value at least
    :data:`FACE_LIKE_PROB` and more likely than "not a face"). A large box with no box inside (one the
    main look missed) is read as usual when the main look found nothing, or when it looks more like a
    face than not; beside the main look's dice and unlike a face it is not a die (a tray's stand cut by
    the picture's edge, which detectors fine-tuned on renders box there in the kingpi DEV photos).
    Otherwise it is

    * one die, read as usual, when the face reader reads it as a value ``v``
      with at least `value_threshold`, the reader's pip check agrees (`pips_agree`:
      the same three looks as for any die), and the
      boxes inside could be its pips: at most ``v`` of them, none read, with
      at least :data:`PIP_BOX_MAX_PROB`, as more than ``v`` (a pip reads as a
      1, two neighbouring pips as a 2, now and then as more but not surely;
      the dice of a tray read as their own values).
      A box inside at least :data:`SAME_DIE_SHARE` of its long side is the
      same die boxed tighter (or part of it), not a pip, and does not count;
    * one die of unknown value (``"pip count disagrees"``) when it looks more
      like a face than not and every box inside looks like a pip or two (read
      as at most 2 with less than :data:`PIP_BOX_MAX_PROB`, at least
      :data:`PIP_BOX_SHARE` of its long side): reading those as dice would
      report 1s and 2s that are not there;
    * otherwise not a die: the boxes inside stand.

    Parameters
    ----------
    large : tuple of LargeCandidate
        The candidates; ``inside`` indexes the first `first` rows of `probs`.
    boxes : list of (x, y, w, h)
        The boxes of the small candidates (at least the first `first`), px.
    probs : ndarray of shape (first + len(large), 7), dtype float64
        Face-reader probabilities of the small candidates, then of the large,
        after the reader's second look.
    first_look : ndarray of shape (first + len(large), 7), dtype float64
        The same before the second look; the boxes inside are judged on it
        (the second look makes a pip or two read as a 1 or 2 surer than it is).
    first : int
        Number of small candidates.
    value_threshold : float
        Least probability of a value to count.
    pips_agree : callable
        The second opinion, the same the reader asks of every die:
        ``pips_agree(rows, values)`` says, for each row of `probs` in `rows`,
        whether the pip finder's marks hold that face value's layout (the
        reader's looks at the crop, its turns and the box alone).

    Returns
    -------
    dice : list of int
        Indices into `large` of the candidates that are one die, read as usual.
    unknown : list of int
        Indices into `large` of the candidates that are one die of unknown value.
    """
    values = [int(np.argmax(p[1:]) + 1) for p in probs]
    best = [float(p[1:].max()) for p in probs]
    sure = [b >= value_threshold for b in best]
    inner_values = [int(np.argmax(p[1:]) + 1) for p in first_look[:first]]
    inner_best = [float(p[1:].max()) for p in first_look[:first]]
    dice: list[int] = []
    unknown: list[int] = []
    maybe: list[int] = []
    for j, cand in enumerate(large):
        k = first + j
        if not cand.inside:
            if first == 0 or best[k] > probs[k][0]:
                dice.append(j)  # a die the main look missed
            continue  # beside the main look's dice, holding none of them and unlike a face: not a die
        side = max(cand.detection.box[2], cand.detection.box[3])
        faces = [i for i in cand.inside if inner_best[i] >= FACE_LIKE_PROB and inner_best[i] > first_look[i][0]]
        pips = [i for i in faces if max(boxes[i][2], boxes[i][3]) < SAME_DIE_SHARE * side]
        v = values[k]
        if (
            sure[k]
            and len(pips) <= v
            and not any(inner_values[i] > v and inner_best[i] >= PIP_BOX_MAX_PROB for i in pips)
        ):
            maybe.append(j)
        elif best[k] > probs[k][0] and all(
            inner_values[i] <= 2
            and inner_best[i] < PIP_BOX_MAX_PROB
            and max(boxes[i][2], boxes[i][3]) >= PIP_BOX_SHARE * side
            for i in pips
        ):
            unknown.append(j)
    if maybe:
        rows = [first + j for j in maybe]
        for j, agree in zip(maybe, pips_agree(rows, [values[k] for k in rows])):
            (dice if agree else unknown).append(j)
    return dice, unknown


def same_die_boxes(boxes: list[tuple[int, int, int, int]], dice: list[tuple[int, int, int, int]]) -> set[int]:
    """Indices of `boxes` that are one of the close-up `dice` again.

    The boxes inside a close-up die (:class:`vision.detect.LargeCandidate`) are
    those at most 1 / :data:`vision.detect_boxes.CONTAINED_AREA_RATIO` of its area; a
    box of nearly the die's own size is the same die boxed by the main look and
    would count it twice. Such a box overlaps a die by more than the
    detector's default non-maximum-suppression IoU, or lies at least
    :data:`vision.detect_boxes.CONTAINED_SHARE` of its area inside it.

    Parameters
    ----------
    boxes : list of (x, y, w, h)
        The main look's boxes, px.
    dice : list of (x, y, w, h)
        The close-up dice taken, px.

    Returns
    -------
    set of int
        Indices into `boxes`.
    """
    if not boxes or not dice:
        return set()
    a = np.asarray(boxes, np.float64)
    b = np.asarray(dice, np.float64)
    ious = box_iou(a, b)
    inside = box_intersections(a, b) >= CONTAINED_SHARE * (a[:, 2] * a[:, 3])[:, None]
    return {int(i) for i in np.nonzero((ious > DEFAULT_NMS_IOU).any(axis=1) | inside.any(axis=1))[0]}
