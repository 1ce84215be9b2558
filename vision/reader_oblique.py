"""Dice seen obliquely: a side face boxed as a die of its own (issue 37, oblique views).

A camera that looks down at the table at an angle (a webcam or phone held
above the tray's near edge, the far side at the top of the picture) sees
each die's top face and, below it in the picture, the side face turned to the
camera. The detector sometimes boxes that side face as a second die, and the
face reader then reads its pips as a die's value. :func:`side_face_boxes`
finds such boxes by geometry alone: a box that lies under another box,
across nearly the same columns, and overlaps it by a good part of its height,
so that the two together are no taller than one die's silhouette can be.

Why that cannot be two dice: two dice never overlap in the picture unless one
hides part of the other, and a die's whole silhouette, seen from anywhere
above the table, is at least about as tall as wide (its top face is
foreshortened to ``cos(tilt)`` but the side face adds ``sin(tilt)``:
``cos t + sin t / sqrt(2) >= 1`` up to 65 degrees). Two dice, one behind
the other, make a union about two dice tall; a die and its own side face
make one.

Conventions: boxes are ``(x, y, w, h)`` in pixels, ``x`` right, ``y`` down.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["side_face_boxes", "SIDE_OVERLAP_X", "SIDE_OVERLAP_Y", "UPPER_AREA_RATIO", "ONE_DIE_ASPECT"]

#: Least horizontal overlap of the two boxes, as a share of the narrower one's width.
SIDE_OVERLAP_X: float = 0.8
#: Least vertical overlap, as a share of the lower box's height. Renders' side faces boxed
#: on their own overlapped the die's box by 0.41-0.53 of their height; on DEV, dice boxed
#: under another die's box overlap it by at most 0.27.
SIDE_OVERLAP_Y: float = 0.35
#: Least area of the upper box over the lower one's: a side face's box is foreshortened, no bigger
#: than its die's (0.8-1.1 on the renders); a close-up die boxed under a box around one of its
#: pips is many times that box (the kingpi/jim dice cut to their outline lost 5 of 89 without it).
UPPER_AREA_RATIO: float = 0.5
#: Largest height of the two boxes' union over the wider box's width: one die's silhouette
#: (renders' side-face pairs: 1.07-1.32; DEV's dice one behind the other: >= 1.54).
ONE_DIE_ASPECT: float = 1.45


def side_face_boxes(boxes: Sequence[tuple[float, float, float, float]]) -> list[bool]:
    """Whether each box is the side face of the die boxed just above it (module text).

    Parameters
    ----------
    boxes : sequence of N (x, y, w, h)
        The read dice's boxes, px of one photo.

    Returns
    -------
    list of N bool
        True for a box to leave out: it and the box above it are one die.

    Examples
    --------
    >>> side_face_boxes([(100, 100, 60, 50), (102, 130, 58, 40), (300, 100, 60, 60)])
    [False, True, False]
    """
    out = []
    for i, (x, y, w, h) in enumerate(boxes):
        side = False
        for j, (bx, by, bw, bh) in enumerate(boxes):
            if j == i or by + bh / 2.0 >= y + h / 2.0:
                continue  # only a box whose centre is higher up can hold this one's top face
            across = min(x + w, bx + bw) - max(x, bx)
            down = by + bh - y
            union = max(y + h, by + bh) - min(y, by)
            if (
                bw * bh >= UPPER_AREA_RATIO * w * h  # not a close-up die under a box around one of its pips
                and across >= SIDE_OVERLAP_X * min(w, bw)
                and down >= SIDE_OVERLAP_Y * h
                and union <= ONE_DIE_ASPECT * max(w, bw)
            ):
                side = True
                break
        out.append(side)
    return out
