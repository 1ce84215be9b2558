"""The die detector's candidates and the box maths that prunes them: IoU, non-maximum suppression, containment.

Dice do not overlap seen from above, so of two boxes that overlap much
(:data:`DEFAULT_NMS_IOU`) one is the same die again, and a box lying inside a
much bigger one (:func:`contained_in`) is a pip or a corner of that die.

Conventions: boxes are ``(x, y, w, h)`` in image pixels with ``x`` to the
right and ``y`` down (OpenCV order).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "Detection",
    "box_iou",
    "box_intersections",
    "contained_in",
    "CONTAINED_SHARE",
    "CONTAINED_AREA_RATIO",
    "DEFAULT_NMS_IOU",
]

#: Default IoU above which two candidates are one die (non-maximum suppression).
DEFAULT_NMS_IOU: float = 0.4

#: A candidate whose box lies at least this much (share of its own area) inside
#: the box of another candidate ...
CONTAINED_SHARE: float = 0.6
#: ... at least this many times its area is part of that die, not a die of its
#: own, and is dropped. Dice do not overlap seen from above, so a box inside a
#: bigger one is a phantom (a small box around one pip of a 2 or a 4, read as a
#: 1, in 5 of 22 rendered stress sets). IoU suppression keeps such a box, since
#: its overlap with the die is small against the die's area.
CONTAINED_AREA_RATIO: float = 1.6


@dataclass(frozen=True, slots=True)
class Detection:
    """One candidate die.

    Parameters
    ----------
    box : tuple of 4 int
        ``(x, y, w, h)`` box of the whole visible die, in pixels of the image given
        to :meth:`vision.detect.DieDetector.detect`.
    score : float
        Heatmap peak in ``[0, 1]``: how sure the detector is that a die is there.
    """

    box: tuple[int, int, int, int]
    score: float


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
    return (inter >= CONTAINED_SHARE * inner_area[:, None]) & (
        outer_area[None] >= CONTAINED_AREA_RATIO * inner_area[:, None]
    )


def _drop_contained(boxes: np.ndarray, keep: list[int]) -> list[int]:
    """`keep` without the boxes that lie inside a bigger kept box (see :data:`CONTAINED_SHARE`)."""
    if len(keep) < 2:
        return keep
    b = boxes[keep]
    inside = contained_in(b, b)
    return [k for k, row in zip(keep, inside) if not row.any()]
