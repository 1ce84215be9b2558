"""A die has a body: a lone pip on the bare floor is not a die showing 1.

A speck of dust or lint on dark cloth, a light dot on a tray, is boxed by the
detector at about a die's size and read as a 1 with the pip finder agreeing:
the "face" around the "pip" is the floor itself. :func:`body_contrast` measures
how far the box's middle is from the ring around the box in colour; a die
read as 1 whose middle is the colour of its surroundings (under
:data:`MIN_BODY_CONTRAST`) around a spot that stands out
(:func:`bare_pip`) is not a die and is left out of the reading.

Measured (2026-12-03; ``benchmarks/perturbations.py`` and DEV): the 139 DEV
dice given a 1 have 6.2 and more (1 % under 7.4; the smallest a white die on
the white nell board); the 1s given to specks at +1 EV on DEV photos
(condition ``dust_ev_plus1``, every 4th photo) 0-4.0, and two keys' 0.0.

Conventions: images are BGR ``uint8`` arrays indexed ``(row, col)``; boxes are
``(x, y, w, h)`` in pixels, ``x`` right, ``y`` down.
"""

from __future__ import annotations

import cv2
import numpy as np

__all__ = ["MIN_BODY_CONTRAST", "RING_SHARE", "MIN_PIP_CONTRAST", "body_contrast", "bare_pip"]

#: Least CIELAB distance (OpenCV's 8-bit Lab, about CIE76 units) between the
#: median colour of a die's middle and of the ring around its box for a 1.
MIN_BODY_CONTRAST: float = 5.0
#: Width of the ring around the box, as a share of its long side.
RING_SHARE: float = 0.3
#: Least Lab distance of the box's most different pixel from the ring's
#: median for the box to hold a pip-like spot at all (a light speck on dark
#: cloth: 60 and more).
MIN_PIP_CONTRAST: float = 40.0


def bare_pip(image: np.ndarray, box: tuple[int, int, int, int]) -> bool:
    """Whether `box` holds a spot (a "pip") on nothing but the floor: no die body around it.

    The box's middle is within :data:`MIN_BODY_CONTRAST` of the ring around
    it (:func:`body_contrast`), and some pixel of the box is at least
    :data:`MIN_PIP_CONTRAST` from the ring's colour.
    """
    contrast, spot = _contrasts(image, box)
    return contrast < MIN_BODY_CONTRAST and spot >= MIN_PIP_CONTRAST


def body_contrast(image: np.ndarray, box: tuple[int, int, int, int]) -> float:
    """Colour distance between the middle of `box` (its central three fifths) and a ring around it.

    Parameters
    ----------
    image : ndarray of shape (H, W, 3), dtype uint8
        The photo, BGR.
    box : (x, y, w, h)
        A die's box, px.

    Returns
    -------
    float
        Distance of the two median colours in OpenCV's 8-bit Lab; ``inf``
        when the box or the ring is empty (a box filling the picture).
    """
    return _contrasts(image, box)[0]


def _contrasts(image: np.ndarray, box: tuple[int, int, int, int]) -> tuple[float, float]:
    """(:func:`body_contrast`, the largest Lab distance of a pixel of the box's middle from the ring's median)."""
    x, y, w, h = (int(v) for v in box)
    height, width = image.shape[:2]
    m = int(RING_SHARE * max(w, h))
    x0, y0, x1, y1 = max(0, x - m), max(0, y - m), min(width, x + w + m), min(height, y + h + m)
    window = cv2.cvtColor(np.ascontiguousarray(image[y0:y1, x0:x1]), cv2.COLOR_BGR2LAB)
    ring = np.ones(window.shape[:2], bool)
    ring[max(0, y - y0) : max(0, y - y0 + h), max(0, x - x0) : max(0, x - x0 + w)] = False
    bx0, by0 = max(0, x - x0 + w // 5), max(0, y - y0 + h // 5)
    middle = window[by0 : max(by0, y - y0 + h - h // 5), bx0 : max(bx0, x - x0 + w - w // 5)].reshape(-1, 3)
    if not ring.any() or not len(middle):
        return float("inf"), 0.0
    floor = np.median(window[ring], axis=0).astype(np.float64)
    body = float(np.linalg.norm(np.median(middle, axis=0).astype(np.float64) - floor))
    return body, float(np.linalg.norm(middle.astype(np.float64) - floor, axis=1).max())
