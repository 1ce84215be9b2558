"""Dice that are dice: a die-sized thing whose body is not a die's is left out of the reading.

A die's body is a (rounded) square of one colour whose edges end at its box.
Die-sized things that are not dice are boxed and read with both networks
agreeing (issue 37, item 3); their bodies tell three kinds apart
(:func:`body_not_a_die`):

* a **round body** (a shirt button with two or four holes, a coin): the
  object's outline, cut as what is off the floor's colour (and mostly the
  body's) or as what is the body's colour, is an ellipse (:func:`round_body`:
  the filled outline and its fitted ellipse overlap by :data:`ROUND_IOU`); a
  die's rounded square, even turned or seen at an angle, is not. A body of the
  floor's hue, darker, is not judged: it may be a round shadow over a die;
* a **body that runs on past the box** (a domino, whose half is boxed and
  read): the strip just beyond a side of the box is the body's colour, the
  patches past that strip's ends and the strip beyond another side are not,
  and the body fills the box's middle (:func:`body_runs_on`);
* **light specks on the bare floor** (dust or lint on dark cloth, read as a
  1, 2 or 3): the box's middle is the floor's colour, and what stands out of
  it is lighter than the floor and covers little of it (:func:`light_specks`).
  A die whose body is the floor's colour shows dark pips (a white die on a
  white board) or its outline (a black die on black cloth: its lit edges).

Measured (2026-12-03) on every die given a value in DEV (903 right), under
``dust_ev_plus1`` (823 right) and among ``--quick`` clutter (232 right): none
is left out; 37 of the 50 things given a value among clutter and 16 of the 19
in the full dust run are. A die touching a die of its own colour edge to edge
looks like a domino half (7 right dice of the full perturbation suite missed).
Keys with a dot or a legend are square like dice and are not told apart.
Numbers: ``docs/perturbations.md``, ``docs/reader.md``.

Conventions: images are BGR ``uint8`` arrays indexed ``(row, col)``; boxes are
``(x, y, w, h)`` in pixels, ``x`` right, ``y`` down.
"""

from __future__ import annotations

from typing import NamedTuple

import cv2
import numpy as np

from vision.fast_stats import channel_medians_u8, colour_distance_u8, share_set

__all__ = [
    "ROUND_IOU",
    "RUN_ON_SHARE",
    "OTHER_SIDES_SHARE",
    "MIN_RUN_ON_CONTRAST",
    "body_not_a_die",
    "round_body",
    "body_runs_on",
    "light_specks",
]

#: Least overlap (intersection over union) of the object's filled outline with
#: its fitted ellipse for a round body: DEV dice 0.94 at most, buttons and coins 0.98 and more.
ROUND_IOU: float = 0.96
#: The window is brought down so that the box's long side is at most this many px: a big die costs no more than
#: a small one (the rules' calls on every DEV die were unchanged; at 32 px two specks' light was averaged away).
WORK_SIDE_PX: int = 64
#: Least share of an off-the-floor round outline that is the body's colour (a round shadow holding a die is not).
ROUND_BODY_SHARE: float = 0.6
#: A body within this distance of the floor's hue (a*, b* of 8-bit Lab) and darker may be the floor in a shadow
#: (a round shadow over half a die: 1.0; the buttons given values: 17.9 and more, one grey coin 2.2).
SHADOW_CHROMA: float = 8.0
#: Width of the window around the box the object is cut from, and depth of the
#: side strips, as shares of the box's long side.
WINDOW_SHARE: float = 0.3
STRIP_SHARE: float = 0.25
#: The side strips begin this share of the long side beyond the box.
STRIP_GAP: float = 0.06
#: A body runs on past a side when at least this share of the strip beyond it
#: (the side's middle three fifths) is the body's colour (right dice given a
#: value: 0.73 at most; the domino halves given values: 0.82 and more) ...
RUN_ON_SHARE: float = 0.8
#: ... the box's middle is the body's colour for at least this share (domino halves given values: 0.79 and more;
#: a die half in a round shadow 0.31, a pasted die against a wall 0.68) ...
RUN_ON_BODY_SHARE: float = 0.75
#: ... and at most this share of another side's strip is (the floor shows somewhere) ...
OTHER_SIDES_SHARE: float = 0.3
#: ... and the body runs on as far as a die's side: at least FAR_SHARE of the strip this far beyond the box
#: (shares of its long side) is the body's colour (a die only partly boxed, in a close-up, ran on 0.3 of it).
FAR_STRIP: tuple[float, float] = (0.25, 0.4)
FAR_SHARE: float = 0.3
#: Least Lab distance between the body and the floor for the run-on test and
#: the body-colour outline (a body the floor's colour runs on everywhere:
#: white dice on a white board).
MIN_RUN_ON_CONTRAST: float = 20.0
#: Light specks: the middle's median colour is within this Lab distance of the
#: floor's (the specks given values: 10.1 at most) ...
SPECK_FLOOR_DISTANCE: float = 12.0
#: ... what stands out of it (:data:`SPECK_CONTRAST` or more from the floor) is
#: lighter than the floor by :data:`SPECK_LIGHTER` L* levels (8-bit Lab) on average
#: (the specks: 80 and more; DEV dice on a floor of their colour: dark pips, below 0) ...
SPECK_CONTRAST: float = 40.0
SPECK_LIGHTER: float = 40.0
#: ... and covers at most this share of the middle (the specks: 0.30 at most) ...
SPECK_SHARE: float = 0.3
#: ... and no die's outline is around them: the L* gradient in the box (spots left out) is less than this many
#: times the floor's (the specks given values: 1.43 at most; rendered black dice on black cloth, whose bodies
#: are the cloth's colour, boxed by the reader: 1.79 and more).
DIE_EDGE_RATIO: float = 1.6
#: A pixel is the object's (not the floor's) when it is this far from the
#: floor's colour, or this share of the body-floor distance if that is more.
_OBJECT_DISTANCE: float = 12.0
_OBJECT_SHARE: float = 0.4
#: A strip pixel is the body's colour when it is this close to it, or this
#: share of the body-floor distance if that is more.
_BODY_DISTANCE: float = 10.0
_BODY_SHARE: float = 0.3


def body_not_a_die(image: np.ndarray, box: tuple[int, int, int, int], run_on: bool = True) -> bool:
    """Whether the thing in `box` has a body no die has: round (:func:`round_body`), running on past its box
    (:func:`body_runs_on`, asked only with `run_on`), or none at all under light specks (:func:`light_specks`)."""
    window = _window(image, box)
    return window is not None and (_light_specks(window) or (run_on and _runs_on(window)) or _round(window))


def beside_another(boxes: list[tuple[int, int, int, int]]) -> list[bool]:
    """Whether each box has another box's centre within :data:`BESIDE_SIDES` of its long side.

    A die touching a die of its own colour runs on past its box as a domino
    half does (held dice side by side in the hold area), so the reader does
    not ask :func:`body_runs_on` of such a die.

    Parameters
    ----------
    boxes : list of N (x, y, w, h)
        The dice's boxes, px of one photo.

    Returns
    -------
    list of N bool
    """
    centres = np.array([(x + w / 2.0, y + h / 2.0) for x, y, w, h in boxes], np.float64).reshape(-1, 2)
    sides = np.array([max(w, h) for _, _, w, h in boxes], np.float64)
    out = []
    for i in range(len(boxes)):
        d = np.hypot(*(centres - centres[i]).T)
        d[i] = np.inf
        out.append(bool((d <= BESIDE_SIDES * sides[i]).any()))
    return out


#: Another box's centre within this many long sides of a box's centre is a die beside it (touching dice: 1.0-1.1).
BESIDE_SIDES: float = 1.25


def round_body(image: np.ndarray, box: tuple[int, int, int, int]) -> bool:
    """Whether the object in `box` is round: its outline is an ellipse (a button, a coin), not a die's square.

    The object is every pixel of the window around the box (:data:`WINDOW_SHARE`)
    whose colour is off the floor's (the median of the window outside the box),
    or else every pixel of the body's colour joined to the box's middle; its
    outline, filled, must overlap the ellipse fitted to it by :data:`ROUND_IOU` or more.
    """
    window = _window(image, box)
    return window is not None and _round(window)


def body_runs_on(image: np.ndarray, box: tuple[int, int, int, int]) -> bool:
    """Whether the body in `box` runs on past a side of the box, as a domino's does past its boxed half.

    See :data:`RUN_ON_SHARE`, :data:`OTHER_SIDES_SHARE`, :data:`MIN_RUN_ON_CONTRAST`.
    """
    window = _window(image, box)
    return window is not None and _runs_on(window)


def light_specks(image: np.ndarray, box: tuple[int, int, int, int]) -> bool:
    """Whether `box` holds only light specks on the bare floor: no die body, and "pips" lighter than the floor.

    The median colour of the box's middle (its central three fifths) is within
    :data:`SPECK_FLOOR_DISTANCE` of the floor's (the median of the window outside
    the box); the middle's pixels :data:`SPECK_CONTRAST` or more from the floor
    cover at most :data:`SPECK_SHARE` of it and are :data:`SPECK_LIGHTER` or more
    lighter than the floor on average.
    """
    window = _window(image, box)
    return window is not None and _light_specks(window)


class _Window(NamedTuple):
    """The box's surroundings, brought down to :data:`WORK_SIDE_PX`, in OpenCV's 8-bit Lab."""

    lab: np.ndarray  # (h, w, 3) float32
    box: tuple[int, int, int, int]  # the box in the window
    floor: np.ndarray  # (3,) the median colour outside the box
    body: np.ndarray  # (3,) the median colour of the box's middle (central three fifths)
    off_floor: np.ndarray  # (h, w) float32: each pixel's distance from the floor's colour
    off_body: np.ndarray  # (h, w) float32: ... from the body's colour
    image: np.ndarray  # the photo, BGR
    photo_box: tuple[int, int, int, int]  # the box in the photo

    @property
    def contrast(self) -> float:
        return float(np.linalg.norm(self.body - self.floor))

    def middle(self, part: int = 5) -> tuple[slice, slice]:
        """Rows and columns of the box less a `part`-th of its side at each edge."""
        bx, by, w, h = self.box
        return slice(max(0, by + h // part), by + h - h // part), slice(max(0, bx + w // part), bx + w - w // part)


def _window(image: np.ndarray, box) -> _Window | None:
    x, y, w, h = (int(v) for v in box)
    height, width = image.shape[:2]
    if w < 4 or h < 4:
        return None
    m = int(WINDOW_SHARE * max(w, h))
    x0, y0, x1, y1 = max(0, x - m), max(0, y - m), min(width, x + w + m), min(height, y + h + m)
    window = np.ascontiguousarray(image[y0:y1, x0:x1])
    bx, by = x - x0, y - y0
    scale = min(1.0, WORK_SIDE_PX / max(w, h))
    if scale < 1.0:  # the measures are shapes and shares: the same on a die brought down to WORK_SIDE_PX
        window = cv2.resize(window, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        bx, by, w, h = (int(round(v * scale)) for v in (bx, by, w, h))
    lab8 = cv2.cvtColor(window, cv2.COLOR_BGR2LAB)
    ring = np.ones(lab8.shape[:2], np.uint8)
    ring[max(0, by) : by + h, max(0, bx) : bx + w] = 0
    rows, cols = slice(max(0, by + h // 5), by + h - h // 5), slice(max(0, bx + w // 5), bx + w - w // 5)
    middle = lab8[rows, cols]
    if not ring.any() or not middle.size:
        return None  # a box filling the picture: no floor to tell the body from
    floor = channel_medians_u8(lab8, ring)  # np.median's values, 4x faster on the ring's thousands of pixels
    body = np.median(middle.reshape(-1, 3), axis=0)  # uint8: a third faster, same values
    return _Window(
        lab8.astype(np.float32),
        (bx, by, w, h),
        floor,
        body,
        colour_distance_u8(lab8, floor),  # _distance's values, by table: 2x faster
        colour_distance_u8(lab8, body),
        image,
        (x, y, *box[2:]),
    )


def _distance(lab: np.ndarray, colour: np.ndarray) -> np.ndarray:
    d = lab - colour.astype(np.float32)
    return np.sqrt(np.einsum("ijk,ijk->ij", d, d))


def _light_specks(win: _Window) -> bool:
    if win.contrast >= SPECK_FLOOR_DISTANCE:
        return False
    rows, cols = win.middle()
    off = win.off_floor[rows, cols] >= SPECK_CONTRAST
    share = share_set(off)
    if not (0.0 < share <= SPECK_SHARE and float(win.lab[rows, cols, 0][off].mean() - win.floor[0]) >= SPECK_LIGHTER):
        return False
    return _edge_ratio(win) < DIE_EDGE_RATIO  # no die's outline around the spots (a black die on black cloth has one)


def _edge_ratio(win: _Window) -> float:
    """Mean L* gradient (Sobel) in the box over that of the floor outside it, both without the light spots."""
    lightness = np.ascontiguousarray(win.lab[..., 0])
    gradient = np.hypot(cv2.Sobel(lightness, cv2.CV_32F, 1, 0), cv2.Sobel(lightness, cv2.CV_32F, 0, 1))
    spots = cv2.dilate((win.off_floor >= SPECK_CONTRAST).astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
    bx, by, w, h = win.box
    inside = np.zeros(spots.shape, bool)
    inside[max(0, by) : by + h, max(0, bx) : bx + w] = True
    box, floor = inside & ~spots, ~inside & ~spots
    if not box.any() or not floor.any():
        return float("inf")
    return float(gradient[box].mean()) / max(float(gradient[floor].mean()), 1e-6)


def _round(win: _Window) -> bool:
    """The object's outline is an ellipse: cut as what is off the floor's colour, or as what is the body's colour."""
    contrast = win.contrast
    if float(np.linalg.norm(win.body[1:] - win.floor[1:])) < SHADOW_CHROMA and win.body[0] < win.floor[0]:
        return False  # the floor's hue, darker: a round shadow is as likely as a grey button or coin
    off_floor = (win.off_floor > max(_OBJECT_DISTANCE, _OBJECT_SHARE * contrast)).astype(np.uint8)
    outlines, _ = cv2.findContours(off_floor, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    bodied = (win.off_body < max(_BODY_DISTANCE, _BODY_SHARE * contrast)).astype(np.uint8)
    # what is off the floor is one round thing of the body's colour (not a round shadow with a die in it)
    if outlines and _elliptic(max(outlines, key=cv2.contourArea), off_floor.shape, win.box, bodied):
        return True
    if contrast < MIN_RUN_ON_CONTRAST:
        return False  # the body's colour is the floor's: no outline of its own
    # the body's own colour, its pips closed over: the part of it under the box's middle third
    bodied = cv2.morphologyEx(bodied, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    _, labels = cv2.connectedComponents(bodied)
    under = labels[win.middle(3)]
    under = under[under > 0]
    if not len(under):
        return False
    part = (labels == np.bincount(under).argmax()).astype(np.uint8)
    outlines, _ = cv2.findContours(part, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    return _elliptic(max(outlines, key=cv2.contourArea), part.shape, win.box)


def _elliptic(outline: np.ndarray, shape: tuple[int, ...], box, bodied: np.ndarray | None = None) -> bool:
    """Whether an outline (OpenCV contour) of at least a quarter of the box's area, filled, is its fitted ellipse
    (and, given a mask of the body's colour, mostly that colour: :data:`ROUND_BODY_SHARE`)."""
    if len(outline) < 5 or cv2.contourArea(outline) < 0.25 * box[2] * box[3]:
        return False
    filled = np.zeros(shape[:2], np.uint8)
    cv2.drawContours(filled, [outline], -1, 1, -1)
    if bodied is not None and share_set(bodied[filled > 0]) < ROUND_BODY_SHARE:
        return False
    ellipse = np.zeros(shape[:2], np.uint8)
    cv2.ellipse(ellipse, cv2.fitEllipse(outline), 1, -1)
    union = int((filled | ellipse).sum())
    return bool(union > 0 and (filled & ellipse).sum() / union >= ROUND_IOU)


def _runs_on(win: _Window) -> bool:
    contrast = win.contrast
    if contrast < MIN_RUN_ON_CONTRAST:
        return False
    bx, by, w, h = win.box
    depth = max(2, int(STRIP_SHARE * max(w, h)))
    gap = max(1, int(STRIP_GAP * max(w, h)))  # a domino's dividing line lies along the box's edge
    ys, xs = win.middle()
    above, below = slice(max(0, by - gap - depth), max(0, by - gap)), slice(by + h + gap, by + h + gap + depth)
    left, right = slice(max(0, bx - gap - depth), max(0, bx - gap)), slice(bx + w + gap, bx + w + gap + depth)
    near = max(_BODY_DISTANCE, _BODY_SHARE * contrast)
    bodied = win.off_body < near
    if share_set(bodied[win.middle()]) < RUN_ON_BODY_SHARE:
        return False  # no one body in the box (a die half in a shadow: its "body" is a mean of two colours)

    def share(rows: slice, cols: slice) -> float:
        part = bodied[rows, cols]
        return share_set(part)  # NaN past the picture's edge: not known, never floor

    # per side: the strip beyond it, and the two patches beyond its ends (beside the strip, past the adjacent sides)
    sides = (
        (share(above, xs), share(above, left), share(above, right)),
        (share(below, xs), share(below, left), share(below, right)),
        (share(ys, left), share(above, left), share(below, left)),
        (share(ys, right), share(above, right), share(below, right)),
    )
    if not any(strip <= OTHER_SIDES_SHARE for strip, _, _ in sides):
        return False  # no floor beside the box anywhere
    # a domino's body runs on as wide as the box: not past its ends (a wall or a cloth of the body's colour would),
    # and as far as a die's side: still there FAR_STRIP beyond the box (a die only partly boxed ends sooner)
    return any(
        strip >= RUN_ON_SHARE and all(end <= OTHER_SIDES_SHARE for end in ends) and _runs_far(win, k, near)
        for k, (strip, *ends) in enumerate(sides)
    )


def _runs_far(win: _Window, side: int, near: float) -> bool:
    """Whether the body's colour fills :data:`FAR_SHARE` of the strip :data:`FAR_STRIP` beyond `side` (0 above,
    1 below, 2 left, 3 right; the side's middle three fifths), cut from the photo."""
    x, y, w, h = (int(v) for v in win.photo_box)
    s = max(w, h)
    a, b = int(FAR_STRIP[0] * s), int(FAR_STRIP[1] * s)
    xs, ys = (x + w // 5, x + w - w // 5), (y + h // 5, y + h - h // 5)
    x0, x1, y0, y1 = (
        (*xs, y - b, y - a),
        (*xs, y + h + a, y + h + b),
        (x - b, x - a, *ys),
        (x + w + a, x + w + b, *ys),
    )[side]
    height, width = win.image.shape[:2]
    if x0 < 0 or y0 < 0 or x1 > width or y1 > height or x1 <= x0 or y1 <= y0:
        return False  # past the picture's edge: not known
    far = cv2.cvtColor(np.ascontiguousarray(win.image[y0:y1, x0:x1]), cv2.COLOR_BGR2LAB).astype(np.float32)
    return share_set(_distance(far, win.body) < near) >= FAR_SHARE
