"""Things beside the dice that are not dice, drawn into a finished render.

A real table has more in view than dice and tray: the stand the tray sits on,
often with an LED strip lighting its edge (the Raspberry Pi camera photos of DEV,
``kingpi_*``, show one cut by the bottom of the picture), a phone or a box corner,
a pen, a coin. A die detector that never saw such things during training can box
them as dice. :func:`add_clutter` draws them reaching in from the picture's border
(or, for pens and coins, lying on the floor) clear of every die, so renders can
teach the detector what is *not* a die.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

#: The kinds of object :func:`add_clutter` draws: a dark bar with a lit edge (a stand
#: or LED bar), a dark block with a light rim (a phone, a box corner), a pen, a coin.
CLUTTER_KINDS: tuple[str, ...] = ("lit_bar", "dark_block", "pen", "coin")

_GLOW_COLOURS = ((0.55, 1.0, 0.85), (0.8, 0.95, 1.0), (1.0, 1.0, 1.0), (0.6, 0.85, 1.0), (1.0, 0.9, 0.7))


def add_clutter(
    image: np.ndarray, rng: np.random.Generator, keep_clear: list, *, count: int | None = None
) -> np.ndarray:
    """Draw 1-3 objects that are not dice on a copy of `image`, clear of the dice.

    Parameters
    ----------
    image : ndarray of shape (H, W, 3), dtype uint8
        A finished render, BGR.
    rng : numpy.random.Generator
        Source of every random choice (kinds, sizes, places, colours).
    keep_clear : list of (x, y, w, h)
        Die boxes in px: no object comes within a third of a box's side of one.
    count : int, optional
        Objects to try to draw (default 1-3 at random). An object that finds no
        clear place in 40 tries is left out.

    Returns
    -------
    ndarray of shape (H, W, 3), dtype uint8
        The picture with the objects, softened by a light blur and sensor noise
        where they were drawn, so they are as sharp as the rest of the render.

    Raises
    ------
    ValueError
        If `image` is not an (H, W, 3) uint8 array.
    """
    if not (isinstance(image, np.ndarray) and image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3):
        raise ValueError("image must be an (H, W, 3) uint8 BGR array")
    h, w = image.shape[:2]
    short = min(w, h)
    forbidden = np.zeros((h, w), bool)
    sides = []
    for x, y, bw, bh in keep_clear:
        pad = max(bw, bh) / 3
        x0, y0 = int(max(0, x - pad)), int(max(0, y - pad))
        x1, y1 = int(min(w, x + bw + pad + 1)), int(min(h, y + bh + pad + 1))
        forbidden[y0:y1, x0:x1] = True
        sides.append(max(bw, bh))
    die_side = float(np.median(sides)) if sides else 0.07 * short
    out = image.astype(np.float32) / 255.0
    drawn = np.zeros((h, w), np.float32)
    n = int(rng.integers(1, 4)) if count is None else int(count)
    for _ in range(n):
        kind = CLUTTER_KINDS[int(rng.choice(len(CLUTTER_KINDS), p=[0.4, 0.25, 0.15, 0.2]))]
        for _try in range(40):
            shape = _shape(kind, rng, w, h, short, die_side)
            mask = np.zeros((h, w), np.uint8)
            if kind == "coin":
                cx, cy, r = shape
                cv2.circle(mask, (int(cx), int(cy)), int(r), 255, -1, cv2.LINE_AA)
            else:
                cv2.fillPoly(mask, [np.round(shape).astype(np.int32)], 255, cv2.LINE_AA)
            alpha = mask.astype(np.float32) / 255.0
            if alpha.sum() > 4 and not (forbidden & (mask > 0)).any():
                break
        else:
            continue
        _paint(out, kind, shape, alpha, rng, die_side)
        drawn = np.maximum(drawn, alpha)
        forbidden |= mask > 0
    if drawn.any():
        soft = cv2.GaussianBlur(out, (0, 0), 0.6 * max(1.0, short / 480))
        noisy = soft + rng.normal(0.0, rng.uniform(0.005, 0.02), out.shape).astype(np.float32)
        region = cv2.dilate(drawn, np.ones((5, 5), np.uint8))[..., None]
        out = out * (1 - region) + noisy * region
    return np.clip(out * 255.0 + 0.5, 0, 255).astype(np.uint8)


def _shape(kind: str, rng: np.random.Generator, w: int, h: int, short: int, die_side: float):
    """A polygon (K, 2) float px, or ``(cx, cy, r)`` for a coin."""
    if kind == "coin":
        r = min(die_side * rng.uniform(0.35, 0.75), short / 4)
        return (rng.uniform(r, w - r), rng.uniform(r, h - r), r)
    if kind == "pen":
        length, thick = short * rng.uniform(0.25, 0.55), max(3.0, die_side * rng.uniform(0.15, 0.3))
        centre = (rng.uniform(0, w), rng.uniform(0, h))
        angle = rng.uniform(0, math.pi)
    else:
        if kind == "lit_bar":
            length, thick = short * rng.uniform(0.25, 0.7), die_side * rng.uniform(0.8, 2.5)
        else:
            length, thick = die_side * rng.uniform(2.0, 5.0), die_side * rng.uniform(1.5, 4.0)
        # reaching in from one border, roughly along it, partly cut by it
        edge = int(rng.integers(4))
        along = rng.uniform(0.05, 0.95)
        depth = thick * rng.uniform(0.0, 0.6)
        tilt = rng.uniform(-0.6, 0.6)
        if edge in (0, 1):  # top, bottom
            centre = (along * w, depth if edge == 0 else h - depth)
            angle = tilt
        else:  # left, right
            centre = (depth if edge == 2 else w - depth, along * h)
            angle = math.pi / 2 + tilt
    c, s = math.cos(angle), math.sin(angle)
    u = np.array([c, s]) * length / 2
    v = np.array([-s, c]) * thick / 2
    cx, cy = centre
    return np.array([[cx, cy] - u - v, [cx, cy] + u - v, [cx, cy] + u + v, [cx, cy] - u + v], np.float64)


def _paint(out: np.ndarray, kind: str, shape, alpha: np.ndarray, rng: np.random.Generator, die_side: float) -> None:
    """Blend one object into `out` ((H, W, 3) float32 in [0, 1]) in place."""
    h, w = alpha.shape
    if kind == "coin":
        gold = rng.random() < 0.4
        base = np.array((0.35, 0.6, 0.75) if gold else (0.68, 0.68, 0.66), np.float32) * rng.uniform(0.7, 1.1)
        cx, cy, r = shape
        ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
        rad = np.sqrt((xs - cx) ** 2 + (ys - cy) ** 2) / max(r, 1.0)
        shade = 1.0 - 0.25 * np.clip(rad, 0, 1) + 0.25 * ((rad > 0.8) & (rad < 0.92))
        colour = base[None, None, :] * shade[..., None]
    else:
        if kind == "pen":
            base = rng.uniform(0.05, 0.9, 3).astype(np.float32)
        else:
            base = np.full(3, rng.uniform(0.04, 0.22), np.float32) * rng.uniform(0.8, 1.2, 3).astype(np.float32)
        colour = np.broadcast_to(base, out.shape).copy()
        poly = np.round(shape).astype(np.int32)
        if kind in ("lit_bar", "dark_block"):
            # the edge facing into the picture: the longer side whose midpoint is nearer the centre
            mids = [(poly[i] + poly[(i + 1) % 4]) / 2 for i in range(4)]
            lengths = [np.hypot(*(poly[(i + 1) % 4] - poly[i])) for i in range(4)]
            longest = sorted(range(4), key=lambda i: -lengths[i])[:2]
            i = min(longest, key=lambda k: np.hypot(mids[k][0] - w / 2, mids[k][1] - h / 2))
            a, b = tuple(int(t) for t in poly[i]), tuple(int(t) for t in poly[(i + 1) % 4])
            line = np.zeros((h, w), np.uint8)
            width = max(1, int(round(die_side * (rng.uniform(0.08, 0.3) if kind == "lit_bar" else 0.05))))
            cv2.line(line, a, b, 255, width, cv2.LINE_AA)
            edge = line.astype(np.float32) / 255.0
            if kind == "lit_bar":
                glow = np.array(_GLOW_COLOURS[int(rng.integers(len(_GLOW_COLOURS)))], np.float32)
                halo = cv2.GaussianBlur(edge, (0, 0), max(1.0, die_side * rng.uniform(0.1, 0.35)))
                strength = rng.uniform(0.6, 1.0)
                colour = colour * (1 - edge[..., None]) + glow * edge[..., None] * strength
                out += (glow * halo[..., None] * strength * 0.8 * (1 - alpha[..., None])).astype(np.float32)
            else:
                rim = np.full(3, rng.uniform(0.3, 0.6), np.float32)
                colour = colour * (1 - edge[..., None]) + rim * edge[..., None]
    out *= 1 - alpha[..., None]
    out += colour.astype(np.float32) * alpha[..., None]
