"""Where a die lies (:class:`Placement`) and the geometry of placing it.

Whether a die's outline overlaps others already placed, fits on the tray floor,
how far apart two outlines are, and how much floor a tray has.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from vision.render._scene import Tray


@dataclass(frozen=True, slots=True)
class Placement:
    """Where one die lies in a :class:`TrayScene` and which face is up.

    Parameters
    ----------
    value : int
        Face value 1-6 on top.
    base_xy : tuple of 2 float
        Centre of the die's footprint on the tray floor, ``(x, y)`` image pixels.
    angle_deg : float
        Rotation, degrees counter-clockwise as seen in the image, ``[0, 360)``.
    face_px : float
        Side of the top face in pixels.
    slot : int
        Which of the scene's dice this is (fixes its colour), ``0 <= slot < n_dice``.
    """

    value: int
    base_xy: tuple[float, float]
    angle_deg: float
    face_px: float
    slot: int


def _overlaps(
    hull: np.ndarray,
    centre: tuple[float, float],
    radius: float,
    placed: list[tuple[np.ndarray, tuple[float, float], float]],
) -> bool:
    for other, oc, orad in placed:
        if math.hypot(centre[0] - oc[0], centre[1] - oc[1]) > radius + orad + 1:
            continue
        area, _ = cv2.intersectConvexConvex(hull, other)
        if area > 0.05:
            return True
    return False


def _fits(hull: np.ndarray, tray: Tray, w: int, h: int) -> bool:
    if hull[:, 0].min() < 1 or hull[:, 1].min() < 1 or hull[:, 0].max() > w - 2 or hull[:, 1].max() > h - 2:
        return False
    return bool(tray.floor_distance(hull).max() <= -1.5)


def _hull_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Gap in px between two convex outlines (0 or less when they touch or overlap)."""
    ca, cb = a.reshape(-1, 1, 2), b.reshape(-1, 1, 2)
    d = min(-cv2.pointPolygonTest(cb, (float(x), float(y)), True) for x, y in a)
    d = min(d, min(-cv2.pointPolygonTest(ca, (float(x), float(y)), True) for x, y in b))
    return float(d)


def _floor_area(tray: Tray, w: int, h: int) -> float:
    ys, xs = np.mgrid[2 : h - 2 : 4, 2 : w - 2 : 4]
    inside = tray.floor.sdf(xs.astype(np.float64), ys.astype(np.float64)) < -4
    return float(inside.sum()) * 16.0
