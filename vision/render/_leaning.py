"""Draw a die leaning on a tray wall or on another die, for the randomised renderer.

The die is a cube resting on one edge (:func:`leaning_vertices`), projected by a
pinhole camera above the tray (:func:`project`, :func:`leaning_outline`) and drawn
face by face with its cast shadow (:func:`draw_leaning_die`). Images are float32
BGR arrays in ``[0, 1]`` of shape (H, W, 3), drawn in place; points are ``(x, y)``
image pixels.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from vision.render._die import PIP_OFFSET, DieLook, Light, _side_values
from vision.render._types import PIP_LAYOUTS


def _face_texture(look: DieLook, value: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """A flat face of `value` (size x size float32 BGR) and its rounded-square mask."""
    ss = 4
    body = np.asarray(look.body, np.float32)
    pipc = np.asarray(look.pip, np.float32)
    mask = np.zeros((size, size), np.float32)
    r = int(round(look.corner * size * ss))
    lo, hi = r, size * ss - 1 - r
    for x, y in ((lo, lo), (hi, lo), (lo, hi), (hi, hi)):
        cv2.circle(mask, (x, y), r, 1.0, -1, cv2.LINE_AA, 2)
    cv2.rectangle(mask, (lo // ss, 0), (hi // ss, size - 1), 1.0, -1)
    cv2.rectangle(mask, (0, lo // ss), (size - 1, hi // ss), 1.0, -1)
    pips = np.zeros((size, size), np.float32)
    off = PIP_OFFSET * size
    for pu, pv in PIP_LAYOUTS[value]:
        cx, cy = size / 2 + pu * off, size / 2 + pv * off
        cv2.circle(
            pips,
            (int(round(cx * ss)), int(round(cy * ss))),
            int(round(look.pip_radius * size * ss)),
            1.0,
            -1,
            cv2.LINE_AA,
            2,
        )
    edge = np.minimum.reduce(
        np.meshgrid(np.arange(size), np.arange(size))
        + np.meshgrid(size - 1 - np.arange(size), size - 1 - np.arange(size))
    )
    shade = 0.8 + 0.2 * np.clip(edge / max(look.bevel * size, 1.0), 0, 1)
    tex = body[None, None, :] * shade[..., None].astype(np.float32)
    tex = tex * (1 - pips[..., None]) + (pipc * 0.8)[None, None, :] * pips[..., None]
    return tex.astype(np.float32), mask


def leaning_vertices(base_xy: tuple[float, float], side: float, yaw_deg: float, tilt_deg: float) -> np.ndarray:
    """World corners (8, 3) of a cube of `side` floor px resting on one edge, tilted `tilt_deg`.

    x, y in floor pixels, z up (same units); the cube tips towards its own +x axis
    (rotated by `yaw_deg` in the image) about the bottom edge at +x.
    """
    a = side / 2
    local = np.array([[x, y, z] for z in (0.0, side) for y in (-a, a) for x in (-a, a)], np.float64)
    t = math.radians(tilt_deg)
    # Tip about the bottom edge x = +a, z = 0: rotate in the x-z plane.
    px = local[:, 0] - a
    pz = local[:, 2]
    xr = px * math.cos(t) + pz * math.sin(t) + a
    zr = -px * math.sin(t) + pz * math.cos(t)
    c, s = math.cos(math.radians(yaw_deg)), math.sin(math.radians(yaw_deg))
    X = base_xy[0] + xr * c + local[:, 1] * s
    Y = base_xy[1] - xr * s + local[:, 1] * c
    return np.stack([X, Y, zr], axis=1)


#: Faces of the cube of :func:`leaning_vertices`: vertex indices (counter-clockwise
#: seen from outside, starting at the face's own top-left) and which die face it is
#: (0 top, 1 +x, 2 +y, 3 -x, 4 -y, 5 bottom).
_FACES = (
    ((4, 5, 7, 6), 0),
    ((1, 5, 7, 3), 1),
    ((2, 3, 7, 6), 2),
    ((0, 4, 6, 2), 3),
    ((0, 1, 5, 4), 4),
    ((0, 1, 3, 2), 5),
)


def project(points: np.ndarray, origin: tuple[float, float], cam_h: float) -> np.ndarray:
    """Pinhole projection of world points (N, 3) seen from height `cam_h` above `origin`."""
    ox, oy = origin
    f = cam_h / (cam_h - points[:, 2])
    return np.stack([ox + (points[:, 0] - ox) * f, oy + (points[:, 1] - oy) * f], axis=1)


def leaning_outline(verts: np.ndarray, origin: tuple[float, float], cam_h: float) -> np.ndarray:
    """Convex outline (K, 2) float32 of a leaning die's projection."""
    return cv2.convexHull(project(verts, origin, cam_h).astype(np.float32)).reshape(-1, 2)


def draw_leaning_die(
    img: np.ndarray,
    verts: np.ndarray,
    look: DieLook,
    light: Light,
    value: int,
    origin: tuple[float, float],
    cam_h: float,
    shadow: float,
) -> None:
    """Draw a tilted cube (from :func:`leaning_vertices`) with its cast shadow, in place."""
    H, W = img.shape[:2]
    lx, ly, lz = light.direction
    on_floor = verts[:, :2] - np.outer(verts[:, 2] / max(lz, 0.2), [lx, ly])
    hull = cv2.convexHull(on_floor.astype(np.float32)).reshape(-1, 2)
    x0, y0 = int(max(hull[:, 0].min() - 20, 0)), int(max(hull[:, 1].min() - 20, 0))
    x1, y1 = int(min(hull[:, 0].max() + 20, W)), int(min(hull[:, 1].max() + 20, H))
    if x1 > x0 and y1 > y0:
        m = np.zeros((y1 - y0, x1 - x0), np.float32)
        cv2.fillConvexPoly(m, np.round((hull - [x0, y0]) * 16).astype(np.int32), 1.0, cv2.LINE_AA, 4)
        side = float(np.linalg.norm(verts[1] - verts[0]))
        m = cv2.GaussianBlur(m, (0, 0), 0.1 * side + 1.0) * shadow
        img[y0:y1, x0:x1] *= (1 - m)[..., None]
    a, b, c_, d = _side_values(value)
    values = (value, a, b, c_, d, 7 - value)
    pts2 = project(verts, origin, cam_h)
    cam = np.array([origin[0], origin[1], cam_h])
    centre = verts.mean(axis=0)
    size = 64
    for idx, which in _FACES:
        q = verts[list(idx)]
        fc = q.mean(axis=0)
        n = fc - centre
        n = n / (np.linalg.norm(n) + 1e-9)
        if float(np.dot(n, cam - fc)) <= 0:
            continue
        tex, mask = _face_texture(look, values[which], size)
        shade = float(light.shade(np.float64(n[0]), np.float64(n[1]), np.float64(n[2])))
        spec = look.gloss * float(light.specular(np.float64(n[0]), np.float64(n[1]), np.float64(n[2])))
        paste_face(img, tex * shade + spec, mask, pts2[list(idx)].astype(np.float32))


def paste_face(
    img: np.ndarray, tex: np.ndarray, mask: np.ndarray, dst: np.ndarray, interpolation: int = cv2.INTER_LINEAR
) -> None:
    """Warp a square face texture onto a quadrilateral of `img` and blend it in by its mask, in place.

    `img` is float32 ``(H, W, 3)`` BGR, 0-1; `tex` float32 ``(S, S, 3)`` (the
    shaded face, clipped at 1.2 for highlights) and `mask` float32 ``(S, S)``
    (the face's rounded outline, 0-1) from :func:`_face_texture`; `dst` float32
    ``(4, 2)``, the face's corners in px, in the texture's order ``(0, 0), (S, 0),
    (S, S), (0, S)``. `interpolation` warps the texture (the mask always bilinear).
    """
    H, W = img.shape[:2]
    size = tex.shape[0]
    bx0, by0 = int(max(math.floor(dst[:, 0].min()) - 2, 0)), int(max(math.floor(dst[:, 1].min()) - 2, 0))
    bx1, by1 = int(min(math.ceil(dst[:, 0].max()) + 3, W)), int(min(math.ceil(dst[:, 1].max()) + 3, H))
    if bx1 <= bx0 or by1 <= by0:
        return
    src = np.float32([[0, 0], [size, 0], [size, size], [0, size]])
    M = cv2.getPerspectiveTransform(src, dst - np.float32([bx0, by0]))
    wt = cv2.warpPerspective(tex, M, (bx1 - bx0, by1 - by0), flags=interpolation)
    wm = cv2.warpPerspective(mask, M, (bx1 - bx0, by1 - by0), flags=cv2.INTER_LINEAR)[..., None]
    patch = img[by0:by1, bx0:bx1]
    patch[:] = patch * (1 - wm) + np.clip(wt, 0, 1.2) * wm
