"""Labelled photos as another camera would take them: light, lens, sensor and pose changes.

The acceptance photos come from other cameras than the DEV set's. To see which
change of camera the reader is weak against, each change here turns one
labelled photo into the photo another camera (or another light, or a camera
hung another way) would plausibly have taken of the same dice, and moves the
labelled boxes with it. ``benchmarks/camera_changes.py`` reads DEV so changed
and prints the reader's numbers per change.

The idea is that of common-corruption benchmarks (Hendrycks and Dietterich,
"Benchmarking Neural Network Robustness to Common Corruptions and
Perturbations", ICLR 2019): fixed, named changes at one severity each,
applied to real photos, so that robustness is measured on real dice rather
than on rendered ones. The severities are those of ordinary cameras, not
extremes: about a stop and a half of exposure, the white balance of a
tungsten lamp or of shade, a 30 degree turn, a 20 degree tilt.

Every change takes a BGR ``uint8`` photo of shape ``(H, W, 3)``, the labelled
boxes as ``(x, y, w, h)`` pixels, and a ``numpy.random.Generator`` (used by
the changes with noise; the others ignore it), and returns the changed photo
(BGR ``uint8``, possibly of another size) and the boxes in its pixels. A box
moved by a turn or a tilt becomes the axis-aligned box of its four moved
corners, clipped to the photo.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import cv2
import numpy as np

from vision.images import jpeg_roundtrip

__all__ = ["CAMERA_CHANGES", "Box", "apply_change", "change_names", "in_linear_light", "quarter_turn"]

Box = tuple[int, int, int, int]
_Change = Callable[[np.ndarray, Sequence[Box], np.random.Generator], tuple[np.ndarray, list[Box]]]

#: Display gamma used to go to linear light and back (sRGB is close to 2.2).
_GAMMA = 2.2


def in_linear_light(image: np.ndarray, gain: float | np.ndarray) -> np.ndarray:
    """`image` with its light multiplied by `gain`: an exposure or white-balance change.

    Grey levels are taken to linear light with the display gamma (2.2, close to
    sRGB), multiplied, clipped to full white and taken back.

    Parameters
    ----------
    image : ndarray of shape (..., 3), uint8 or float grey levels 0-255
    gain : float or ndarray of shape (3,)
        Light multiplier, one for all channels or one per BGR channel (2 is
        one stop brighter, 0.5 one stop darker).

    Returns
    -------
    ndarray, float32 grey levels 0-255, the shape of `image`
    """
    linear = np.clip(np.asarray(image, np.float32) / 255.0, 0.0, 1.0) ** _GAMMA
    return np.clip(linear * gain, 0.0, 1.0) ** (1.0 / _GAMMA) * 255.0


def _gains(b: float, g: float, r: float) -> _Change:
    """Per-channel gains in linear light (a white balance or an exposure change)."""
    gain = np.array([b, g, r], np.float32)

    def change(image, boxes, rng):
        return (in_linear_light(image, gain) + 0.5).astype(np.uint8), list(boxes)

    return change


def _low_contrast(image, boxes, rng):
    """Haze or a flat, diffuse light: every pixel moved 45 % of the way to the photo's mean grey."""
    mean = float(image.mean())
    return np.clip(image.astype(np.float32) * 0.55 + mean * 0.45 + 0.5, 0, 255).astype(np.uint8), list(boxes)


def _sensor_noise(image, boxes, rng):
    """A small sensor in dim light: Gaussian noise of 12 grey levels per channel and pixel."""
    noisy = image.astype(np.float32) + rng.normal(0.0, 12.0, image.shape).astype(np.float32)
    return np.clip(noisy + 0.5, 0, 255).astype(np.uint8), list(boxes)


def _low_light(image, boxes, rng):
    """Dim light: 1.5 stops under-exposed in linear light, then the sensor noise of :func:`_sensor_noise`."""
    dark, boxes = _gains(0.35, 0.35, 0.35)(image, boxes, rng)
    return _sensor_noise(dark, boxes, rng)


def _median_side(boxes: Sequence[Box], image: np.ndarray) -> float:
    sides = [max(w, h) for _, _, w, h in boxes]
    return float(np.median(sides)) if sides else max(image.shape[:2]) / 16.0


def _defocus(image, boxes, rng):
    """A lens slightly out of focus.

    Gaussian blur with sigma 4 % of the median die side (about 1.6 px on 40 px dice).
    """
    sigma = 0.04 * _median_side(boxes, image)
    return cv2.GaussianBlur(image, (0, 0), sigmaX=sigma), list(boxes)


def _jpeg(image, boxes, rng):
    """A cheap webcam's stream: JPEG at quality 30."""
    return jpeg_roundtrip(image, 30), list(boxes)


def _resize(factor: float) -> _Change:
    """The same view with `factor` times as many pixels across (cubic up, area down)."""

    def change(image, boxes, rng):
        h, w = image.shape[:2]
        size = (max(1, round(w * factor)), max(1, round(h * factor)))
        sx, sy = size[0] / w, size[1] / h
        out = cv2.resize(image, size, interpolation=cv2.INTER_CUBIC if factor > 1 else cv2.INTER_AREA)
        return out, _moved_boxes(boxes, np.diag([sx, sy, 1.0]), size)

    return change


def _border_colour(image: np.ndarray) -> tuple[int, int, int]:
    """The median colour of the photo's outermost pixels, to fill what a turned or tilted photo uncovers."""
    edge = np.concatenate([image[0], image[-1], image[:, 0], image[:, -1]])
    return tuple(int(v) for v in np.median(edge, axis=0))


def _warp_to_fit(image: np.ndarray, boxes: Sequence[Box], matrix: np.ndarray) -> tuple[np.ndarray, list[Box]]:
    """Warp `image` by the 3x3 `matrix`, on a canvas that holds the whole warped photo."""
    h, w = image.shape[:2]
    corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)
    moved = cv2.perspectiveTransform(corners[None], matrix)[0]
    x0, y0 = np.floor(moved.min(axis=0))
    x1, y1 = np.ceil(moved.max(axis=0))
    shift = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64)
    full = shift @ matrix
    size = (int(x1 - x0), int(y1 - y0))
    out = cv2.warpPerspective(
        image, full, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=_border_colour(image)
    )
    return out, _moved_boxes(boxes, full, size)


def _turn(image, boxes, rng):
    """The camera turned 30 degrees about its axis (the photo turned about its centre, canvas enlarged)."""
    h, w = image.shape[:2]
    m = np.vstack([cv2.getRotationMatrix2D((w / 2.0, h / 2.0), 30.0, 1.0), [0, 0, 1]])
    return _warp_to_fit(image, boxes, m)


def _tilt(image, boxes, rng):
    """The camera tilted 20 degrees from looking straight down (the far side of the photo shrinks).

    The homography of a camera turned about its x axis, ``K R K^-1`` (Hartley
    and Zisserman, *Multiple View Geometry*, 2nd ed., section 8.4), with the
    focal length equal to the photo's long side (a field of view of about 53
    degrees, a phone's or the Pi camera's) and the principal point at the centre.
    """
    h, w = image.shape[:2]
    f = float(max(h, w))
    k = np.array([[f, 0, w / 2.0], [0, f, h / 2.0], [0, 0, 1]], np.float64)
    a = np.radians(20.0)
    r = np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]], np.float64)
    return _warp_to_fit(image, boxes, k @ r @ np.linalg.inv(k))


def _moved_boxes(boxes: Sequence[Box], matrix: np.ndarray, size: tuple[int, int]) -> list[Box]:
    """Each box's four corners moved by the 3x3 `matrix`; their axis-aligned box, clipped to `size` (w, h)."""
    out: list[Box] = []
    for x, y, w, h in boxes:
        corners = np.array([[[x, y], [x + w, y], [x + w, y + h], [x, y + h]]], np.float64)
        moved = cv2.perspectiveTransform(corners, matrix)[0]
        x0, y0 = np.clip(moved.min(axis=0), 0, size)
        x1, y1 = np.clip(moved.max(axis=0), 0, size)
        out.append((int(round(x0)), int(round(y0)), int(round(x1 - x0)), int(round(y1 - y0))))
    return out


def quarter_turn(image: np.ndarray, boxes: Sequence[Box], k: int) -> tuple[np.ndarray, list[Box]]:
    """The photo turned by `k` quarter turns counter-clockwise (a camera mounted another way round), losslessly.

    Parameters
    ----------
    image : ndarray of shape (H, W, 3), dtype uint8
        The photo, BGR.
    boxes : sequence of (x, y, w, h)
        Boxes in pixels of `image`.
    k : int
        Number of quarter turns (any integer; taken modulo 4).

    Returns
    -------
    turned : ndarray of shape (H, W, 3) or (W, H, 3), dtype uint8
        A new, contiguous array.
    moved : list of (x, y, w, h)
        The boxes in pixels of `turned`.
    """
    out = [tuple(int(v) for v in b) for b in boxes]
    height, width = image.shape[:2]
    for _ in range(k % 4):
        out = [(y, width - x - w, h, w) for x, y, w, h in out]  # np.rot90: (x, y) -> (y, W - x)
        height, width = width, height
    return np.ascontiguousarray(np.rot90(image, k % 4)), out


#: The changes by name, in the order the benchmark prints them. ``none`` is
#: the photo as it is (the baseline the others are compared with).
CAMERA_CHANGES: dict[str, _Change] = {
    "none": lambda image, boxes, rng: (image.copy(), list(boxes)),
    "warm": _gains(0.6, 0.9, 1.15),  # tungsten light on a daylight white balance
    "cool": _gains(1.25, 1.0, 0.75),  # shade on a daylight white balance
    "dark": _gains(0.35, 0.35, 0.35),  # 1.5 stops under-exposed
    "bright": _gains(2.0, 2.0, 2.0),  # one stop over-exposed (highlights clip)
    "low_contrast": _low_contrast,
    "noise": _sensor_noise,
    "low_light": _low_light,
    "defocus": _defocus,
    "jpeg": _jpeg,
    "upscale": _resize(2.0),  # a sensor with twice the pixels across
    "downscale": _resize(0.6),  # a camera farther away, or one with fewer pixels
    "turn": _turn,
    "tilt": _tilt,
}


def change_names() -> list[str]:
    """The names of :data:`CAMERA_CHANGES`, in order."""
    return list(CAMERA_CHANGES)


def apply_change(
    name: str, image: np.ndarray, boxes: Sequence[Box], rng: np.random.Generator
) -> tuple[np.ndarray, list[Box]]:
    """Apply the camera change `name` to a labelled photo.

    Parameters
    ----------
    name : str
        A key of :data:`CAMERA_CHANGES`.
    image : ndarray of shape (H, W, 3), dtype uint8
        The photo, BGR.
    boxes : sequence of (x, y, w, h)
        The labelled dice's boxes, in pixels of `image`.
    rng : numpy.random.Generator
        Draws the noise of the noisy changes.

    Returns
    -------
    changed : ndarray of shape (H2, W2, 3), dtype uint8
        The changed photo, BGR (the turn, tilt and resizes change its size).
    moved : list of (x, y, w, h)
        The boxes in pixels of `changed`, in the order given.

    Raises
    ------
    ValueError
        If `name` is not a change (the message lists them), or `image` is not
        an ``(H, W, 3)`` ``uint8`` array.
    """
    if name not in CAMERA_CHANGES:
        raise ValueError(f"unknown camera change {name!r}; choose from {', '.join(CAMERA_CHANGES)}")
    image = np.asarray(image)
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"the photo must be an (H, W, 3) uint8 BGR array, not {image.dtype} of shape {image.shape}")
    return CAMERA_CHANGES[name](image, boxes, rng)
