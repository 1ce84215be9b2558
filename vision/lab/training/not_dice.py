"""Die-sized things that are not dice, drawn as class-0 ("not a readable face") context crops.

Keyboard keys, letter and mahjong tiles, dominoes, shirt buttons, coins, bottle caps, sugar
cubes, playing-card corners and LEGO bricks: objects a detector boxes as a die on a table
(issue #37 item 3). Drawn here from scratch, independently of the perturbation benchmark's
drawers (``vision/lab/perturb_compose.py``), so that training never sees the test's pictures.

What separates each from a die face, and so what the drawings keep (a physical fact each):

- key: legends are glyph strokes, arrows or dots of at most 5 % of the key side; a die pip is
  a disc of 7.5-11 % of the side. A keycap shows a bevel (skirt darker or lighter than its top).
- letter tile: one big glyph and a small number; mahjong tiles are 3:4 with ringed circles.
- domino: the box is drawn on one half or on the whole; the dividing line and the body running
  on past it are always inside the crop. A domino half cut off on its own is a die-like square
  with pips and is NOT drawn: nothing in that crop tells it from a die, so it stays a rule's job
  (``vision/reader_not_a_die.py``: the body runs on past the box).
- button, coin, bottle cap: round outlines; sugar cube: blank granular square; card: suit
  shapes (hearts, diamonds, spades, clubs) with a corner index, never discs; LEGO: studs in the
  body colour shaded as rings.

Crops are ``(size, size, 3)`` uint8 BGR context crops, the object's box being
``size / (CONTEXT_FACTOR * 1.3)`` px as in :func:`vision.lab.training.synth.draw_die`. Uses
only numpy and OpenCV.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.lab.training.data import CONTEXT_FACTOR, CONTEXT_SIZE

SS = 2  # supersampling of the drawing
KINDS: tuple[str, ...] = ("key", "tile", "mahjong", "domino", "button", "coin", "cap", "sugar", "card", "lego")
#: Share of each kind in :func:`not_dice_set` (keys, tiles and dominoes first: they are the look-alikes).
KIND_WEIGHTS: tuple[float, ...] = (0.26, 0.14, 0.06, 0.16, 0.07, 0.05, 0.04, 0.06, 0.08, 0.08)
_FONTS = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_COMPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
    cv2.FONT_HERSHEY_PLAIN,
    cv2.FONT_HERSHEY_COMPLEX_SMALL,
)
_GLYPHS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789#$%&*+-=?/<>"
_KEY_WORDS = ("Esc", "Tab", "Alt", "Fn", "Ctrl", "Del", "Ins", "F1", "F5", "F12", "Home", "End", "PgUp")


def _colour(rng: np.random.Generator, kind: str) -> np.ndarray:
    """A BGR float colour: light, dark, cream, wood or any."""
    if kind == "light":
        return np.full(3, rng.uniform(170, 250)) + rng.uniform(-12, 12, 3)
    if kind == "dark":
        return np.full(3, rng.uniform(10, 80)) + rng.uniform(-8, 8, 3)
    if kind == "cream":
        v = rng.uniform(180, 245)
        return np.array([v * rng.uniform(0.7, 0.85), v * rng.uniform(0.88, 0.97), v])
    if kind == "wood":
        v = rng.uniform(110, 200)
        return np.array([v * rng.uniform(0.45, 0.6), v * rng.uniform(0.7, 0.82), v])
    return rng.uniform(0, 255, 3)


def _contrast(body: np.ndarray, rng: np.random.Generator) -> tuple[float, float, float]:
    """A mark colour that stands out on `body` (dark on light bodies, light on dark ones)."""
    light = float(body @ np.array([0.114, 0.587, 0.299])) > 120
    v = rng.uniform(0, 60) if light else rng.uniform(190, 255)
    if rng.random() < 0.2:
        return tuple(float(c) for c in rng.uniform(0, 255, 3))
    return (v, v, v)


def _rect(canvas: np.ndarray, centre, w: float, h: float, angle: float, colour, radius: float = 0.0) -> np.ndarray:
    """Fill a rotated rounded rectangle on `canvas` (in place); returns its uint8 mask."""
    S = canvas.shape[0]
    yy, xx = np.mgrid[0:S, 0:S].astype(np.float32)
    c, s = np.cos(angle), np.sin(angle)
    u = (xx - centre[0]) * c + (yy - centre[1]) * s
    v = -(xx - centre[0]) * s + (yy - centre[1]) * c
    r = min(radius, w / 2, h / 2)
    du = np.maximum(np.abs(u) - (w / 2 - r), 0)
    dv = np.maximum(np.abs(v) - (h / 2 - r), 0)
    m = (du**2 + dv**2) <= max(r, 0.5) ** 2
    m &= (np.abs(u) <= w / 2) & (np.abs(v) <= h / 2)
    canvas[m] = colour
    return m.astype(np.uint8) * 255


def _to_canvas(local: np.ndarray, centre, angle: float, S: int) -> tuple[np.ndarray, np.ndarray]:
    """Warp an upright (L, L, 4) patch (colour, alpha) onto an S x S canvas, turned by `angle` about `centre`."""
    L = local.shape[0]
    M = cv2.getRotationMatrix2D((L / 2, L / 2), -np.degrees(angle), 1.0)
    M[:, 2] += np.asarray(centre, np.float64) - L / 2
    img = cv2.warpAffine(local[..., :3], M, (S, S), flags=cv2.INTER_LINEAR)
    alpha = cv2.warpAffine(local[..., 3], M, (S, S), flags=cv2.INTER_LINEAR)
    return img, alpha


def _text(patch: np.ndarray, text: str, centre, height: float, colour, rng: np.random.Generator) -> None:
    """Write `text` about `height` px tall, centred at `centre`, in a random Hershey font."""
    font = int(rng.choice(_FONTS))
    (tw, th), _ = cv2.getTextSize(text, font, 1.0, 1)
    scale = height / max(th, 1)
    thick = max(1, int(round(scale * rng.uniform(1.0, 2.2))))
    (tw, th), _ = cv2.getTextSize(text, font, scale, thick)
    org = (int(centre[0] - tw / 2), int(centre[1] + th / 2))
    cv2.putText(patch, text, org, font, scale, colour, thick, cv2.LINE_AA)


def _patch(L: int, body: np.ndarray) -> np.ndarray:
    """An empty (L, L, 4) uint8 patch (cv2.putText draws on 8-bit only): colour `body`, alpha 0."""
    p = np.zeros((L, L, 4), np.uint8)
    p[..., :3] = np.clip(body, 0, 255)
    return p


def _key(rng: np.random.Generator, L: int, side: float) -> np.ndarray:
    """A keycap: skirt, top face inset, 1-3 small legends (glyphs, words, arrows, a dot or bar)."""
    body = _colour(rng, str(rng.choice(["light", "dark", "any"], p=[0.45, 0.4, 0.15])))
    w = side * (rng.uniform(1.0, 1.6) if rng.random() < 0.25 else rng.uniform(0.95, 1.05))
    h = side
    p = _patch(L, body)
    c = (L / 2, L / 2)
    a = np.zeros((L, L, 3), np.float32)
    m = _rect(a, c, w, h, 0.0, (1, 1, 1), side * rng.uniform(0.05, 0.2))
    skirt = body * rng.uniform(0.6, 0.85) if rng.random() < 0.7 else np.minimum(body * 1.25 + 20, 255)
    p[m > 0, :3] = np.clip(skirt, 0, 255)
    inset = rng.uniform(0.08, 0.2) * side
    top = np.zeros((L, L, 3), np.float32)
    tm = _rect(
        top,
        (c[0] + rng.uniform(-0.03, 0.03) * side, c[1] - rng.uniform(0, 0.06) * side),
        w - 2 * inset,
        h - 2 * inset,
        0.0,
        (1, 1, 1),
        side * rng.uniform(0.03, 0.15),
    )
    p[tm > 0, :3] = np.clip(body, 0, 255)
    ink = _contrast(body, rng)
    tw, th = w - 2 * inset, h - 2 * inset
    spots = [(0, 0), (-0.28, -0.28), (0.28, 0.28), (-0.28, 0.28), (0.28, -0.28), (0, -0.28), (0, 0.28)]
    n = int(rng.choice([1, 2, 3], p=[0.5, 0.35, 0.15]))
    order = rng.permutation(len(spots))[:n] if n > 1 or rng.random() < 0.5 else [int(rng.integers(1, len(spots)))]
    for k in order:
        x, y = c[0] + spots[k][0] * tw, c[1] + spots[k][1] * th
        r = rng.random()
        if r < 0.55:
            _text(p, str(rng.choice(list(_GLYPHS))), (x, y), side * rng.uniform(0.12, 0.3), ink, rng)
        elif r < 0.7:
            _text(p, str(rng.choice(_KEY_WORDS)), (x, y), side * rng.uniform(0.1, 0.16), ink, rng)
        elif r < 0.85:
            ang = rng.choice([0, np.pi / 2, np.pi, 3 * np.pi / 2])
            d = side * rng.uniform(0.1, 0.18) * np.array([np.cos(ang), np.sin(ang)])
            cv2.arrowedLine(
                p,
                (int(x - d[0]), int(y - d[1])),
                (int(x + d[0]), int(y + d[1])),
                ink,
                max(1, int(side * 0.03)),
                cv2.LINE_AA,
                tipLength=0.4,
            )
        elif r < 0.93:  # a locating dot or bar (F, J, 5 keys): at most 5 % of the side
            if rng.random() < 0.5:
                cv2.circle(p, (int(x), int(y)), max(1, int(side * rng.uniform(0.02, 0.05))), ink, -1, cv2.LINE_AA)
            else:
                cv2.line(
                    p,
                    (int(x - side * 0.08), int(y)),
                    (int(x + side * 0.08), int(y)),
                    ink,
                    max(1, int(side * 0.03)),
                    cv2.LINE_AA,
                )
        else:
            _text(p, str(rng.choice(list("!@^()[]{};:'\",.~|"))), (x, y), side * rng.uniform(0.15, 0.3), ink, rng)
    p[..., 3] = m
    return p


def _tile(rng: np.random.Generator, L: int, side: float) -> np.ndarray:
    """A letter tile: cream, wood or plastic square, one big letter and a small number."""
    body = _colour(rng, str(rng.choice(["cream", "wood", "any", "light"])))
    p = _patch(L, body)
    c = (L / 2, L / 2)
    a = np.zeros((L, L, 3), np.float32)
    mask = _rect(a, c, side, side, 0.0, (1, 1, 1), side * rng.uniform(0.02, 0.15))
    ink = _contrast(body, rng)
    dx = rng.uniform(-0.06, 0.0) * side
    _text(p, str(rng.choice(list(_GLYPHS[:26]))), (c[0] + dx, c[1]), side * rng.uniform(0.4, 0.6), ink, rng)
    if rng.random() < 0.75:
        _text(p, str(int(rng.integers(1, 11))), (c[0] + 0.32 * side, c[1] + 0.32 * side), side * 0.13, ink, rng)
    p[..., 3] = mask
    return p


def _mahjong(rng: np.random.Generator, L: int, side: float) -> np.ndarray:
    """A mahjong-like tile, 3:4, ivory face: ringed circles in a column grid, bamboo bars or a big glyph."""
    body = _colour(rng, "cream")
    p = _patch(L, body)
    c = (L / 2, L / 2)
    w, h = side * 0.75, side
    a = np.zeros((L, L, 3), np.float32)
    mask = _rect(a, c, w, h, 0.0, (1, 1, 1), side * 0.08)
    r = rng.random()
    cols = [(30.0, 120.0, 30.0), (40.0, 40.0, 180.0), (140.0, 60.0, 20.0)]
    if r < 0.45:
        n = int(rng.integers(1, 10))
        rows = int(np.ceil(n / 3)) if n > 4 else (1 if n < 3 else 2)
        per = int(np.ceil(n / rows))
        rad = min(w / (2.3 * per), h / (2.3 * rows))
        k = 0
        for i in range(rows):
            for j in range(per):
                if k >= n:
                    break
                x = c[0] + (j - (per - 1) / 2) * w / per
                y = c[1] + (i - (rows - 1) / 2) * h / rows
                col = cols[int(rng.integers(3))]
                cv2.circle(p, (int(x), int(y)), int(rad), col, max(1, int(rad * 0.25)), cv2.LINE_AA)
                cv2.circle(p, (int(x), int(y)), max(1, int(rad * 0.35)), col, -1, cv2.LINE_AA)
                k += 1
    elif r < 0.7:
        for j in range(int(rng.integers(2, 5))):
            x = c[0] + (j - 1.5) * w * 0.2
            cv2.line(
                p,
                (int(x), int(c[1] - h * 0.3)),
                (int(x), int(c[1] + h * 0.3)),
                cols[0],
                max(1, int(w * 0.07)),
                cv2.LINE_AA,
            )
    else:
        _text(p, str(rng.choice(list("#%&*+=?WXZ"))), c, h * 0.5, cols[int(rng.integers(3))], rng)
    p[..., 3] = mask
    return p


def _domino(rng: np.random.Generator, L: int, side: float) -> tuple[np.ndarray, float]:
    """A domino (2:1, dividing line, 0-6 pips a half). Returns the patch and the centre's shift along
    its long side (the box is on one half, or on the whole domino scaled to the box)."""
    body = _colour(rng, str(rng.choice(["light", "cream", "dark", "any"], p=[0.4, 0.25, 0.25, 0.1])))
    whole = rng.random() < 0.3
    half = side * (0.5 if whole else rng.uniform(0.9, 1.0))
    p = _patch(L, body)
    c = (L / 2, L / 2)
    a = np.zeros((L, L, 3), np.float32)
    mask = _rect(a, c, 2 * half, half, 0.0, (1, 1, 1), half * rng.uniform(0.05, 0.15))
    ink = _contrast(body, rng)
    lw = max(1, int(half * rng.uniform(0.03, 0.06)))
    inset = half * rng.uniform(0.0, 0.12)
    cv2.line(
        p, (int(c[0]), int(c[1] - half / 2 + inset)), (int(c[0]), int(c[1] + half / 2 - inset)), ink, lw, cv2.LINE_AA
    )
    from vision.probe_crops import PIP_LAYOUTS

    for sign in (-1, 1):
        v = int(rng.integers(0, 7))
        for px, py in PIP_LAYOUTS.get(v, ()):
            x = c[0] + sign * half / 2 + px * half * 0.27
            y = c[1] + py * half * 0.27
            cv2.circle(p, (int(x), int(y)), max(1, int(half * rng.uniform(0.07, 0.1))), ink, -1, cv2.LINE_AA)
    shift = 0.0 if whole else float(rng.choice([-1, 1]) * half / 2 * rng.uniform(0.6, 1.0))
    p[..., 3] = mask
    return p, shift


def _round(rng: np.random.Generator, L: int, side: float, kind: str) -> np.ndarray:
    """Button (2 or 4 holes, rim), coin (rim, embossed glyphs) or bottle cap (ridged edge, logo)."""
    body = _colour(rng, "any") if kind != "coin" else np.array([60, 140, 190.0]) * rng.uniform(0.6, 1.2)
    p = _patch(L, body)
    c = (int(L / 2), int(L / 2))
    R = side / 2
    alpha = np.zeros((L, L), np.float32)
    if kind == "cap":
        pts = [
            (
                c[0] + R * (1 - 0.05 * (k % 2)) * np.cos(k * np.pi / 21),
                c[1] + R * (1 - 0.05 * (k % 2)) * np.sin(k * np.pi / 21),
            )
            for k in range(42)
        ]
        cv2.fillPoly(alpha, [np.array(pts, np.int32)], 1.0)
    else:
        cv2.circle(alpha, c, int(R), 1.0, -1, cv2.LINE_AA)
    dark = np.clip(body * 0.7, 0, 255)
    cv2.circle(p, c, int(R * rng.uniform(0.78, 0.9)), tuple(float(v) for v in dark), max(1, int(R * 0.06)), cv2.LINE_AA)
    if kind == "button":
        n = int(rng.choice([2, 4]))
        d = R * rng.uniform(0.18, 0.3)
        for k in range(n):
            ang = k * 2 * np.pi / n + np.pi / 4
            cv2.circle(
                p,
                (int(c[0] + d * np.cos(ang)), int(c[1] + d * np.sin(ang))),
                max(1, int(R * 0.12)),
                (20.0, 20.0, 20.0),
                -1,
                cv2.LINE_AA,
            )
    else:
        _text(p, str(rng.choice(list(_GLYPHS))), c, R * 0.6, tuple(float(v) for v in dark), rng)
    p[..., 3] = alpha * 255
    return p


def _sugar(rng: np.random.Generator, L: int, side: float) -> np.ndarray:
    """A sugar cube: white square, grainy, no marks."""
    p = _patch(L, _colour(rng, "light") + 10)
    a = np.zeros((L, L, 3), np.float32)
    mask = _rect(a, (L / 2, L / 2), side, side * rng.uniform(0.95, 1.05), 0.0, (1, 1, 1), side * 0.04)
    p[..., :3] = np.clip(p[..., :3] + rng.normal(0, rng.uniform(5, 20), (L, L, 1)), 0, 255)
    p[..., 3] = mask
    return p


def _suit(p: np.ndarray, kind: int, x: float, y: float, s: float, colour) -> None:
    """A card suit symbol about `s` px across: 0 diamond, 1 heart, 2 spade, 3 club."""
    if kind == 0:
        pts = np.array([(x, y - s / 2), (x + s * 0.35, y), (x, y + s / 2), (x - s * 0.35, y)], np.int32)
        cv2.fillPoly(p, [pts], colour, cv2.LINE_AA)
        return
    up = -1 if kind == 1 else 1  # a heart has its lobes up, a spade down (then a stem)
    r = int(s * 0.25)
    lobes = [(int(x - s * 0.22), int(y + up * s * 0.12)), (int(x + s * 0.22), int(y + up * s * 0.12))]
    if kind == 3:
        lobes.append((int(x), int(y - s * 0.25)))
    for lx, ly in lobes:
        cv2.circle(p, (lx, ly), r, colour, -1, cv2.LINE_AA)
    tip = np.array([(x - s * 0.46, y + up * s * 0.1), (x + s * 0.46, y + up * s * 0.1), (x, y - up * s * 0.5)])
    tip = tip.astype(np.int32)
    cv2.fillPoly(p, [tip], colour, cv2.LINE_AA)
    if kind >= 2:
        cv2.line(p, (int(x), int(y)), (int(x), int(y + s * 0.5)), colour, max(1, int(s * 0.12)), cv2.LINE_AA)


def _card(rng: np.random.Generator, L: int, side: float) -> np.ndarray:
    """A playing card's corner or a small card: white, suit shapes in columns, a corner index."""
    p = _patch(L, _colour(rng, "light") + 15)
    c = (L / 2, L / 2)
    w, h = side * 0.72, side
    a = np.zeros((L, L, 3), np.float32)
    mask = _rect(a, c, w, h, 0.0, (1, 1, 1), side * 0.06)
    suit = int(rng.integers(4))
    ink = (30.0, 30.0, 200.0) if suit < 2 else (20.0, 20.0, 20.0)
    n = int(rng.integers(1, 7))
    s = side * rng.uniform(0.14, 0.2)
    for k in range(n):
        col = 0 if n == 1 else (k % 2) * 2 - 1
        row = 0 if n <= 2 else (k // 2) - (int(np.ceil(n / 2)) - 1) / 2
        _suit(p, suit, c[0] + col * w * 0.22, c[1] + row * h * 0.3, s, ink)
    _text(p, str(rng.choice(list("A23456789JQK"))), (c[0] - w * 0.38, c[1] - h * 0.38), side * 0.1, ink, rng)
    p[..., 3] = mask
    return p


def _lego(rng: np.random.Generator, L: int, side: float) -> np.ndarray:
    """A LEGO brick seen from above: studs in the body colour, lit on one side and shaded on the other."""
    body = _colour(rng, "any")
    nx, ny = [(1, 1), (2, 2), (2, 3), (2, 4), (1, 2)][int(rng.integers(5))]
    pitch = side / max(nx, ny)
    p = _patch(L, body)
    c = (L / 2, L / 2)
    a = np.zeros((L, L, 3), np.float32)
    mask = _rect(a, c, pitch * nx, pitch * ny, 0.0, (1, 1, 1), pitch * 0.04)
    lit = tuple(float(v) for v in np.minimum(body * 1.3 + 25, 255))
    dark = tuple(float(v) for v in body * 0.6)
    for i in range(nx):
        for j in range(ny):
            x = c[0] + (i - (nx - 1) / 2) * pitch
            y = c[1] + (j - (ny - 1) / 2) * pitch
            r = int(pitch * 0.3)
            cv2.circle(p, (int(x + r * 0.12), int(y + r * 0.12)), r, dark, -1, cv2.LINE_AA)
            cv2.circle(p, (int(x - r * 0.08), int(y - r * 0.08)), r, lit, -1, cv2.LINE_AA)
            cv2.circle(p, (int(x), int(y)), int(r * 0.85), tuple(float(v) for v in body), -1, cv2.LINE_AA)
    p[..., 3] = mask
    return p


def _background(rng: np.random.Generator, S: int) -> np.ndarray:
    """A drawn table: flat colour, smooth texture and a lighting gradient; float (S, S, 3)."""
    img = np.empty((S, S, 3), np.float32)
    img[:] = rng.uniform(0, 255, 3) if rng.random() < 0.5 else np.full(3, rng.uniform(5, 90))
    tex = rng.normal(0, rng.uniform(0, 20), (6, 6)).astype(np.float32)
    tex = cv2.resize(tex, (S, S), interpolation=cv2.INTER_CUBIC)
    return img + tex[..., None]


def draw_not_die(
    kind: str, rng: np.random.Generator, *, size: int = CONTEXT_SIZE, background: np.ndarray | None = None
) -> np.ndarray:
    """One context crop of one `kind` (see :data:`KINDS`) centred in its die-sized box.

    Parameters
    ----------
    kind : str
        One of :data:`KINDS`.
    rng : numpy.random.Generator
        Source of every random choice.
    size : int, optional
        Side of the crop in px.
    background : ndarray of shape (H, W, 3), dtype uint8, optional
        What the object lies on (e.g. a TRAIN photo's background square), resized to `size`;
        a drawn table when None.

    Returns
    -------
    crop : ndarray of shape (size, size, 3), dtype uint8
        BGR context crop: the object's box is ``size / (CONTEXT_FACTOR * 1.3)`` px.
    """
    S = size * SS
    if background is None:
        img = _background(rng, S)
    else:
        img = cv2.resize(background, (S, S), interpolation=cv2.INTER_LINEAR).astype(np.float32)
    box = S / (CONTEXT_FACTOR * 1.3) * rng.uniform(0.85, 1.1)
    angle = rng.uniform(0, np.pi / 2) if rng.random() < 0.7 else rng.uniform(-0.1, 0.1)
    fit = abs(np.cos(angle)) + abs(np.sin(angle))  # a rotated square's box is this much wider
    side = box / fit
    L = int(S * 1.2)
    shift = 0.0
    if kind == "domino":
        patch, shift = _domino(rng, L, side)
    elif kind in ("button", "coin", "cap"):
        patch = _round(rng, L, box * rng.uniform(0.9, 1.0), kind)
    else:
        patch = {"key": _key, "tile": _tile, "mahjong": _mahjong, "sugar": _sugar, "card": _card, "lego": _lego}[kind](
            rng, L, side
        )
    patch = patch.astype(np.float32)
    # shade the top: a lighting gradient across the object
    g = rng.uniform(-0.2, 0.2, 2)
    yy, xx = np.mgrid[0:L, 0:L].astype(np.float32) / L - 0.5
    patch[..., :3] *= (1 + g[0] * xx + g[1] * yy)[..., None]
    centre = np.array([S / 2, S / 2]) + rng.uniform(-0.06, 0.06, 2) * box
    centre -= shift * np.array([np.cos(angle), np.sin(angle)])  # the boxed half (or whole) sits at the centre
    obj, alpha = _to_canvas(patch, centre, angle, S)
    a = (alpha / 255.0)[..., None]
    if rng.random() < 0.7:  # a soft shadow under the object
        sh = cv2.GaussianBlur(alpha, (0, 0), box * 0.06)
        sh = np.roll(sh, (int(rng.uniform(-0.1, 0.1) * box), int(rng.uniform(-0.1, 0.1) * box)), (0, 1)) / 255.0
        img *= 1 - rng.uniform(0.2, 0.5) * sh[..., None]
    img = img * (1 - a) + obj * a
    out = cv2.resize(np.clip(img, 0, 255), (size, size), interpolation=cv2.INTER_AREA)
    out += rng.normal(0, rng.uniform(0, 5), out.shape).astype(np.float32)
    return np.clip(out, 0, 255).astype(np.uint8)


def not_dice_set(
    n: int, seed: int, *, size: int = CONTEXT_SIZE, backgrounds: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`n` class-0 context crops of things that are not dice.

    Parameters
    ----------
    n : int
        Number of crops.
    seed : int
        Seed of the draw: one seed gives the same crops.
    size : int, optional
        Side of each crop in px.
    backgrounds : ndarray of shape (B, H, W, 3), dtype uint8, optional
        Backgrounds to paste on (TRAIN photos' background squares, never DEV); each crop takes
        one at random half the time, a drawn table otherwise. Drawn tables only when None.

    Returns
    -------
    crops : ndarray of shape (n, size, size, 3), dtype uint8
    labels : ndarray of shape (n,), dtype int64
        All 0 ("not a readable face").
    kinds : ndarray of shape (n,), dtype str
        The kind drawn in each crop (:data:`KINDS`).
    """
    rng = np.random.default_rng(seed)
    kinds = rng.choice(np.array(KINDS), size=n, p=np.array(KIND_WEIGHTS) / sum(KIND_WEIGHTS))
    crops = np.empty((n, size, size, 3), np.uint8)
    for i, k in enumerate(kinds):
        bg = None
        if backgrounds is not None and len(backgrounds) and rng.random() < 0.5:
            bg = backgrounds[int(rng.integers(len(backgrounds)))]
        crops[i] = draw_not_die(str(k), rng, size=size, background=bg)
    return crops, np.zeros(n, np.int64), kinds.astype(str)
