"""Real DEV photos with things added (issue 37, item 6): touching dice, a white card with dice on it, clutter.

The edits of :mod:`vision.lab.perturb`'s kind (same arguments and result)
that put something into the photo: a die copied from the same photo and laid
against another at a 0 or 1 px gap, a white card with two of the photo's dice
on it, and die-sized things that are not dice (computer keys with one or two
marks, shirt buttons with two or four holes, dominoes, letter tiles, and
:func:`vision.render.add_clutter`'s stands, blocks, pens and coins).

A die is copied as its labelled box under a rounded-square mask (corner
radius :data:`PASTE_CORNER` of the side), so the background the box holds at
its corners mostly stays behind. An edit that finds no room in a photo
returns it with ``applied`` False, and the benchmark leaves it out.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.lab.perturb import Perturbed, Truth, free_spot, median_side
from vision.render import add_clutter

__all__ = ["COMPOSE_EDITS", "PASTE_CORNER", "paste_die"]

#: Corner radius of the mask a copied die is cut with, over its box's side:
#: DEV dice have rounded corners of about a fifth of their side.
PASTE_CORNER: float = 0.22

Box = tuple[int, int, int, int]


def _rounded_mask(w: int, h: int, radius: float) -> np.ndarray:
    """A float32 ``(h, w)`` mask of a rounded rectangle filling it, edges antialiased."""
    ss = 4
    m = np.zeros((h * ss, w * ss), np.uint8)
    r = max(1, int(radius * ss))
    cv2.rectangle(m, (r, 0), (w * ss - 1 - r, h * ss - 1), 255, -1)
    cv2.rectangle(m, (0, r), (w * ss - 1, h * ss - 1 - r), 255, -1)
    for cx, cy in ((r, r), (w * ss - 1 - r, r), (r, h * ss - 1 - r), (w * ss - 1 - r, h * ss - 1 - r)):
        cv2.circle(m, (cx, cy), r, 255, -1)
    return cv2.resize(m, (w, h), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0


def paste_die(out: np.ndarray, source: np.ndarray, box: Box, at: tuple[int, int]) -> Box:
    """Copy the die in `box` of `source` to `at` (x, y) in `out` (in place); its new ``(x, y, w, h)`` box.

    The box is cut with a rounded-square mask (:data:`PASTE_CORNER`); both
    arrays are BGR ``uint8``; the new box must lie inside `out`.
    """
    x, y, w, h = box
    ax, ay = at
    die = source[y : y + h, x : x + w].astype(np.float32)
    mask = _rounded_mask(w, h, PASTE_CORNER * max(w, h))[..., None]
    patch = out[ay : ay + h, ax : ax + w].astype(np.float32)
    out[ay : ay + h, ax : ax + w] = (patch * (1 - mask) + die * mask + 0.5).astype(np.uint8)
    return ax, ay, w, h


def _inside(box: Box, shape: tuple[int, int]) -> bool:
    x, y, w, h = box
    return x >= 0 and y >= 0 and x + w <= shape[1] and y + h <= shape[0]


def _clear_of(box: Box, others: list[Box], clear: float) -> bool:
    x, y, w, h = box
    return all(
        x + w + clear <= tx or tx + tw + clear <= x or y + h + clear <= ty or ty + th + clear <= y
        for tx, ty, tw, th in others
    )


def _touching(gap: int):
    """A die of the photo copied against another die, `gap` px between their boxes (0: touching)."""

    def edit(image, dice, rng):
        whole = [t for t in dice if t.box[2] >= 8 and t.box[3] >= 8]
        if len(whole) < 1:
            return Perturbed(image.copy(), tuple(dice), applied=False)
        shape = image.shape[:2]
        boxes = [t.box for t in dice]
        for _ in range(60):
            a = whole[int(rng.integers(len(whole)))]
            b = whole[int(rng.integers(len(whole)))]
            ax, ay, aw, ah = a.box
            bw, bh = b.box[2], b.box[3]
            side = int(rng.integers(4))
            slide = int(rng.integers(-max(1, ah // 4), max(1, ah // 4) + 1))
            at = (
                (ax + aw + gap, ay + (ah - bh) // 2 + slide),
                (ax - bw - gap, ay + (ah - bh) // 2 + slide),
                (ax + (aw - bw) // 2 + slide, ay + ah + gap),
                (ax + (aw - bw) // 2 + slide, ay - bh - gap),
            )[side]
            new = (at[0], at[1], bw, bh)
            if _inside(new, shape) and _clear_of(new, [o for o in boxes if o != a.box], 3.0):
                out = image.copy()
                paste_die(out, image, b.box, at)
                return Perturbed(out, (*dice, Truth(b.value, new)))
        return Perturbed(image.copy(), tuple(dice), applied=False)

    return edit


def _white_card(image, dice, rng):
    """A white card (paper, a playing card's back) in view with two of the photo's dice on it, a soft shadow below."""
    if not dice:
        return Perturbed(image.copy(), (), applied=False)
    side = median_side(dice, image)
    picks = [dice[int(i)] for i in rng.choice(len(dice), size=min(2, len(dice)), replace=False)]
    if len(picks) == 1:
        picks = picks * 2
    cw, ch = int(side * rng.uniform(2.9, 3.4)), int(side * rng.uniform(1.6, 2.0))
    spot = free_spot(image.shape[:2], [t.box for t in dice], (cw, ch), rng, 0.15 * side)
    if spot is None:
        return Perturbed(image.copy(), tuple(dice), applied=False)
    x, y, _, _ = spot
    out = image.astype(np.float32)
    shadow = np.zeros(image.shape[:2], np.float32)
    off = max(2, int(0.08 * side))
    cv2.rectangle(shadow, (x + off, y + off), (x + cw + off, y + ch + off), 1.0, -1)
    shadow = cv2.GaussianBlur(shadow, (0, 0), 0.1 * side)[..., None]
    out *= 1 - 0.35 * shadow
    white = np.array([rng.uniform(225, 245), rng.uniform(232, 248), rng.uniform(236, 252)], np.float32)
    ramp = np.linspace(rng.uniform(0.9, 1.0), 1.0, cw, dtype=np.float32)[None, :, None]
    out[y : y + ch, x : x + cw] = white * ramp
    out = np.clip(out + 0.5, 0, 255).astype(np.uint8)
    truths = list(dice)
    for k, t in enumerate(picks):
        bw, bh = t.box[2], t.box[3]
        cx = x + int(cw * (0.27 if k == 0 else 0.73))
        at = (cx - bw // 2, y + (ch - bh) // 2)
        if _inside((at[0], at[1], bw, bh), out.shape[:2]) and bw < cw // 2 and bh < ch:
            truths.append(Truth(t.value, paste_die(out, image, t.box, at)))
    return Perturbed(out, tuple(truths), applied=len(truths) > len(dice))


def _draw_key(img, box, rng):
    """A keyboard key: a keycap with a lighter top, one or two marks (a letter, a bar, a dot) in contrast."""
    x, y, w, h = box
    light = rng.random() < 0.6
    base = np.array(rng.uniform(185, 235, 3) if light else rng.uniform(25, 70, 3))
    cv2.rectangle(img, (x, y), (x + w, y + h), tuple(float(v) * 0.75 for v in base), -1, cv2.LINE_AA)
    inset = max(2, w // 8)
    cv2.rectangle(img, (x + inset, y + inset // 2), (x + w - inset, y + h - inset), tuple(map(float, base)), -1)
    ink = (30.0, 30.0, 30.0) if light else (235.0, 235.0, 235.0)
    marks = int(rng.integers(1, 3))
    for m in range(marks):
        kind = int(rng.integers(3))
        mx = x + inset + int((w - 2 * inset) * (0.35 if marks == 2 and m == 0 else 0.65 if marks == 2 else 0.5))
        my = y + h // 2
        if kind == 0:
            letter = "QWERTYASDFGHJKLZXCVBNM1234567890"[int(rng.integers(32))]
            scale = h / 60.0
            cv2.putText(img, letter, (mx - int(10 * scale), my + int(10 * scale)), 0, scale, ink, max(1, h // 25))
        elif kind == 1:
            cv2.line(img, (mx - w // 10, my), (mx + w // 10, my), ink, max(1, h // 20))
        else:
            cv2.circle(img, (mx, my), max(1, w // 14), ink, -1, cv2.LINE_AA)


def _draw_button(img, box, rng):
    """A shirt button: a disc of any colour with two or four dark holes near its centre."""
    x, y, w, h = box
    c = (x + w // 2, y + h // 2)
    colour = tuple(float(v) for v in rng.uniform(40, 240, 3))
    cv2.circle(img, c, w // 2, colour, -1, cv2.LINE_AA)
    cv2.circle(img, c, int(w * 0.38), tuple(v * 0.85 for v in colour), max(1, w // 20), cv2.LINE_AA)
    holes = ((-1, 0), (1, 0)) if rng.random() < 0.5 else ((-1, -1), (1, -1), (-1, 1), (1, 1))
    d = w * 0.13
    for hx, hy in holes:
        cv2.circle(img, (int(c[0] + hx * d), int(c[1] + hy * d)), max(1, int(w * 0.06)), (20, 20, 20), -1)


def _draw_domino(img, box, rng):
    """A domino: an ivory or black 2:1 tile, a bar across its middle, 0-3 pips each half."""
    x, y, w, h = box
    ivory = rng.random() < 0.6
    body = (220.0, 235.0, 240.0) if ivory else (25.0, 25.0, 25.0)
    ink = (25.0, 25.0, 25.0) if ivory else (235.0, 235.0, 235.0)
    long_w = w * 2 if rng.random() < 0.5 else w
    long_h = h if long_w > w else h * 2
    long_w, long_h = min(long_w, img.shape[1] - x - 1), min(long_h, img.shape[0] - y - 1)
    cv2.rectangle(img, (x, y), (x + long_w, y + long_h), body, -1, cv2.LINE_AA)
    halves = ((x, y, long_w // 2, long_h), (x + long_w // 2, y, long_w // 2, long_h))
    if long_h > long_w:
        halves = ((x, y, long_w, long_h // 2), (x, y + long_h // 2, long_w, long_h // 2))
        cv2.line(img, (x + 3, y + long_h // 2), (x + long_w - 3, y + long_h // 2), ink, max(1, w // 25))
    else:
        cv2.line(img, (x + long_w // 2, y + 3), (x + long_w // 2, y + long_h - 3), ink, max(1, w // 25))
    spots = {0: (), 1: ((0, 0),), 2: ((-1, -1), (1, 1)), 3: ((-1, -1), (0, 0), (1, 1))}
    for hx, hy, hw, hh in halves:
        for px, py in spots[int(rng.integers(4))]:
            centre = (int(hx + hw / 2 + px * hw * 0.27), int(hy + hh / 2 + py * hh * 0.27))
            cv2.circle(img, centre, max(1, int(min(hw, hh) * 0.09)), ink, -1, cv2.LINE_AA)


def _draw_tile(img, box, rng):
    """A letter tile: a cream square with a dark capital letter and a small number in its corner."""
    x, y, w, h = box
    cv2.rectangle(img, (x, y), (x + w, y + h), (170.0, 215.0, 235.0), -1, cv2.LINE_AA)
    letter = "ABCDEFGHIKLMNOPRSTUW"[int(rng.integers(20))]
    scale = h / 45.0
    cv2.putText(img, letter, (x + int(w * 0.25), y + int(h * 0.72)), 0, scale, (30, 30, 30), max(1, h // 18))
    cv2.putText(img, str(int(rng.integers(1, 10))), (x + int(w * 0.72), y + int(h * 0.9)), 0, scale / 3, (30, 30, 30))


_DRAWERS = (_draw_key, _draw_button, _draw_domino, _draw_tile)


def _clutter(image, dice, rng):
    """3-6 die-sized things that are not dice (keys, buttons, dominoes, tiles) and 1-2 of the renderer's objects."""
    out = image.copy()
    side = median_side(dice, image)
    taken = [t.box for t in dice]
    drawn = 0
    for _ in range(int(rng.integers(3, 7))):
        s = int(side * rng.uniform(0.9, 1.3))
        draw = _DRAWERS[int(rng.integers(len(_DRAWERS)))]
        need = (2 * s, 2 * s) if draw is _draw_domino else (s, s)  # a domino may lie either way
        spot = free_spot(out.shape[:2], taken, need, rng, 0.3 * side)
        if spot is None:
            continue
        draw(out, (spot[0], spot[1], s, s), rng)
        taken.append(spot)
        drawn += 1
    out = add_clutter(out, rng, taken, count=int(rng.integers(1, 3)))
    return Perturbed(out, tuple(dice), applied=drawn > 0)


#: The edits that add things, by name.
COMPOSE_EDITS = {
    "touching_0px": _touching(0),
    "touching_1px": _touching(1),
    "white_card": _white_card,
    "clutter": _clutter,
}
