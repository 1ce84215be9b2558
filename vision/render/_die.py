"""One die: its geometry under a near-top-down camera, its shadow and its pixels.

Model: a camera straight above the tray at height ``D``; a die of height ``hgt`` has
its top face ``k = hgt / D`` closer to the camera than the floor, so the top face is
``1 / (1 - k)`` larger than the footprint and pushed away from the principal point
``origin``.  The visible side faces are those facing the principal point.  Every
shape is drawn from signed distance fields (negative inside, in pixels), which gives
anti-aliased edges and surface normals for Lambert and Blinn-Phong shading.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vision.render._types import PIP_LAYOUTS

#: Offset of the pip centres from the face centre, as a fraction of the face side.
PIP_OFFSET = 0.27


@dataclass(frozen=True, slots=True)
class DieLook:
    """How one die looks (colours and shape ratios), independent of where it is."""

    body: tuple[float, float, float]
    pip: tuple[float, float, float]
    corner: float = 0.16  # corner radius / side
    bevel: float = 0.08  # rounded top edge width / side
    pip_radius: float = 0.095  # pip radius / side
    gloss: float = 0.25  # specular strength


@dataclass(frozen=True, slots=True)
class Light:
    """A distant light: unit direction towards the light ``(x, y, z)``, z to the camera."""

    direction: tuple[float, float, float]
    ambient: float = 0.45

    def shade(self, nx: np.ndarray, ny: np.ndarray, nz: np.ndarray) -> np.ndarray:
        """Lambert shading normalised so a flat face pointing up gives 1."""
        lx, ly, lz = self.direction
        dif = 1.0 - self.ambient
        lam = np.maximum(nx * lx + ny * ly + nz * lz, 0.0)
        return (self.ambient + dif * lam) / (self.ambient + dif * lz)

    def specular(self, nx: np.ndarray, ny: np.ndarray, nz: np.ndarray, power: float = 30.0) -> np.ndarray:
        """Blinn-Phong highlight for a viewer straight above."""
        lx, ly, lz = self.direction
        hx, hy, hz = lx, ly, lz + 1.0
        norm = math.sqrt(hx * hx + hy * hy + hz * hz)
        dot = np.maximum((nx * hx + ny * hy + nz * hz) / norm, 0.0)
        return dot**power


@dataclass(frozen=True, slots=True)
class DiePose:
    """Where one die stands: footprint centre, rotation, top-face size, perspective."""

    base_xy: tuple[float, float]
    angle_deg: float
    face_px: float
    k: float  # die height / camera height
    origin: tuple[float, float]  # principal point, image px

    def at(self, s: float) -> tuple[float, float, float]:
        """Centre x, centre y and side of the cross-section with scale ``s``.

        ``s`` runs from 1 (footprint on the floor) to ``1 / (1 - k)`` (top face).
        """
        ox, oy = self.origin
        bx, by = self.base_xy
        return ox + (bx - ox) * s, oy + (by - oy) * s, self.face_px * (1.0 - self.k) * s

    @property
    def s_top(self) -> float:
        return 1.0 / (1.0 - self.k)

    @property
    def top(self) -> tuple[float, float, float]:
        return self.at(self.s_top)


def _rot(angle_deg: float) -> tuple[float, float]:
    a = math.radians(angle_deg)
    return math.cos(a), math.sin(a)


def rounded_square_outline(
    cx: float, cy: float, side: float, angle_deg: float, corner: float, n_arc: int = 6
) -> np.ndarray:
    """Points ``(x, y)`` of a rotated rounded square, shape (4 * n_arc, 2), float32."""
    h = side / 2.0
    r = corner * side
    c, s = _rot(angle_deg)
    pts = []
    for (sx, sy), a0 in (((1, 1), 0.0), ((-1, 1), 90.0), ((-1, -1), 180.0), ((1, -1), 270.0)):
        for t in np.linspace(0.0, 90.0, n_arc):
            a = math.radians(a0 + t)
            u = sx * (h - r) + r * math.cos(a)
            v = sy * (h - r) + r * math.sin(a)
            pts.append((cx + u * c + v * s, cy - u * s + v * c))
    return np.asarray(pts, dtype=np.float32)


def die_outline(pose: DiePose, look: DieLook) -> np.ndarray:
    """Convex outline ``(x, y)`` of the whole visible die, shape (K, 2), float32."""
    pts = [rounded_square_outline(*pose.at(s), pose.angle_deg, look.corner) for s in (1.0, pose.s_top)]
    hull = cv_hull(np.vstack(pts))
    return hull


def cv_hull(points: np.ndarray) -> np.ndarray:
    import cv2

    return cv2.convexHull(points.astype(np.float32)).reshape(-1, 2)


def _local(X: np.ndarray, Y: np.ndarray, cx: float, cy: float, angle_deg: float) -> tuple[np.ndarray, np.ndarray]:
    """Image grid to the die's own axes (inverse of the drawing rotation)."""
    c, s = _rot(angle_deg)
    dx = X - cx
    dy = Y - cy
    return c * dx - s * dy, s * dx + c * dy


def _sdf_rsq(X, Y, cx, cy, side, angle_deg, corner):
    u, v = _local(X, Y, cx, cy, angle_deg)
    h = side / 2.0
    r = corner * side
    qx = np.abs(u) - (h - r)
    qy = np.abs(v) - (h - r)
    outside = np.hypot(np.maximum(qx, 0.0), np.maximum(qy, 0.0))
    inside = np.minimum(np.maximum(qx, qy), 0.0)
    return outside + inside - r


def _unit_grad(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    gy, gx = np.gradient(d)
    n = np.hypot(gx, gy) + 1e-6
    return gx / n, gy / n


def _grid(x0: int, y0: int, x1: int, y1: int) -> tuple[np.ndarray, np.ndarray]:
    ys, xs = np.mgrid[y0:y1, x0:x1]
    return xs.astype(np.float32), ys.astype(np.float32)


def _bbox(points: np.ndarray, pad: float, w: int, h: int) -> tuple[int, int, int, int] | None:
    x0 = max(int(math.floor(points[:, 0].min() - pad)), 0)
    y0 = max(int(math.floor(points[:, 1].min() - pad)), 0)
    x1 = min(int(math.ceil(points[:, 0].max() + pad)) + 1, w)
    y1 = min(int(math.ceil(points[:, 1].max() + pad)) + 1, h)
    if x1 <= x0 or y1 <= y0:
        return None
    return x0, y0, x1, y1


def draw_shadow(img: np.ndarray, pose: DiePose, look: DieLook, light: Light, strength: float) -> None:
    """Darken the floor in ``img`` (float32 BGR, in place) under and beside one die.

    The cast shadow is the footprint swept away from the light (a cube's shadow),
    blurred to a soft penumbra; a tighter contact shadow hugs the footprint.
    """
    import cv2

    H, W = img.shape[:2]
    lx, ly, lz = light.direction
    horiz = math.hypot(lx, ly) + 1e-9
    bx, by, side = pose.at(1.0)
    length = side * min(0.8 * horiz / max(lz, 0.2), 1.0)
    sx, sy = -lx / horiz * length, -ly / horiz * length
    soft = 0.2 * side + 1.0
    outl = rounded_square_outline(bx, by, side, pose.angle_deg, look.corner)
    swept = cv_hull(np.vstack([outl, outl + np.float32([sx, sy])]))
    box = _bbox(swept, 2.5 * soft + 4, W, H)
    if box is None:
        return
    x0, y0, x1, y1 = box
    mask = np.zeros((y1 - y0, x1 - x0), np.float32)
    sh = 4  # fractional bits for sub-pixel polygon corners
    pts = np.round((swept - np.float32([x0, y0])) * (1 << sh)).astype(np.int32)
    cv2.fillConvexPoly(mask, pts, 1.0, cv2.LINE_AA, sh)
    cast = cv2.GaussianBlur(mask, (0, 0), soft * 0.5) * strength
    foot = np.zeros_like(mask)
    pts = np.round((outl - np.float32([x0, y0])) * (1 << sh)).astype(np.int32)
    cv2.fillConvexPoly(foot, pts, 1.0, cv2.LINE_AA, sh)
    contact = cv2.GaussianBlur(foot, (0, 0), 0.05 * side + 0.7) * 0.55
    dark = 1.0 - np.maximum(cast, contact)
    img[y0:y1, x0:x1] *= dark[..., None]


def _side_values(value: int) -> tuple[int, int, int, int]:
    """Faces on the die's +u, +v, -u and -v sides when `value` is up (opposites sum to 7)."""
    a, b = [f for f in range(1, 7) if f not in (value, 7 - value)][:2]
    return a, b, 7 - a, 7 - b


def _side_pips(
    X, Y, pose: DiePose, look: DieLook, value: int, s_surf: np.ndarray, height: np.ndarray, shift: float
) -> np.ndarray:
    """Coverage (0-1) of the pips painted on the visible side faces."""
    ox, oy = pose.origin
    bx, by = pose.base_xy
    cx = ox + (bx - ox) * s_surf
    cy = oy + (by - oy) * s_surf
    u, v = _local(X, Y, cx, cy, pose.angle_deg)
    side = pose.face_px * (1.0 - pose.k) * s_surf
    un, vn = u / side, v / side
    size = pose.face_px
    off = PIP_OFFSET * size
    rad = look.pip_radius * size
    aa = 0.5 * size / max(shift, 2.0) + 0.5
    along_u = np.where(np.abs(un) >= np.abs(vn), vn, un) * size  # along the edge, face units
    up = (height - 0.5) * size  # up the side from its middle, face units
    faces = _side_values(value)
    which = np.where(np.abs(un) >= np.abs(vn), np.where(un >= 0, 0, 2), np.where(vn >= 0, 1, 3))
    alpha = np.zeros(X.shape, np.float32)
    for k, face in enumerate(faces):
        sel = which == k
        if not sel.any():
            continue
        for pu, pv in PIP_LAYOUTS[face]:
            dist = np.hypot(along_u - pu * off, up - pv * off)
            a = np.clip(0.5 - (dist - rad) / aa, 0.0, 1.0)
            alpha = np.where(sel, np.maximum(alpha, a), alpha)
    return alpha


def draw_die(img: np.ndarray, pose: DiePose, look: DieLook, light: Light, value: int, tint: float = 1.0) -> None:
    """Draw one die into ``img`` (float32 BGR in ``[0, 1]``, in place)."""
    H, W = img.shape[:2]
    outline = die_outline(pose, look)
    box = _bbox(outline, 3, W, H)
    if box is None:
        return
    x0, y0, x1, y1 = box
    X, Y = _grid(x0, y0, x1, y1)
    body = np.asarray(look.body, np.float32) * tint
    pipc = np.asarray(look.pip, np.float32)

    # Side faces: sweep of the cross-section from the floor to the top face.  The
    # surface seen at a pixel is the highest cross-section that covers it.
    bx, by = pose.base_xy
    shift = math.hypot(bx - pose.origin[0], by - pose.origin[1]) * (pose.s_top - 1.0) + pose.face_px * pose.k
    s_vals = np.linspace(1.0, pose.s_top, max(2, int(math.ceil(shift / 1.5)) + 1))
    d_side = None
    s_surf = np.full(X.shape, 1.0, np.float32)
    d_prev = None
    for s in s_vals:
        cx, cy, side = pose.at(float(s))
        ds = _sdf_rsq(X, Y, cx, cy, side, pose.angle_deg, look.corner)
        if d_side is None:
            d_side = ds
        else:
            d_side = np.minimum(d_side, ds)
            step = s_vals[1] - s_vals[0]
            inside = d_prev <= 0
            frac = np.clip(d_prev / np.minimum(d_prev - ds, -1e-6), 0.0, 1.0)
            s_surf = np.where(inside, np.where(ds <= 0, s, (s - step) + step * frac), s_surf)
        d_prev = ds
    gx, gy = _unit_grad(d_side)
    side_shade = light.shade(gx, gy, np.zeros_like(gx))
    height = (s_surf - 1.0) / max(pose.s_top - 1.0, 1e-6)
    occl = 0.65 + 0.35 * height
    side_col = body[None, None, :] * (side_shade * occl)[..., None] * 0.92
    side_pips = _side_pips(X, Y, pose, look, value, s_surf, height, shift)
    side_pip_col = pipc[None, None, :] * (0.5 + 0.5 * side_shade * occl)[..., None]
    side_col = side_col * (1 - side_pips[..., None]) + side_pip_col * side_pips[..., None]

    # Top face with a rounded (bevelled) edge.
    tcx, tcy, tside = pose.top
    d_top = _sdf_rsq(X, Y, tcx, tcy, tside, pose.angle_deg, look.corner)
    tx, ty = _unit_grad(d_top)
    bevel = look.bevel * tside
    t = np.clip(-d_top / bevel, 0.0, 1.0)
    phi = (1.0 - t) ** 1.5 * math.radians(65.0)
    nx, ny, nz = tx * np.sin(phi), ty * np.sin(phi), np.cos(phi)
    top_shade = light.shade(nx, ny, nz)
    spec = look.gloss * light.specular(nx, ny, nz)
    top_col = body[None, None, :] * top_shade[..., None] + spec[..., None]

    # Pips: recessed dimples.
    off = PIP_OFFSET * tside
    rad = look.pip_radius * tside * (1.12 if value == 1 else 1.0)
    c, s = _rot(pose.angle_deg)
    pip_alpha = np.zeros_like(d_top)
    pip_shade = np.ones_like(d_top)
    for pu, pv in PIP_LAYOUTS[value]:
        u, v = pu * off, pv * off
        px, py = tcx + u * c + v * s, tcy - u * s + v * c
        dx, dy = X - px, Y - py
        dist = np.hypot(dx, dy)
        a = np.clip(0.5 - (dist - rad), 0.0, 1.0)
        inside = a > 0
        if not inside.any():
            continue
        f = np.clip(dist / rad, 0.0, 1.0) * 0.9
        pnx, pny = -dx / (dist + 1e-6) * f, -dy / (dist + 1e-6) * f
        pnz = np.sqrt(np.maximum(1.0 - f * f, 0.0))
        sh = light.shade(pnx, pny, pnz)
        pip_shade = np.where(inside, sh, pip_shade)
        pip_alpha = np.maximum(pip_alpha, a)
    pip_col = pipc[None, None, :] * (0.55 + 0.45 * pip_shade)[..., None]
    face = top_col * (1 - pip_alpha[..., None]) + pip_col * pip_alpha[..., None]

    a_top = np.clip(0.5 - d_top, 0.0, 1.0)[..., None]
    col = side_col * (1 - a_top) + face * a_top
    a_die = np.clip(0.5 - d_side, 0.0, 1.0)[..., None]
    patch = img[y0:y1, x0:x1]
    img[y0:y1, x0:x1] = patch * (1 - a_die) + np.clip(col, 0.0, 1.2) * a_die
