"""The pip reader: from a photo to the face values of the dice in it.

Pipeline: :mod:`vision.detect` finds die boxes on the photo downscaled to
384 px (closer when the dice are small there, and coarser for a die too big
for it: :func:`vision.closeups.close_up_dice` judges whether such a big box is
one die or a group of dice); :func:`vision.face.crop_die` cuts each box from the *full-resolution*
photo; :mod:`vision.face` gives each crop class probabilities (0 = "not a
readable face", 1..6 = face values); :mod:`vision.pips` marks where the top
face's pips are; this module decides, per die, a value or "unknown" (rule
one: an unsure die is reported unknown, never guessed) and notes problems a
player can act on.

Two opinions must agree (issue #7): a value is given only when the face
reader names it with enough probability *and* the pips that the pip finder
marks on the same crop are exactly that many and hold that value's layout
(:func:`vision.pips.layouts_on_map`), or, for a 4-6, hold it with marks left
out that lie beside the face on the side facing the photo's centre, where a
die off the camera's axis shows side faces (:func:`vision.pips.holds_layout_of`).
The pip finder is another network with
another task (where are the top face's pips?) and the count and layout fit
are classical geometry; neither looks at the face reader's answer.

Which second opinion, measured on the held-out DEV fold with both networks
trained on the other fold (``python benchmarks/tune_reader.py --fold 1``, 474
dice; per-die accuracy / silent errors at threshold 0.30, second look under
0.9): face reader alone 92.4 % / 4.4 %; classical blob layout
(:func:`vision._reader_pips.pips_match`)
83.5 % / 1.7 %; learned pip count and layout 88.2 % / 0.8 %; either of the
two 88.6 % / 1.7 %. A silent error costs a player far more than a re-roll, so
the learned check alone is used.

Decision per candidate box (thresholds measured on ``../shared/dice-images/dev``
with ``dicetable eval``; see the constants):

* dropped (not reported) when the face reader says "not a die" with
  probability >= :data:`DROP_NOT_A_DIE_PROB` and the detector's score is below
  :data:`DROP_MAX_DETECTOR_SCORE`: a phantom from a pip-like spot or a tray edge;
* a value when the face reader's best class is 1-6 with probability >=
  :data:`VALUE_THRESHOLD` and the pip-layout check agrees (on the face crop,
  or else on its four turns, or else on the die's box alone and its turns:
  :data:`TIGHT_PIP_MARGIN`);
* otherwise unknown, with a reason (:class:`vision.reading.UnknownReason`:
  ``"low confidence"``, ``"not a readable face"``, ``"pip count disagrees"``,
  ``"leaning"``, ``"cut off by the picture's edge"``, ``"too small in the picture"``,
  ``"only part of a die boxed"``).

Conventions: images are BGR ``uint8`` arrays indexed ``(row, col)``; boxes are
``(x, y, w, h)`` in pixels of the image given, ``x`` right, ``y`` down.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import cv2
import numpy as np

from vision.closeups import close_up_dice, same_die_boxes
from vision.detect import Detection, contained_in
from vision.images import MIN_SIDE_PX
from vision.reading import DieReading, ImageReading, UnknownReason

__all__ = [
    "VALUE_THRESHOLD",
    "FACE_CROP_MARGIN",
    "TIGHT_PIP_MARGIN",
    "CUT_SIDE_RATIO",
    "DROP_NOT_A_DIE_PROB",
    "DROP_MAX_DETECTOR_SCORE",
    "DARK_MEAN_LEVEL",
    "BLUR_SHARPNESS",
    "BRIGHT_SHARE",
    "SMALL_DIE_PX",
    "MIN_DIE_PX",
    "read_image",
    "networks_from_files",
    "check_image",
    "pip_contrast_view",
]

#: Least face-reader probability of the best face value (1-6) to give a value
#: (the pip finder must agree too). Measured on the held-out DEV fold (474
#: dice) with face reader v7 and pip finder v3 trained without it (layout check
#: on blobs and peaks), per-die accuracy / silent errors (second look under
#: 0.6): 0.3: 92.4 % / 1.7 %; 0.5: 91.6 % / 1.7 %; 0.6: 91.6 % / 1.5 %; 0.7:
#: 91.1 % / 1.5 %; 0.75: 90.5 % / 0.8 %; 0.8: 89.7 % / 0.8 %; 0.85: 88.6 % /
#: 0.8 %. Counting a silent error as ten unknown dice (a wrong score against a
#: re-roll), 0.75 costs least: the two errors it avoids (a blurred smoky 6 read
#: as a 1, a 4 with a white swirl at its centre read as a 5) were stated at
#: 0.73 and 0.75. On the rendered stress sets (``python
#: benchmarks/stress_sets.py --n 10 [--threshold T]``, 22 sets, 1074 dice):
#: right / silent 1035 / 4 at 0.75, 1035 / 6 at 0.7. (Face reader v6: held-out
#: 90.5 % / 1.1 % at 0.7, stress 1029 / 9 before the detector's containment
#: rule; v5: 88.8 % / 1.3 %; face reader v3 / pip finder v2: 86.9 % / 0.8 %.)
#: With the pip finder looking again at turned crops where it disagrees
#: (:func:`_pip_maps_turned`), through :func:`read_image` on the fold with the
#: twins: 0.7: 92.0 % / 1.5 %; 0.75: 91.1 % / 0.8 %; 0.8: 90.3 % / 0.8 %;
#: stress 1038 / 4 at 0.75. Still 0.75.
#: Re-checked on both DEV folds with their twins (fold 0's trained later,
#: 947 held-out dice; 0.75: 878 right, 5 silent): 0.7 gives 6 more right and 2
#: more wrong (fold 0: +2 / 0; fold 1: +4 / +2), 0.65 the same on fold 1 and
#: 5 more right on fold 0. Still 0.75.
#: Re-checked on 2026-12-02 with the mirrored view (:data:`vision.face.READ_MIRRORED`)
#: and both folds' face and pip twins of the shipped recipes (947 held-out dice;
#: 0.75: 887 right, 5 wrong, 55 unknown, 1 extra given a value): 0.7 gives 2 more
#: right and 1 more wrong, 0.65 4 more and 1, 0.6 6 more and 3, 0.8 6 fewer right
#: and no fewer wrong. Still 0.75 (:data:`SECOND_LOOK_BELOW` 0.5, 0.7, 0.8: 1, 0
#: and 3 fewer right, no fewer wrong; still 0.6).
#: Re-tune when a model is retrained (``benchmarks/tune_reader.py --fold 1
#: --face-model ... --pip-model ...`` on the fold twins).
VALUE_THRESHOLD: float = 0.75

#: Dice whose best face value has a probability under this get the second look
#: (the four 90-degree turns of the crop and of its pip-contrast view averaged).
#: On the held-out DEV fold with face reader v3 and the pip finder (value
#: threshold 0.30): no second look 88.2 % / 1.3 % silent; under 0.6, 0.75 or
#: 0.9: 88.2 % / 0.8 % (0.9: one die fewer unknown). 0.6 keeps the median time
#: per dev photo under 30 ms on one core.
#: Re-checked with the int8 networks and value threshold 0.75, where dice at
#: 0.6-0.75 are never given a value without a second look: raising it to 0.75
#: read 2 more dice of held-out fold 0 (baseline twins; 0 with the grey-free
#: face twin; 0.7 and 0.8: 1 more, 0.9: 3 fewer) and 3 more in-sample, none
#: wrong; but on the stress sets (seeds 0-2, ``--n 10``) 6 more right (all but
#: one marbled) for 2 more silent errors: half a 6 boxed alone, its row of 3
#: pips read as a 3 turned 45 degrees, and a leaning die given a value. The
#: second look lifts unsure readings right and wrong alike. Still 0.6.
SECOND_LOOK_BELOW: float = 0.6

#: Margin around each detected box for the face reader's crop, as a fraction of
#: the box's longer side (see :func:`vision.face.crop_die`). Measured on dev with
#: face reader v1 (accuracy / silent errors at threshold 0.5): margin 0.15:
#: 74.3 % / 2.2 %; 0.085: 77.5 % / 2.1 %; 0.05: 78.5 % / 2.7 %; -0.01: 76.3 % / 3.2 %.
FACE_CROP_MARGIN: float = 0.085

#: Margin of the pip finder's last look at a die whose pips disagree with a sure
#: face value, after the turned crops (:func:`_pip_maps_turned`): the die's box
#: alone, turned four ways. The box of a die seen at an angle holds its side
#: faces, and the face crop's margin more of them and of the neighbours; their
#: pips, marked too, spoil the layout. On the held-out DEV fold (twins of face
#: reader v7 and pip finder v3) it agreed, and rightly, for 3 of the 13 dice
#: still disagreeing (431 -> 434 right, silent errors unchanged; margin 0.03:
#: 435, 0.05: 433, 0.12 and 0.2: 432); in-sample DEV 889 -> 894 right; stress
#: sets 1037 -> 1041 right, silent unchanged; close-ups as before (tiled
#: photos 293 -> 297).
TIGHT_PIP_MARGIN: float = 0.0

#: A candidate the face reader calls "not a die" at least this sure ...
#: (measured with face reader v7 on DEV: the wood-grain spot of
#: jim_input_dice5.jpg 0.897, detector 0.49; every true die the detector scored
#: under 0.6 at most 0.023, in-sample, and none on the held-out fold; at 0.90
#: the spot was reported as an unreadable die asking for a re-roll)
DROP_NOT_A_DIE_PROB: float = 0.80
#: ... and that the detector scored below this is dropped (a phantom).
DROP_MAX_DETECTOR_SCORE: float = 0.60

#: A candidate whose long side is under this share of the biggest die given a
#: value in the same photo is dropped: dice are all one size, seen from above
#: (a die leaning on a wall shows about 1.5 times bigger, a far die in an
#: oblique view about half), so it is a speck of dust or a pip. Found on DEV
#: kingpi dice cropped to fill 0.45-0.65 of the picture: an 11 x 14 px speck
#: on the felt beside a 140 px die was read as a 1 at 0.99.
SPECK_RATIO: float = 0.25

#: Mean grey level (0-255) under which a frame is "too dark".
DARK_MEAN_LEVEL: float = 35.0

#: Median, over the dice found, of each die's sharpness (the variance of the
#: Laplacian of its grey face crop over the variance of its grey levels, so a
#: dark frame is not taken for a blurred one) under which the frame is
#: "blurred". On the DEV photos the softest source (nell, small dice enlarged)
#: has at least 0.028 (kingpi 0.10, jim 0.52); darkened to a fifth the same;
#: a Gaussian blur of sigma 2 px takes nell to at most 0.027 (median 0.004),
#: sigma 3 px kingpi to 0.018-0.041. The raw variance used before (40 grey
#: levels squared) called every darkened photo blurred.
BLUR_SHARPNESS: float = 0.025

#: Share of the picture outside the dice blown out to white (all channels >=
#: 250) above which the frame is "too bright". Whole DEV photos: at most 0.024;
#: the same exposed 1.8 times brighter: kingpi 0.33-0.44, nell 0.76-0.99 (jim,
#: white dice on dark wood, 0.05); rendered white card and paper trays at most
#: 0.1. Outside the dice, so that an ivory die filling a close-up is not taken
#: for over-exposure (the newcomer check: 11 of 50 such close-ups, 26-45 %).
BRIGHT_SHARE: float = 0.25

#: Dice whose median box is under this many pixels across are too small in the
#: picture to tell blur from size; when some of them are unreadable the reader
#: says so instead of "blurred" (nell DEV photos brought to 200 px: 11-17 px).
SMALL_DIE_PX: float = 20.0

#: A die whose box is under this many pixels across gets no value ("too small
#: in the picture"): its pips are a pixel or two. Every third DEV photo scaled
#: so that its dice are N px across (329 dice), right / wrong values without
#: the rule: 8 px 101 / 15, 10 px 183 / 10, 12 px 245 / 7, 14 px 278 / 1, 17 px
#: 296 / 1; with it (13 px): 1 / 0, 19 / 1, 135 / 1, 245 / 1, 295 / 1; with 12
#: px: 12 px 201 / 5. A silent error costs more than a re-roll, so 13.
MIN_DIE_PX: float = 13.0

#: With 3 or more dice, a box whose long side is under this share of the median
#: is part of a die: the detector boxed a corner of a die touching another, and
#: its one pip read as a 1 at 0.99 in the demo, seed 0 (0.59 of the median); no
#: value. Dice given a value, box side over the photo's median: right ones at
#: least 0.77 on DEV and 0.69 on the stress sets, wrong ones at least 0.95; in
#: DEV photos warped to a tilt (the far edge 20 % shorter each side) at least
#: 0.63, at 35 % 0.51 once. 0.7 took values from 6 of 145 whole dice of the
#: 20 % tilt (the second newcomer check); a plane of sizes fitted through the
#: other dice instead of their median extrapolated badly with five dice (stress
#: sets 1037 -> 1016 right).
PART_RATIO: float = 0.6

#: A die box whose area is more than this times the median box area (with 3 or
#: more dice) is a die leaning on a wall or another die (its side faces show).
LEANING_AREA_RATIO: float = 1.9

#: A die box within this many pixels, or :data:`EDGE_SHARE` of its side, of
#: the picture's edge ...
EDGE_PX: float = 2.0
#: ... (the detector's box of a die cut by the edge can stop a few pixels short
#: of it: in close-ups cut from kingpi DEV photos such boxes of 53-60 px
#: ended 5 and 7 px from it) ...
EDGE_SHARE: float = 0.15
#: ... whose short side is under this fraction of its long side is a die cut
#: off by the edge: some of its pips may be outside the picture, and the ones
#: left can form another value's layout (a 5 cut to one pip read as a 1 in the
#: rendered border stress set). A whole die's box is near square at any
#: rotation; the three dev dice that touch an edge have 0.92-0.96.
CUT_ASPECT: float = 0.8
#: ... or whose long side is under this fraction of the median side of the dice
#: wholly in view is a corner of a die cut off by the edge. The newcomer check
#: found such corners, showing one pip, read as 1s next to a die in a
#: close-up. Every kingpi and jim DEV die cropped so that it fills 0.3 or 0.65
#: of the picture: 5 of 89 cut neighbours were given a wrong value, now none
#: (4 of 81 right values of cut neighbours lost); DEV pairs of near dice
#: cropped together: wrong values of cut neighbours 12 -> 6, right values of
#: dice in view 1744 -> 1741; DEV, the held-out fold and the stress sets
#: unchanged. When every box touches the edge (a close-up cut tight, stop 15's
#: newcomer check: 12 cut neighbours read as 1s or 2s), the biggest square box
#: stands for the dice in view: that check's 3705 DEV close-ups, values where
#: no die is 58 -> 51, right 3372 -> 3371; pairs cropped together, wrong
#: values on cut neighbours 6 -> 5, right 1742 -> 1740.
CUT_SIDE_RATIO: float = 0.75


class PipFinderLike(Protocol):
    """Anything with the pip finder's ``predict(crops) -> ndarray (N, S, S)`` (:class:`vision.pips.PipFinder`)."""

    def predict(self, crops) -> np.ndarray: ...


class _FaceReaderLike(Protocol):
    def predict(self, crops) -> np.ndarray: ...


class _DetectorLike(Protocol):
    def detect(self, image_bgr: np.ndarray) -> tuple[Detection, ...]: ...


def check_image(image_bgr: object, name: str = "image_bgr") -> np.ndarray:
    """Check a photo at the door and return it as BGR ``uint8`` ``(H, W, 3)``.

    Parameters
    ----------
    image_bgr : ndarray of shape (H, W, 3), (H, W, 4) or (H, W), dtype uint8
        A BGR photo; grayscale (2-D) and BGRA photos are converted.
    name : str, optional
        Parameter name used in error messages.

    Returns
    -------
    ndarray of shape (H, W, 3), dtype uint8

    Raises
    ------
    ValueError
        If `image_bgr` is not a numpy array, not ``uint8``, empty, or of another shape.
    """
    if not isinstance(image_bgr, np.ndarray):
        raise ValueError(
            f"{name} must be a numpy uint8 array of shape (H, W, 3) (as from cv2.imread or "
            f"vision.load_image), got {type(image_bgr).__name__}"
        )
    if image_bgr.dtype != np.uint8:
        raise ValueError(
            f"{name} must be uint8 (0-255), got dtype {image_bgr.dtype}; convert it, e.g. "
            "cv2.convertScaleAbs or (img * 255).clip(0, 255).astype(np.uint8) for floats in [0, 1]"
        )
    if image_bgr.ndim == 2:
        image_bgr = cv2.cvtColor(image_bgr, cv2.COLOR_GRAY2BGR)
    elif image_bgr.ndim == 3 and image_bgr.shape[2] == 4:
        image_bgr = cv2.cvtColor(image_bgr, cv2.COLOR_BGRA2BGR)
    elif image_bgr.ndim == 3 and image_bgr.shape[2] == 1:
        image_bgr = cv2.cvtColor(image_bgr, cv2.COLOR_GRAY2BGR)
    if image_bgr.ndim != 3 or image_bgr.shape[2] != 3:
        raise ValueError(
            f"{name} must have shape (H, W, 3) (BGR) or (H, W) (grey), got {image_bgr.shape}"
        )
    if image_bgr.shape[0] < MIN_SIDE_PX or image_bgr.shape[1] < MIN_SIDE_PX:
        raise ValueError(f"{name} is too small ({image_bgr.shape[1]}x{image_bgr.shape[0]} px); give a photo")
    return image_bgr


def read_image(
    image_bgr: np.ndarray,
    *,
    face_reader: _FaceReaderLike | None = None,
    detector: _DetectorLike | None = None,
    value_threshold: float = VALUE_THRESHOLD,
    tta: bool = True,
    pip_finder: PipFinderLike | None = None,
    calibrated: bool = True,
) -> ImageReading:
    """Read the face values of the dice in one photo.

    Parameters
    ----------
    image_bgr : ndarray of shape (H, W, 3), dtype uint8
        The photo, BGR (grayscale ``(H, W)`` is accepted and converted). Any size;
        the detector works on a copy downscaled to 384 px on the long side, the
        face reader on crops of the full-resolution photo.
    face_reader : object with ``predict(crops) -> ndarray (N, 7)``, optional
        Default :func:`vision.face.default_face_reader`.
    detector : object with ``detect(image_bgr) -> tuple of Detection``, optional
        Default :func:`vision.detect.default_detector`. When it also has
        ``large_candidates(image_bgr, found) -> tuple of LargeCandidate``
        (:meth:`vision.detect.DieDetector.large_candidates`), dice too big for
        its main look are judged by :func:`vision.closeups.close_up_dice`.
    value_threshold : float, optional
        Least probability of the best face value to report it (default
        :data:`VALUE_THRESHOLD`).
    tta : bool, optional
        Give dice the face reader is unsure of a second look: the crop and its
        :func:`pip_contrast_view`, each turned by 0, 90, 180 and 270 degrees with
        probabilities averaged over the four turns (a die's top face reads the same
        any way round). Costs time only for unsure dice (7 more crops each).
    pip_finder : object with ``predict(crops) -> ndarray (N, S, S)``, optional
        The second opinion's pip marker; default :func:`vision.pips.default_pip_finder`.
    calibrated : bool, optional
        State each reported value's confidence as the accuracy observed for
        such values on held-out photos (:func:`vision.confidence.default_confidence_map`);
        False gives the face reader's raw probability (used to fit that map).
        Unknown dice always carry the raw probability of the best value.

    Returns
    -------
    ImageReading
        The dice found in reading order (top to bottom, then left to right), each
        with a value or ``None`` and a reason, and the problems noticed.

    Raises
    ------
    ValueError
        If `image_bgr` is not a usable image (see :func:`check_image`).
    vision.face.FaceModelError, vision.detect.DetectorModelError, vision.pips.PipModelError
        If a packaged model is missing or corrupt.

    Examples
    --------
    >>> import numpy as np
    >>> reading = read_image(np.full((480, 640, 3), 90, np.uint8))
    >>> reading.dice, reading.problems
    ((), ('no dice found',))
    """
    from vision.face import crop_die

    image = check_image(image_bgr)
    if detector is None:
        from vision.detect import default_detector

        detector = default_detector()
    if face_reader is None:
        from vision.face import default_face_reader

        face_reader = default_face_reader()
    if pip_finder is None:
        from vision.pips import default_pip_finder

        pip_finder = default_pip_finder()
    from vision.confidence import default_confidence_map

    confidence_map = default_confidence_map()

    problems: list[str] = []
    step = max(1, max(image.shape[:2]) // 160)  # ~160 samples along the long side is plenty for a mean
    sample = image[::step, ::step]
    mean_level = float(sample.mean())
    if mean_level < DARK_MEAN_LEVEL:
        problems.append(f"frame too dark (mean level {mean_level:.0f} of 255): add light or raise the exposure")
    # blown out to white, on the same sparse grid; channel by channel, because numpy's
    # min over the 3-long last axis of this strided view took 1.1 ms a 640 px photo (this: 0.06 ms)
    blown = np.minimum(np.minimum(sample[..., 0], sample[..., 1]), sample[..., 2]) >= 250

    detections = list(detector.detect(image))
    large = detector.large_candidates(image, tuple(detections)) if hasattr(detector, "large_candidates") else ()
    candidates = detections + [c.detection for c in large]
    if not candidates:
        problems += _too_bright(blown, step, [])
        problems.append("no dice found")
        return ImageReading((), tuple(problems))

    crops = [crop_die(image, d.box, margin=FACE_CROP_MARGIN) for d in candidates]
    probs = np.asarray(face_reader.predict(crops), dtype=np.float64).reshape(len(candidates), -1)
    first_look = probs
    if tta:
        probs = _second_look(face_reader, crops, probs)  # a new array where it changes anything
    forced_unknown = [False] * len(candidates)
    pips_checked: dict[Detection, bool] = {}  # close-up dice whose pips were checked already, for their best value
    if large:
        def close_up_pips_agree(rows: list[int], values: list[int]) -> list[bool]:
            agreed = _pips_agree(pip_finder, image, [candidates[i].box for i in rows], [crops[i] for i in rows], values)
            pips_checked.update((candidates[i], agree) for i, agree in zip(rows, agreed))
            return agreed

        taken, unsure = close_up_dice(large, [d.box for d in detections], probs, first_look,
                                      len(detections), value_threshold, close_up_pips_agree)
        dropped = {i for j in taken + unsure for i in large[j].inside}
        dropped |= same_die_boxes([d.box for d in detections], [large[j].detection.box for j in taken + unsure])
        keep = [i for i in range(len(detections)) if i not in dropped]
        keep += [len(detections) + j for j in taken + unsure]
        forced_unknown = [False] * (len(keep) - len(unsure)) + [True] * len(unsure)
        candidates = [candidates[i] for i in keep]
        crops = [crops[i] for i in keep]
        probs, first_look = probs[keep], first_look[keep]
    detections = candidates
    # a phantom's second look (turns and contrast views, meant for faces) can dilute "not a die"
    not_a_die = np.maximum(first_look[:, 0], probs[:, 0])

    kept: list[tuple[Detection, np.ndarray, np.ndarray]] = []
    pips_disagree: list[bool] = []
    for det, p, crop, p_not_a_die, forced in zip(detections, probs, crops, not_a_die, forced_unknown):
        if p_not_a_die >= DROP_NOT_A_DIE_PROB and det.score < DROP_MAX_DETECTOR_SCORE:
            continue  # a phantom: a pip-like spot or a tray edge
        kept.append((det, p, crop))
        pips_disagree.append(forced)
    if not kept:
        problems += _too_bright(blown, step, [])
        problems.append("no dice found")
        return ImageReading((), tuple(problems))

    areas = np.array([d.box[2] * d.box[3] for d, _, _ in kept], np.float64)
    median_area = float(np.median(areas))
    height, width = image.shape[:2]
    # leaning and cut-off dice are told apart by their boxes; the others get a value or a reason
    aside: list[UnknownReason | None] = []
    sides = [max(d.box[2], d.box[3]) for d, _, _ in kept]
    median_side = float(np.median(sides))
    whole = [s for (d, _, _), s in zip(kept, sides) if not _at_edge(d.box, width, height)]
    # with every box at the edge (a close-up cut tight), the biggest square one stands for a die in view
    whole_side = float(np.median(whole)) if whole else float(max(
        (s for (d, _, _), s in zip(kept, sides) if _is_square(d.box)), default=0.0))
    for (det, p, _), area, forced, side in zip(kept, areas, pips_disagree, sides):
        leaning = len(kept) >= 3 and area > LEANING_AREA_RATIO * median_area
        if leaning and (p[0] > 0.2 or float(p[1:].max()) < 0.95):
            aside.append(UnknownReason.LEANING)
        elif _cut_by_edge(det.box, width, height, whole_side):
            aside.append(UnknownReason.CUT_OFF)
        elif side < MIN_DIE_PX:
            aside.append(UnknownReason.TOO_SMALL)
        elif len(kept) >= 3 and side < PART_RATIO * median_side:
            aside.append(UnknownReason.PART_OF_A_DIE)
        elif forced:
            aside.append(UnknownReason.PIPS_DISAGREE)  # a close-up die whose pips were boxed as dice
        else:
            aside.append(None)
    # the second opinion is asked only where the face reader's answer could be given
    bests = [int(np.argmax(p[1:]) + 1) for _, p, _ in kept]
    asked = [i for i, (_, p, _) in enumerate(kept) if float(p[1:].max()) >= value_threshold]
    agrees = [pips_checked.get(det, False) for det, _, _ in kept]
    asked = [i for i in asked if kept[i][0] not in pips_checked]
    agreed = _pips_agree(pip_finder, image, [kept[i][0].box for i in asked], [kept[i][2] for i in asked],
                         [bests[i] for i in asked])
    for i, agree in zip(asked, agreed):
        agrees[i] = agree
    dice: list[DieReading] = []
    for (det, p, _), best, reason, agree in zip(kept, bests, aside, agrees):
        best_p = float(p[best])
        if reason is not None:
            dice.append(DieReading(None, det.box, best_p, reason))
        elif agree:
            dice.append(DieReading(best, det.box, confidence_map(best_p) if calibrated else best_p, None))
        elif best_p >= value_threshold:
            dice.append(DieReading(None, det.box, best_p, UnknownReason.PIPS_DISAGREE))
        elif p[0] >= best_p:
            dice.append(DieReading(None, det.box, best_p, UnknownReason.NOT_A_FACE))
        else:
            dice.append(DieReading(None, det.box, best_p, UnknownReason.LOW_CONFIDENCE))
    # a speck far smaller than a die read for sure in the same photo is not a die (dice are one size)
    sure_side = max((max(d.box[2], d.box[3]) for d in dice if d.value is not None), default=0)
    specks = [max(d.box[2], d.box[3]) < SPECK_RATIO * sure_side for d in dice]
    specks = [s or p for s, p in zip(specks, _parts_of_sure_dice(dice))]
    kept_crops = [crop for (_, _, crop), speck in zip(kept, specks) if not speck]
    dice = [d for d, speck in zip(dice, specks) if not speck]
    leaning_count = sum(d.reason == UnknownReason.LEANING for d in dice)
    cut_count = sum(d.reason == UnknownReason.CUT_OFF for d in dice)

    problems += _too_bright(blown, step, [d.box for d in dice])
    die_px = float(np.median([max(d.box[2], d.box[3]) for d in dice]))
    unreadable = sum(1 for d in dice if d.value is None and d.reason.needs_reroll)
    if die_px < SMALL_DIE_PX:
        if unreadable:
            problems.append(f"dice only about {die_px:.0f} px across in the picture: "
                            "move the camera closer or use a bigger photo")
    elif _is_blurred(kept_crops):
        problems.append("frame blurred: wait for the dice to settle or check the focus")
    if leaning_count:
        problems.append(
            f"{_dice_word(leaning_count)} leaning on the wall or another die: "
            f"re-roll or nudge {_it_or_them(leaning_count)} flat"
        )
    if cut_count:
        problems.append(f"{_dice_word(cut_count)} cut off by the edge of the picture: "
                        f"move {_it_or_them(cut_count)} into view")
    if unreadable:
        problems.append(f"{_dice_word(unreadable)} unreadable: re-roll or adjust")
    return ImageReading(tuple(_reading_order(dice)), tuple(problems))


def networks_from_files(face_model: str | Path | None = None, detector_model: str | Path | None = None,
                        pip_model: str | Path | None = None) -> dict[str, object]:
    """:func:`read_image` keyword arguments that read with these model files instead of the packaged ones.

    For measuring other networks (held-out twins, a retrained or quantised
    model) with the same reader: ``read_image(image, **networks_from_files(...))``.

    Parameters
    ----------
    face_model, detector_model, pip_model : str or Path, optional
        ONNX files of a face reader (:class:`vision.face.FaceReader`), a die
        detector (:class:`vision.detect.DieDetector`) and a pip finder
        (:class:`vision.pips.PipFinder`); each one left out is not in the
        result, so :func:`read_image` uses the packaged one.

    Returns
    -------
    dict
        Some of ``face_reader``, ``detector``, ``pip_finder``: loaded networks.

    Raises
    ------
    vision.face.FaceModelError, vision.detect.DetectorModelError, vision.pips.PipModelError
        If a file is missing, cannot be loaded or is not that kind of network;
        the message names the file and says how to make one.
    """
    networks: dict[str, object] = {}
    if face_model is not None:
        from vision.face import reading_face_reader

        networks["face_reader"] = reading_face_reader(face_model)
    if detector_model is not None:
        from vision.detect import DieDetector

        networks["detector"] = DieDetector(detector_model)
    if pip_model is not None:
        from vision.pips import PipFinder

        networks["pip_finder"] = PipFinder(pip_model)
    return networks


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


def _dice_word(n: int) -> str:
    return "1 die" if n == 1 else f"{n} dice"


def _it_or_them(n: int) -> str:
    return "it" if n == 1 else "them"


def _parts_of_sure_dice(dice: list[DieReading]) -> list[bool]:
    """Which dice lie inside a much bigger die given a value: a pip or a part of it, boxed by another look.

    The detector's containment rule (:func:`vision.detect.contained_in`)
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


def _pips_agree(pip_finder: PipFinderLike, image: np.ndarray, boxes: list[tuple[int, int, int, int]],
                crops: list[np.ndarray], values: list[int]) -> list[bool]:
    """The second opinion: whether the pip finder's marks hold each die's face value in its layout.

    Marks of the side faces that face the photo's centre may be left out
    (:func:`vision.pips.holds_layout_of`, :func:`_towards_principal_point`).
    Up to three looks, each only at the dice the one before left in doubt: the
    face crop; its four 90-degree turns (:func:`_pip_maps_turned`: faint pips
    marked in any turn count); the die's box alone, turned too
    (:data:`TIGHT_PIP_MARGIN`: pips of side faces and neighbours left out).

    Parameters
    ----------
    pip_finder : object with ``predict(crops) -> ndarray (N, S, S)``
        The pip finder.
    image : ndarray of shape (H, W, 3), dtype uint8
        The photo, for the tight crops.
    boxes : list of N (x, y, w, h)
        The dice's boxes, px of `image`.
    crops : list of N ndarray of shape (S, S, 3), dtype uint8
        Their face crops (margin :data:`FACE_CROP_MARGIN`).
    values : list of N int
        The face reader's values, 1-6.

    Returns
    -------
    list of N bool
    """
    from vision.face import crop_die
    from vision.pips import holds_layout_of

    if not crops:
        return []
    towards = [_towards_principal_point(image, box) for box in boxes]
    maps = np.asarray(pip_finder.predict(crops), np.float32)
    agrees = [holds_layout_of(m, FACE_CROP_MARGIN, v, t) for m, v, t in zip(maps, values, towards)]
    again = [i for i, agree in enumerate(agrees) if not agree]
    if again:
        turned = _pip_maps_turned(pip_finder, [crops[i] for i in again], maps[again])
        for i, m in zip(again, turned):
            agrees[i] = holds_layout_of(m, FACE_CROP_MARGIN, values[i], towards[i])
    still = [i for i in again if not agrees[i]]
    if still:
        tight = [crop_die(image, boxes[i], margin=TIGHT_PIP_MARGIN) for i in still]
        tight_maps = np.asarray(pip_finder.predict(tight), np.float32)
        for i, m in zip(still, _pip_maps_turned(pip_finder, tight, tight_maps)):
            agrees[i] = holds_layout_of(m, TIGHT_PIP_MARGIN, values[i], towards[i])
    return agrees


def _towards_principal_point(image: np.ndarray, box: tuple[float, float, float, float]) -> tuple[float, float] | None:
    """Direction (px) from a die's box centre to the photo's centre, where its side faces are seen; None under it.

    The principal point is taken at the photo's centre (a camera looking at
    the tray, not a crop of a bigger photo). A die within one box side of it
    shows no side face worth counting, so its pips are held by the exact
    count alone (:func:`vision.pips.holds_layout_of`).
    """
    height, width = image.shape[:2]
    x, y, w, h = box
    dx, dy = width / 2.0 - (x + w / 2.0), height / 2.0 - (y + h / 2.0)
    return None if float(np.hypot(dx, dy)) < max(w, h) else (dx, dy)


def _pip_maps_turned(pip_finder: PipFinderLike, crops: list[np.ndarray], maps: np.ndarray) -> np.ndarray:
    """The pip finder's maps of `crops` at their four 90-degree turns, turned back and combined by maximum.

    Parameters
    ----------
    pip_finder : object with ``predict(crops) -> ndarray (N, S, S)``
        The pip finder.
    crops : list of N ndarray of shape (S, S, 3), dtype uint8
        Square face crops.
    maps : ndarray of shape (N, S, S), dtype float32
        The maps of the crops as they are (the first turn), already computed.

    Returns
    -------
    ndarray of shape (N, S, S), dtype float32
        Per pixel, the strongest mark of the four turns. A faint pip (a red pip
        on a smoky die) is often marked in one turn and not in another. On the
        held-out DEV fold (twins of face reader v7 and pip finder v3), of the
        15 dice whose pip count disagreed with a sure face reader (14 with the
        right value), 3 then agreed, all right, and no extra box; in-sample on
        all of DEV 6 of 28, all right.
    """
    turned = [np.ascontiguousarray(np.rot90(c, k)) for k in (1, 2, 3) for c in crops]
    more = np.asarray(pip_finder.predict(turned), np.float32).reshape(3, len(crops), *maps.shape[1:])
    out = np.array(maps, np.float32, copy=True)
    for k in (1, 2, 3):
        out = np.maximum(out, np.stack([np.rot90(m, -k) for m in more[k - 1]]))
    return out


def _too_bright(blown: np.ndarray, step: int, boxes: list[tuple[int, int, int, int]]) -> list[str]:
    """The "too bright" problem, or none: judged on the picture outside the dice.

    Parameters
    ----------
    blown : ndarray of shape (H', W'), dtype bool
        Whether each pixel of the photo sampled every `step` px is blown out to white.
    step : int
        The sampling step, px.
    boxes : list of (x, y, w, h)
        The dice, px of the photo: a light die filling a close-up is not an
        exposure fault. When they cover more than 3/4 of the picture nothing is
        judged.

    Returns
    -------
    list of str
        One problem when more than :data:`BRIGHT_SHARE` of the rest is blown out, else empty.
    """
    outside = np.ones_like(blown)
    for x, y, w, h in boxes:
        outside[y // step: -(-(y + h) // step), x // step: -(-(x + w) // step)] = False
    if outside.mean() < 0.25:
        return []
    share = float(blown[outside].mean())
    if share <= BRIGHT_SHARE:
        return []
    return [f"frame too bright ({share:.0%} of it blown out to white): lower the exposure or the light"]


def _is_blurred(crops: list[np.ndarray]) -> bool:
    """Whether the median sharpness of the face crops is under :data:`BLUR_SHARPNESS` (contrast-free)."""
    if not crops:
        return False
    sharpness = []
    for crop in crops:
        grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
        sharpness.append(float(cv2.Laplacian(grey, cv2.CV_32F).var()) / (float(grey.astype(np.float32).var()) + 1.0))
    return float(np.median(sharpness)) < BLUR_SHARPNESS


def _second_look(face_reader: _FaceReaderLike, crops: list[np.ndarray], probs: np.ndarray) -> np.ndarray:
    """Look again at the crops the face reader is unsure of.

    Two views, each averaged over the four 90-degree turns: the crop itself, and
    :func:`pip_contrast_view` of it. When both views name the same class the
    surer one is kept; when they disagree their average is (which lowers the
    confidence, so the die tends to stay unknown). "Not a readable face" is one
    of the classes compared: a coin beside the dice, which the crop itself calls
    not a face (0.65) while its contrast view, a pale disc on a dark ground,
    looks like a 1, was read as a die showing 1 when only the face values were
    compared (stress set ``clutter``, seed 0, ``--n 40``: 2 coins given a value,
    now 0; DEV in-sample and both held-out folds, the other stress sets of seed
    0 and the close-ups read exactly as before).
    """
    unsure = [i for i, p in enumerate(probs) if float(p[1:].max()) < SECOND_LOOK_BELOW]
    if not unsure:
        return probs
    views = [crops[i] for i in unsure] + [pip_contrast_view(crops[i]) for i in unsure]
    batch = [views[j] if k == 0 else np.ascontiguousarray(np.rot90(views[j], k)) for k in range(4) for j in range(len(views))]
    batch[: len(unsure)] = []  # the plain crops' first look is already in `probs`
    more = np.asarray(face_reader.predict(batch), dtype=np.float64)
    n = len(unsure)
    contrast0, rest = more[:n], more[n:].reshape(3, 2 * n, -1)
    plain = (probs[unsure] + rest[:, :n].sum(axis=0)) / 4.0
    contrast = (contrast0 + rest[:, n:].sum(axis=0)) / 4.0
    agree = np.argmax(plain, axis=1) == np.argmax(contrast, axis=1)
    plain_surer = plain[:, 1:].max(axis=1) >= contrast[:, 1:].max(axis=1)
    combined = np.where(agree[:, None], np.where(plain_surer[:, None], plain, contrast), (plain + contrast) / 2.0)
    out = probs.copy()
    out[unsure] = combined
    return out


def pip_contrast_view(crop_bgr: np.ndarray) -> np.ndarray:
    """Redraw a die crop as distance from the die's body colour: dark pips on a light die.

    Coloured pips on a coloured die (red on blue, yellow on green) can have
    nearly the same grey level as the die; their colour still differs. Each
    pixel's CIELAB distance from the median colour of the crop's central half
    (the body of the top face, where pips are a minority) is scaled by its 97th
    percentile there and inverted, so the face body turns white and pips and
    background dark, like the ivory dice with black pips the face reader
    knows best.

    Parameters
    ----------
    crop_bgr : ndarray of shape (S, S, 3), dtype uint8
        A die crop from :func:`vision.face.crop_die`.

    Returns
    -------
    ndarray of shape (S, S, 3), dtype uint8
        The redrawn crop, three equal channels.
    """
    lab = cv2.cvtColor(crop_bgr, cv2.COLOR_BGR2LAB).astype(np.float32)
    h, w = lab.shape[:2]
    centre = lab[h // 4: 3 * h // 4, w // 4: 3 * w // 4]
    body = np.median(centre.reshape(-1, 3), axis=0)
    dist = np.sqrt(((lab - body) ** 2).sum(axis=2))
    scale = float(np.percentile(dist[h // 4: 3 * h // 4, w // 4: 3 * w // 4], 97)) + 1e-3
    grey = (255.0 - np.clip(dist * (255.0 / scale), 0.0, 255.0)).astype(np.uint8)
    return cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR)


def _reading_order(dice: list[DieReading]) -> list[DieReading]:
    """Sort top to bottom in rows (centres within half a die height), then left to right."""
    if not dice:
        return dice
    by_y = sorted(dice, key=lambda d: d.box[1] + d.box[3] / 2)
    median_h = float(np.median([d.box[3] for d in dice]))
    rows: list[list[DieReading]] = [[by_y[0]]]
    for d in by_y[1:]:
        last = rows[-1][0]
        if (d.box[1] + d.box[3] / 2) - (last.box[1] + last.box[3] / 2) <= 0.5 * median_h:
            rows[-1].append(d)
        else:
            rows.append([d])
    return [d for row in rows for d in sorted(row, key=lambda d: d.box[0] + d.box[2] / 2)]
