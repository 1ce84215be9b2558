"""The tray under the dice (floor textures, walls, rim, desk) and the camera's finish.

Images here are float32 BGR arrays in ``[0, 1]`` of shape (H, W, 3); points are
``(x, y)`` image pixels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from vision.images import jpeg_roundtrip
from vision.render._die import Light


@dataclass(frozen=True, slots=True)
class TrayShape:
    """A circle ``(cx, cy, r)`` or rounded rectangle ``(cx, cy, hx, hy, corner)``."""

    kind: str
    params: tuple[float, ...]

    def sdf(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """Signed distance in pixels (negative inside)."""
        if self.kind == "circle":
            cx, cy, r = self.params
            return np.hypot(X - cx, Y - cy) - r
        cx, cy, hx, hy, rc = self.params
        qx = np.abs(X - cx) - (hx - rc)
        qy = np.abs(Y - cy) - (hy - rc)
        return np.hypot(np.maximum(qx, 0), np.maximum(qy, 0)) + np.minimum(np.maximum(qx, qy), 0) - rc

    def scaled(self, origin: tuple[float, float], f: float) -> TrayShape:
        """The same shape scaled by ``f`` about ``origin`` (perspective of a lower plane)."""
        ox, oy = origin
        if self.kind == "circle":
            cx, cy, r = self.params
            return TrayShape("circle", (ox + (cx - ox) * f, oy + (cy - oy) * f, r * f))
        cx, cy, hx, hy, rc = self.params
        return TrayShape("rect", (ox + (cx - ox) * f, oy + (cy - oy) * f, hx * f, hy * f, rc * f))


@dataclass(frozen=True, slots=True)
class Tray:
    """The drawn tray: its style and the floor region where dice may lie."""

    style: str
    floor: TrayShape

    def floor_distance(self, points: np.ndarray) -> np.ndarray:
        """Signed distance (px, negative inside) of ``(x, y)`` points to the floor edge."""
        pts = np.asarray(points, np.float64)
        return self.floor.sdf(pts[:, 0], pts[:, 1])


def fbm(
    rng: np.random.Generator,
    h: int,
    w: int,
    cells: tuple[int, ...] = (3, 12, 48),
    gains: tuple[float, ...] = (1.0, 0.5, 0.25),
) -> np.ndarray:
    """Smooth random field of shape (h, w), float32, about zero mean and unit spread."""
    out = np.zeros((h, w), np.float32)
    for c, g in zip(cells, gains):
        gw = max(2, c)
        gh = max(2, int(round(c * h / w)))
        grid = rng.standard_normal((gh + 2, gw + 2)).astype(np.float32)
        big = cv2.resize(grid, (w + 2 * w // gw, h + 2 * h // gh), interpolation=cv2.INTER_CUBIC)
        oy, ox = h // gh, w // gw
        out += g * big[oy : oy + h, ox : ox + w]
    out -= out.mean()
    return out / (out.std() + 1e-6)


def _grain(rng: np.random.Generator, h: int, w: int, sigma: float) -> np.ndarray:
    return rng.standard_normal((h, w)).astype(np.float32) * sigma


def _colour(base, jitter, rng) -> np.ndarray:
    c = np.asarray(base, np.float32) * (1 + rng.uniform(-jitter, jitter, 3)).astype(np.float32)
    return np.clip(c, 0, 1)


def _texture(rng: np.random.Generator, kind: str, h: int, w: int, base: np.ndarray) -> np.ndarray:
    """A floor or wall texture (h, w, 3) around colour ``base``."""
    if kind == "felt":
        f = 1 + 0.05 * fbm(rng, h, w, (4, 20), (1.0, 0.6)) + _grain(rng, h, w, 0.045)
        f = cv2.GaussianBlur(f, (0, 0), 0.7)
        return base[None, None, :] * f[..., None]
    if kind == "paper":
        f = 1 + 0.012 * fbm(rng, h, w, (3, 30), (1.0, 0.4)) + _grain(rng, h, w, 0.01)
        return base[None, None, :] * f[..., None]
    if kind == "plastic":
        f = 1 + 0.08 * fbm(rng, h, w, (3, 10), (1.0, 0.5)) + _grain(rng, h, w, 0.02)
        img = base[None, None, :] * f[..., None]
        scr = np.zeros((h, w), np.float32)
        for _ in range(int(rng.integers(10, 40))):
            x0, y0 = rng.uniform(0, w), rng.uniform(0, h)
            a = rng.uniform(0, math.pi)
            ln = rng.uniform(10, 90)
            p0 = (int(x0), int(y0))
            p1 = (int(x0 + ln * math.cos(a)), int(y0 + ln * math.sin(a)))
            cv2.line(scr, p0, p1, float(rng.uniform(0.3, 1.0)), 1, cv2.LINE_AA)
        return img + 0.06 * cv2.GaussianBlur(scr, (0, 0), 0.6)[..., None]
    if kind == "wood":
        ang = rng.uniform(0, 180)
        big = int(math.hypot(h, w)) + 4
        streak = cv2.resize(
            rng.standard_normal((big // 6, 8)).astype(np.float32), (big, big), interpolation=cv2.INTER_CUBIC
        )
        warp = cv2.resize(rng.standard_normal((6, 6)).astype(np.float32), (big, big), interpolation=cv2.INTER_CUBIC)
        yy = np.arange(big, dtype=np.float32)[:, None]
        rings = np.sin(2 * math.pi * (yy / rng.uniform(18, 40) + 0.6 * warp))
        tex = 0.55 * rings + 0.45 * streak
        m = cv2.getRotationMatrix2D((big / 2, big / 2), ang, 1.0)
        m[:, 2] += (w / 2 - big / 2, h / 2 - big / 2)
        tex = cv2.warpAffine(tex, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        f = 1 + 0.12 * tex + _grain(rng, h, w, 0.015)
        return base[None, None, :] * f[..., None]
    raise ValueError(f"unknown texture {kind!r}")


_TRAY_LOOKS = {
    # style: (floor texture, floor colours, wall colours, rim colours, desk colours)
    "round": (
        "plastic",
        [(0.26, 0.25, 0.17), (0.2, 0.2, 0.2), (0.15, 0.14, 0.14), (0.3, 0.22, 0.16)],
        None,
        None,
        [(0.84, 0.85, 0.86), (0.75, 0.78, 0.8)],
    ),
    "box": (
        "paper",
        [(0.74, 0.76, 0.76), (0.68, 0.72, 0.74), (0.8, 0.8, 0.78)],
        [(0.8, 0.81, 0.8)],
        [(0.12, 0.12, 0.14), (0.25, 0.2, 0.2)],
        [(0.9, 0.9, 0.9), (0.85, 0.86, 0.88)],
    ),
    "felt": (
        "felt",
        [(0.18, 0.42, 0.12), (0.12, 0.12, 0.5), (0.45, 0.2, 0.1), (0.2, 0.2, 0.22), (0.35, 0.2, 0.35)],
        None,
        [(0.1, 0.2, 0.35), (0.08, 0.08, 0.09), (0.15, 0.3, 0.45)],
        [(0.6, 0.62, 0.64), (0.45, 0.5, 0.55)],
    ),
    "wood": (
        "wood",
        [(0.3, 0.5, 0.7), (0.2, 0.35, 0.55), (0.45, 0.62, 0.78)],
        None,
        [(0.08, 0.09, 0.1), (0.1, 0.15, 0.25)],
        [(0.5, 0.5, 0.5)],
    ),
    "paper": ("paper", [(0.86, 0.87, 0.87), (0.9, 0.88, 0.84), (0.8, 0.82, 0.84)], None, None, None),
}


def _pick(rng: np.random.Generator, options) -> np.ndarray:
    return _colour(options[int(rng.integers(len(options)))], 0.08, rng)


def make_tray(
    rng: np.random.Generator,
    style: str,
    w: int,
    h: int,
    origin: tuple[float, float],
    light: Light,
    wall_px: float,
    scale: int = 1,
) -> tuple[np.ndarray, Tray]:
    """Draw an empty tray of ``style``; return the float32 image and its floor region.

    ``scale > 1`` draws the tray at ``1 / scale`` of the size and upscales it
    (about ``scale**2`` times faster, softer); 1 (the default) keeps the renders of
    :func:`vision.render.render_tray`.
    """
    if scale > 1:
        sw, sh = -(-w // scale), -(-h // scale)
        # Pixel centres: x_big = scale * x_small + (scale - 1) / 2.
        small_origin = ((origin[0] - (scale - 1) / 2) / scale, (origin[1] - (scale - 1) / 2) / scale)
        small, tray = make_tray(rng, style, sw, sh, small_origin, light, wall_px / scale)
        big = cv2.resize(small, (sw * scale, sh * scale), interpolation=cv2.INTER_LINEAR)[:h, :w]
        return np.ascontiguousarray(big), Tray(style, tray.floor.scaled((-0.5, -0.5), float(scale)))
    tex, floors, walls, rims, desks = _TRAY_LOOKS[style]
    ys, xs = np.mgrid[0:h, 0:w]
    X, Y = xs.astype(np.float32), ys.astype(np.float32)
    floor_col = _pick(rng, floors)
    if style == "paper":
        shape = TrayShape("rect", (w / 2, h / 2, w * 2.0, h * 2.0, 1.0))
        img = _texture(rng, tex, h, w, floor_col)
        return img, Tray(style, shape)

    cx = w / 2 + rng.uniform(-0.06, 0.06) * w
    cy = h / 2 + rng.uniform(-0.06, 0.06) * h
    if style == "round":
        top = TrayShape("circle", (cx, cy, rng.uniform(0.40, 0.52) * w))
    else:
        hx = rng.uniform(0.42, 0.5) * w
        hy = rng.uniform(0.40, 0.5) * h
        top = TrayShape("rect", (cx, cy, hx, hy, rng.uniform(2, 0.3 * min(hx, hy))))
    cam_h = wall_px / rng.uniform(0.05, 0.1)  # camera height in px of the wall-top plane
    floor = top.scaled(origin, 1.0 - wall_px / cam_h)
    rim_w = rng.uniform(0.012, 0.05) * w

    desk = _texture(rng, "paper", h, w, _pick(rng, desks))
    d_floor = floor.sdf(X, Y)
    d_top = top.sdf(X, Y)
    img = desk

    # Rim (top of the walls, seen from above) and its drop shadow on the desk.
    rim_col = _pick(rng, rims) if rims else floor_col * 0.75
    d_rim = d_top - rim_w
    lx, ly, lz = light.direction
    horiz = math.hypot(lx, ly) + 1e-9
    off = wall_px * horiz / max(lz, 0.3)
    d_cast = top.sdf(X + lx / horiz * off, Y + ly / horiz * off) - rim_w
    cast = np.clip(0.5 - d_cast / (0.3 * off + 2), 0, 1)
    img = img * (1 - 0.35 * cast)[..., None]
    rim_tex = _texture(rng, "plastic" if style == "round" else "paper", h, w, rim_col)
    a_rim = np.clip(0.5 - d_rim, 0, 1)[..., None]
    img = img * (1 - a_rim) + rim_tex * a_rim
    # Highlight along the rim's inner lip.
    lip = np.exp(-np.abs(d_top + 1.5) / 1.5)
    img = img + (0.12 * lip)[..., None]

    # Walls: inner faces, shaded by their inward normals.
    gy, gx = np.gradient(d_top)
    n = np.hypot(gx, gy) + 1e-6
    nx, ny = -gx / n * 0.85, -gy / n * 0.85
    wall_shade = light.shade(nx, ny, np.full_like(nx, 0.53))
    wall_base = _pick(rng, walls) if walls else floor_col * 1.05
    wall_tex = _texture(rng, "plastic" if style == "round" else tex, h, w, wall_base)
    wall_img = wall_tex * wall_shade[..., None]
    a_wall = np.clip(0.5 - d_top, 0, 1)[..., None]
    img = img * (1 - a_wall) + wall_img * a_wall

    # Floor, shadowed near the wall on the side of the light.
    floor_img = _texture(rng, tex, h, w, floor_col)
    d_sh = floor.sdf(X + lx / horiz * off, Y + ly / horiz * off)
    shadow = np.clip(0.5 + d_sh / (0.25 * off + 2), 0, 1)
    floor_img = floor_img * (1 - 0.4 * shadow)[..., None]
    # Ambient occlusion in the corner between floor and wall.
    floor_img = floor_img * (1 - 0.25 * np.exp(d_floor / (0.3 * wall_px + 1)))[..., None]
    a_floor = np.clip(0.5 - d_floor, 0, 1)[..., None]
    img = img * (1 - a_floor) + floor_img * a_floor
    return img.astype(np.float32), Tray(style, floor)


def lighting(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    """Uneven lighting of a scene: gradient, vignette and drift, (h, w, 3) float32 gains."""
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    a = rng.uniform(0, 2 * math.pi)
    ramp = ((xs - w / 2) * math.cos(a) + (ys - h / 2) * math.sin(a)) / max(w, h)
    r2 = ((xs - w / 2) ** 2 + (ys - h / 2) ** 2) / ((w / 2) ** 2 + (h / 2) ** 2)
    light = 1 + rng.uniform(0.05, 0.3) * ramp - rng.uniform(0.05, 0.25) * r2
    light = light * (1 + 0.03 * fbm(rng, h, w, (2,), (1.0,)))
    cast = (1 + rng.uniform(-0.05, 0.05, 3)).astype(np.float32)
    return (light[..., None] * cast[None, None, :]).astype(np.float32)


def finish(
    img: np.ndarray, rng: np.random.Generator, *, light: np.ndarray, noise: float, blur: float, jpeg_quality: int | None
) -> np.ndarray:
    """Camera effects: lighting (from :func:`lighting`), exposure, blur, noise, JPEG; to uint8."""
    gain = np.float32(rng.uniform(0.92, 1.08) * 255.0)
    out = img * light
    out *= gain
    if blur > 0:
        out = cv2.GaussianBlur(out, (0, 0), blur)
    if noise > 0:
        out += rng.standard_normal(out.shape, dtype=np.float32) * np.float32(noise)
    out8 = cv2.convertScaleAbs(out)
    if jpeg_quality is not None:
        out8 = jpeg_roundtrip(out8, jpeg_quality)
    return out8
