"""The pip reader: from a photo to the face values of the dice in it.

Pipeline: :mod:`vision.detect` finds die boxes on the photo downscaled to
384 px (closer when the dice are small there, and coarser for a die too big
for it: :func:`vision.closeups.close_up_dice` judges whether such a big box is
one die or a group of dice); :func:`vision.face.crop_die` cuts each box from
the *full-resolution* photo; :mod:`vision.face` gives each crop class
probabilities (0 = "not a readable face", 1..6 = face values), with a second
look at the unsure ones (:mod:`vision.reader_second_look`); :mod:`vision.pips`
marks where the top face's pips are; this module decides, per die, a value or
"unknown" (rule one: an unsure die is reported unknown, never guessed) and
notes problems a player can act on (:mod:`vision.reader_problems`).

Two opinions must agree (issue #7): a value is given only when the face
reader names it with enough probability *and* the pips that the pip finder
marks on the same crop are exactly that many and hold that value's layout
(:func:`vision.pip_marks.layouts_on_map`), or, for a 4-6, hold it with marks left
out that lie beside the face on the side facing the photo's centre, where a
die off the camera's axis shows side faces (:func:`vision.pip_marks.holds_layout_of`;
the looks are in :mod:`vision.reader_agreement`). The pip finder is another
network with another task (where are the top face's pips?) and the count and
layout fit are classical geometry; neither looks at the face reader's answer.

Decision per candidate box (:mod:`vision.reader_verdict`; thresholds measured
on ``../shared/dice-images/dev`` with ``dicetable eval``):

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
  ``"only part of a die boxed"``, ``"glare on the face"``: :mod:`vision.reader_glints`;
  ``"leaning"`` or ``"stacked on another die"`` by the top face's shape: :mod:`vision.reader_stacked`).

The design and the measurements behind each rule and threshold, with their
dates, are in ``docs/reader.md``.

Conventions: images are BGR ``uint8`` arrays indexed ``(row, col)``; boxes are
``(x, y, w, h)`` in pixels of the image given, ``x`` right, ``y`` down.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np

from vision.closeups import close_up_dice, same_die_boxes
from vision.confidence_model import stated_confidences
from vision.detect_boxes import Detection
from vision.reader_agreement import FACE_CROP_MARGIN, TIGHT_PIP_MARGIN, PipFinderLike, _pips_agree
from vision.reader_body import bare_pip
from vision.reader_glare import glare_free_crops, glint_may_hide_pip
from vision.reader_not_a_die import beside_another, body_not_a_die
from vision.reader_oblique import side_face_boxes
from vision.reader_problems import (  # noqa: F401  (the constants: re-exported, their home is vision.reader_problems)
    BLUR_SHARPNESS,
    BRIGHT_SHARE,
    DARK_MEAN_LEVEL,
    SMALL_DIE_PX,
    _dice_problems,
    _exposure,
    _too_bright,
    check_image,
)
from vision.reader_second_look import (  # noqa: F401  (SECOND_LOOK_BELOW re-exported)
    SECOND_LOOK_BELOW,
    _FaceReaderLike,
    _second_look,
    pip_contrast_view,
)
from vision.reader_seen import Seen, predict_unseen
from vision.reader_stacked import cocked_or_stacked, lean_shares
from vision.reader_verdict import (  # noqa: F401  (the constants: re-exported, their home is vision.reader_verdict)
    CUT_ASPECT,
    CUT_SIDE_RATIO,
    DROP_MAX_DETECTOR_SCORE,
    DROP_NOT_A_DIE_PROB,
    EDGE_PX,
    EDGE_SHARE,
    LEANING_AREA_RATIO,
    MIN_DIE_PX,
    PART_RATIO,
    SPECK_RATIO,
    VALUE_THRESHOLD,
    _box_reasons,
    _specks,
)
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


class _DetectorLike(Protocol):
    def detect(self, image_bgr: np.ndarray) -> tuple[Detection, ...]: ...


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
        such values, from the face reader's probability and the die's warnings
        (:func:`vision.confidence_model.stated_confidences`);
        False gives the face reader's raw probability (used to fit the map).
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
    problems, blown, step = _exposure(image)

    detections = list(detector.detect(image))
    on_card: set[Detection] = set()
    if hasattr(detector, "with_dice_on_cards"):  # dice on a white card: a closer look at it (vision.detect_cards)
        with_cards = list(detector.with_dice_on_cards(image, tuple(detections)))
        on_card, detections = set(with_cards) - set(detections), with_cards
    large = detector.large_candidates(image, tuple(detections)) if hasattr(detector, "large_candidates") else ()
    large = tuple(c for c in large if not on_card.intersection(detections[i] for i in c.inside))  # the card itself
    candidates = detections + [c.detection for c in large]
    if not candidates:
        problems += _too_bright(blown, step, [])
        problems.append("no dice found")
        return ImageReading((), tuple(problems))

    crops = [crop_die(image, d.box, margin=FACE_CROP_MARGIN) for d in candidates]
    # glints are not pips: painted over before any network looks (white pips are left alone)
    seen = Seen()  # what the glare step found and asked, not to be asked again (vision.reader_seen)
    crops, glint_list = glare_free_crops(
        pip_finder, face_reader, image, [d.box for d in candidates], crops, FACE_CROP_MARGIN, seen
    )
    glints = dict(zip(candidates, glint_list))
    seen_maps = {candidates[i]: m for i, m in seen.pip_maps.items()}
    seen_spots = {candidates[i]: n for i, n in seen.glint_spots.items()}
    known = [seen.face_probs.get(i) for i in range(len(candidates))]
    probs = np.asarray(predict_unseen(face_reader.predict, crops, known), dtype=np.float64).reshape(len(candidates), -1)
    first_look = probs
    if tta:
        probs = _second_look(face_reader, crops, probs)  # a new array where it changes anything
    forced_unknown = [False] * len(candidates)
    pips_checked: dict[Detection, bool] = {}  # close-up dice whose pips were checked already, for their best value
    if large:

        def close_up_pips_agree(rows: list[int], values: list[int]) -> list[bool]:
            boxes, known = [candidates[i].box for i in rows], [seen_maps.get(candidates[i]) for i in rows]
            agreed = _pips_agree(pip_finder, image, boxes, [crops[i] for i in rows], values, known_maps=known)
            pips_checked.update((candidates[i], agree) for i, agree in zip(rows, agreed))
            return agreed

        taken, unsure = close_up_dice(
            large, [d.box for d in detections], probs, first_look, len(detections), value_threshold, close_up_pips_agree
        )
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
    kept_first: list[np.ndarray] = []  # the first look's probabilities, for the stated confidence
    pips_disagree: list[bool] = []
    for det, p, crop, p_not_a_die, forced, p1 in zip(detections, probs, crops, not_a_die, forced_unknown, first_look):
        if p_not_a_die >= DROP_NOT_A_DIE_PROB and det.score < DROP_MAX_DETECTOR_SCORE:
            continue  # a phantom: a pip-like spot or a tray edge
        kept.append((det, p, crop))
        kept_first.append(p1)
        pips_disagree.append(forced)
    if not kept:
        problems += _too_bright(blown, step, [])
        problems.append("no dice found")
        return ImageReading((), tuple(problems))

    height, width = image.shape[:2]
    # leaning and cut-off dice are told apart by their boxes; the others get a value or a reason
    aside = _box_reasons([d.box for d, _, _ in kept], [p for _, p, _ in kept], pips_disagree, width, height)
    # a die cocked on an edge or lying on another shows no settled face: its top face's shape says so
    verdicts, faces = cocked_or_stacked(image, [d.box for d, _, _ in kept])
    # the second opinion is asked only where the face reader's answer could be given, and could count: not for a
    # die set aside already, nor for a cocked or stacked one unless a glint on it could make it "glare" first
    bests = [int(np.argmax(p[1:]) + 1) for _, p, _ in kept]
    asked = [i for i, (_, p, _) in enumerate(kept) if float(p[1:].max()) >= value_threshold]
    agrees = [pips_checked.get(det, False) for det, _, _ in kept]
    asked = [i for i in asked if kept[i][0] not in pips_checked and aside[i] is None]
    asked = [i for i in asked if verdicts[i] is None or len(glints[kept[i][0]])]
    maps: list[np.ndarray] = []
    boxes, known = [kept[i][0].box for i in asked], [seen_maps.get(kept[i][0]) for i in asked]
    agreed = _pips_agree(
        pip_finder, image, boxes, [kept[i][2] for i in asked], [bests[i] for i in asked], maps, known_maps=known
    )
    for i, agree, pip_map in zip(asked, agreed, maps):
        agrees[i] = agree
        # a glint taken off may have hidden a pip: then the value read may be short of one
        if agree and aside[i] is None and glint_may_hide_pip(pip_map, FACE_CROP_MARGIN, bests[i], glints[kept[i][0]]):
            aside[i], agrees[i] = UnknownReason.GLARE, False
    for i, verdict in enumerate(verdicts):
        if verdict is not None and aside[i] is None:
            aside[i], agrees[i] = verdict, False
    dice: list[DieReading] = []
    for (det, p, _), best, reason, agree in zip(kept, bests, aside, agrees):
        best_p = float(p[best])
        if reason is not None:
            dice.append(DieReading(None, det.box, best_p, reason))
        elif agree:
            dice.append(DieReading(best, det.box, best_p, None))
        elif best_p >= value_threshold:
            dice.append(DieReading(None, det.box, best_p, UnknownReason.PIPS_DISAGREE))
        elif p[0] >= best_p:
            dice.append(DieReading(None, det.box, best_p, UnknownReason.NOT_A_FACE))
        else:
            dice.append(DieReading(None, det.box, best_p, UnknownReason.LOW_CONFIDENCE))
    # a speck far smaller than a die read for sure in the same photo is not a die (dice are one size),
    # nor is a lone "pip" on the bare floor (a 1 without a die's body around it), nor a round body or one
    # running on past its box (a button, a domino: vision.reader_not_a_die)
    # (not for running on when another die is beside it: dice touching edge to edge, as held dice lie)
    beside = beside_another([d.box for d in dice])
    specks = [
        s
        or (d.value == 1 and bare_pip(image, d.box))
        or (d.value is not None and body_not_a_die(image, d.box, run_on=not near))
        for d, s, near in zip(dice, _specks(dice), beside)
    ]
    # nor is a die's side face boxed under its top face in an oblique photo (vision.reader_oblique)
    specks = [s or side for s, side in zip(specks, side_face_boxes([d.box for d in dice]))]
    if calibrated:  # the probability and the die's warnings (glint, odd box, doubt...): vision.confidence_model
        scores, spots = [d.score for d, _, _ in kept], [seen_spots.get(d) for d, _, _ in kept]
        needed = [not s for s in specks]
        leans = lean_shares(image.shape, faces)  # how near each die came to "leaning" (vision.reader_stacked)
        dice = stated_confidences(image, dice, scores, [p for _, p, _ in kept], kept_first, spots, needed, leans)
    kept_crops = [crop for (_, _, crop), speck in zip(kept, specks) if not speck]
    dice = [d for d, speck in zip(dice, specks) if not speck]

    bright = _too_bright(blown, step, [d.box for d in dice])
    problems += bright
    problems += _dice_problems(dice, kept_crops, bool(bright)) if dice else ["no dice found"]  # all specks, buttons...
    return ImageReading(tuple(_reading_order(dice)), tuple(problems))


def networks_from_files(
    face_model: str | Path | None = None, detector_model: str | Path | None = None, pip_model: str | Path | None = None
) -> dict[str, object]:
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
