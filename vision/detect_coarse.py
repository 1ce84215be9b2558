"""The detector's coarse look, for dice too big for its main look (close-ups).

A die that fills much of the picture is several times the size the detector's
network was trained on at :data:`vision.detect.INPUT_LONG_SIDE` px, and that
look boxes its pips as dice (read as 1s and 2s with high confidence). A look at
the photo shrunk to :data:`COARSE_LONG_SIDE` px finds such a die as one box; it
also boxes groups of dice (a tray in a bigger photo), so its big boxes are
offered as :class:`LargeCandidate` with the boxes found inside them, and the
reader judges which they are (:func:`vision.closeups.close_up_dice`).

Conventions: images are BGR ``uint8`` arrays indexed ``(row, col)``; boxes are
``(x, y, w, h)`` in pixels of the photo, ``x`` right, ``y`` down.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import cv2
import numpy as np

from vision.detect_boxes import Detection, _nms, box_intersections, contained_in

__all__ = [
    "COARSE_LONG_SIDE",
    "COARSE_BORDER",
    "LARGE_DIE_SHARE",
    "COARSE_LOOK_MIN_BOX_SHARE",
    "COARSE_LOOK_FEW",
    "LargeCandidate",
    "large_candidates",
]

#: Long side (px) of the coarse look for dice too big for
#: :data:`vision.detect.INPUT_LONG_SIDE`. At 192 px a die filling about 3/4 of
#: the picture is found as one box (29 of 30 sampled ``dev/single``
#: close-ups); coarser looks also box trays as dice (the kingpi tray at 128 px).
COARSE_LONG_SIDE: int = 192
#: The coarse look is taken twice, at the photo and at the photo framed by a
#: border of its mean colour this wide (share of its long side on each side),
#: and the boxes of both are merged: a die that fills the whole picture is
#: found framed, as the dice the network was trained on have a margin around
#: them, while some close-ups are found only unframed (``dev/single``: 248 right
#: unframed only, 256 framed only, 262 both).
COARSE_BORDER: float = 0.2
#: Least long side of a coarse box, as a share of the photo's long side, to be
#: a :class:`LargeCandidate` (dice at 384 px are trained to about 0.06 of the
#: long side; dice at 0.3 of the picture are still read right at 384 px, at
#: 0.45 some are split into their pips).
LARGE_DIE_SHARE: float = 0.2
#: The coarse look is taken only when nothing was found or the biggest box found
#: is at least this share of the photo's long side: a die too big for the main
#: look (0.45 of the picture and more) has pips of about 0.1 of the picture.
#: The dice of the DEV photos are 0.05-0.08 of it.
COARSE_LOOK_MIN_BOX_SHARE: float = 0.08
#: ... and also when the main look found fewer boxes than this: a close-up of a
#: die showing 1 had nothing of the die boxed, only two specks of felt, one
#: read as a 1.
COARSE_LOOK_FEW: int = 3


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
        lie inside it (:func:`vision.detect_boxes.contained_in`);
        empty for a big box that the main look missed altogether.
    """

    detection: Detection
    inside: tuple[int, ...]


class _Looker(Protocol):
    """The parts of :class:`vision.detect.DieDetector` a coarse look uses."""

    nms_iou: float

    def heatmaps(self, image_bgr: np.ndarray, long_side: int = ...) -> tuple[np.ndarray, float]: ...

    def _decode(self, maps: np.ndarray, scale: float, shape: tuple[int, int]) -> tuple[Detection, ...]: ...


def large_candidates(
    detector: _Looker, image_bgr: np.ndarray, found: tuple[Detection, ...]
) -> tuple[LargeCandidate, ...]:
    """Boxes of a coarse look that may be dice too big for :meth:`vision.detect.DieDetector.detect`.

    Parameters
    ----------
    detector : vision.detect.DieDetector
        The detector whose network takes the coarse look.
    image_bgr : ndarray of shape (H, W, 3), dtype uint8
        The photo, BGR.
    found : tuple of Detection
        What :meth:`vision.detect.DieDetector.detect` found in it.

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
    from vision.detect import _shrunk

    shape = image_bgr.shape[:2]
    long_side = max(shape)
    biggest = max((max(d.box[2], d.box[3]) for d in found), default=0)
    if len(found) >= COARSE_LOOK_FEW and biggest < COARSE_LOOK_MIN_BOX_SHARE * long_side:
        return ()  # dice found, none big enough to be the pips of a close-up die
    base, base_scale = _shrunk(image_bgr, COARSE_LONG_SIDE)  # one shrink of the photo serves both looks
    looks = _coarse_look(detector, base, 0.0, base_scale, shape) + _coarse_look(
        detector, base, COARSE_BORDER, base_scale, shape
    )
    looks = tuple(sorted(looks, key=lambda d: -d.score))
    if looks:
        boxes = np.array([d.box for d in looks], np.float64)
        looks = tuple(looks[k] for k in _nms(boxes, detector.nms_iou))
    big = [d for d in looks if max(d.box[2], d.box[3]) >= LARGE_DIE_SHARE * long_side]
    if not big or not found:
        return tuple(LargeCandidate(d, ()) for d in big)
    found_boxes = np.array([d.box for d in found], np.float64)
    big_boxes = np.array([d.box for d in big], np.float64)
    inside = contained_in(found_boxes, big_boxes)
    touches = box_intersections(found_boxes, big_boxes) > 0
    # a big box holding found boxes, or one the main look missed altogether
    return tuple(
        LargeCandidate(d, tuple(int(i) for i in np.nonzero(col)[0]))
        for d, col, near in zip(big, inside.T, touches.T)
        if col.any() or not near.any()
    )


def _coarse_look(
    detector: _Looker, base: np.ndarray, border: float, base_scale: float, shape: tuple[int, int]
) -> tuple[Detection, ...]:
    """Candidates of a look at :data:`COARSE_LONG_SIDE` px at the photo framed by `border` (share of its long side).

    `base` is the photo shrunk to :data:`COARSE_LONG_SIDE` px (BGR
    ``uint8``; `base_scale` of its pixels per photo pixel); `shape` is the
    photo's ``(H, W)``. Returns the boxes in photo pixels, clipped to it
    (the frame cut away), with their heatmap scores.
    """
    from vision.detect import _shrunk

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
    maps, s2 = detector.heatmaps(small, long_side=max(small.shape[:2]))
    out = []
    for d in detector._decode(maps, s2, small.shape[:2]):
        x, y, bw, bh = d.box
        x0, y0 = max(0.0, (x - pad) / scale), max(0.0, (y - pad) / scale)
        x1, y1 = min(float(w), (x + bw - pad) / scale), min(float(h), (y + bh - pad) / scale)
        if x1 - x0 >= 2 and y1 - y0 >= 2:
            out.append(Detection((int(round(x0)), int(round(y0)), int(round(x1 - x0)), int(round(y1 - y0))), d.score))
    return tuple(out)
