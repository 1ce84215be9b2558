"""Glints: the near-white spots a small lamp leaves on a glossy die face, found in the photo.

A glint is a near-white spot (every channel at least :data:`GLINT_FLOOR`,
its core at least :data:`GLINT_LEVEL` less 15) much brighter than the face
(:data:`GLINT_ABOVE_FACE` levels over the face's least channel, median over
the box's central three fifths, and over a ring 0.06 of the side around it),
pip-sized (radius at most :data:`GLINT_MAX_R` of the side), inside the face.
The pip finder and the face reader can take one for a pip (a white pip on a
dark die is the same kind of spot): on DEV photos edited with glare spots
(``benchmarks/perturbations.py``, condition ``glare``) a smoky 1 with a red
pip and a glint read 2, a 3 read 2. :mod:`vision.reader_glare` takes glints
off the dice's crops before they are read, and leaves white pips alone.

Conventions: images are BGR ``uint8`` arrays indexed ``(row, col)``; boxes are
``(x, y, w, h)`` in pixels, ``x`` right, ``y`` down.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.fast_stats import least_channel

__all__ = ["GLINT_LEVEL", "GLINT_FLOOR", "GLINT_ABOVE_FACE", "GLINT_MAX_R", "glint_spots", "glint_spots_and_mask"]

#: A glint's core reaches this less 15 in every channel: a blown-out highlight
#: (a glint 0.08 of a 30 px die's side, blurred by the lens, peaks at 234-241
#: on the glare edits).
GLINT_LEVEL: int = 245
#: Least level of a glint's pixels in every channel (and at least
#: GLINT_ABOVE_FACE over the face): near-white.
GLINT_FLOOR: int = 200
#: Largest radius of a glint (of a disc of its area), box sides: pip-sized (a
#: 1's pip, the largest, is about 0.2 of the side across).
GLINT_MAX_R: float = 0.15
#: Least difference between a glint's pixels and the face's level (least
#: channel): a glint is white where a yellow or red face lacks blue.
GLINT_ABOVE_FACE: int = 80


def glint_spots(image: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    """Glints on the face of the die in `box`: near-white spots much brighter than the face, inside it.

    Parameters
    ----------
    image : ndarray of shape (H, W, 3), dtype uint8
        The photo, BGR.
    box : (x, y, w, h)
        The die's box, px.

    Returns
    -------
    ndarray of shape (N, 3), dtype float64
        Each spot's centre ``x``, ``y`` relative to the box centre and its
        radius (of a disc of its area), in units of the box's long side (the
        units of :func:`vision.pip_marks.marked_pips`).
    """
    return glint_spots_and_mask(image, box)[0][:, :3]


def glint_spots_and_mask(
    image: np.ndarray, box: tuple[int, int, int, int]
) -> tuple[np.ndarray, tuple[int, int, np.ndarray] | None]:
    """:func:`glint_spots`, and the spots' pixels: ``(x0, y0, labels)``, ``int32 (h, w)`` at ``(x0, y0)`` px.

    ``labels`` is ``k + 1`` on spot ``k``'s pixels, 0 elsewhere. Two more
    columns of the spots: the spot's brightest level (least channel), and its
    elongation (long over short axis of its second moments; 1 for a disc).

    The face's level is its least channel (median over the box's central
    three fifths): a glint is white in every channel, so on a saturated face
    (yellow, red) it stands out in the channel the face lacks.
    """
    x, y, w, h = (int(v) for v in box)
    x0, y0 = max(0, x), max(0, y)
    roi = image[y0 : y + h, x0 : x + w]
    side = float(max(w, h))
    none = np.zeros((0, 5)), None
    if roi.size == 0 or side < 1:
        return none
    rh, rw = roi.shape[:2]
    least = least_channel(roi)
    face = float(np.median(least[rh // 5 : rh - rh // 5, rw // 5 : rw - rw // 5]))
    if face + GLINT_ABOVE_FACE > GLINT_LEVEL:
        return none  # a light face: a blown-out spot on it is not told from the face
    white = (least >= max(GLINT_FLOOR, face + GLINT_ABOVE_FACE)).astype(np.uint8)
    if not white.any():
        return none
    n, labels, stats, cents = cv2.connectedComponentsWithStats(white, connectivity=8)
    out = []
    mask = np.zeros((rh, rw), np.int32)
    ring_px = max(2, int(round(0.06 * side)))
    for k, ((bx, by, bw, bh, area), (cx, cy)) in enumerate(zip(stats[1:n], cents[1:n]), start=1):
        peak = int(least[labels == k].max())
        if area < 2 or area > np.pi * (GLINT_MAX_R * side) ** 2 or peak < GLINT_LEVEL - 15:
            continue  # a glint is pip-sized: a bigger light region is part of the face or of the scene
        if not (0.15 * rw < cx < 0.85 * rw and 0.15 * rh < cy < 0.85 * rh):
            continue
        # brighter than the face right around it (a light face's blown-out part is not a glint)
        ya, yb = max(0, by - ring_px), min(rh, by + bh + ring_px)
        xa, xb = max(0, bx - ring_px), min(rw, bx + bw + ring_px)
        spot = labels[ya:yb, xa:xb] == k
        ring = cv2.dilate(spot.astype(np.uint8), np.ones((2 * ring_px + 1,) * 2, np.uint8)).astype(bool) & ~spot
        if ring.any() and float(least[ya:yb, xa:xb][ring].mean()) > GLINT_LEVEL - GLINT_ABOVE_FACE:
            continue
        mask[ya:yb, xa:xb][spot] = len(out) + 1
        r = np.sqrt(area / np.pi) / side
        out.append(((cx + x0 - x - w / 2) / side, (cy + y0 - y - h / 2) / side, r, peak, _elongation(spot)))
    if not out:
        return none
    return np.array(out, np.float64).reshape(-1, 5), (x0, y0, mask)


def _elongation(spot: np.ndarray) -> float:
    """Long over short axis of a spot's second moments (bool mask); 1 for a disc, for a spot under 5 px too."""
    if int(spot.sum()) < 5:
        return 1.0
    m = cv2.moments(spot.astype(np.uint8), binaryImage=True)
    a, b, c = m["mu20"], m["mu11"], m["mu02"]
    root = np.sqrt(max(0.0, (a - c) ** 2 + 4 * b * b))
    return float(np.sqrt((a + c + root) / max(a + c - root, 1e-9)))
