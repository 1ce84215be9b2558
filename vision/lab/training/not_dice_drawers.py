"""The drawers of :mod:`vision.lab.training.not_dice`: one upright object of each kind on a patch.

Each drawer paints an (L, L, 4) uint8 patch, colour and alpha (the object's mask), the object
centred, its box `side` px; :mod:`vision.lab.training.not_dice` turns, shades and pastes it.
The physical facts each keeps (why it is not a die face) are listed there.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.probe_crops import PIP_LAYOUTS

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


def draw_object(kind: str, rng: np.random.Generator, L: int, side: float, box: float) -> tuple[np.ndarray, float]:
    """The (L, L, 4) uint8 patch of one `kind` and the shift in px along its long side that puts its
    boxed part (a domino's half) at the patch centre; `side` is the object's side, `box` its box's."""
    if kind == "domino":
        return _domino(rng, L, side)
    if kind in ("button", "coin", "cap"):
        return _round(rng, L, box * rng.uniform(0.9, 1.0), kind), 0.0
    drawers = {"key": _key, "tile": _tile, "mahjong": _mahjong, "sugar": _sugar, "card": _card, "lego": _lego}
    return drawers[kind](rng, L, side), 0.0
