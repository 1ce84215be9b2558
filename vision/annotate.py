"""Drawing what the reader found onto a photo (``dicetable read --annotate``).

Read dice get a green box with their value; unknown dice an orange box with
``?`` and the short form of the reason (:attr:`vision.reading.UnknownReason.short`:
``? unsure``, ``? cut``, ``? lean``...); in evaluation drawings, wrong values are red, missed dice magenta and
extra dice blue. Each die's top face is outlined in cyan where it could be
(:func:`vision.top_face.draw_top_face`). A label goes above its box, else below, left or right of it,
wherever it covers no other die's box nor label. Images are BGR ``uint8`` arrays; boxes ``(x, y, w, h)`` pixels.
"""

from __future__ import annotations

from collections.abc import Iterable

import cv2
import numpy as np

from vision.reading import ImageReading, short_reason
from vision.top_face import draw_top_face

__all__ = ["READ_COLOUR", "UNKNOWN_COLOUR", "MIN_DRAWING_PX", "annotate_reading", "annotate_outcomes"]

#: Box colour (BGR) of a die with a value.
READ_COLOUR: tuple[int, int, int] = (40, 200, 40)
#: Box colour (BGR) of a die left unknown.
UNKNOWN_COLOUR: tuple[int, int, int] = (0, 140, 255)

_OUTCOME_COLOURS = {
    "correct": READ_COLOUR,
    "wrong": (0, 0, 255),
    "unknown": UNKNOWN_COLOUR,
    "missed": (255, 0, 255),
    "extra": (255, 128, 0),
}


#: A die's value is written at OpenCV font scale (long side of the drawing) /
#: this, at least 0.5: about 22 px high on a 640 px photo, 45 px on a 1280 px
#: one. At / 1400 (before stop 15) a newcomer found the values of close-ups
#: legible only when zoomed in (about 10 px high on a 500 px drawing).
LABEL_SCALE_PX: float = 900.0


def _draw(image: np.ndarray, box, text: str, colour, avoid: list | None = None) -> None:
    """Draw `box` and its `text` label where the label covers none of the rectangles in `avoid`.

    `avoid`: ``(x0, y0, x1, y1)`` pixel rectangles (the other dice's boxes, labels already drawn); the
    label's own rectangle is appended to it.
    """
    x, y, w, h = (int(v) for v in box)
    thick = max(1, round(max(image.shape[:2]) / 500))
    scale = max(0.5, max(image.shape[:2]) / LABEL_SCALE_PX)
    cv2.rectangle(image, (x, y), (x + w, y + h), colour, thick)
    (tw, th), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)
    lx, ty = _label_spot((x, y, w, h), (tw, th, base, thick), image.shape, avoid or [])
    if avoid is not None:
        avoid.append((lx, ty - th - 2, lx + tw + 2, ty + base - 1))
    cv2.rectangle(image, (lx, ty - th - 2), (lx + tw + 2, ty + base - 1), colour, -1)
    cv2.putText(image, text, (lx + 1, ty - 1), cv2.FONT_HERSHEY_SIMPLEX, scale, (255, 255, 255), thick, cv2.LINE_AA)


def _label_spot(box, size, shape, avoid: list) -> tuple[int, int]:
    """Where a label goes: (left x, text baseline y), in px.

    Tried in turn: above the box, below it, left of it, right of it (each wholly in the picture); the first
    that overlaps no rectangle in `avoid` wins, else the one that overlaps least. Inside the box's top edge
    only when none of them fits the picture (a die filling it).
    """
    x, y, w, h = box
    tw, th, base, thick = size
    height, width = shape[:2]
    clamp = max(0, min(x, width - tw - 3))  # a box at the right edge keeps its label above/below in view
    tries = [
        (clamp, y - 3),  # above
        (clamp, y + h + th + 3),  # below
        (x - tw - 5, y + th + 2),  # left, level with the top edge
        (x + w + 3, y + th + 2),  # right
    ]
    best, best_cover = None, None
    for lx, ty in tries:
        x0, y0, x1, y1 = lx, ty - th - 2, lx + tw + 2, ty + base - 1
        if x0 < 0 or y0 + 2 < 0 or x1 > width or y1 > height:  # the fill's top 2 px may be cut, not the text
            continue
        cover = sum(max(0, min(x1, a1) - max(x0, a0)) * max(0, min(y1, b1) - max(y0, b0)) for a0, b0, a1, b1 in avoid)
        if best_cover is None or cover < best_cover:
            best, best_cover = (lx, ty), cover
        if cover == 0:
            break
    return best if best is not None else (clamp, y + th + thick + 3)


def _rects(boxes) -> list[tuple[int, int, int, int]]:
    """``(x, y, w, h)`` boxes as ``(x0, y0, x1, y1)`` int rectangles."""
    return [(int(x), int(y), int(x + w), int(y + h)) for x, y, w, h in boxes]


#: Photos with a long side under this many pixels are drawn enlarged (by a
#: whole factor) so that values and problems stay legible.
MIN_DRAWING_PX: int = 480


def annotate_reading(image_bgr: np.ndarray, reading: ImageReading) -> np.ndarray:
    """Return a drawing of `image_bgr` with each die's box and value (``?`` when unknown).

    Parameters
    ----------
    image_bgr : ndarray of shape (H, W, 3), dtype uint8
        The photo that was read. It is not modified.
    reading : ImageReading
        What the reader found in it.

    Returns
    -------
    ndarray of shape (B + k H, k W, 3), dtype uint8
        The photo with the boxes drawn, ``k`` times enlarged: ``k`` is 1, or
        the least whole factor that brings a photo smaller than
        :data:`MIN_DRAWING_PX` to that size. Its problems are written on a
        black band ``B`` px high above it, wrapped to its width, so that they
        never hide a die or its value; ``B`` is 0 when there are none.
    """
    k = max(1, -(-MIN_DRAWING_PX // max(image_bgr.shape[:2])))
    out = image_bgr.copy() if k == 1 else cv2.resize(image_bgr, None, fx=k, fy=k, interpolation=cv2.INTER_NEAREST)
    boxes = [tuple(v * k for v in d.box) for d in reading.dice]
    rects = _rects(boxes)
    labels: list = []  # the labels drawn so far: the next ones avoid them too
    for i, (d, box) in enumerate(zip(reading.dice, boxes)):
        draw_top_face(out, image_bgr, d.box, scale=k)  # the face that was read (vision.top_face)
        avoid = rects[:i] + rects[i + 1 :] + labels
        if d.value is None:
            _draw(out, box, f"? {short_reason(d.reason)}" if d.reason else "?", UNKNOWN_COLOUR, avoid)
        else:
            _draw(out, box, str(d.value), READ_COLOUR, avoid)
        labels = avoid[len(rects) - 1 :]
    scale = max(0.45, max(out.shape[:2]) / 1400)
    thick = max(1, round(scale * 1.5))
    lines = [line for problem in reading.problems for line in _wrapped(problem, out.shape[1] - 10, scale, thick)]
    if not lines:
        return out
    # the tallest line, the depth of a descender ("g") and 8 px between lines
    tallest = max(cv2.getTextSize(line, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)[0][1] for line in lines)
    line_px = tallest + cv2.getTextSize("g", cv2.FONT_HERSHEY_SIMPLEX, scale, thick)[1] + 8
    band = np.zeros((line_px * len(lines), out.shape[1], 3), np.uint8)
    for i, line in enumerate(lines):
        cv2.putText(
            band,
            line,
            (5, i * line_px + line_px - 8),
            cv2.FONT_HERSHEY_SIMPLEX,
            scale,
            (0, 220, 255),
            thick,
            cv2.LINE_AA,
        )
    return np.vstack([band, out])


def _wrapped(text: str, width: int, scale: float, thick: int) -> list[str]:
    """`text` split at spaces into lines at most `width` px wide (a longer word stays on its own line)."""
    lines: list[str] = []
    for word in text.split(" "):
        candidate = f"{lines[-1]} {word}" if lines else word
        if lines and cv2.getTextSize(candidate, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)[0][0] <= width:
            lines[-1] = candidate
        else:
            lines.append(word)
    return lines


def annotate_outcomes(image_bgr: np.ndarray, outcomes: Iterable) -> np.ndarray:
    """Return a copy of `image_bgr` with evaluation outcomes drawn (see :mod:`vision.lab.evaluate`).

    Each outcome's box is drawn in its kind's colour with ``truth>read`` text.
    """
    out = image_bgr.copy()
    outcomes = list(outcomes)
    rects = _rects(o.box for o in outcomes)
    labels: list = []
    for i, o in enumerate(outcomes):
        truth = "" if o.truth is None else str(o.truth)
        read = "?" if o.read is None else str(o.read)
        text = read if o.kind == "correct" else f"{truth or '-'}>{'x' if o.kind == 'missed' else read}"
        avoid = rects[:i] + rects[i + 1 :] + labels
        _draw(out, o.box, text, _OUTCOME_COLOURS.get(o.kind, (255, 255, 255)), avoid)
        labels = avoid[len(rects) - 1 :]
    return out
