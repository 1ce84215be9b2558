"""Drawing the synthetic tray world: a marked tray, dice, a hand, a leaning die.

World coordinates are tray millimetres (see :mod:`vision.tray`); the camera maps
them to image pixels with a homography (a similarity plus a slight keystone),
which a bump can shift and rotate.  Dice are drawn with the still-image
renderer's die model (:mod:`vision.render._die`) so the reader sees the dice it
was built for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from vision.render._die import DieLook, DiePose, Light, draw_die, draw_shadow
from vision.render._types import DICE_COLOURS, PIP_LAYOUTS
from vision.tray import MarkerLayout, TrayGeometry, aruco_dictionary

#: The synthetic tray: floor size in mm, rim width in mm, die side in mm.
FLOOR_MM = (200.0, 150.0)
RIM_MM = 20.0
DIE_MM = 16.0
#: Hold area of the synthetic tray: ``(x, y, w, h)`` in tray mm (a strip on the right).
HOLD_AREA_MM = (160.0, 0.0, 40.0, 150.0)
#: Camera scale at the floor centre, image px per mm, for a 640x480 frame.
CAMERA_PX_PER_MM = 2.2
#: Die height over camera height (perspective of the die's sides).
DIE_K = 0.035

MARKERS = MarkerLayout.at_corners(*FLOOR_MM, size_mm=16.0)


@dataclass(frozen=True, slots=True)
class CameraPose:
    """Camera placement: bump shift in image px and rotation in degrees."""

    dx: float = 0.0
    dy: float = 0.0
    rot_deg: float = 0.0


def camera_matrix(pose: CameraPose, size: tuple[int, int]) -> np.ndarray:
    """Homography tray mm -> image px, shape (3, 3) float64."""
    w, h = size
    s = CAMERA_PX_PER_MM * min(w / 640.0, h / 480.0)
    fx, fy = FLOOR_MM[0] / 2, FLOOR_MM[1] / 2
    centre = np.array([[1, 0, -fx], [0, 1, -fy], [0, 0, 1]], np.float64)
    keystone = np.array([[1, 0, 0], [0, 1, 0], [0, 0.0004, 1]], np.float64)
    a = math.radians(pose.rot_deg)
    rot = np.array([[math.cos(a), math.sin(a), 0], [-math.sin(a), math.cos(a), 0], [0, 0, 1]], np.float64)
    scale = np.diag([s, s, 1.0])
    shift = np.array([[1, 0, w / 2 + pose.dx], [0, 1, h / 2 + pose.dy], [0, 0, 1]], np.float64)
    return shift @ rot @ scale @ keystone @ centre


def true_geometry(pose: CameraPose, size: tuple[int, int], px_per_mm: float = 2.8) -> TrayGeometry:
    """The exact tray geometry of a synthetic camera pose (what calibration should find)."""
    cam = camera_matrix(pose, size)
    corners = cv2.perspectiveTransform(np.float64([[(0, 0), (FLOOR_MM[0], 0), FLOOR_MM, (0, FLOOR_MM[1])]]), cam)[0]
    return TrayGeometry.from_corners(corners, width_mm=FLOOR_MM[0], height_mm=FLOOR_MM[1], px_per_mm=px_per_mm)


def _noise_field(rng: np.random.Generator, h: int, w: int, cells: int) -> np.ndarray:
    grid = rng.standard_normal((max(2, cells * h // w), cells)).astype(np.float32)
    return cv2.resize(grid, (w, h), interpolation=cv2.INTER_CUBIC)


def background_plane(
    rng: np.random.Generator, ppm: float = 3.0, margin_mm: float = 90.0
) -> tuple[np.ndarray, np.ndarray]:
    """Empty tray seen straight down: float32 BGR image and its plane->mm matrix."""
    fw, fh = FLOOR_MM
    w = int((fw + 2 * margin_mm) * ppm)
    h = int((fh + 2 * margin_mm) * ppm)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    X = xs / ppm - margin_mm
    Y = ys / ppm - margin_mm
    desk = np.float32([0.62, 0.66, 0.70]) * (1 + 0.03 * _noise_field(rng, h, w, 6))[..., None]
    img = desk + rng.standard_normal((h, w, 1)).astype(np.float32) * 0.01
    inner = (X >= 0) & (X <= fw) & (Y >= 0) & (Y <= fh)
    rim = (X >= -RIM_MM) & (X <= fw + RIM_MM) & (Y >= -RIM_MM) & (Y <= fh + RIM_MM) & ~inner
    wood = np.float32([0.16, 0.24, 0.36]) * (1 + 0.08 * _noise_field(rng, h, w, 40))[..., None]
    img = np.where(rim[..., None], wood, img)
    felt = (
        np.float32([0.22, 0.40, 0.16])
        * (1 + 0.05 * _noise_field(rng, h, w, 24) + 0.03 * _noise_field(rng, h, w, 90))[..., None]
    )
    wall_d = np.minimum(np.minimum(X, fw - X), np.minimum(Y, fh - Y))
    felt = felt * (1 - 0.3 * np.exp(-np.maximum(wall_d, 0) / 4.0))[..., None]
    img = np.where(inner[..., None], felt, img)
    dictionary = aruco_dictionary(MARKERS.dictionary)
    side = int(round(MARKERS.size_mm * ppm))
    for i, mid in enumerate(MARKERS.ids):
        cx, cy = MARKERS.centres_mm[i]
        qx0, qy0 = (
            int(round((cx + margin_mm) * ppm - (side / 2 + 2 * ppm))),
            int(round((cy + margin_mm) * ppm - (side / 2 + 2 * ppm))),
        )
        q = side + int(4 * ppm)
        img[qy0 : qy0 + q, qx0 : qx0 + q] = 0.92
        marker = cv2.aruco.generateImageMarker(dictionary, mid, side).astype(np.float32) / 255.0
        x0, y0 = int(round((cx + margin_mm) * ppm - side / 2)), int(round((cy + margin_mm) * ppm - side / 2))
        img[y0 : y0 + side, x0 : x0 + side] = (0.06 + 0.86 * marker)[..., None]
    plane_to_mm = np.array([[1 / ppm, 0, -margin_mm], [0, 1 / ppm, -margin_mm], [0, 0, 1]], np.float64)
    return img.astype(np.float32), plane_to_mm


def warp_plane(plane: np.ndarray, plane_to_mm: np.ndarray, cam: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The plane image as the camera sees it, float32 BGR of shape (h, w, 3)."""
    return cv2.warpPerspective(plane, cam @ plane_to_mm, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


LIGHT = Light((0.35, -0.42, 0.84), ambient=0.5)


def die_look(colour: str) -> DieLook:
    body, pip = DICE_COLOURS[colour]
    return DieLook(body, pip, corner=0.15, bevel=0.07, pip_radius=0.095, gloss=0.2)


def _scale_at(cam: np.ndarray, xy_mm: tuple[float, float]) -> tuple[np.ndarray, float, float]:
    """Image point, local px per mm and rotation (deg) of the camera at a tray point."""
    p = cv2.perspectiveTransform(np.float64([[xy_mm, (xy_mm[0] + 1.0, xy_mm[1])]]), cam)[0]
    d = p[1] - p[0]
    return p[0], float(math.hypot(*d)), math.degrees(math.atan2(-d[1], d[0]))


def draw_flat_die(
    img: np.ndarray,
    cam: np.ndarray,
    xy_mm: tuple[float, float],
    angle_deg: float,
    value: int,
    look: DieLook,
    shadow: bool = True,
) -> None:
    """Draw one die lying flat at tray point `xy_mm` into float image `img` (in place)."""
    h, w = img.shape[:2]
    p, s, rot = _scale_at(cam, xy_mm)
    pose = DiePose((float(p[0]), float(p[1])), angle_deg + rot, DIE_MM * s, DIE_K, (w / 2, h / 2))
    if shadow:
        draw_shadow(img, pose, look, LIGHT, 0.35)
    draw_die(img, pose, look, LIGHT, value)


def _blend_poly(img: np.ndarray, pts: np.ndarray, colour: np.ndarray | float, alpha: float = 1.0) -> None:
    h, w = img.shape[:2]
    x0, y0 = np.floor(pts.min(axis=0)).astype(int) - 2
    x1, y1 = np.ceil(pts.max(axis=0)).astype(int) + 3
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 <= x0 or y1 <= y0:
        return
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    shifted = np.round((pts - (x0, y0)) * 16).astype(np.int32)
    cv2.fillPoly(mask, [shifted], 255, cv2.LINE_AA, shift=4)
    a = (mask.astype(np.float32) / 255.0 * alpha)[..., None]
    patch = img[y0:y1, x0:x1]
    img[y0:y1, x0:x1] = patch * (1 - a) + np.asarray(colour, np.float32) * a


def _to_image(cam: np.ndarray, pts_mm: np.ndarray) -> np.ndarray:
    return cv2.perspectiveTransform(np.asarray(pts_mm, np.float64).reshape(1, -1, 2), cam)[0]


def draw_leaning_die(
    img: np.ndarray, cam: np.ndarray, x_mm: float, value: int, look: DieLook, tilt_deg: float = 35.0
) -> None:
    """Draw a die leaning on the top wall (tilted `tilt_deg` towards it) at tray x `x_mm`."""
    t = math.radians(tilt_deg)
    s = DIE_MM
    ct, st = s * math.cos(t), s * math.sin(t)
    x0, x1 = x_mm - s / 2, x_mm + s / 2
    body = np.asarray(look.body, np.float32)
    pip = np.asarray(look.pip, np.float32)
    shadow = np.float64([(x0 - 2, 0), (x1 + 4, 0), (x1 + 4, ct + st + 5), (x0 - 2, ct + st + 5)])
    _blend_poly(img, _to_image(cam, shadow), 0.0, 0.35)
    top = np.float64([(x0, 0.5), (x1, 0.5), (x1, 0.5 + ct), (x0, 0.5 + ct)])
    side = np.float64([(x0, 0.5 + ct), (x1, 0.5 + ct), (x1, 0.5 + ct + st), (x0, 0.5 + ct + st)])
    _blend_poly(img, _to_image(cam, top), body * 1.02)
    _blend_poly(img, _to_image(cam, side), body * 0.72)
    off, rad = 0.27 * s, 0.095 * s
    ang = np.linspace(0, 2 * math.pi, 14, endpoint=False)
    for face, y_top, fore in ((value, 0.5, math.cos(t)), (2 if value not in (2, 5) else 3, 0.5 + ct, math.sin(t))):
        cy = y_top + s * fore / 2
        for pu, pv in PIP_LAYOUTS[face]:
            circle = np.stack([x_mm + pu * off + rad * np.cos(ang), cy + (pv * off + rad * np.sin(ang)) * fore], 1)
            _blend_poly(img, _to_image(cam, circle), pip * 0.8 + body * 0.1)


def draw_hand(img: np.ndarray, cam: np.ndarray, tip_xy_mm: tuple[float, float], rng_phase: float = 0.0) -> None:
    """Draw a hand reaching up into the tray from the bottom, fingertips at `tip_xy_mm`."""
    tx, ty = tip_xy_mm
    skin = np.float32([0.50, 0.62, 0.86])
    shapes = []
    ang = np.linspace(0, 2 * math.pi, 28, endpoint=False)
    palm_c = (tx, ty + 70.0)
    shapes.append(np.stack([palm_c[0] + 42 * np.cos(ang), palm_c[1] + 48 * np.sin(ang)], 1))
    for k, (dx, length) in enumerate(((-30, 52), (-10, 62), (10, 60), (29, 50))):
        cx, cy = tx + dx, ty + 62 - length / 2 - 12 + (0 if k in (1, 2) else 8)
        shapes.append(np.stack([cx + 8.5 * np.cos(ang), cy + length / 2 * np.sin(ang)], 1))
    shapes.append(np.float64([(tx - 36, ty + 80), (tx + 36, ty + 80), (tx + 40, ty + 400), (tx - 40, ty + 400)]))
    for sh in shapes:
        _blend_poly(img, _to_image(cam, sh + (10.0, 12.0)), 0.0, 0.3)
    for k, sh in enumerate(shapes):
        _blend_poly(img, _to_image(cam, sh), skin * (0.92 + 0.04 * (k % 3)))
