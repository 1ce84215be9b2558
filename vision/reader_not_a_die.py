"""Dice that are dice: a die-sized thing whose body is not a die's is left out of the reading.

A die's body is a (rounded) square of one colour whose edges end at its box.
Two die-sized things are boxed and read as dice with both networks agreeing
(issue 37, item 3), and their bodies tell them apart:

* a **round body** (a shirt button with two or four holes, a coin): the
  object's outline, cut from the floor around the box, is an ellipse
  (:func:`round_body`: its filled outline and the ellipse fitted to it overlap
  by at least :data:`ROUND_IOU`); a die's rounded square, even seen at an angle,
  is not;
* a **body that runs on past one side of the box** (a domino, whose half is
  boxed and read): the strip just outside one side of the box is the body's
  colour, the strips beyond the other three are not, and the body stands out
  from the floor (:func:`body_runs_on`).

Measured (2026-12-03) on every die given a value: the 903 right DEV dice and
the 233 right dice of ``benchmarks/perturbations.py --quick``'s clutter
pictures have an outline-ellipse overlap of at most 0.936 (the buttons and
coins given values: 0.98-1.00), and none has a one-sided body strip (19 of the
50 things given a value in those pictures do: domino halves). Keys with a
dot or a letter are square like dice and are not told apart by these rules.

Conventions: images are BGR ``uint8`` arrays indexed ``(row, col)``; boxes are
``(x, y, w, h)`` in pixels, ``x`` right, ``y`` down.
"""

from __future__ import annotations

import cv2
import numpy as np

__all__ = [
    "ROUND_IOU",
    "RUN_ON_SHARE",
    "OTHER_SIDES_SHARE",
    "MIN_RUN_ON_CONTRAST",
    "body_not_a_die",
    "round_body",
    "body_runs_on",
]

#: Least overlap (intersection over union) of the object's filled outline with
#: its fitted ellipse for a round body: DEV dice 0.94 at most, buttons and coins 0.98 and more.
ROUND_IOU: float = 0.96
#: Width of the window around the box the object is cut from, and depth of the
#: side strips, as shares of the box's long side.
WINDOW_SHARE: float = 0.3
STRIP_SHARE: float = 0.25
#: A body runs on past a side when at least this share of the strip beyond it
#: (the side's middle three fifths) is the body's colour ...
RUN_ON_SHARE: float = 0.8
#: ... and at most this share of each other side's strip is.
OTHER_SIDES_SHARE: float = 0.3
#: Least Lab distance between the body and the floor for the run-on test (a
#: body the floor's colour runs on everywhere: white dice on a white board).
MIN_RUN_ON_CONTRAST: float = 30.0
#: A pixel is the object's (not the floor's) when it is this far from the
#: floor's colour, or this share of the body-floor distance if that is more.
_OBJECT_DISTANCE: float = 12.0
_OBJECT_SHARE: float = 0.4
#: A strip pixel is the body's colour when it is this close to it, or this
#: share of the body-floor distance if that is more.
_BODY_DISTANCE: float = 10.0
_BODY_SHARE: float = 0.3


def body_not_a_die(image: np.ndarray, box: tuple[int, int, int, int]) -> bool:
    """Whether the thing in `box` has a body no die has: round (:func:`round_body`) or running on past its box
    (:func:`body_runs_on`)."""
    window = _window(image, box)
    return window is not None and (_round(*window) or _runs_on(*window))


def round_body(image: np.ndarray, box: tuple[int, int, int, int]) -> bool:
    """Whether the object in `box` is round: its outline is an ellipse (a button, a coin), not a die's square.

    The object is every pixel of the window around the box (:data:`WINDOW_SHARE`)
    whose colour is off the floor's (the median of the window outside the box);
    its largest outline, filled, must overlap the ellipse fitted to it by
    :data:`ROUND_IOU` or more.
    """
    window = _window(image, box)
    return window is not None and _round(*window)


def body_runs_on(image: np.ndarray, box: tuple[int, int, int, int]) -> bool:
    """Whether the body in `box` runs on past exactly one side of the box, as a domino's does past its boxed half.

    See :data:`RUN_ON_SHARE`, :data:`OTHER_SIDES_SHARE`, :data:`MIN_RUN_ON_CONTRAST`.
    """
    window = _window(image, box)
    return window is not None and _runs_on(*window)


def _window(image: np.ndarray, box):
    """(window Lab float32 (h, w, 3), box in the window (x, y, w, h), floor Lab (3,), body Lab (3,)) or None."""
    x, y, w, h = (int(v) for v in box)
    height, width = image.shape[:2]
    if w < 4 or h < 4:
        return None
    m = int(WINDOW_SHARE * max(w, h))
    x0, y0, x1, y1 = max(0, x - m), max(0, y - m), min(width, x + w + m), min(height, y + h + m)
    lab = cv2.cvtColor(np.ascontiguousarray(image[y0:y1, x0:x1]), cv2.COLOR_BGR2LAB).astype(np.float32)
    bx, by = x - x0, y - y0
    ring = np.ones(lab.shape[:2], bool)
    ring[max(0, by) : by + h, max(0, bx) : bx + w] = False
    middle = lab[max(0, by + h // 5) : by + h - h // 5, max(0, bx + w // 5) : bx + w - w // 5].reshape(-1, 3)
    if not ring.any() or not len(middle):
        return None  # a box filling the picture: no floor to tell the body from
    return lab, (bx, by, w, h), np.median(lab[ring], axis=0), np.median(middle, axis=0)


def _round(lab: np.ndarray, box, floor: np.ndarray, body: np.ndarray) -> bool:
    contrast = float(np.linalg.norm(body - floor))
    off_floor = np.linalg.norm(lab - floor, axis=2) > max(_OBJECT_DISTANCE, _OBJECT_SHARE * contrast)
    outlines, _ = cv2.findContours(off_floor.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not outlines:
        return False
    outline = max(outlines, key=cv2.contourArea)
    if len(outline) < 5 or cv2.contourArea(outline) < 0.25 * box[2] * box[3]:
        return False
    shape = np.zeros(off_floor.shape, np.uint8)
    cv2.drawContours(shape, [outline], -1, 1, -1)
    ellipse = np.zeros(off_floor.shape, np.uint8)
    cv2.ellipse(ellipse, cv2.fitEllipse(outline), 1, -1)
    union = int((shape | ellipse).sum())
    return union > 0 and (shape & ellipse).sum() / union >= ROUND_IOU


def _runs_on(lab: np.ndarray, box, floor: np.ndarray, body: np.ndarray) -> bool:
    contrast = float(np.linalg.norm(body - floor))
    if contrast < MIN_RUN_ON_CONTRAST:
        return False
    bx, by, w, h = box
    depth = max(2, int(STRIP_SHARE * max(w, h)))
    xs, ys = slice(max(0, bx + w // 5), bx + w - w // 5), slice(max(0, by + h // 5), by + h - h // 5)
    strips = (
        lab[max(0, by - depth) : max(0, by), xs],  # above
        lab[by + h : by + h + depth, xs],  # below
        lab[ys, max(0, bx - depth) : max(0, bx)],  # left
        lab[ys, bx + w : bx + w + depth],  # right
    )
    near = max(_BODY_DISTANCE, _BODY_SHARE * contrast)
    shares = sorted(
        float((np.linalg.norm(s.reshape(-1, 3) - body, axis=1) < near).mean()) if s.size else 0.0 for s in strips
    )
    return shares[-1] >= RUN_ON_SHARE and shares[-2] <= OTHER_SIDES_SHARE
