"""The face reader's crops: the square cut around each die box and the network's input blob.

Training and inference both cut crops with :func:`crop_die` and standardise
them with :func:`preprocess`, so the crop geometry and the input the networks
see always match (the face reader, :mod:`vision.face`, and the pip finder,
:mod:`vision.pips`, take the same crops).

Conventions: images are BGR ``uint8`` arrays indexed ``(row, col)``; boxes are
``(x, y, w, h)`` in image pixels with ``x`` to the right and ``y`` down (OpenCV
order).
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

__all__ = ["CROP_SIZE", "DEFAULT_MARGIN", "crop_die", "preprocess"]

#: Side of the square crops the face reader takes, in pixels.
CROP_SIZE: int = 64

#: Margin added on each side of a die box by :func:`crop_die`, as a fraction of
#: the box's longer side.
DEFAULT_MARGIN: float = 0.15


def crop_die(
    image_bgr: np.ndarray,
    box: Sequence[float],
    *,
    margin: float = DEFAULT_MARGIN,
) -> np.ndarray:
    """Cut the square crop around one die that the face reader takes.

    The crop is centred on the box; its side is ``max(w, h) * (1 + 2 * margin)``
    image pixels. Parts that fall outside the image are filled by replicating
    the border pixels. The square is then resized to ``CROP_SIZE`` pixels
    (area averaging when shrinking, bilinear when enlarging). Training and
    inference both use this function, so the crop geometry always matches.

    Parameters
    ----------
    image_bgr : ndarray of shape (H, W, 3) or (H, W), dtype uint8
        The whole image, BGR (a 2-D grayscale image is converted to BGR).
        It is not modified.
    box : sequence of 4 float
        ``(x, y, w, h)`` box of the die in pixels of `image_bgr`; ``x, y`` is
        the top-left corner; ``w`` and ``h`` must be positive. The box may
        reach past the image border.
    margin : float, optional
        Extra context on each side, as a fraction of the box's longer side;
        must be in ``[0, 2]``.

    Returns
    -------
    crop : ndarray of shape (CROP_SIZE, CROP_SIZE, 3), dtype uint8
        BGR crop, a new array.

    Raises
    ------
    ValueError
        If `image_bgr` is empty or not a uint8 image, if `box` does not have
        four finite numbers with positive width and height, or if `margin` is
        out of range.

    Examples
    --------
    >>> import numpy as np
    >>> image = np.zeros((480, 640, 3), np.uint8)
    >>> crop_die(image, (600, 20, 60, 50)).shape  # half off the right border
    (64, 64, 3)
    """
    image = _check_image(image_bgr)
    try:
        x, y, w, h = (float(v) for v in box)
    except (TypeError, ValueError):
        raise ValueError(f"box must be 4 numbers (x, y, w, h) in pixels, got {box!r}") from None
    if not all(np.isfinite((x, y, w, h))) or w <= 0 or h <= 0:
        raise ValueError(f"box must have finite x, y and positive w, h in pixels, got {box!r}")
    if not 0.0 <= margin <= 2.0:
        raise ValueError(f"margin must be in [0, 2] (a fraction of the box side), got {margin!r}")
    side = max(w, h) * (1.0 + 2.0 * margin)
    return _crop_square(image, x + w / 2.0, y + h / 2.0, side, CROP_SIZE)


def _crop_square(image: np.ndarray, cx: float, cy: float, side: float, size: int) -> np.ndarray:
    """Square of `side` px centred on ``(cx, cy)``, border replicated, resized to `size` px."""
    side_px = max(1, int(round(side)))
    x0 = int(round(cx - side_px / 2.0))
    y0 = int(round(cy - side_px / 2.0))
    # An integer translation with nearest-neighbour sampling copies pixels
    # exactly and replicates the border where the square leaves the image.
    shift = np.array([[1.0, 0.0, -x0], [0.0, 1.0, -y0]], dtype=np.float64)
    square = cv2.warpAffine(image, shift, (side_px, side_px), flags=cv2.INTER_NEAREST, borderMode=cv2.BORDER_REPLICATE)
    interp = cv2.INTER_AREA if side_px > size else cv2.INTER_LINEAR
    return cv2.resize(square, (size, size), interpolation=interp)


def preprocess(crops: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
    """Turn crops into the network's input blob.

    Each crop is scaled to ``[0, 1]`` and standardised on its own (its mean
    over all pixels and channels subtracted, divided by its standard
    deviation plus 0.05), so that the network sees contrast, not exposure.

    Parameters
    ----------
    crops : sequence of ndarray of shape (CROP_SIZE, CROP_SIZE, 3), dtype uint8
        BGR crops from :func:`crop_die`; also an array of shape
        ``(N, CROP_SIZE, CROP_SIZE, 3)``.

    Returns
    -------
    blob : ndarray of shape (N, 3, CROP_SIZE, CROP_SIZE), dtype float32
        Channels in BGR order.

    Raises
    ------
    ValueError
        If a crop is not a ``(CROP_SIZE, CROP_SIZE, 3)`` uint8 array.
    """
    if isinstance(crops, np.ndarray) and crops.ndim == 4:
        batch = crops
    else:
        batch = (
            np.stack([np.asarray(c) for c in crops]) if len(crops) else np.zeros((0, CROP_SIZE, CROP_SIZE, 3), np.uint8)
        )
    if batch.dtype != np.uint8 or batch.shape[1:] != (CROP_SIZE, CROP_SIZE, 3):
        raise ValueError(
            f"crops must be uint8 arrays of shape ({CROP_SIZE}, {CROP_SIZE}, 3) as made by "
            f"vision.face.crop_die, got dtype {batch.dtype} and shape {batch.shape[1:]}"
        )
    x = batch.astype(np.float32) / 255.0
    mean = x.mean(axis=(1, 2, 3), keepdims=True)
    std = x.std(axis=(1, 2, 3), keepdims=True)
    x = (x - mean) / (std + 0.05)
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


def _check_image(image: np.ndarray) -> np.ndarray:
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8:
        got = f"dtype {image.dtype}" if isinstance(image, np.ndarray) else type(image).__name__
        raise ValueError(f"image_bgr must be a uint8 numpy array (as from cv2.imread), got {got}")
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.ndim != 3 or image.shape[2] != 3 or image.shape[0] == 0 or image.shape[1] == 0:
        raise ValueError(
            f"image_bgr must have shape (H, W, 3) with H, W > 0, got {image.shape}; convert with cv2.cvtColor first"
        )
    return image
