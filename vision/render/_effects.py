"""Drawing for the randomised renderer: surfaces, die materials, glare, tilt.

Leaning dice are drawn by :mod:`vision.render._leaning` (re-exported here).
Images here are float32 BGR arrays in ``[0, 1]`` of shape (H, W, 3), drawn in
place where a function says so; points are ``(x, y)`` image pixels.
"""

from __future__ import annotations

import dataclasses
import math

import cv2
import numpy as np

from vision.render._die import PIP_OFFSET, DieLook, DiePose, Light, _side_values, die_outline, draw_die
from vision.render._leaning import _FACES as _FACES
from vision.render._leaning import _face_texture as _face_texture
from vision.render._leaning import draw_leaning_die as draw_leaning_die
from vision.render._leaning import leaning_outline as leaning_outline
from vision.render._leaning import leaning_vertices as leaning_vertices
from vision.render._leaning import project as project
from vision.render._scene import _grain, _texture, fbm
from vision.render._types import PIP_LAYOUTS

#: Flat surfaces filling the whole view (no tray walls), by name: base colours (BGR).
FLAT_SURFACES: dict[str, tuple[tuple[float, float, float], ...]] = {
    "felt": ((0.18, 0.42, 0.12), (0.12, 0.12, 0.5), (0.45, 0.2, 0.1), (0.2, 0.2, 0.22)),
    "wood": ((0.3, 0.5, 0.7), (0.2, 0.35, 0.55), (0.45, 0.62, 0.78)),
    "paper": ((0.86, 0.87, 0.87), (0.9, 0.88, 0.84)),
    "cardboard": ((0.45, 0.6, 0.72), (0.5, 0.64, 0.74), (0.38, 0.52, 0.64)),
    "black_cloth": ((0.06, 0.06, 0.07), (0.09, 0.08, 0.08), (0.05, 0.05, 0.06)),
    "white_card": ((0.93, 0.93, 0.92), (0.95, 0.94, 0.92)),
}


def flat_surface(rng: np.random.Generator, name: str, w: int, h: int, scale: int = 1) -> np.ndarray:
    """A full-frame surface texture of `name` (a key of FLAT_SURFACES), (h, w, 3) float32.

    ``scale > 1`` draws it at ``1 / scale`` of the size and upscales it (faster, softer).
    """
    if scale > 1:
        small = flat_surface(rng, name, -(-w // scale), -(-h // scale))
        return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    opts = FLAT_SURFACES[name]
    base = np.clip(
        np.asarray(opts[int(rng.integers(len(opts)))], np.float32)
        * (1 + rng.uniform(-0.08, 0.08, 3)).astype(np.float32),
        0,
        1,
    )
    if name in ("felt", "wood", "paper"):
        return _texture(rng, name, h, w, base).astype(np.float32)
    if name == "cardboard":
        f = 1 + 0.05 * fbm(rng, h, w, (3, 20, 80), (1.0, 0.5, 0.3)) + _grain(rng, h, w, 0.02)
        xs = np.arange(w, dtype=np.float32)[None, :]
        ang = rng.uniform(0, math.pi)
        ys = np.arange(h, dtype=np.float32)[:, None]
        f = f + 0.02 * np.sin(2 * math.pi * (xs * math.cos(ang) + ys * math.sin(ang)) / rng.uniform(6, 12))
        fib = np.zeros((h, w), np.float32)
        for _ in range(int(rng.integers(30, 90))):
            x0, y0 = rng.uniform(0, w), rng.uniform(0, h)
            a = rng.uniform(0, math.pi)
            ln = rng.uniform(3, 14)
            cv2.line(
                fib,
                (int(x0), int(y0)),
                (int(x0 + ln * math.cos(a)), int(y0 + ln * math.sin(a))),
                float(rng.uniform(-1, 1)),
                1,
                cv2.LINE_AA,
            )
        f = f + 0.05 * fib
        return (base[None, None, :] * f[..., None]).astype(np.float32)
    if name == "black_cloth":
        f = 1 + 0.25 * fbm(rng, h, w, (4, 24), (1.0, 0.6)) + _grain(rng, h, w, 0.18)
        ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
        weave = 0.12 * np.sin(xs * 2.2) * np.sin(ys * 2.2)
        f = cv2.GaussianBlur(f + weave, (0, 0), 0.6)
        return (base[None, None, :] * f[..., None]).astype(np.float32)
    if name == "white_card":
        f = 1 + 0.006 * fbm(rng, h, w, (2, 8), (1.0, 0.3)) + _grain(rng, h, w, 0.004)
        return (base[None, None, :] * f[..., None]).astype(np.float32)
    raise ValueError(f"unknown surface {name!r}; use one of {', '.join(FLAT_SURFACES)}")


#: Die materials by kind: list of (name, body BGR, pip BGR).
DARK_DICE = (
    ("black", (0.06, 0.06, 0.07), (0.95, 0.95, 0.95)),
    ("navy", (0.30, 0.10, 0.05), (0.92, 0.92, 0.92)),
    ("dark_green", (0.10, 0.26, 0.05), (0.9, 0.9, 0.9)),
    ("dark_red", (0.05, 0.05, 0.33), (0.93, 0.93, 0.93)),
    ("charcoal_gold", (0.13, 0.13, 0.14), (0.25, 0.68, 0.85)),
)
TRANSLUCENT_DICE = (
    ("ruby", (0.15, 0.12, 0.80), (0.95, 0.95, 0.95)),
    ("sapphire", (0.80, 0.35, 0.12), (0.95, 0.95, 0.95)),
    ("emerald", (0.35, 0.70, 0.15), (0.95, 0.95, 0.95)),
    ("smoke", (0.35, 0.35, 0.37), (0.95, 0.95, 0.95)),
    ("clear", (0.88, 0.88, 0.86), (0.08, 0.08, 0.08)),
    ("amber", (0.10, 0.55, 0.90), (0.08, 0.08, 0.08)),
    ("smoke_red", (0.24, 0.24, 0.26), (0.16, 0.13, 0.72)),
    ("smoke_red_dark", (0.14, 0.14, 0.15), (0.20, 0.16, 0.80)),
    ("sapphire_red", (0.55, 0.28, 0.10), (0.18, 0.14, 0.78)),
)
MARBLED_DICE = (
    ("marble_white_black", (0.90, 0.90, 0.88), (0.25, 0.25, 0.27), (0.05, 0.05, 0.06)),
    ("marble_blue_white", (0.75, 0.35, 0.10), (0.92, 0.90, 0.88), (0.95, 0.95, 0.95)),
    ("marble_red_yellow", (0.10, 0.12, 0.78), (0.15, 0.75, 0.90), (0.95, 0.95, 0.95)),
    ("marble_green_black", (0.25, 0.60, 0.10), (0.06, 0.10, 0.05), (0.95, 0.95, 0.95)),
    ("marble_purple_pink", (0.45, 0.15, 0.35), (0.70, 0.55, 0.90), (0.95, 0.95, 0.95)),
)

#: Dice whose pips are coloured against a coloured body (the ``"coloured_pips"``
#: look): (name, body BGR, marble veins BGR or None for a plain body, pip BGR).
#: Red pips on smoky or blue marbled bodies and yellow pips on red or teal ones
#: are the combinations the dev photos' dice (nell source) read worst.
COLOURED_PIP_DICE = (
    ("smoke_red", (0.20, 0.20, 0.22), (0.42, 0.42, 0.45), (0.16, 0.13, 0.72)),
    ("smoke_red_dark", (0.12, 0.12, 0.13), (0.30, 0.30, 0.32), (0.20, 0.16, 0.80)),
    ("blue_black_red", (0.70, 0.42, 0.12), (0.08, 0.08, 0.10), (0.20, 0.15, 0.80)),
    ("teal_yellow", (0.55, 0.60, 0.15), (0.75, 0.80, 0.50), (0.15, 0.85, 0.95)),
    ("red_yellow", (0.12, 0.12, 0.72), None, (0.20, 0.80, 0.95)),
    ("gold_black", (0.25, 0.55, 0.70), (0.10, 0.25, 0.35), (0.06, 0.06, 0.06)),
    ("black_red", (0.07, 0.07, 0.08), None, (0.18, 0.15, 0.78)),
    ("white_red", (0.92, 0.92, 0.90), None, (0.15, 0.12, 0.75)),
    ("green_yellow", (0.20, 0.45, 0.08), (0.10, 0.25, 0.05), (0.20, 0.85, 0.95)),
    ("purple_white", (0.40, 0.10, 0.30), (0.65, 0.45, 0.80), (0.95, 0.95, 0.95)),
)


@dataclasses.dataclass(frozen=True, slots=True)
class Material:
    """A die's material: ``kind`` is solid, translucent or marbled."""

    kind: str = "solid"
    second: tuple[float, float, float] = (0.0, 0.0, 0.0)  # marble veins
    clarity: float = 0.0  # translucent: share of the floor seen through the body


def _sub_pose(pose: DiePose, x0: int, y0: int) -> DiePose:
    bx, by = pose.base_xy
    ox, oy = pose.origin
    return DiePose((bx - x0, by - y0), pose.angle_deg, pose.face_px, pose.k, (ox - x0, oy - y0))


def _die_window(img: np.ndarray, pose: DiePose, look: DieLook, pad: float = 4.0):
    H, W = img.shape[:2]
    hull = die_outline(pose, look)
    x0 = max(int(math.floor(hull[:, 0].min() - pad)), 0)
    y0 = max(int(math.floor(hull[:, 1].min() - pad)), 0)
    x1 = min(int(math.ceil(hull[:, 0].max() + pad)) + 1, W)
    y1 = min(int(math.ceil(hull[:, 1].max() + pad)) + 1, H)
    if x1 <= x0 or y1 <= y0:
        return None
    return x0, y0, x1, y1, hull


def draw_material_die(
    img: np.ndarray,
    pose: DiePose,
    look: DieLook,
    light: Light,
    value: int,
    material: Material,
    rng: np.random.Generator,
    tint: float = 1.0,
) -> None:
    """Draw one flat die of any :class:`Material` into ``img`` (in place)."""
    if material.kind == "solid":
        draw_die(img, pose, look, light, value, tint=tint)
        return
    win = _die_window(img, pose, look)
    if win is None:
        return
    x0, y0, x1, y1, hull = win
    sub = img[y0:y1, x0:x1]
    sp = _sub_pose(pose, x0, y0)
    a = sub.copy()
    draw_die(a, sp, look, light, value, tint=tint)
    h, w = sub.shape[:2]
    if material.kind == "marbled":
        b = sub.copy()
        draw_die(b, sp, dataclasses.replace(look, body=material.second), light, value, tint=tint)
        ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
        ang = rng.uniform(0, math.pi)
        warp = fbm(rng, h, w, (2, 5), (1.0, 0.5))
        phase = (xs * math.cos(ang) + ys * math.sin(ang)) / (pose.face_px * rng.uniform(0.2, 0.45))
        vein = np.sin(2 * math.pi * phase + rng.uniform(1.5, 3.0) * warp)
        m = np.clip(2.5 * (vein - rng.uniform(0.2, 0.6)), 0.0, 1.0)
        sub[:] = a * (1 - m[..., None]) + b * m[..., None]
        return
    # Translucent: the floor (blurred, tinted by the body) shows through the body
    # but not through the painted pips; the bottom face's pips show faintly.
    b = sub.copy()
    draw_die(b, sp, dataclasses.replace(look, pip=look.body), light, value, tint=tint)
    side = pose.face_px
    seen = cv2.GaussianBlur(sub, (0, 0), 0.05 * side + 0.5)
    seen = seen * (np.asarray(look.body, np.float32) * 0.8 + 0.35)[None, None, :]
    fx, fy, fside = sp.at(1.0)
    c, s = math.cos(math.radians(pose.angle_deg)), math.sin(math.radians(pose.angle_deg))
    back = np.zeros((h, w), np.float32)
    off = PIP_OFFSET * fside
    for pu, pv in PIP_LAYOUTS[7 - value]:
        u, v = -pu * off, pv * off  # seen from above, the bottom face is mirrored
        cv2.circle(
            back,
            (int(round((fx + u * c + v * s) * 4)), int(round((fy - u * s + v * c) * 4))),
            int(round(look.pip_radius * fside * 4)),
            1.0,
            -1,
            cv2.LINE_AA,
            2,
        )
    back = cv2.GaussianBlur(back, (0, 0), 0.04 * side + 0.6) * 0.35
    back = np.maximum(back, _side_pips_seen_through(h, w, sp, look, value, rng))
    pipc = np.asarray(look.pip, np.float32)
    seen = seen * (1 - back[..., None]) + pipc[None, None, :] * back[..., None]
    cov = np.zeros((h, w), np.float32)
    pts = np.round((hull - np.float32([x0, y0])) * 16).astype(np.int32)
    cv2.fillConvexPoly(cov, pts, 1.0, cv2.LINE_AA, 4)
    pip_gap = float(np.linalg.norm(np.asarray(look.pip) - np.asarray(look.body))) + 1e-3
    on_pip = np.clip(np.linalg.norm(a - b, axis=2) / (0.3 * pip_gap), 0.0, 1.0)
    t = material.clarity * (cov * (1 - on_pip))[..., None]
    sub[:] = a + t * (seen - b)


def _side_pips_seen_through(
    h: int, w: int, pose: DiePose, look: DieLook, value: int, rng: np.random.Generator
) -> np.ndarray:
    """Where a translucent die's side-face pips show through its top, float32 (h, w) in ``[0, 1]``.

    Seen from above, a pip painted on a side face lies on the die's outline;
    the body bends the light, so it shows a little inside the top face's edge,
    squeezed across the edge, the deeper the farther in (by a share of the side
    drawn per die). The smoky dice of the DEV photos (nell source: red pips on
    smoke) show such marks beside their top face's pips; the pip finder must
    leave them out and the face reader not count them.
    """
    layer = np.zeros((h, w), np.float32)
    fside = pose.face_px
    bend = float(rng.uniform(0.08, 0.3))  # inward shift per unit depth, in sides
    strength = float(rng.uniform(0.3, 1.0))
    c, s = math.cos(math.radians(pose.angle_deg)), math.sin(math.radians(pose.angle_deg))
    s_top = pose.s_top
    r = look.pip_radius * fside
    normals = ((1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0))  # +u, +v, -u, -v: _side_values' order
    for (nu, nv), face in zip(normals, _side_values(value)):
        tu, tv = -nv, nu
        for pu, pv in PIP_LAYOUTS[face]:
            depth = 0.5 + pv * PIP_OFFSET  # from the top edge, in sides
            cx, cy, side_s = pose.at(s_top - min(depth, 1.0) * (s_top - 1.0))
            edge = side_s / 2.0 - bend * depth * fside
            along = pu * PIP_OFFSET * side_s
            u, v = nu * edge + tu * along, nv * edge + tv * along
            x, y = cx + u * c + v * s, cy - u * s + v * c
            angle = math.degrees(math.atan2(-tu * s + tv * c, tu * c + tv * s))
            cv2.ellipse(
                layer,
                (int(round(x * 4)), int(round(y * 4))),
                (max(1, int(round(r * 4))), max(1, int(round(r * 4 * (0.3 + bend))))),
                angle,
                0,
                360,
                1.0,
                -1,
                cv2.LINE_AA,
                2,
            )
    return cv2.GaussianBlur(layer, (0, 0), 0.04 * fside + 0.6) * strength


def add_glare(
    img: np.ndarray, rng: np.random.Generator, spots_xy: list[tuple[float, float, float]], strength: float
) -> None:
    """Specular glare (in place): one broad lamp reflection plus small hot spots.

    ``spots_xy`` lists ``(x, y, face_px)`` of top faces; each gets a glare spot
    near its centre with probability 0.7.
    """
    H, W = img.shape[:2]
    ys, xs = np.mgrid[0:H, 0:W].astype(np.float32)
    gx, gy = rng.uniform(0.15, 0.85) * W, rng.uniform(0.15, 0.85) * H
    sig = rng.uniform(0.08, 0.22) * max(W, H)
    broad = np.exp(-((xs - gx) ** 2 + (ys - gy) ** 2 * rng.uniform(0.5, 2.0)) / (2 * sig * sig))
    glare = strength * rng.uniform(0.15, 0.4) * broad
    for x, y, face in spots_xy:
        if rng.random() > 0.7:
            continue
        sx = x + rng.uniform(-0.3, 0.3) * face
        sy = y + rng.uniform(-0.3, 0.3) * face
        a, b = rng.uniform(0.07, 0.2) * face, rng.uniform(0.05, 0.14) * face
        th = rng.uniform(0, math.pi)
        dx, dy = xs - sx, ys - sy
        u = dx * math.cos(th) + dy * math.sin(th)
        v = -dx * math.sin(th) + dy * math.cos(th)
        glare = glare + strength * rng.uniform(0.4, 1.2) * np.exp(-0.5 * ((u / a) ** 2 + (v / b) ** 2))
    img += glare[..., None].astype(np.float32)


def tilt_homography(rng: np.random.Generator, w: int, h: int, tilt_deg: float, hfov_deg: float = 62.0) -> np.ndarray:
    """3x3 homography of a camera turned `tilt_deg` off straight-down about a random axis.

    The centre of the view stays at the image centre, and the view is zoomed just
    enough that every output pixel sees the original picture (no empty corners).
    """
    f = (w / 2) / math.tan(math.radians(hfov_deg) / 2)
    K = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]], np.float64)
    phi = rng.uniform(0, 2 * math.pi)
    axis = np.array([math.cos(phi), math.sin(phi), 0.0]) * math.radians(tilt_deg)
    R, _ = cv2.Rodrigues(axis)
    H0 = K @ R @ np.linalg.inv(K)
    c = H0 @ np.array([w / 2, h / 2, 1.0])
    T = np.array([[1, 0, w / 2 - c[0] / c[2]], [0, 1, h / 2 - c[1] / c[2]], [0, 0, 1]], np.float64)
    H1 = T @ H0
    corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)

    def zoomed(z: float) -> np.ndarray:
        Z = np.array([[z, 0, w / 2 * (1 - z)], [0, z, h / 2 * (1 - z)], [0, 0, 1]], np.float64)
        return Z @ H1

    def covers(z: float) -> bool:
        inv = np.linalg.inv(zoomed(z))
        src = cv2.perspectiveTransform(corners.reshape(-1, 1, 2), inv).reshape(-1, 2)
        return bool(
            (src[:, 0] >= -0.5).all()
            and (src[:, 0] <= w + 0.5).all()
            and (src[:, 1] >= -0.5).all()
            and (src[:, 1] <= h + 0.5).all()
        )

    lo, hi = 0.5, 4.0
    if covers(lo):
        return zoomed(lo)
    for _ in range(30):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if covers(mid) else (mid, hi)
    return zoomed(hi)
