"""One-call rendering: :func:`render_tray` and :func:`render_die_crop`."""

from __future__ import annotations

import math
from collections.abc import Sequence

import cv2
import numpy as np

from vision.render._layout import TrayScene, _check_values, _rng
from vision.render._types import RenderedDie, RenderedTray


def render_tray(
    values: Sequence[int],
    *,
    seed: int | np.random.Generator = 0,
    size: tuple[int, int] = (640, 480),
    die_px: float | None = None,
    style: str | None = None,
    touching: bool = False,
    noise: float | None = None,
    blur: float | None = None,
    jpeg: bool | None = None,
) -> RenderedTray:
    """Render a top-down photo-like picture of d6 dice lying in a tray.

    Parameters
    ----------
    values : sequence of int
        Face values 1-6 of the dice to draw, 1 to 30 of them; one die per value.
    seed : int or numpy.random.Generator, optional
        Seed of every random choice; the same seed and arguments give the same
        image, bit for bit.  A Generator is used (and advanced) as given.
    size : tuple of 2 int, optional
        ``(width, height)`` of the image in pixels (OpenCV order).
    die_px : float, optional
        Side of each die's top face in pixels.  Default: random in 42-56 px for a
        640x480 image (scaled with the image), smaller when many dice must fit.
    style : str, optional
        Tray style, one of :data:`STYLES`; random when None.
    touching : bool, optional
        Place at least one pair of dice touching each other (when 2+ dice).
    noise : float, optional
        Standard deviation of the Gaussian sensor noise in grey levels (0-255
        scale); 0 for none; random in 1.5-5 when None.
    blur : float, optional
        Gaussian blur sigma in pixels; 0 for none; random in 0.3-0.9 when None.
    jpeg : bool, optional
        Pass the image through JPEG at a random quality 60-92 when True, never when
        False, with probability 0.6 when None.

    Returns
    -------
    RenderedTray
        ``image`` of shape (height, width, 3), dtype uint8, BGR; ``dice`` in the
        order of `values` with boxes ``(x, y, w, h)`` of the whole visible die.

    Raises
    ------
    ValueError
        If a value is not 1-6, there are no values or more than 30, `size`,
        `die_px`, `style` or `noise` is out of range, or the dice do not fit on
        the tray without overlapping (fewer dice or a smaller `die_px` helps).

    Notes
    -----
    The camera model is a pinhole straight above the tray: each die's top face is
    2.5-5 % nearer the camera than the floor, so dice away from the image centre
    show the side faces turned towards the centre.  Shading is Lambert plus a
    Blinn-Phong highlight under one distant light, with soft cast shadows.

    Examples
    --------
    >>> tray = render_tray([1, 2, 3, 4, 5], seed=7)
    >>> tray.image.shape, tray.values
    ((480, 640, 3), (1, 2, 3, 4, 5))
    """
    vals = _check_values(values)
    rng = _rng(seed)
    scene = TrayScene(seed=rng, size=size, style=style, die_px=die_px, n_dice=len(vals))
    placements = scene.layout(vals, seed=rng, touching=touching)
    return scene.render(placements, seed=rng, noise=noise, blur=blur, jpeg=jpeg)


def render_die_crop(
    value: int,
    *,
    seed: int | np.random.Generator = 0,
    size: int = 64,
    style: str | None = None,
    margin: float | None = None,
    noise: float | None = None,
) -> RenderedTray:
    """Render one die and crop a square around it, as a face reader would see it.

    Parameters
    ----------
    value : int
        Face value 1-6.
    seed : int or numpy.random.Generator, optional
        Seed of every random choice (deterministic for an int).
    size : int, optional
        Side of the square crop in pixels, 16-512.
    style : str, optional
        Tray style, one of :data:`STYLES`; random when None.
    margin : float, optional
        Crop side over the larger side of the die's box; random in 1.1-1.4 when None.
    noise : float, optional
        Sensor noise as for :func:`render_tray`.

    Returns
    -------
    RenderedTray
        ``image`` of shape (size, size, 3), dtype uint8, BGR, and the one die with
        its box, centre and face size in crop pixels.

    Raises
    ------
    ValueError
        If `value` is not 1-6 or `size` is not 16-512.
    """
    _check_values([value])
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or not 16 <= size <= 512:
        raise ValueError(f"size must be a whole number of pixels 16-512, got {size!r}")
    rng = _rng(seed)
    m = float(rng.uniform(1.1, 1.4)) if margin is None else float(margin)
    if not 1.0 <= m <= 4.0:
        raise ValueError(f"margin must be 1-4 (crop side over die box side), got {margin!r}")
    tray = render_tray([value], seed=rng, size=(320, 240), die_px=float(rng.uniform(40, 56)), style=style, noise=noise)
    die = tray.dice[0]
    x, y, bw, bh = die.box
    side = max(bw, bh) * m
    cx, cy = x + bw / 2 + rng.uniform(-0.04, 0.04) * side, y + bh / 2 + rng.uniform(-0.04, 0.04) * side
    f = size / side
    mat = np.float32([[f, 0, size / 2 - cx * f], [0, f, size / 2 - cy * f]])
    crop = cv2.warpAffine(
        np.asarray(tray.image), mat, (size, size), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REFLECT
    )
    crop.setflags(write=False)

    def tf(px: float, py: float) -> tuple[float, float]:
        return px * f + mat[0, 2], py * f + mat[1, 2]

    outline = tuple(tf(px, py) for px, py in die.outline)
    xs = [p[0] for p in outline]
    ys = [p[1] for p in outline]
    box = (
        int(math.floor(min(xs))),
        int(math.floor(min(ys))),
        int(math.ceil(max(xs)) - math.floor(min(xs))),
        int(math.ceil(max(ys)) - math.floor(min(ys))),
    )
    one = RenderedDie(
        value=die.value,
        box=box,
        centre_xy=tf(*die.centre_xy),
        angle_deg=die.angle_deg,
        colour=die.colour,
        face_px=die.face_px * f,
        outline=outline,
    )
    return RenderedTray(image=crop, dice=(one,), style=tray.style)
