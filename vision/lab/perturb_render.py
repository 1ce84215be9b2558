"""Renders for what no edit of a photo can make (issue 37, item 6): a cocked die and a stacked pair.

Each scene is a flat surface under a pinhole camera with four dice lying flat
and one more that must get no value: cocked 15-45 degrees (resting on an
edge against the wall of a tray or another die), or stacked on one of the
flat dice. Every die is a cube drawn face by face with its cast shadow by
:func:`vision.render._leaning.draw_leaning_die` (flat dice are cubes tilted 0
degrees, so their side faces show their own pips under the perspective).
The result is a :class:`vision.lab.perturb.Perturbed` whose cocked or stacked
dice are labelled :attr:`vision.render.Unreadable.LEANING` (any value given to
them is a silent error; :func:`vision.lab.stress.score_rendered`).
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from vision.lab.perturb import Perturbed, Truth
from vision.render import Unreadable
from vision.render._die import DieLook, Light
from vision.render._leaning import draw_leaning_die, leaning_outline, leaning_vertices

__all__ = ["render_special", "RENDER_EDITS"]

#: Looks of the rendered dice: (body, pip) BGR in 0-1.
_LOOKS = (
    ((0.93, 0.95, 0.96), (0.08, 0.08, 0.08)),  # ivory, black pips
    ((0.15, 0.15, 0.75), (0.95, 0.95, 0.95)),  # red, white pips
    ((0.55, 0.35, 0.1), (0.95, 0.95, 0.95)),  # blue, white pips
    ((0.12, 0.12, 0.12), (0.9, 0.9, 0.9)),  # black, white pips
    ((0.3, 0.65, 0.2), (0.95, 0.95, 0.95)),  # green, white pips
)
_SURFACES = ((0.25, 0.45, 0.2), (0.12, 0.12, 0.13), (0.5, 0.5, 0.52), (0.35, 0.5, 0.65))


def _box(outline: np.ndarray, w: int, h: int) -> tuple[int, int, int, int]:
    x0, y0 = np.clip(outline.min(axis=0), 0, [w, h])
    x1, y1 = np.clip(outline.max(axis=0), 0, [w, h])
    return int(x0), int(y0), int(math.ceil(x1 - x0)), int(math.ceil(y1 - y0))


def render_special(kind: str, seed: int, size: tuple[int, int] = (640, 480)) -> Perturbed:
    """A scene of four flat dice and one `kind` (``"cocked"`` or ``"stacked"``) die.

    Parameters
    ----------
    kind : str
        ``"cocked"``: a die resting on an edge, tilted 15-45 degrees;
        ``"stacked"``: a die lying on top of a flat one (both labelled unreadable).
    seed : int
        Seed of every choice (values, places, colours, light).
    size : (W, H)
        Picture size, px.

    Returns
    -------
    Perturbed

    Raises
    ------
    ValueError
        If `kind` is not one of the two.
    """
    if kind not in ("cocked", "stacked"):
        raise ValueError(f"unknown render {kind!r}; use cocked or stacked")
    rng = np.random.default_rng(seed)
    w, h = size
    side = float(rng.uniform(42, 58))
    cam_h = side / 0.08  # die height over camera height as in the tray renders (about 0.08)
    origin = (w / 2 + rng.uniform(-60, 60), h / 2 + rng.uniform(-40, 40))
    tint = np.asarray(_SURFACES[int(rng.integers(len(_SURFACES)))], np.float32)
    img = np.ones((h, w, 3), np.float32) * tint
    img += rng.normal(0, 0.02, img.shape).astype(np.float32)
    d = np.array([rng.uniform(-0.5, 0.5), rng.uniform(-0.5, 0.5), 1.0])
    light = Light(tuple(float(v) for v in d / np.linalg.norm(d)), ambient=float(rng.uniform(0.4, 0.6)))
    body, pip = _LOOKS[int(rng.integers(len(_LOOKS)))]
    look = DieLook(body, pip, gloss=float(rng.uniform(0.1, 0.3)))
    bases: list[tuple[float, float]] = []
    for _ in range(400):
        if len(bases) == 5:
            break
        b = (float(rng.uniform(1.5 * side, w - 1.5 * side)), float(rng.uniform(1.5 * side, h - 1.5 * side)))
        if all(math.hypot(b[0] - o[0], b[1] - o[1]) > 2.2 * side for o in bases):
            bases.append(b)
    truths: list[Truth] = []
    values = [int(v) for v in rng.integers(1, 7, 6)]
    for k, base in enumerate(bases[:4]):
        verts = leaning_vertices(base, side, float(rng.uniform(0, 360)), 0.0)
        verts[:, 0] -= side / 2  # leaning_vertices puts the pivot edge at the base; centre the flat cube on it
        draw_leaning_die(img, verts, look, light, values[k], origin, cam_h, 0.5)
        truth = Truth(values[k], _box(leaning_outline(verts, origin, cam_h), w, h))
        if kind == "stacked" and k == 0:
            top = leaning_vertices(base, side, float(rng.uniform(0, 360)), float(rng.uniform(0, 8)))
            top[:, 0] -= side / 2
            top[:, 2] += side
            draw_leaning_die(img, top, look, light, values[5], origin, cam_h, 0.5)
            top_box = _box(leaning_outline(top, origin, cam_h), w, h)
            truths.append(Truth(values[k], truth.box, Unreadable.LEANING))
            truths.append(Truth(values[5], top_box, Unreadable.LEANING))
            continue
        truths.append(truth)
    if kind == "cocked" and len(bases) == 5:
        tilt = float(rng.uniform(15, 45))
        verts = leaning_vertices(bases[4], side, float(rng.uniform(0, 360)), tilt)
        draw_leaning_die(img, verts, look, light, values[4], origin, cam_h, 0.5)
        truths.append(Truth(values[4], _box(leaning_outline(verts, origin, cam_h), w, h), Unreadable.LEANING))
    img = cv2.GaussianBlur(img, (0, 0), float(rng.uniform(0.5, 1.0)))
    out = np.clip(img * 255 + 0.5, 0, 255).astype(np.uint8)
    return Perturbed(out, tuple(truths), applied=len(bases) == 5)


#: The rendered conditions by name: ``edit(seed) -> Perturbed``.
RENDER_EDITS = {
    "cocked_15_45": lambda seed: render_special("cocked", seed),
    "stacked": lambda seed: render_special("stacked", seed),
}
