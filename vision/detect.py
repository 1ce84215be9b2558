"""Die detector: find the boxes of d6 dice in a photo.

A tiny CenterNet-style network [1]_ (trained by
:mod:`vision.lab.training.train_detector`, shipped as ONNX in
``vision/models/die_detector.onnx`` and run with onnxruntime or OpenCV's ``cv2.dnn``) reads
the photo downscaled to :data:`INPUT_LONG_SIDE` pixels on its long side and
returns, every :data:`STRIDE` pixels, how likely a die centre is there, the
die's box size and the centre's sub-cell offset. Local maxima of that heatmap
above a threshold become :class:`Detection` boxes, pruned by the box rules of
:mod:`vision.detect_boxes` and mapped back to the pixels of the photo that was
given. When the dice found are small on that input (a wide view of a big
photo), the photo is read again closer (:data:`SMALL_DIE_INPUT_PX`); a coarse
look offers boxes of dice too big for that input (close-ups,
:meth:`DieDetector.large_candidates`, :mod:`vision.detect_coarse`) for the
reader to judge. The measurements behind the constants are in ``docs/reader.md``.

Conventions: images are BGR ``uint8`` arrays indexed ``(row, col)``; boxes are
``(x, y, w, h)`` in image pixels with ``x`` to the right and ``y`` down (OpenCV
order).

References
----------
.. [1] X. Zhou, D. Wang, P. Krähenbühl, "Objects as Points", arXiv:1904.07850, 2019.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from vision.detect_boxes import (  # noqa: F401  (re-exported: their home is vision.detect_boxes)
    CONTAINED_AREA_RATIO,
    CONTAINED_SHARE,
    DEFAULT_NMS_IOU,
    Detection,
    _drop_contained,
    _nms,
    box_intersections,
    box_iou,
    contained_in,
)
from vision.detect_coarse import (  # noqa: F401  (re-exported: their home is vision.detect_coarse)
    COARSE_BORDER,
    COARSE_LONG_SIDE,
    COARSE_LOOK_FEW,
    COARSE_LOOK_MIN_BOX_SHARE,
    LARGE_DIE_SHARE,
    LargeCandidate,
    large_candidates,
)
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
#: (at most the photo's own size and :data:`MAX_INPUT_LONG_SIDE`), the size the
#: network was trained on (the DEV dice at 384 px). In four 640 px DEV photos
#: tiled into one 1280 px wide view (dice about 12 input px) the main look
#: missed 31 of 311 dice, the closer one none.
TARGET_DIE_INPUT_PX: float = 24.0
#: Largest long side of the second, closer look (px).
MAX_INPUT_LONG_SIDE: int = 1024
#: Among three or more candidates, a box whose long side is more than this many
#: times their median is not a die (a tray, in a wide view of several): it is
#: dropped before it can hide the dice inside it (:data:`CONTAINED_SHARE`). A
#: die leaning on a wall is at most about 1.5 times the others.
OUTSIZE_RATIO: float = 3.0

#: Default minimum heatmap peak for a candidate die (0..1).
DEFAULT_SCORE_THRESHOLD: float = 0.35

_MEAN, _STD = 0.5, 0.25
_PAD = 16  # the network needs sides that are a multiple of 16
_MAX_DETECTIONS = 64


class DetectorModelError(VisionError, OSError):
    """Raised when the die-detector model file is missing, corrupt or not a die detector."""


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
        check_network(
            self._net,
            path,
            "die-detector",
            DetectorModelError,
            hint,
            np.zeros((1, 3, probe_h, probe_w), np.float32),
            lambda shape: shape == expected,
            f"{expected}: 5 maps on a {STRIDE} px grid, for a photo of any size",
        )
        self.model_path = path
        self.score_threshold = float(score_threshold)
        #: the last photo given to :meth:`heatmaps` and its shrunk picture, where one area resize made it
        self._last_input: tuple[np.ndarray, np.ndarray] | None = None
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

    def with_dice_on_cards(self, image_bgr: np.ndarray, found: tuple[Detection, ...]) -> tuple[Detection, ...]:
        """`found` with the dice on light cards it missed (:func:`vision.detect_cards.with_dice_on_cards`)."""
        from vision.detect_cards import with_dice_on_cards

        last = self._last_input  # the card look shrinks the photo as detect() did: it takes that picture
        shrunk = last[1] if last is not None and last[0] is image_bgr else None
        return with_dice_on_cards(self, image_bgr, found, shrunk)

    def large_candidates(self, image_bgr: np.ndarray, found: tuple[Detection, ...]) -> tuple[LargeCandidate, ...]:
        """Boxes of a coarse look that may be dice too big for :meth:`detect`: close-up dice, or groups of dice.

        See :func:`vision.detect_coarse.large_candidates`, which takes the look
        with this detector's network.

        Parameters
        ----------
        image_bgr : ndarray of shape (H, W, 3), dtype uint8
            The photo, BGR.
        found : tuple of Detection
            What :meth:`detect` found in it.

        Returns
        -------
        tuple of LargeCandidate
        """
        return large_candidates(self, image_bgr, found)

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
        h, w = image_bgr.shape[:2]
        # kept for the card look (vision.detect_cards) where it is one area resize of the photo, as that look makes
        one_area_resize = long_side == INPUT_LONG_SIDE and small.shape[1] < w and 2 * small.shape[1] > w
        self._last_input = (image_bgr, small) if one_area_resize and 2 * small.shape[0] > h else None
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
    resize has a fast path for exact halves (4.4 -> 2.1 ms for 1280 px). The
    last step stays an area resize, although it is the biggest cost of a read
    outside the networks (3.0-3.5 ms from a 640 px photo to 384 px, one core):
    the detector learned on area-resized photos, and a bilinear resize, 2.5 ms
    faster, gave 3 more leaning or cut rendered dice a value.
    """
    h, w = image_bgr.shape[:2]
    scale = long_side / max(h, w)
    nh, nw = max(1, round(h * scale)), max(1, round(w * scale))
    small = image_bgr
    while small.shape[1] >= 2 * nw and small.shape[0] >= 2 * nh:
        small = cv2.resize(small, (small.shape[1] // 2, small.shape[0] // 2), interpolation=cv2.INTER_AREA)
    interp = cv2.INTER_AREA if nw < small.shape[1] else cv2.INTER_LINEAR
    return cv2.resize(small, (nw, nh), interpolation=interp), scale


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
