"""Value types and fixed tables of the synthetic tray renderer."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

#: Tray styles :func:`vision.render.render_tray` knows, by name.
#:
#: ``"round"``: a dark round plastic tray with a rim on a light desk (Pi camera over a
#: dice tower tray); ``"box"``: a rectangular box with a light cardboard floor and
#: sloping inner walls; ``"felt"``: a rectangular tray lined with coloured felt and a
#: wooden or dark rim; ``"wood"``: dice on a wooden board in a dark frame;
#: ``"paper"``: dice on a plain sheet of paper filling the view (no walls).
STYLES: tuple[str, ...] = ("round", "box", "felt", "wood", "paper")

#: Dice colours by name: ``(body BGR, pip BGR)``, floats in ``[0, 1]``.
DICE_COLOURS: dict[str, tuple[tuple[float, float, float], tuple[float, float, float]]] = {
    "ivory": ((0.80, 0.93, 0.95), (0.06, 0.06, 0.07)),
    "white": ((0.93, 0.93, 0.92), (0.05, 0.05, 0.06)),
    "red": ((0.10, 0.12, 0.78), (0.93, 0.93, 0.93)),
    "green": ((0.30, 0.62, 0.10), (0.95, 0.95, 0.95)),
    "blue": ((0.72, 0.32, 0.10), (0.95, 0.95, 0.95)),
    "black": ((0.10, 0.10, 0.11), (0.92, 0.92, 0.92)),
    "yellow": ((0.12, 0.85, 0.93), (0.07, 0.07, 0.08)),
    "purple": ((0.45, 0.15, 0.35), (0.93, 0.93, 0.93)),
}

#: Pip centres of each face in units of the pip offset, ``(u, v)`` with ``u`` along
#: the die's own x axis and ``v`` along its y axis (both in the image plane).
PIP_LAYOUTS: dict[int, tuple[tuple[int, int], ...]] = {
    1: ((0, 0),),
    2: ((-1, -1), (1, 1)),
    3: ((-1, -1), (0, 0), (1, 1)),
    4: ((-1, -1), (1, -1), (-1, 1), (1, 1)),
    5: ((-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)),
    6: ((-1, -1), (-1, 0), (-1, 1), (1, -1), (1, 0), (1, 1)),
}

#: Most dice one image may hold.
MAX_DICE = 30


class Unreadable(StrEnum):
    """Why a rendered die cannot be read (and must not be given a value)."""

    LEANING = "leaning"
    """Tilted against a wall or another die: no face points up (re-roll it)."""
    PARTIAL = "partial"
    """Cut by the image border: part of its top face is outside the picture."""


@dataclass(frozen=True, slots=True)
class RenderedDie:
    """The truth about one die drawn by the renderer.

    Parameters
    ----------
    value : int
        Face value 1-6 on the top face (the number of pips drawn on it).
    box : tuple of 4 int
        ``(x, y, w, h)`` bounding box of the whole visible die (top face and the
        visible side faces, no shadow), in image pixels; ``x`` right, ``y`` down.
    centre_xy : tuple of 2 float
        Centre of the top face, ``(x, y)`` in image pixels.
    angle_deg : float
        Rotation of the die in degrees, ``[0, 360)``, counter-clockwise as seen in
        the image (OpenCV's :func:`cv2.getRotationMatrix2D` convention): warping the
        image with ``cv2.getRotationMatrix2D(centre_xy, -angle_deg, 1)`` makes the top
        face axis-aligned.
    colour : str
        Name of the die's colour, a key of :data:`DICE_COLOURS`.
    face_px : float, optional
        Side of the top face in pixels (corner to corner along an edge, before the
        corner rounding).
    outline : tuple of (float, float), optional
        Convex outline of the whole visible die, ``(x, y)`` points in image pixels,
        counter-clockwise; two dice touch where their outlines meet.
    unreadable : Unreadable or None, optional
        Why no reader should give this die a value (leaning, cut by the border);
        ``None`` (the default, and always from :func:`render_tray`) for a die
        lying flat and whole in the picture. Set by
        :func:`vision.render.render_randomised`.
    """

    value: int
    box: tuple[int, int, int, int]
    centre_xy: tuple[float, float]
    angle_deg: float
    colour: str
    face_px: float = 0.0
    outline: tuple[tuple[float, float], ...] = ()
    unreadable: Unreadable | None = None


@dataclass(frozen=True, slots=True)
class RenderedTray:
    """A synthetic tray image and the truth about every die drawn in it.

    Parameters
    ----------
    image : ndarray of shape (H, W, 3), dtype uint8
        The picture, BGR (OpenCV order), intensities 0-255.
    dice : tuple of RenderedDie
        The dice drawn, in the order of the ``values`` asked for.
    style : str, optional
        The tray style used, one of :data:`STYLES`.
    touching : tuple of (int, int), optional
        Index pairs ``(i, j)``, ``i < j``, of dice placed touching each other.
    condition : str, optional
        The stress condition of :func:`vision.render.render_randomised` (one of
        :data:`vision.render.CONDITIONS`, or ``"random"``); empty from
        :func:`render_tray`.
    """

    image: np.ndarray
    dice: tuple[RenderedDie, ...]
    style: str = ""
    touching: tuple[tuple[int, int], ...] = ()
    condition: str = ""

    @property
    def values(self) -> tuple[int, ...]:
        """Face values of the dice drawn, in order."""
        return tuple(d.value for d in self.dice)
