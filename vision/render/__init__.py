"""Synthetic tray renderer: photo-like top-down pictures of d6 dice in a tray.

Used by tests, by ``dicetable demo`` and to make training images for the face
reader.  numpy and OpenCV only; seeded and deterministic.

Public names: :func:`render_tray`, :func:`render_die_crop`, :class:`TrayScene`
(draw the tray once, render many rolls on it), :class:`Placement`, :class:`RenderedTray`,
:class:`RenderedDie`, :data:`STYLES`, :data:`DICE_COLOURS`, :data:`PIP_LAYOUTS`,
:data:`MAX_DICE`; domain-randomised renders and named stress conditions with
unreadable (leaning, cut) dice labelled: :func:`render_randomised`,
:class:`Conditions`, :data:`CONDITIONS`, :class:`Unreadable`; objects that are not
dice drawn beside them: :func:`add_clutter`, :data:`CLUTTER_KINDS`.

Examples
--------
>>> from vision.render import render_tray
>>> tray = render_tray([6, 6, 3, 2, 1], seed=3, style="round")
>>> tray.image.dtype, tray.image.shape
(dtype('uint8'), (480, 640, 3))
>>> [d.value for d in tray.dice]
[6, 6, 3, 2, 1]
"""

from vision.render._clutter import CLUTTER_KINDS, add_clutter
from vision.render._layout import Placement, TrayScene
from vision.render._randomise import CONDITIONS, LOOKS, SURFACES, Conditions, render_randomised
from vision.render._tray import render_die_crop, render_tray
from vision.render._types import (
    DICE_COLOURS,
    MAX_DICE,
    PIP_LAYOUTS,
    STYLES,
    RenderedDie,
    RenderedTray,
    Unreadable,
)

__all__ = [
    "CLUTTER_KINDS",
    "add_clutter",
    "CONDITIONS",
    "Conditions",
    "LOOKS",
    "SURFACES",
    "Unreadable",
    "render_randomised",
    "DICE_COLOURS",
    "MAX_DICE",
    "PIP_LAYOUTS",
    "STYLES",
    "Placement",
    "RenderedDie",
    "RenderedTray",
    "TrayScene",
    "render_die_crop",
    "render_tray",
]
