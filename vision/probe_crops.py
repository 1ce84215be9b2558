"""Fixed probe crops: deterministic drawn die faces whose answers each network's JSON records.

Runtime code (``dicetable doctor``) and the lab (training, tests) both check a shipped network
against these crops, so they live with the runtime; :mod:`vision.lab.training.synth` re-exports them.
Uses only numpy and OpenCV.
"""

from __future__ import annotations

import cv2
import numpy as np

#: Pip centres of each face value, in units of the face side, relative to the
#: face centre, ``(x, y)`` with ``y`` down.
PIP_LAYOUTS: dict[int, tuple[tuple[float, float], ...]] = {
    1: ((0.0, 0.0),),
    2: ((-1.0, -1.0), (1.0, 1.0)),
    3: ((-1.0, -1.0), (0.0, 0.0), (1.0, 1.0)),
    4: ((-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)),
    5: ((-1.0, -1.0), (1.0, -1.0), (0.0, 0.0), (-1.0, 1.0), (1.0, 1.0)),
    6: ((-1.0, -1.0), (-1.0, 0.0), (-1.0, 1.0), (1.0, -1.0), (1.0, 0.0), (1.0, 1.0)),
}

_SS = 4  # supersampling factor


def _rounded_square(size: int, centre: np.ndarray, side: float, angle: float, radius_frac: float) -> np.ndarray:
    """Mask (uint8 0/255) of a rotated rounded square, supersampled coordinates."""
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    c, s = np.cos(angle), np.sin(angle)
    u = (xx - centre[0]) * c + (yy - centre[1]) * s
    v = -(xx - centre[0]) * s + (yy - centre[1]) * c
    half = side / 2
    r = radius_frac * side
    du = np.maximum(np.abs(u) - (half - r), 0)
    dv = np.maximum(np.abs(v) - (half - r), 0)
    return ((du**2 + dv**2) <= r**2).astype(np.uint8) * 255


def plain_face(value: int, *, size: int = 64, angle_deg: float = 0.0, background: int = 60) -> np.ndarray:
    """A clean, deterministic die crop: white square with `value` black pips.

    The square fills the die box of a :func:`vision.face.crop_die` crop (side
    ``size / 1.3``) on a uniform gray background; used by the tests as a
    fixed input with a known answer.

    Parameters
    ----------
    value : int
        Face value 1..6 (0 draws a blank white square).
    size : int, optional
        Side of the crop in px.
    angle_deg : float, optional
        Rotation of the die, in degrees.
    background : int, optional
        Gray level of the background, 0-255.

    Returns
    -------
    crop : ndarray of shape (size, size, 3), dtype uint8
    """
    S = size * _SS
    img = np.full((S, S, 3), float(background))
    side = S / 1.3 * 0.85
    angle = np.deg2rad(angle_deg)
    centre = np.array([S / 2, S / 2])
    m = _rounded_square(S, centre, side, angle, 0.12)
    img[m > 0] = 235.0
    c, s = np.cos(angle), np.sin(angle)
    for px, py in PIP_LAYOUTS.get(value, ()):
        u, v = px * 0.27 * side, py * 0.27 * side
        x = centre[0] + u * c - v * s
        y = centre[1] + u * s + v * c
        cv2.circle(img, (int(round(x)), int(round(y))), int(round(0.09 * side)), (20.0, 20.0, 20.0), -1, cv2.LINE_AA)
    return cv2.resize(img.astype(np.float32), (size, size), interpolation=cv2.INTER_AREA).round().astype(np.uint8)


def fixed_probe_crops() -> tuple[np.ndarray, list[str]]:
    """Deterministic crops whose top classes are recorded in the model metadata at training time.

    The tests check that the packaged model still gives these answers.

    Returns
    -------
    crops : ndarray of shape (14, 64, 64, 3), dtype uint8
        Plain faces 1-6 at 0 and 30 degrees, a uniform gray crop, a noise crop.
    names : list of str
        One name per crop.
    """
    crops, names = [], []
    for v in range(1, 7):
        for ang in (0, 30):
            crops.append(plain_face(v, angle_deg=ang))
            names.append(f"plain_{v}_rot{ang}")
    crops.append(np.full((64, 64, 3), 128, np.uint8))
    names.append("uniform_gray")
    rng = np.random.default_rng(1234)
    crops.append(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8))
    names.append("noise_seed1234")
    return np.stack(crops), names
