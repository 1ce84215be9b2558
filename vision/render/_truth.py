"""The ground truth of randomised renders: each die's box, outline and readability.

:func:`_truth` records a die laid by a :class:`~vision.render.TrayScene`; :func:`_warped`
carries a record through the camera-tilt homography, dropping dice that leave the view
and marking those the image border cuts as unreadable.
"""

from __future__ import annotations

import dataclasses
import math

import cv2
import numpy as np

from vision.render._layout import Placement, TrayScene
from vision.render._types import RenderedDie, Unreadable


def _box(outline: np.ndarray, w: int, h: int) -> tuple[int, int, int, int]:
    x0 = max(int(math.floor(outline[:, 0].min())), 0)
    y0 = max(int(math.floor(outline[:, 1].min())), 0)
    x1 = min(int(math.ceil(outline[:, 0].max())), w)
    y1 = min(int(math.ceil(outline[:, 1].max())), h)
    return x0, y0, max(x1 - x0, 0), max(y1 - y0, 0)


def _truth(scene: TrayScene, p: Placement, hull: np.ndarray, unreadable: Unreadable | None = None) -> RenderedDie:
    w, h = scene.size
    tx, ty, _ = scene._pose(p).top
    return RenderedDie(
        value=p.value,
        box=_box(hull, w, h),
        centre_xy=(float(tx), float(ty)),
        angle_deg=float(p.angle_deg % 360.0),
        colour=scene._looks[p.slot][0],
        face_px=float(p.face_px),
        outline=tuple((float(x), float(y)) for x, y in hull),
        unreadable=unreadable,
    )


def _visible_fraction(outline: np.ndarray, w: int, h: int) -> float:
    frame = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    area = float(cv2.contourArea(outline.astype(np.float32)))
    inter, _ = cv2.intersectConvexConvex(outline.astype(np.float32), frame)
    return float(inter) / max(area, 1e-6)


def _warped(d: RenderedDie, H: np.ndarray, w: int, h: int) -> RenderedDie | None:
    pts = cv2.perspectiveTransform(np.float64(d.outline).reshape(-1, 1, 2), H).reshape(-1, 2).astype(np.float32)
    hull = cv2.convexHull(pts).reshape(-1, 2)
    frac = _visible_fraction(hull, w, h)
    if frac < 0.05:
        return None
    c = cv2.perspectiveTransform(np.float64([[d.centre_xy]]), H).reshape(2)
    scale = math.sqrt(max(cv2.contourArea(hull), 1e-6) / max(cv2.contourArea(np.float32(d.outline)), 1e-6))
    unreadable = d.unreadable or (Unreadable.PARTIAL if frac < 0.92 else None)
    return dataclasses.replace(
        d,
        box=_box(hull, w, h),
        centre_xy=(float(c[0]), float(c[1])),
        face_px=d.face_px * scale,
        outline=tuple((float(x), float(y)) for x, y in hull),
        unreadable=unreadable,
    )
