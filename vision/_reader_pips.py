"""A classical pip count on a die crop, used by :mod:`vision.reader` to corroborate.

The learned face reader decides values; this count only has to agree with a
value the face reader is not sure of before that value is reported. It works on
:func:`vision.reader.pip_contrast_view` of the crop, so coloured pips on
coloured dice count as well as black pips on white ones.
"""

from __future__ import annotations

import cv2
import numpy as np

__all__ = ["count_pips"]


def count_pips(contrast_view: np.ndarray, margin: float) -> int:
    """Count pip-like dark blobs inside the die box of a crop.

    Parameters
    ----------
    contrast_view : ndarray of shape (S, S, 3) or (S, S), dtype uint8
        :func:`vision.reader.pip_contrast_view` of a crop made by
        :func:`vision.face.crop_die` (dark pips on a light face).
    margin : float
        The margin the crop was made with (fraction of the box's long side); only
        the box itself, less 2 px, is searched.

    Returns
    -------
    int
        Number of dark blobs (Otsu threshold) that do not touch the searched
        square, have an area of 0.4 % to 5 % of it, an aspect ratio up to 2.2 and
        fill at least half their bounding box: 0 when none.
    """
    grey = contrast_view[..., 0] if contrast_view.ndim == 3 else contrast_view
    side = grey.shape[0]
    m = int(side * margin / (1.0 + 2.0 * margin)) + 2
    inner = grey[m:side - m, m:side - m]
    s = inner.shape[0]
    if s < 8:
        return 0
    _, dark = cv2.threshold(inner, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    n, _, stats, _ = cv2.connectedComponentsWithStats(dark)
    count = 0
    for x, y, w, h, area in stats[1:n]:
        if x == 0 or y == 0 or x + w >= s or y + h >= s:
            continue
        if 0.004 * s * s <= area <= 0.05 * s * s and max(w, h) <= 2.2 * min(w, h) and area >= 0.5 * w * h:
            count += 1
    return count
