"""The audit's picture: counts per face as bars, the expected count as a line, and per face the
range a fair die's count falls in 95 % of the time; drawn with OpenCV (no plotting library)."""

from __future__ import annotations

import math

import cv2
import numpy as np

from table.audit.fairness import FairDice, band

#: Picture size, in pixels (width, height).
SIZE = (720, 440)
_FONT = cv2.FONT_HERSHEY_SIMPLEX
_INK = (40, 40, 40)
_BAR = (178, 120, 52)  # BGR: a calm blue
_HOT = (60, 60, 200)  # a bar outside its band: red
_BAND = (200, 225, 200)
_LINE = (40, 140, 40)


def _text(img: np.ndarray, text: str, xy: tuple[int, int], scale: float = 0.5, *, centre: bool = False) -> None:
    (w, _h), _ = cv2.getTextSize(text, _FONT, scale, 1)
    x = xy[0] - w // 2 if centre else xy[0]
    cv2.putText(img, text, (x, xy[1]), _FONT, scale, _INK, 1, cv2.LINE_AA)


def _y_label(img: np.ndarray, text: str, centre: tuple[int, int], scale: float = 0.45) -> None:
    """Write `text` turned a quarter left (read bottom to top), centred on `centre` (x, y): the y axis's name."""
    (w, h), base = cv2.getTextSize(text, _FONT, scale, 1)
    strip = np.full((h + base + 4, w + 4, 3), 255, np.uint8)
    cv2.putText(strip, text, (2, h + 2), _FONT, scale, _INK, 1, cv2.LINE_AA)
    turned = cv2.rotate(strip, cv2.ROTATE_90_COUNTERCLOCKWISE)
    th, tw = turned.shape[:2]
    x0, y0 = max(0, centre[0] - tw // 2), centre[1] - th // 2
    img[y0 : y0 + th, x0 : x0 + tw] = np.minimum(img[y0 : y0 + th, x0 : x0 + tw], turned)


def _nice_top(value: float) -> int:
    """A round axis top just above `value` (1, 2 or 5 times a power of ten steps)."""
    if value <= 0:
        return 10
    step = 10 ** math.floor(math.log10(value / 5))
    for k in (1, 2, 5, 10):
        if value / (k * step) <= 5:
            return int(math.ceil(value / (k * step)) * k * step)
    return int(math.ceil(value))


def draw(result: FairDice, *, title: str = "") -> np.ndarray:
    """The picture of `result`: (440, 720, 3) uint8 BGR.

    Title: `title` (or "Fair-dice audit"), then N and p; bars per face 1..6; the expected count
    N/6 as a green line; a light green band per face from :func:`~table.audit.fairness.band`; a bar
    outside its band is drawn red.
    """
    w, h = SIZE
    img = np.full((h, w, 3), 255, np.uint8)
    left, right, top, bottom = 70, w - 20, 70, h - 50
    n = result.n
    lo, hi = band(n)
    ymax = _nice_top(max([*result.counts, hi, 1]) * 1.05)

    def y(v: float) -> int:
        return int(round(bottom - (bottom - top) * v / ymax))

    p = "too few dice to test" if result.p is None else f"p = {result.p:.3g}"
    _text(img, title or "Fair-dice audit", (left, 28), 0.7)
    _text(img, f"{n} dice, chi-square {result.chi2:.2f} (df 5), {p}", (left, 55), 0.5)
    for k in range(6):  # gridlines and labels
        v = ymax * k / 5
        cv2.line(img, (left, y(v)), (right, y(v)), (230, 230, 230), 1)
        _text(img, f"{v:g}", (left - 10 - 9 * len(f"{v:g}"), y(v) + 5), 0.45)
    slot = (right - left) / 6
    for face in range(6):
        x0 = int(left + slot * face + slot * 0.2)
        x1 = int(left + slot * (face + 1) - slot * 0.2)
        cv2.rectangle(img, (x0 - 6, y(hi)), (x1 + 6, y(lo)), _BAND, -1)
        count = result.counts[face]
        colour = _HOT if n and not lo <= count <= hi else _BAR
        cv2.rectangle(img, (x0, y(count)), (x1, bottom), colour, -1)
        _text(img, str(face + 1), ((x0 + x1) // 2, bottom + 22), 0.6, centre=True)
    cv2.line(img, (left, y(n / 6)), (right, y(n / 6)), _LINE, 2, cv2.LINE_AA)
    for face in range(6):  # counts last, on white, so that the expected line never hides one
        cx, top_y = int(left + slot * (face + 0.5)), y(result.counts[face])
        label = str(result.counts[face])
        (tw, th), _ = cv2.getTextSize(label, _FONT, 0.45, 1)
        cv2.rectangle(img, (cx - tw // 2 - 3, top_y - th - 10), (cx + tw // 2 + 3, top_y - 3), (255, 255, 255), -1)
        _text(img, label, (cx, top_y - 6), 0.45, centre=True)
    cv2.line(img, (left, bottom), (right, bottom), _INK, 1)
    _text(img, "face", (right - 40, h - 10), 0.45)
    _y_label(img, "dice", (14, (top + bottom) // 2))
    _text(img, f"green line: expected {n / 6:.1f}; band: 95 % range per face", (left, h - 10), 0.45)
    return img


def save(result: FairDice, path: str, *, title: str = "") -> None:
    """Write the picture of `result` to `path` (PNG or JPEG by its suffix).

    Raises
    ------
    OSError
        If the file cannot be written (OpenCV says only "no"; the message names the path).
    """
    try:
        ok = cv2.imwrite(str(path), draw(result, title=title))
    except cv2.error:  # no writer for the file's suffix
        ok = False
    if not ok:
        raise OSError(f"could not write the plot to {str(path)!r}; check the folder exists and the name ends .png")
