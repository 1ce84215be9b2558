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
from vision.lab.training.not_dice_drawers import draw_object

SS = 2  # supersampling of the drawing
KINDS: tuple[str, ...] = ("key", "tile", "mahjong", "domino", "button", "coin", "cap", "sugar", "card", "lego")
#: Share of each kind in :func:`not_dice_set` (keys, tiles and dominoes first: they are the look-alikes).
KIND_WEIGHTS: tuple[float, ...] = (0.26, 0.14, 0.06, 0.16, 0.07, 0.05, 0.04, 0.06, 0.08, 0.08)


def _to_canvas(local: np.ndarray, centre, angle: float, S: int) -> tuple[np.ndarray, np.ndarray]:
    """Warp an upright (L, L, 4) patch (colour, alpha) onto an S x S canvas, turned by `angle` about `centre`."""
    L = local.shape[0]
    M = cv2.getRotationMatrix2D((L / 2, L / 2), -np.degrees(angle), 1.0)
    M[:, 2] += np.asarray(centre, np.float64) - L / 2
    img = cv2.warpAffine(local[..., :3], M, (S, S), flags=cv2.INTER_LINEAR)
    alpha = cv2.warpAffine(local[..., 3], M, (S, S), flags=cv2.INTER_LINEAR)
    return img, alpha


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
    patch, shift = draw_object(kind, rng, L, side, box)
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
