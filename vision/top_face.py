"""The top face of a die as a shape: its outline in the photo and what lies beside it.

A die lying flat shows a square top face; seen off the camera's axis its side
faces show too, beside the top face on the side towards the photo's principal
point (the top face is nearer the camera, so it is drawn farther out). A die
cocked on an edge shows a top face foreshortened to ``cos(tilt)`` and a side
face ``sin(tilt)`` of a side wide in the direction it leans, wherever it lies.
:func:`outline_top_face` grows the top face from the box's middle over the
face's own colour (side faces are shaded otherwise) and outlines it as a
quadrilateral; the die's body is the face and the pixels of the die's
chromaticity joined to it (a side face is the die's colour in other light, a
shadow the floor's), and how far it reaches beyond each edge of the top face
is what :mod:`vision.reader_stacked` judges.

Conventions: images are BGR ``uint8`` arrays indexed ``(row, col)``; boxes are
``(x, y, w, h)`` and points ``(x, y)`` in pixels of the photo.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.fast_stats import colour_sq_distance_u8

__all__ = ["TopFace", "outline_top_face"]

#: Side of the die box after scaling the region down, px: the masks are cheap
#: at this size and a pip (about 0.15 of a side) is still 5 px across.
WORK_SIDE: int = 40
#: Least share of its bounding rectangle a top face must fill ...
CLEAN_FILL: float = 0.85
#: ... and least aspect ...
CLEAN_ASPECT: float = 0.7
#: ... and least long side, as a share of the box's (a flat die's top face spans 0.7 of its box or more,
#: the box holding its side faces too; a pip taken for the face, 0.16 in a DEV photo shifted warm), to be
#: cut out cleanly: only then is the body around it measured.
CLEAN_SIDE: float = 0.3
#: The region cut around a die box, as a share of its long side on each side.
REGION_MARGIN: float = 0.2


@dataclass(frozen=True, slots=True)
class TopFace:
    """A die's top face outline and its body around it, px of the photo.

    Attributes
    ----------
    quad : ndarray of shape (4, 2), float32
        The top face's corners ``(x, y)``, in order around it.
    body : ndarray of shape (K, 2), float32
        The convex hull of the die's body (top and side faces), ``(x, y)``.
    aspect : float
        Short side over long side of the top face, 0-1 (1: square).
    fill : float
        Share of its bounding rectangle the face's region fills, 0-1 (a face
        cut out cleanly fills it; a face run into a side face or a shadow does not).
    side : float
        The top face's long side, px.
    beyond : tuple of 4 (normal, width), or empty
        For each edge of the top face: its outward unit normal ``(x, y)`` and
        how far (px) the body reaches beyond that edge (a side face, or a
        bevel: a little). Empty (and `body` the face itself) where the face
        was not cut out cleanly (:data:`CLEAN_FILL`, :data:`CLEAN_ASPECT`).
    colour : (L, a, b)
        The face's colour, OpenCV's 8-bit Lab (the median around the seed):
        dice of one set share its ``a, b`` whatever the light.
    """

    quad: np.ndarray
    body: np.ndarray
    aspect: float
    fill: float
    side: float
    beyond: tuple[tuple[np.ndarray, float], ...]
    colour: tuple[float, float, float] = (0.0, 0.0, 0.0)


def _region(image: np.ndarray, box: tuple[float, float, float, float]) -> tuple[np.ndarray, float, int, int]:
    """The region around `box`, scaled so the box's long side is :data:`WORK_SIDE` px; scale, x0, y0."""
    x, y, w, h = box
    side = max(w, h, 1)
    m = REGION_MARGIN * side
    x0, y0 = int(max(0, x - m)), int(max(0, y - m))
    x1, y1 = int(min(image.shape[1], x + w + m)), int(min(image.shape[0], y + h + m))
    scale = WORK_SIDE / side
    step = max(1, int(side / (2 * WORK_SIDE)))  # every step-th pixel of a big die first: INTER_AREA then has less to do
    roi = image[y0:y1:step, x0:x1:step]
    size = (max(1, round(roi.shape[1] * scale * step)), max(1, round(roi.shape[0] * scale * step)))
    return cv2.resize(roi, size, interpolation=cv2.INTER_AREA), scale, x0, y0


def _middle(values: np.ndarray) -> np.ndarray:
    """The median along the first axis (the upper one of an even count): one partition, a fifth of np.median's time."""
    k = values.shape[0] // 2
    return np.partition(values, k, axis=0)[k]


def _fill_holes(mask: np.ndarray) -> np.ndarray:
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    out = np.zeros_like(mask)
    cv2.drawContours(out, contours, -1, 1, -1)
    return out


def outline_top_face(
    image: np.ndarray,
    box: tuple[float, float, float, float],
    seed: tuple[float, float] | None = None,
    others: Sequence[tuple[float, float, float, float]] = (),
) -> TopFace | None:
    """The top face of the die in `box` as a quadrilateral, or None where it cannot be cut out.

    Parameters
    ----------
    image : ndarray of shape (H, W, 3), dtype uint8
        The photo, BGR.
    box : (x, y, w, h)
        The die's box, px.
    seed : (x, y), optional
        A point of the top face (the middle of its pips), px; default the box's centre.
    others : sequence of (x, y, w, h), optional
        The other dice's boxes, px: their bodies are not this die's (dice touching, held side by side).

    Returns
    -------
    TopFace or None
    """
    small, scale, x0, y0 = _region(image, box)
    if min(small.shape[:2]) < 8:
        return None
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2Lab)  # uint8
    if seed is None:
        seed = (box[0] + box[2] / 2, box[1] + box[3] / 2)
    sx, sy = (seed[0] - x0) * scale, (seed[1] - y0) * scale
    found = _face_region(lab, (sx, sy))
    if found is None:
        return None
    face, colour = found
    contours, _ = cv2.findContours(face, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    contour = max(contours, key=cv2.contourArea)
    rect = cv2.minAreaRect(contour)
    quad = cv2.boxPoints(rect)
    (rw, rh) = rect[1]
    aspect = float(min(rw, rh) / max(rw, rh, 1e-6))
    fill = float(cv2.contourArea(contour) / max(rw * rh, 1e-6))
    to_photo = lambda p: (p / scale + np.array([x0, y0], np.float32)).astype(np.float32)  # noqa: E731
    small_face = max(rw, rh) < CLEAN_SIDE * WORK_SIDE  # a pip or a glint, not a face
    if fill < CLEAN_FILL or aspect < CLEAN_ASPECT or small_face:  # not cut out cleanly: nothing to measure beyond it
        return TopFace(to_photo(quad), to_photo(quad), aspect, fill, float(max(rw, rh) / scale), (), colour)
    body = _die_material(small, face, box, scale, x0, y0, others)
    if body is None:
        return None
    bcont, _ = cv2.findContours(body, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    hull = cv2.convexHull(max(bcont, key=cv2.contourArea)).reshape(-1, 2).astype(np.float32)
    edge = np.concatenate([c.reshape(-1, 2) for c in bcont]).astype(np.float32)  # the body's farthest pixels
    # how far the die's body reaches beyond each edge of the top face (px of the photo), edge by edge
    centre = np.asarray(rect[0], np.float32)
    ang = np.radians(rect[2])
    axes = np.array([[np.cos(ang), np.sin(ang)], [-np.sin(ang), np.cos(ang)]], np.float32)
    half = np.array([rw, rh], np.float32) / 2
    rel = edge + 0.5 - centre
    beyond = []
    for k in range(2):
        proj = rel @ axes[k]
        beyond.append((axes[k].copy(), float(proj.max() - half[k]) / scale))
        beyond.append((-axes[k], float(-proj.min() - half[k]) / scale))
    side = float(max(rw, rh) / scale)
    return TopFace(to_photo(quad), to_photo(hull), aspect, fill, side, tuple(beyond), colour)


def _face_region(lab: np.ndarray, seed: tuple[float, float]) -> tuple[np.ndarray, tuple[float, float, float]] | None:
    """The top face, uint8 0/1 (the face colour around `seed`, region px, joined to it, pips filled); its colour.

    `lab` is the region in OpenCV's 8-bit Lab, ``(h, w, 3)`` uint8.
    """
    h, w = lab.shape[:2]
    cx, cy = int(np.clip(round(seed[0]), 0, w - 1)), int(np.clip(round(seed[1]), 0, h - 1))
    r = max(2, WORK_SIDE // 8)
    near = lab[max(0, cy - r) : cy + r + 1, max(0, cx - r) : cx + r + 1].reshape(-1, 3).astype(np.float32)
    # the face's colour: the median around the seed, pips being the minority there
    colour = _middle(near)
    spread = np.sqrt(((near - colour) ** 2).sum(axis=1))
    # Lab units (8-bit): at least JPEG noise and the face's own shading, at most less than a side face's step
    tol = float(np.clip(2.5 * _middle(spread), 12.0, 30.0))
    like = (colour_sq_distance_u8(lab, colour) < tol * tol).astype(np.uint8)  # by table: 4x faster, same values
    n, labels = cv2.connectedComponents(like)
    if n <= 1:
        return None
    around = labels[max(0, cy - r) : cy + r + 1, max(0, cx - r) : cx + r + 1].ravel()
    around = around[around > 0]
    if around.size == 0:
        return None
    face = (labels == np.bincount(around).argmax()).astype(np.uint8)
    face = _fill_holes(cv2.morphologyEx(face, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8)))
    if face[0].any() or face[-1].any() or face[:, 0].any() or face[:, -1].any():
        return None  # it runs out of the region: the floor or another die is of the face's colour
    return face, (float(colour[0]), float(colour[1]), float(colour[2]))


#: Least distance between the die's and the floor's chromaticity (r, g, b over
#: their sum: shading does not change it) for the side faces to be told from
#: the floor and its shadow.
MIN_CHROMA_GAP: float = 0.06
#: Pixels darker than this (sum of B, G, R, 0-765) have no chromaticity to trust.
MIN_BRIGHTNESS: float = 45.0
#: Without a colour to go by, a pixel this many times brighter than the floor ...
BRIGHTER: float = 1.2
#: ... or darker than this share of it (a cast shadow keeps at least half the light) is the die.
SHADOW_DEPTH: float = 0.45
#: The body is looked for within the die's box and this share of its side around it.
BOX_MARGIN: float = 0.0


def _chromaticity(small: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each pixel's (b, g, r) over their sum, ``(h, w, 3)`` float32, and whether it is bright enough to tell."""
    f = small.astype(np.float32)
    total = f.sum(axis=2, keepdims=True)
    return f / np.maximum(total, 1.0), total[..., 0] >= MIN_BRIGHTNESS


def _die_material(
    small: np.ndarray,
    face: np.ndarray,
    box: tuple[float, float, float, float],
    scale: float,
    x0: int,
    y0: int,
    others: Sequence[tuple[float, float, float, float]] = (),
) -> np.ndarray | None:
    """The die's body: the top face and the pixels of its colour at any brightness (side faces) joined to it.

    Brightness aside, a side face has the die's colour and a shadow the
    floor's; None where the two are too alike (:data:`MIN_CHROMA_GAP`).
    Kept within the die's box and out of the other dice's boxes (a touching
    neighbour of the die's colour reaches into its box).
    """
    chroma, bright = _chromaticity(small)
    border = np.concatenate([chroma[0], chroma[-1], chroma[:, 0], chroma[:, -1]])
    floor = _middle(border)
    die = _middle(chroma[face > 0])
    gap = float(np.linalg.norm(die - floor))
    if gap >= MIN_CHROMA_GAP:
        to_die = ((chroma - die) ** 2).sum(axis=2)
        to_floor = ((chroma - floor) ** 2).sum(axis=2)
        material = ((to_die < to_floor) & (to_die < 0.25 * gap * gap) & bright).astype(np.uint8)
    else:
        # a grey die on a grey floor: only what is clearly brighter than the floor, or darker than
        # its deepest shadow, is the die
        level = small.astype(np.float32).sum(axis=2)
        ring = np.concatenate([level[0], level[-1], level[:, 0], level[:, -1]])
        floor_level = float(_middle(ring))
        material = ((level > BRIGHTER * floor_level + 30) | (level < SHADOW_DEPTH * floor_level - 30)).astype(np.uint8)
    x, y, w, h = box
    m = BOX_MARGIN * max(w, h)
    inside = np.zeros_like(material)
    xa, ya = max(0, int((x - m - x0) * scale)), max(0, int((y - m - y0) * scale))
    inside[ya : int((y + h + m - y0) * scale) + 1, xa : int((x + w + m - x0) * scale) + 1] = 1
    for ox, oy, ow, oh in others:
        oxa, oya = max(0, int((ox - x0) * scale)), max(0, int((oy - y0) * scale))
        inside[oya : max(0, int((oy + oh - y0) * scale)) + 1, oxa : max(0, int((ox + ow - x0) * scale)) + 1] = 0
    material = cv2.morphologyEx(material & inside | face, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8)) | face
    n, labels = cv2.connectedComponents(material)
    ids = labels[face > 0]
    ids = ids[ids > 0]
    if ids.size == 0:
        return None
    return _fill_holes((labels == np.bincount(ids).argmax()).astype(np.uint8))


#: Colour (BGR) of the top face's outline in drawings.
OUTLINE_COLOUR: tuple[int, int, int] = (255, 255, 0)


def draw_top_face(
    drawing: np.ndarray,
    image: np.ndarray,
    box: tuple[float, float, float, float],
    offset: tuple[float, float] = (0.0, 0.0),
    scale: float | tuple[float, float] = 1.0,
) -> None:
    """Draw the top face outline of the die in `box` of `image` onto `drawing`, in place (nothing if none is clean).

    A point ``p`` of `image` is drawn at ``(p - offset) * scale`` (a crop or
    an enlarged copy of the photo; `scale` one factor, or ``(x, y)`` factors). For ``dicetable read --annotate`` and the
    failure sheet of ``dicetable eval --report``.
    """
    face = outline_top_face(image, box)
    if face is None or not face.beyond:
        return  # only a face cut out cleanly, the kind the reader judges by (a pip taken for a face is not drawn)
    pts = np.round((face.quad - np.asarray(offset, np.float32)) * np.asarray(scale, np.float32) * 16).astype(np.int32)
    thick = max(1, round(max(drawing.shape[:2]) / 700))
    cv2.polylines(drawing, [pts], True, OUTLINE_COLOUR, thick, cv2.LINE_AA, 4)
