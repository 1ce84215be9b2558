"""Die detector: find the boxes of d6 dice in a photo.

A tiny CenterNet-style network [1]_ (trained by
:mod:`vision.training.train_detector`, shipped as ONNX in
``vision/models/die_detector.onnx`` and run with onnxruntime or OpenCV's ``cv2.dnn``) reads
the photo downscaled to :data:`INPUT_LONG_SIDE` pixels on its long side and
returns, every :data:`STRIDE` pixels, how likely a die centre is there, the
die's box size and the centre's sub-cell offset. Local maxima of that heatmap
above a threshold become :class:`Detection` boxes, mapped back to the pixels of
the photo that was given. When the dice found are small on that input (a wide
view of a big photo), the photo is read again closer
(:data:`SMALL_DIE_INPUT_PX`); a coarse look offers boxes of dice too big for
that input (close-ups, :meth:`DieDetector.large_candidates`) for the reader to
judge.

Conventions: images are BGR ``uint8`` arrays indexed ``(row, col)``; boxes are
``(x, y, w, h)`` in image pixels with ``x`` to the right and ``y`` down (OpenCV
order).

References
----------
.. [1] X. Zhou, D. Wang, P. Krähenbühl, "Objects as Points", arXiv:1904.07850, 2019.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from vision.errors import VisionError

__all__ = [
    "DEFAULT_MODEL_PATH",
    "INPUT_LONG_SIDE",
    "STRIDE",
    "Detection",
    "DetectorModelError",
    "DieDetector",
    "default_detector",
    "detect_dice",
    "box_iou",
    "box_intersections",
    "CONTAINED_SHARE",
    "DEFAULT_NMS_IOU",
    "CONTAINED_AREA_RATIO",
    "contained_in",
    "SMALL_DIE_INPUT_PX",
    "TARGET_DIE_INPUT_PX",
    "MAX_INPUT_LONG_SIDE",
    "OUTSIZE_RATIO",
    "COARSE_LONG_SIDE",
    "COARSE_BORDER",
    "LARGE_DIE_SHARE",
    "COARSE_LOOK_MIN_BOX_SHARE",
    "COARSE_LOOK_FEW",
    "LargeCandidate",
]

#: Long side, in pixels, of the image the network sees.
INPUT_LONG_SIDE: int = 384

#: Output stride of the network, in input pixels per heatmap cell.
STRIDE: int = 4

#: The packaged model; its metadata is the JSON file with the same stem.
DEFAULT_MODEL_PATH: Path = Path(__file__).resolve().parent / "models" / "die_detector.onnx"

#: When the dice found are smaller than this on the network's input (median long
#: side of their boxes, input px) ...
SMALL_DIE_INPUT_PX: float = 20.0
#: ... the photo is read again at the input size that makes them about this big
#: (at most the photo's own size and :data:`MAX_INPUT_LONG_SIDE`). The network
#: was trained on photos brought to this input size (scale jitter 0.55-1.7,
#: :mod:`vision.training.train_detector`), where the DEV dice are about 24 px
#: across; in a wide view (four 640 px DEV
#: photos tiled into one 1280 px photo, 311 dice about 12 input px across at 384)
#: it missed 31 dice and the reader got 239 right; read again closer (about 770
#: px) it missed 0 and got 286 right (the photos alone: 0 missed, 288 right). The
#: closer look costs about 26 ms on one core and is taken only for such photos
#: (one of the 158 DEV photos, whose dice are 19.8 input px). 20 rather than 16:
#: nine kingpi photos tiled 3 x 3 (dice about 18 input px) gave 49 dice found of
#: 54 and several boxes holding two or three dice; read closer, all 54 right.
TARGET_DIE_INPUT_PX: float = 24.0
#: Largest long side of the second, closer look (px).
MAX_INPUT_LONG_SIDE: int = 1024
#: Among three or more candidates, a box whose long side is more than this many
#: times their median is not a die (a tray, in a wide view of several): it is
#: dropped before it can hide the dice inside it (:data:`CONTAINED_SHARE`).
#: Nine kingpi photos tiled 3 x 3 into one 3840 px photo: a tray was boxed as a
#: die, 955 px against dice of about 180 px, and hid its six dice. A die
#: leaning on a wall is at most about 1.5 times the others.
OUTSIZE_RATIO: float = 3.0

#: Long side (px) of the coarse look for dice too big for :data:`INPUT_LONG_SIDE`.
#: A die that fills much of the picture (a close-up) is several times the size
#: the network was trained on at 384 px, and it boxes the die's pips as dice
#: (read as 1s and 2s with high confidence: silent errors). At 192 px such a
#: die is found as one box: on ``../shared/dice-images/dev/single`` (one die
#: filling about 3/4 of the picture) 29 of 30 sampled close-ups gave one box
#: 0.5-0.9 of the picture. Coarser looks also box trays as dice (at 128 px the
#: kingpi tray, at 96 px most nell trays).
COARSE_LONG_SIDE: int = 192
#: The coarse look is taken twice, at the photo and at the photo framed by a
#: border of its mean colour this wide (share of its long side on each side),
#: and the boxes of both are merged: a die that fills the whole picture is
#: found framed, as the dice the network was trained on have a margin around
#: them, while some close-ups are found only unframed. With ``python
#: benchmarks/close_ups.py``, right (wrong) of 46 DEV dice cropped to fill 0.9
#: of the picture and of the 300 dev/single close-ups: unframed only 40 (0),
#: 248 (2); framed only (border 0.2) 44 (0), 256 (2), but two rendered close-ups
#: of 12 read as their pips; both 44 (0), 262 (0), and the rendered ones right.
#: Both looks start from one shrunk copy of the photo: the kingpi DEV photos
#: (1280 px, which take the coarse look) read in a median 29.7 ms, not 43 ms.
COARSE_BORDER: float = 0.2
#: Least long side of a coarse box, as a share of the photo's long side, to be
#: a :class:`LargeCandidate` (dice at 384 px are trained to about 24 px, 0.06 of
#: the long side, with scale jitter up to 1.7; dice at 0.3 of the picture are
#: still read right at 384 px, at 0.45 some are split into their pips).
LARGE_DIE_SHARE: float = 0.2
#: The coarse look is taken only when nothing was found or the biggest box found
#: is at least this share of the photo's long side: a die too big for the main
#: look (0.45 of the picture and more; dice up to 0.3 of it are read right
#: there) has pips of about a quarter of its side, 0.1 of the picture. The dice
#: of the nell DEV photos are 0.05-0.07 of the picture, kingpi's 0.08.
COARSE_LOOK_MIN_BOX_SHARE: float = 0.08
#: ... and also when the main look found fewer boxes than this: a close-up of a
#: die showing 1 had nothing of the die boxed, only two specks of felt (11-14
#: px), one read as a 1 (kingpi DEV photo 4 cropped so the die fills half of
#: the picture). ``benchmarks/close_ups.py``: crop 0.45 45 -> 46 right, 1 -> 0
#: values where no die is; DEV, stress sets and the other rows unchanged, DEV
#: median time unchanged.
COARSE_LOOK_FEW: int = 3

#: Default minimum heatmap peak for a candidate die (0..1).
DEFAULT_SCORE_THRESHOLD: float = 0.35
#: Default IoU above which two candidates are one die (non-maximum suppression).
DEFAULT_NMS_IOU: float = 0.4

#: A candidate whose box lies at least this much (share of its own area) inside
#: the box of another candidate ...
CONTAINED_SHARE: float = 0.6
#: ... at least this many times its area is part of that die, not a die of its
#: own, and is dropped. Dice do not overlap seen from above, so a box inside a
#: bigger one is a phantom: on the rendered stress sets (``python
#: benchmarks/stress_sets.py --n 10``) the detector put a small box around one
#: pip of a 2 or a 4 in 5 of 22 sets, and the reader read it as a 1 (an extra
#: die given a value: a silent error). IoU suppression keeps such a box, since
#: its overlap with the die is small against the die's area.
CONTAINED_AREA_RATIO: float = 1.6

_MEAN, _STD = 0.5, 0.25
_PAD = 16  # the network needs sides that are a multiple of 16
_MAX_DETECTIONS = 64


class DetectorModelError(VisionError, OSError):
    """Raised when the die-detector model file is missing, corrupt or not a die detector."""


@dataclass(frozen=True, slots=True)
class Detection:
    """One candidate die.

    Parameters
    ----------
    box : tuple of 4 int
        ``(x, y, w, h)`` box of the whole visible die, in pixels of the image given
        to :meth:`DieDetector.detect`.
    score : float
        Heatmap peak in ``[0, 1]``: how sure the detector is that a die is there.
    """

    box: tuple[int, int, int, int]
    score: float


@dataclass(frozen=True, slots=True)
class LargeCandidate:
    """A big box of the coarse look that has smaller candidates inside it.

    It is either one close-up die (the boxes inside are its pips) or a group of
    dice, a tray say (the boxes inside are dice); the detector cannot tell
    which, the reader judges (:func:`vision.closeups.close_up_dice`).

    Parameters
    ----------
    detection : Detection
        The big box, in pixels of the photo.
    inside : tuple of int
        Indices, into the candidates it was offered against, of the boxes that
        lie inside it (:data:`CONTAINED_SHARE`, :data:`CONTAINED_AREA_RATIO`);
        empty for a big box that the main look missed altogether.
    """

    detection: Detection
    inside: tuple[int, ...]


class DieDetector:
    """The die-detector network and its decoding.

    Parameters
    ----------
    model_path : str or Path, optional
        ONNX file; default :data:`DEFAULT_MODEL_PATH`.
    score_threshold : float, optional
        Minimum heatmap peak in ``[0, 1]`` for a candidate; lower finds fainter dice
        and more phantoms.
    nms_iou : float, optional
        Two candidates whose boxes overlap more than this (intersection over union)
        are one die; the weaker is dropped. A candidate lying inside a much
        bigger one (:data:`CONTAINED_SHARE`, :data:`CONTAINED_AREA_RATIO`) is
        dropped too, whatever its score.

    Raises
    ------
    DetectorModelError
        If the model file is missing or cannot be loaded, or is not a die
        detector (it does not take a photo of any size, or does not give 5
        maps on a :data:`STRIDE` px grid).

    Examples
    --------
    >>> import numpy as np
    >>> DieDetector().detect(np.zeros((480, 640, 3), np.uint8))
    ()
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        score_threshold: float = DEFAULT_SCORE_THRESHOLD,
        nms_iou: float = DEFAULT_NMS_IOU,
    ) -> None:
        path = Path(model_path) if model_path is not None else DEFAULT_MODEL_PATH
        from vision._onnx import check_network, load_onnx, model_hint

        hint = model_hint(path, DEFAULT_MODEL_PATH, "die-detector", "die_detector", "train_detector")
        self._net, self.metadata = load_onnx(path, "die-detector", DetectorModelError, hint, stem="die_detector")
        # a photo of any size (sides a multiple of _PAD) in, 5 maps on a STRIDE px grid out: a face reader or a
        # pip finder takes only its crops, and would fail at the first photo with the runtime's own error
        probe_h, probe_w = 2 * _PAD, 3 * _PAD
        expected = (1, 5, probe_h // STRIDE, probe_w // STRIDE)
        check_network(self._net, path, "die-detector", DetectorModelError, hint,
                      np.zeros((1, 3, probe_h, probe_w), np.float32), lambda shape: shape == expected,
                      f"{expected}: 5 maps on a {STRIDE} px grid, for a photo of any size")
        self.model_path = path
        self.score_threshold = float(score_threshold)
        self.nms_iou = float(nms_iou)

    def detect(self, image_bgr: np.ndarray) -> tuple[Detection, ...]:
        """Find the dice in one photo.

        Parameters
        ----------
        image_bgr : ndarray of shape (H, W, 3), dtype uint8
            The photo, BGR.

        Returns
        -------
        tuple of Detection
            Candidate dice, strongest first; empty when none is found.

        Notes
        -----
        The photo is first read at :data:`INPUT_LONG_SIDE` px; when the dice
        found there are smaller than :data:`SMALL_DIE_INPUT_PX` (a wide view
        of a big photo) it is read again closer and that reading is returned.
        """
        shape = image_bgr.shape[:2]
        long_side = max(shape)
        maps, scale = self.heatmaps(image_bgr)
        found = self._decode(maps, scale, shape)
        if found and long_side > INPUT_LONG_SIDE:
            small = float(np.median([max(d.box[2], d.box[3]) for d in found])) * scale
            closer = min(long_side, MAX_INPUT_LONG_SIDE, int(INPUT_LONG_SIDE * TARGET_DIE_INPUT_PX / max(small, 1.0)))
            if small < SMALL_DIE_INPUT_PX and closer > INPUT_LONG_SIDE:
                maps, scale = self.heatmaps(image_bgr, long_side=closer)
                return self._decode(maps, scale, shape)
        return found

    def large_candidates(self, image_bgr: np.ndarray, found: tuple[Detection, ...]) -> tuple[LargeCandidate, ...]:
        """Boxes of a coarse look that may be dice too big for :meth:`detect`.

        Parameters
        ----------
        image_bgr : ndarray of shape (H, W, 3), dtype uint8
            The photo, BGR.
        found : tuple of Detection
            What :meth:`detect` found in it.

        Returns
        -------
        tuple of LargeCandidate
            The boxes of a look at :data:`COARSE_LONG_SIDE` px whose long side
            is at least :data:`LARGE_DIE_SHARE` of the photo's and that either
            hold boxes of `found` inside them or touch none of them (a die
            the main look missed); empty, without the coarse look, when at
            least :data:`COARSE_LOOK_FEW` boxes were found and every one is
            smaller than :data:`COARSE_LOOK_MIN_BOX_SHARE` of the photo (also
            when it was read closer), or when none is that big.
        """
        shape = image_bgr.shape[:2]
        long_side = max(shape)
        biggest = max((max(d.box[2], d.box[3]) for d in found), default=0)
        if len(found) >= COARSE_LOOK_FEW and biggest < COARSE_LOOK_MIN_BOX_SHARE * long_side:
            return ()  # dice found, none big enough to be the pips of a close-up die
        base, base_scale = _shrunk(image_bgr, COARSE_LONG_SIDE)  # one shrink of the photo serves both looks
        looks = self._coarse_look(base, 0.0, base_scale, shape) + self._coarse_look(base, COARSE_BORDER, base_scale, shape)
        looks = tuple(sorted(looks, key=lambda d: -d.score))
        if looks:
            boxes = np.array([d.box for d in looks], np.float64)
            looks = tuple(looks[k] for k in _nms(boxes, self.nms_iou))
        big = [d for d in looks if max(d.box[2], d.box[3]) >= LARGE_DIE_SHARE * long_side]
        if not big or not found:
            return tuple(LargeCandidate(d, ()) for d in big)
        found_boxes = np.array([d.box for d in found], np.float64)
        big_boxes = np.array([d.box for d in big], np.float64)
        inside = contained_in(found_boxes, big_boxes)
        touches = box_intersections(found_boxes, big_boxes) > 0
        # a big box holding found boxes, or one the main look missed altogether
        return tuple(LargeCandidate(d, tuple(int(i) for i in np.nonzero(col)[0]))
                     for d, col, near in zip(big, inside.T, touches.T) if col.any() or not near.any())

    def _coarse_look(self, base: np.ndarray, border: float, base_scale: float,
                     shape: tuple[int, int]) -> tuple[Detection, ...]:
        """Candidates of a look at :data:`COARSE_LONG_SIDE` px at the photo framed by `border` (share of its long side).

        `base` is the photo shrunk to :data:`COARSE_LONG_SIDE` px (BGR
        ``uint8``; `base_scale` of its pixels per photo pixel); `shape` is the
        photo's ``(H, W)``. Returns the boxes in photo pixels, clipped to it
        (the frame cut away), with their heatmap scores.
        """
        h, w = shape
        small = base
        scale = base_scale
        pad = 0
        if border > 0:
            inner = COARSE_LONG_SIDE / (1.0 + 2.0 * border)
            small, shrink = _shrunk(base, int(round(inner)))
            scale = base_scale * shrink
            pad = int(round(border * max(small.shape[:2])))
            colour = [float(c) for c in small.reshape(-1, 3).mean(axis=0)]
            small = cv2.copyMakeBorder(small, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=colour)
        maps, s2 = self.heatmaps(small, long_side=max(small.shape[:2]))
        out = []
        for d in self._decode(maps, s2, small.shape[:2]):
            x, y, bw, bh = d.box
            x0, y0 = max(0.0, (x - pad) / scale), max(0.0, (y - pad) / scale)
            x1, y1 = min(float(w), (x + bw - pad) / scale), min(float(h), (y + bh - pad) / scale)
            if x1 - x0 >= 2 and y1 - y0 >= 2:
                out.append(Detection((int(round(x0)), int(round(y0)), int(round(x1 - x0)), int(round(y1 - y0))), d.score))
        return tuple(out)

    def heatmaps(self, image_bgr: np.ndarray, long_side: int = INPUT_LONG_SIDE) -> tuple[np.ndarray, float]:
        """Run the network; return its output maps and the input scale.

        Parameters
        ----------
        image_bgr : ndarray of shape (H, W, 3), dtype uint8
            The photo, BGR.
        long_side : int, optional
            Long side of the network's input, px (default :data:`INPUT_LONG_SIDE`).

        Returns
        -------
        maps : ndarray of shape (5, H', W'), dtype float32
            Centre heatmap, log box width and height (in stride units) and centre
            offsets (in cells), on a grid of :data:`STRIDE` input pixels.
        scale : float
            Network-input pixels per image pixel.
        """
        small, scale = _shrunk(image_bgr, long_side)
        nh, nw = small.shape[:2]
        ph, pw = (-nh) % _PAD, (-nw) % _PAD
        if ph or pw:
            small = cv2.copyMakeBorder(small, 0, ph, 0, pw, cv2.BORDER_REPLICATE)
        blob = cv2.dnn.blobFromImage(small, scalefactor=1.0 / (255.0 * _STD), mean=(255.0 * _MEAN,) * 3)
        maps = self._net.forward(blob)[0]
        gh, gw = -(-nh // STRIDE), -(-nw // STRIDE)
        return maps[:, :gh, :gw], scale

    def _decode(self, maps: np.ndarray, scale: float, shape: tuple[int, int]) -> tuple[Detection, ...]:
        heat = maps[0]
        peaks = (heat >= self.score_threshold) & (heat >= cv2.dilate(heat, np.ones((3, 3), np.uint8)))
        rows, cols = np.nonzero(peaks)
        if rows.size == 0:
            return ()
        scores = heat[rows, cols]
        order = np.argsort(-scores)[:_MAX_DETECTIONS]
        rows, cols, scores = rows[order], cols[order], scores[order]
        bw = np.exp(maps[1, rows, cols]) * STRIDE / scale
        bh = np.exp(maps[2, rows, cols]) * STRIDE / scale
        cx = (cols + maps[3, rows, cols]) * STRIDE / scale
        cy = (rows + maps[4, rows, cols]) * STRIDE / scale
        boxes = np.stack([cx - bw / 2, cy - bh / 2, bw, bh], axis=1)
        keep = _nms(boxes, self.nms_iou)
        if len(keep) >= 3:  # a box far bigger than the dice (a tray) goes before it can hide the dice in it
            sides = np.maximum(bw, bh)[keep]
            outsize = OUTSIZE_RATIO * float(np.median(sides))
            keep = [k for k, side in zip(keep, sides) if side <= outsize]
        keep = _drop_contained(boxes, keep)
        out = []
        img_h, img_w = shape
        for k in keep:
            x1, y1 = max(0.0, boxes[k, 0]), max(0.0, boxes[k, 1])
            x2, y2 = min(float(img_w), boxes[k, 0] + boxes[k, 2]), min(float(img_h), boxes[k, 1] + boxes[k, 3])
            if x2 - x1 < 2 or y2 - y1 < 2:
                continue
            box = (int(round(x1)), int(round(y1)), int(round(x2 - x1)), int(round(y2 - y1)))
            out.append(Detection(box, float(scores[k])))
        return tuple(out)


def _shrunk(image_bgr: np.ndarray, long_side: int) -> tuple[np.ndarray, float]:
    """`image_bgr` resized to `long_side` px on its long side, and the scale (new px per old px).

    Halves first while the image is at least twice the target: OpenCV's area
    resize has a fast path for exact halves (4.4 -> 2.1 ms for 1280 px).

    The last step stays an area resize, although it is the biggest cost of a
    read outside the networks (3.0-3.5 ms from a 640 px photo to 384 px, one
    core): the detector learned on area-resized photos. Measured and not
    taken: bilinear (0.5 ms) read DEV the same in count (4 dice changed, 2
    each way) but gave 3 more leaning or cut dice a value on the stress sets
    of seed 1 (``--n 20``) and read 2 fewer of the 300 single close-ups and 1
    fewer tiled die (``benchmarks/close_ups.py``); bilinear to twice the
    size then an exact halving (1.5 ms; 0.24 grey levels from the area resize
    on average) read 2 fewer DEV dice and 4 fewer marbled dice of 50 (seed 0).
    """
    h, w = image_bgr.shape[:2]
    scale = long_side / max(h, w)
    nh, nw = max(1, round(h * scale)), max(1, round(w * scale))
    small = image_bgr
    while small.shape[1] >= 2 * nw and small.shape[0] >= 2 * nh:
        small = cv2.resize(small, (small.shape[1] // 2, small.shape[0] // 2), interpolation=cv2.INTER_AREA)
    interp = cv2.INTER_AREA if nw < small.shape[1] else cv2.INTER_LINEAR
    return cv2.resize(small, (nw, nh), interpolation=interp), scale


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Intersection over union of every pair of ``(x, y, w, h)`` boxes.

    Parameters
    ----------
    a : array_like of shape (N, 4)
    b : array_like of shape (M, 4)

    Returns
    -------
    ndarray of shape (N, M), dtype float64
        IoU in ``[0, 1]``.
    """
    a = np.asarray(a, np.float64).reshape(-1, 4)
    b = np.asarray(b, np.float64).reshape(-1, 4)
    inter = box_intersections(a, b)
    union = (a[:, 2] * a[:, 3])[:, None] + (b[:, 2] * b[:, 3])[None] - inter
    return np.where(union > 0, inter / np.maximum(union, 1e-9), 0.0)


def box_intersections(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Overlap area (px squared) of every pair of ``(x, y, w, h)`` boxes.

    Parameters
    ----------
    a : ndarray of shape (N, 4), dtype float64
    b : ndarray of shape (M, 4), dtype float64

    Returns
    -------
    ndarray of shape (N, M), dtype float64
    """
    ax2, ay2 = a[:, 0] + a[:, 2], a[:, 1] + a[:, 3]
    bx2, by2 = b[:, 0] + b[:, 2], b[:, 1] + b[:, 3]
    iw = np.clip(np.minimum(ax2[:, None], bx2[None]) - np.maximum(a[:, None, 0], b[None, :, 0]), 0, None)
    ih = np.clip(np.minimum(ay2[:, None], by2[None]) - np.maximum(a[:, None, 1], b[None, :, 1]), 0, None)
    return iw * ih


def _nms(boxes: np.ndarray, iou: float) -> list[int]:
    """Indices of `boxes` (sorted strongest first) kept by greedy non-maximum suppression."""
    ious = box_iou(boxes, boxes)
    keep: list[int] = []
    for i in range(len(boxes)):
        if all(ious[i, k] <= iou for k in keep):
            keep.append(i)
    return keep


def contained_in(inner: np.ndarray, outer: np.ndarray) -> np.ndarray:
    """Whether each `inner` box is part of each `outer` box: a pip or a corner of that die, not a die of its own.

    It is when at least :data:`CONTAINED_SHARE` of its area lies inside the
    outer box and the outer box is at least :data:`CONTAINED_AREA_RATIO` times
    its area (dice do not overlap seen from above).

    Parameters
    ----------
    inner : ndarray of shape (N, 4), dtype float64
        ``(x, y, w, h)`` boxes, px.
    outer : ndarray of shape (M, 4), dtype float64
        ``(x, y, w, h)`` boxes, px of the same picture.

    Returns
    -------
    ndarray of shape (N, M), dtype bool
    """
    inner_area = inner[:, 2] * inner[:, 3]
    outer_area = outer[:, 2] * outer[:, 3]
    inter = box_intersections(inner, outer)
    return (inter >= CONTAINED_SHARE * inner_area[:, None]) & (outer_area[None] >= CONTAINED_AREA_RATIO * inner_area[:, None])


def _drop_contained(boxes: np.ndarray, keep: list[int]) -> list[int]:
    """`keep` without the boxes that lie inside a bigger kept box (see :data:`CONTAINED_SHARE`)."""
    if len(keep) < 2:
        return keep
    b = boxes[keep]
    inside = contained_in(b, b)
    return [k for k, row in zip(keep, inside) if not row.any()]


@lru_cache(maxsize=1)
def default_detector() -> DieDetector:
    """The packaged detector, loaded once per process.

    Raises
    ------
    DetectorModelError
        If the packaged model is missing or corrupt.
    """
    return DieDetector()


def detect_dice(image_bgr: np.ndarray, *, detector: DieDetector | None = None) -> tuple[Detection, ...]:
    """Find the dice in one BGR photo with `detector` (default: the packaged one).

    Parameters
    ----------
    image_bgr : ndarray of shape (H, W, 3), dtype uint8
        The photo, BGR.
    detector : DieDetector, optional
        The detector to use.

    Returns
    -------
    tuple of Detection
        Candidate dice, strongest first.
    """
    return (detector or default_detector()).detect(image_bgr)
