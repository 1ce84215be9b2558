"""What the reader checks of a photo and the problems it reports with what to do.

:func:`check_image` refuses what is not a photo before anything is read;
:func:`_exposure` and :func:`_too_bright` judge the light, and
:func:`_dice_problems` names what kept dice from being read (too small,
blurred, leaning, cut off, unreadable), each problem a sentence a player can
act on.

Conventions: images are BGR ``uint8`` arrays indexed ``(row, col)``; boxes are
``(x, y, w, h)`` in pixels of the image given, ``x`` right, ``y`` down.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.images import MIN_SIDE_PX
from vision.reading import DieReading, UnknownReason

__all__ = ["DARK_MEAN_LEVEL", "BLUR_SHARPNESS", "BRIGHT_SHARE", "SMALL_DIE_PX", "STACKED_PROBLEM", "check_image"]

#: Mean grey level (0-255) under which a frame is "too dark".
DARK_MEAN_LEVEL: float = 35.0

#: Median, over the dice found, of each die's sharpness (the variance of the
#: Laplacian of its grey face crop over the variance of its grey levels, so a
#: dark frame is not taken for a blurred one) under which the frame is
#: "blurred". The softest DEV source (nell, small dice enlarged) has at least
#: 0.028; a Gaussian blur of sigma 2 px takes it to at most 0.027.
BLUR_SHARPNESS: float = 0.025

#: Share of the picture outside the dice blown out to white (all channels >=
#: 250) above which the frame is "too bright". Whole DEV photos: at most 0.024;
#: exposed 1.8 times brighter, 0.33 and more (kingpi, nell). Outside the dice,
#: so that an ivory die filling a close-up is not taken for over-exposure.
BRIGHT_SHARE: float = 0.25

#: The problem reported when a die lies on another (:attr:`UnknownReason.STACKED`).
STACKED_PROBLEM: str = "dice stacked: separate them"

#: Dice whose median box is under this many pixels across are too small in the
#: picture to tell blur from size; when some of them are unreadable the reader
#: says so instead of "blurred" (nell DEV photos brought to 200 px: 11-17 px).
SMALL_DIE_PX: float = 20.0


def check_image(image_bgr: object, name: str = "image_bgr") -> np.ndarray:
    """Check a photo at the door and return it as BGR ``uint8`` ``(H, W, 3)``.

    Parameters
    ----------
    image_bgr : ndarray of shape (H, W, 3), (H, W, 4) or (H, W), dtype uint8
        A BGR photo; grayscale (2-D) and BGRA photos are converted.
    name : str, optional
        Parameter name used in error messages.

    Returns
    -------
    ndarray of shape (H, W, 3), dtype uint8

    Raises
    ------
    ValueError
        If `image_bgr` is not a numpy array, not ``uint8``, empty, or of another shape.
    """
    if not isinstance(image_bgr, np.ndarray):
        raise ValueError(
            f"{name} must be a numpy uint8 array of shape (H, W, 3) (as from cv2.imread or "
            f"vision.load_image), got {type(image_bgr).__name__}"
        )
    if image_bgr.dtype != np.uint8:
        raise ValueError(
            f"{name} must be uint8 (0-255), got dtype {image_bgr.dtype}; convert it, e.g. "
            "cv2.convertScaleAbs or (img * 255).clip(0, 255).astype(np.uint8) for floats in [0, 1]"
        )
    if image_bgr.ndim == 2:
        image_bgr = cv2.cvtColor(image_bgr, cv2.COLOR_GRAY2BGR)
    elif image_bgr.ndim == 3 and image_bgr.shape[2] == 4:
        image_bgr = cv2.cvtColor(image_bgr, cv2.COLOR_BGRA2BGR)
    elif image_bgr.ndim == 3 and image_bgr.shape[2] == 1:
        image_bgr = cv2.cvtColor(image_bgr, cv2.COLOR_GRAY2BGR)
    if image_bgr.ndim != 3 or image_bgr.shape[2] != 3:
        raise ValueError(f"{name} must have shape (H, W, 3) (BGR) or (H, W) (grey), got {image_bgr.shape}")
    if image_bgr.shape[0] < MIN_SIDE_PX or image_bgr.shape[1] < MIN_SIDE_PX:
        raise ValueError(f"{name} is too small ({image_bgr.shape[1]}x{image_bgr.shape[0]} px); give a photo")
    return image_bgr


def _exposure(image: np.ndarray) -> tuple[list[str], np.ndarray, int]:
    """The "too dark" problem, or none, and the blown-out mask :func:`_too_bright` judges later.

    Parameters
    ----------
    image : ndarray of shape (H, W, 3), dtype uint8
        The photo, BGR.

    Returns
    -------
    problems : list of str
        One problem when the mean grey level is under :data:`DARK_MEAN_LEVEL`, else empty.
    blown : ndarray of shape (H', W'), dtype bool
        Whether each pixel of the photo sampled every `step` px is blown out to white.
    step : int
        The sampling step, px: about 160 samples along the long side.
    """
    problems: list[str] = []
    step = max(1, max(image.shape[:2]) // 160)  # ~160 samples along the long side is plenty for a mean
    sample = image[::step, ::step]
    mean_level = float(sample.mean())
    if mean_level < DARK_MEAN_LEVEL:
        problems.append(f"frame too dark (mean level {mean_level:.0f} of 255): add light or raise the exposure")
    # blown out to white, on the same sparse grid; channel by channel, because numpy's
    # min over the 3-long last axis of this strided view took 1.1 ms a 640 px photo (this: 0.06 ms)
    blown = np.minimum(np.minimum(sample[..., 0], sample[..., 1]), sample[..., 2]) >= 250
    return problems, blown, step


def _too_bright(blown: np.ndarray, step: int, boxes: list[tuple[int, int, int, int]]) -> list[str]:
    """The "too bright" problem, or none: judged on the picture outside the dice.

    Parameters
    ----------
    blown : ndarray of shape (H', W'), dtype bool
        Whether each pixel of the photo sampled every `step` px is blown out to white.
    step : int
        The sampling step, px.
    boxes : list of (x, y, w, h)
        The dice, px of the photo: a light die filling a close-up is not an
        exposure fault. When they cover more than 3/4 of the picture nothing is
        judged.

    Returns
    -------
    list of str
        One problem when more than :data:`BRIGHT_SHARE` of the rest is blown out, else empty.
    """
    outside = np.ones_like(blown)
    for x, y, w, h in boxes:
        outside[y // step : -(-(y + h) // step), x // step : -(-(x + w) // step)] = False
    if outside.mean() < 0.25:
        return []
    share = float(blown[outside].mean())
    if share <= BRIGHT_SHARE:
        return []
    return [f"frame too bright ({share:.0%} of it blown out to white): lower the exposure or the light"]


def _is_blurred(crops: list[np.ndarray]) -> bool:
    """Whether the median sharpness of the face crops is under :data:`BLUR_SHARPNESS` (contrast-free)."""
    if not crops:
        return False
    sharpness = []
    for crop in crops:
        grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
        sharpness.append(float(cv2.Laplacian(grey, cv2.CV_32F).var()) / (float(grey.astype(np.float32).var()) + 1.0))
    return float(np.median(sharpness)) < BLUR_SHARPNESS


def _dice_problems(dice: list[DieReading], crops: list[np.ndarray], too_bright: bool = False) -> list[str]:
    """The problems that kept dice from being read: too small or blurred, leaning, stacked, cut off, unreadable.

    In a blurred or blown-out frame a die left unknown as leaning is counted unreadable instead: blur and
    glare reshape its outline, and the frame's own problem is what to fix (1.8 times brighter DEV kingpi
    photos, all dice flat: 7 of 13 had a die said to lean).

    Parameters
    ----------
    dice : list of DieReading
        The readings, at least one; boxes in px.
    crops : list of ndarray of shape (S, S, 3), dtype uint8
        Their face crops, for the blur check (:data:`BLUR_SHARPNESS`).
    too_bright : bool, optional
        Whether the frame was found too bright (:func:`_too_bright`).

    Returns
    -------
    list of str
        The problems, in the order the reading reports them.
    """
    problems: list[str] = []
    leaning_count = sum(d.reason == UnknownReason.LEANING for d in dice)
    cut_count = sum(d.reason == UnknownReason.CUT_OFF for d in dice)
    stacked = any(d.reason == UnknownReason.STACKED for d in dice)
    die_px = float(np.median([max(d.box[2], d.box[3]) for d in dice]))
    unreadable = sum(1 for d in dice if d.value is None and d.reason.needs_reroll)
    blurred = die_px >= SMALL_DIE_PX and _is_blurred(crops)
    if die_px < SMALL_DIE_PX:
        if unreadable:
            problems.append(
                f"dice only about {die_px:.0f} px across in the picture: move the camera closer or use a bigger photo"
            )
    elif blurred:
        problems.append("frame blurred: wait for the dice to settle or check the focus")
    if (blurred or too_bright) and leaning_count:
        unreadable, leaning_count = unreadable + leaning_count, 0
    if leaning_count:
        problems.append(
            f"{_dice_word(leaning_count)} leaning on the wall or another die: "
            f"re-roll or nudge {_it_or_them(leaning_count)} flat"
        )
    if stacked:
        problems.append(STACKED_PROBLEM)
    if cut_count:
        problems.append(
            f"{_dice_word(cut_count)} cut off by the edge of the picture: move {_it_or_them(cut_count)} into view"
        )
    if unreadable:
        problems.append(f"{_dice_word(unreadable)} unreadable: re-roll or adjust")
    return problems


def _dice_word(n: int) -> str:
    return "1 die" if n == 1 else f"{n} dice"


def _it_or_them(n: int) -> str:
    return "it" if n == 1 else "them"
