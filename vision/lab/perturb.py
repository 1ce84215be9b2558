"""Real DEV photos edited the ways other readers' users report failures (issue 37, item 6): light and camera edits.

Each edit takes a labelled photo (BGR ``uint8`` of shape ``(H, W, 3)``), its
truth (:class:`Truth`: value and ``(x, y, w, h)`` box per die) and a
``numpy.random.Generator``, and returns a :class:`Perturbed` photo with the
truth moved or added to. Nothing is written to disk and no photo is copied.
The edits of this module change light and camera (glare spots, shadows,
exposure, white balance, a steep tilt, dust); :mod:`vision.lab.perturb_compose`
adds or moves things (touching dice, a white card, keys and buttons) and
:mod:`vision.lab.perturb_render` renders what no photo edit can (a cocked
die, a stacked pair). :data:`PERTURBATIONS` names them all, in the order
``benchmarks/perturbations.py`` prints them.

Where a report came from (the issue's list): a pip-sized specular highlight
on a face turned 33 of 893 dice wrong in blob readers; a hand's round shadow
over half a die was read as one big die; dust specks on black cloth at +1 EV
were read as three dice showing 1; a phone photo tilted 35-50 degrees read 62 %
right.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np

from vision.lab.camera_changes import CAMERA_CHANGES, _warp_to_fit, in_linear_light
from vision.render import Unreadable

__all__ = ["Truth", "Perturbed", "LIGHT_EDITS", "free_spot", "median_side"]

Box = tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class Truth:
    """One die (or one thing that must not be read as a die) in a perturbed photo.

    ``value`` 1-6; ``box`` ``(x, y, w, h)`` px; ``unreadable`` None for a die
    lying flat and whole, :attr:`vision.render.Unreadable.LEANING` for a die that
    must get no value (cocked, stacked): the fields
    :func:`vision.lab.stress.score_rendered` reads.
    """

    value: int
    box: Box
    unreadable: Unreadable | None = None


@dataclass(frozen=True, slots=True)
class Perturbed:
    """An edited photo (BGR ``uint8``) and its dice (``dice``: tuple of :class:`Truth`).

    ``applied`` is False when the edit found no room in this photo (it is then left out).
    """

    image: np.ndarray
    dice: tuple[Truth, ...]
    applied: bool = True


Edit = Callable[[np.ndarray, list[Truth], np.random.Generator], Perturbed]


def median_side(dice: list[Truth], image: np.ndarray) -> float:
    """The median long side of the dice's boxes, px (a sixteenth of the photo when there are none)."""
    sides = [max(t.box[2], t.box[3]) for t in dice]
    return float(np.median(sides)) if sides else max(image.shape[:2]) / 16.0


def _soft_mask(shape: tuple[int, int], draw: Callable[[np.ndarray], None], blur: float) -> np.ndarray:
    """A float32 mask 0-1 of `shape` drawn by ``draw(mask)`` (in place, value 1), its edge blurred by `blur` px."""
    mask = np.zeros(shape, np.float32)
    draw(mask)
    return cv2.GaussianBlur(mask, (0, 0), blur) if blur > 0 else mask


def _glare(image, dice, rng):
    """One or two pip-sized glints on each die's face: near-white, often elongated, 0.04-0.09 of the side long.

    A glint is a reflection of a small lamp in a glossy face: it is brighter
    than any pip colour and has no pip's dark rim.
    """
    out = image.astype(np.float32)
    for t in dice:
        x, y, w, h = t.box
        side = max(w, h)
        for _ in range(int(rng.integers(1, 3))):
            cx, cy = x + w * rng.uniform(0.25, 0.75), y + h * rng.uniform(0.25, 0.75)
            long_ax = side * rng.uniform(0.04, 0.09)
            axes = (max(1, round(long_ax)), max(1, round(long_ax * rng.uniform(0.35, 1.0))))
            angle = float(rng.uniform(0, 180))
            mask = np.zeros(out.shape[:2], np.float32)
            cv2.ellipse(mask, (round(cx), round(cy)), axes, angle, 0, 360, 1.0, -1, cv2.LINE_AA)
            mask = cv2.GaussianBlur(mask, (0, 0), 0.6)[..., None]
            out = out * (1 - mask) + rng.uniform(245, 255) * mask
    return Perturbed(np.clip(out + 0.5, 0, 255).astype(np.uint8), tuple(dice))


def _darken(image: np.ndarray, mask: np.ndarray, depth: float) -> np.ndarray:
    """`image` with its light times ``1 - depth * mask`` (linear light), as uint8."""
    gain = 1.0 - depth * mask[..., None]
    return (in_linear_light(image, gain) + 0.5).astype(np.uint8)


def _hard_shadow(image, dice, rng):
    """A hard-edged shadow (an object's, a lamp's) over part of the photo, its edge through a die.

    Light cut to 25-40 % beyond a straight edge (blur 1 px) that crosses a die's box.
    """
    h, w = image.shape[:2]
    if dice:
        t = dice[int(rng.integers(len(dice)))]
        px, py = t.box[0] + t.box[2] * rng.uniform(0.3, 0.7), t.box[1] + t.box[3] * rng.uniform(0.3, 0.7)
    else:
        px, py = w / 2, h / 2
    a = rng.uniform(0, np.pi)
    nx, ny = np.cos(a), np.sin(a)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    mask = ((xx - px) * nx + (yy - py) * ny > 0).astype(np.float32)
    mask = cv2.GaussianBlur(mask, (0, 0), 1.0)
    return Perturbed(_darken(image, mask, rng.uniform(0.6, 0.75)), tuple(dice))


def _round_shadow(image, dice, rng):
    """A hand's round shadow over half a die: a disc 1.5-2.5 die sides across, its edge through the die's middle."""
    if not dice:
        return Perturbed(image.copy(), ())
    t = dice[int(rng.integers(len(dice)))]
    x, y, w, h = t.box
    side = max(w, h)
    r = side * rng.uniform(0.75, 1.25)
    a = rng.uniform(0, 2 * np.pi)
    cx, cy = x + w / 2 + r * np.cos(a), y + h / 2 + r * np.sin(a)  # the disc's edge passes the die's centre
    mask = _soft_mask(
        image.shape[:2], lambda m: cv2.circle(m, (round(cx), round(cy)), round(r), 1.0, -1, cv2.LINE_AA), 1.5
    )
    return Perturbed(_darken(image, mask, rng.uniform(0.6, 0.75)), tuple(dice))


def _gain(name: str) -> Edit:
    change = CAMERA_CHANGES[name]

    def edit(image, dice, rng):
        return Perturbed(change(image, [], rng)[0], tuple(dice))

    return edit


def _ev(stops: float) -> Edit:
    def edit(image, dice, rng):
        return Perturbed((in_linear_light(image, 2.0**stops) + 0.5).astype(np.uint8), tuple(dice))

    return edit


def _steep_tilt(image, dice, rng):
    """A phone held 35-50 degrees from straight down: the photo warped by ``K R K^-1`` (no side faces).

    As :func:`vision.lab.camera_changes._tilt` (focal length the photo's long
    side), tilted about a random one of the four directions.
    """
    h, w = image.shape[:2]
    f = float(max(h, w))
    k = np.array([[f, 0, w / 2.0], [0, f, h / 2.0], [0, 0, 1]], np.float64)
    a = np.radians(rng.uniform(35.0, 50.0))
    c, s = np.cos(a), np.sin(a)
    r = np.array([[1, 0, 0], [0, c, -s], [0, s, c]], np.float64)
    turn = int(rng.integers(4))
    if turn % 2:
        r = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]], np.float64)
    if turn >= 2:
        r = r.T
    out, boxes = _warp_to_fit(image, [t.box for t in dice], k @ r @ np.linalg.inv(k))
    scale = min(1.0, 1600.0 / max(out.shape[:2]))  # a phone photo's size, not the warp's blown-up canvas
    if scale < 1.0:
        out = cv2.resize(out, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        boxes = [tuple(round(v * scale) for v in b) for b in boxes]
    return Perturbed(out, tuple(Truth(t.value, b) for t, b in zip(dice, boxes)))


def free_spot(
    shape: tuple[int, int], taken: list[Box], size: tuple[int, int], rng: np.random.Generator, clear: float
) -> Box | None:
    """A random ``(x, y, w, h)`` box of `size` (w, h) inside the photo at least `clear` px from every `taken` box.

    None when 200 tries find no such place.
    """
    h, w = shape
    bw, bh = size
    if bw >= w or bh >= h:
        return None
    for _ in range(200):
        x, y = int(rng.integers(0, w - bw)), int(rng.integers(0, h - bh))
        if all(
            x + bw + clear <= tx or tx + tw + clear <= x or y + bh + clear <= ty or ty + th + clear <= y
            for tx, ty, tw, th in taken
        ):
            return x, y, bw, bh
    return None


def _dust(image, dice, rng):
    """Dust and lint on the cloth: 40-120 light specks of 1-4 px outside the dice, then +1 EV (one stop over)."""
    out = image.copy()
    h, w = image.shape[:2]
    side = median_side(dice, image)
    scale = max(1.0, side / 40.0)  # specks scale with the dice (DEV dice are 30-180 px)
    boxes = [t.box for t in dice]
    for _ in range(int(rng.integers(40, 121))):
        r = max(1, round(rng.uniform(0.5, 2.0) * scale))
        spot = free_spot((h, w), boxes, (2 * r + 1, 2 * r + 1), rng, 2.0)
        if spot is None:
            continue
        grey = int(rng.integers(170, 256))
        cv2.circle(out, (spot[0] + r, spot[1] + r), r, (grey, grey, grey), -1, cv2.LINE_AA)
    return Perturbed((in_linear_light(out, 2.0) + 0.5).astype(np.uint8), tuple(dice))


#: The light and camera edits by name.
LIGHT_EDITS: dict[str, Edit] = {
    "glare": _glare,
    "hard_shadow": _hard_shadow,
    "round_shadow": _round_shadow,
    "ev_plus1": _ev(1.0),
    "ev_minus1": _ev(-1.0),
    "warm": _gain("warm"),
    "cool": _gain("cool"),
    "tilt_35_50": _steep_tilt,
    "dust_ev_plus1": _dust,
}
