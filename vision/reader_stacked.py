"""Cocked and stacked dice told by their top face's shape (issue 37, items 1 and 4).

A die cocked on an edge or lying on another die must get no value: its top
face is not the face a settled roll shows. :func:`vision.top_face.outline_top_face`
outlines each die's top face and measures how far its body reaches beyond
each edge; each die is then judged against the other dice of the same
picture, whose top faces give the picture's own die size, shape and
perspective (:func:`judge_faces`):

* **leaning** (cocked): the body reaches well beyond an edge of the top face
  where a flat die shows no side face (edges facing away from the principal
  point, or any edge under the camera), farther than the other dice's reach;
  or its top face is foreshortened (``cos(tilt)``) while theirs are square and
  a side face shows beside it;
* **stacked**: the top face is bigger than the others' (nearer the camera by a
  die's height) and die material reaches beyond it (the die under it); or it
  is bigger than its own set's (the dice of its colour: one size) where the
  camera is close enough for a die's height to show (:func:`parallax`);
* **leaning** too: an oblong "top face" longer than its set's side, a cocked
  die's top and side face in one light (:func:`two_faces_as_one`).

Only clean outlines are judged (:func:`trusted`), and only with two clean
others to compare with; anything else is left to the reader's other rules.
Thresholds were set on the renders of :mod:`vision.lab.perturb_render` and
checked to cost no right DEV die (``docs/perturbations.md``, 2026-12-03).
"""

from __future__ import annotations

import numpy as np

from vision.reading import UnknownReason
from vision.top_face import TopFace, outline_top_face

__all__ = [
    "bigger_than_its_set",
    "cocked_or_stacked",
    "judge_faces",
    "parallax",
    "set_sides",
    "trusted",
    "two_faces_as_one",
]

#: A die's body reaching this far (share of its top face's side) beyond an edge
#: of its top face where no side face of a flat die shows ...
LEAN_REACH: float = 0.28
#: ... and this much farther than the median reach of the other dice in the
#: picture (their bevels and outline noise: about 0.15 on flat rendered dice)
#: is cocked on an edge.
LEAN_REACH_OVER: float = 0.15
#: A top face at most this square (short over long side: cos 32 degrees) ...
LEAN_ASPECT: float = 0.85
#: ... while the other dice's top faces are at least this square, with a side
#: face at least :data:`LEAN_REACH` wide beside it, is tilted: cocked.
SQUARE_ASPECT: float = 0.95
#: A top face this many times the side of the other dice's top faces is nearer
#: the camera by about a die's height (1.095 for the renders' camera at 12.5
#: die sides) ...
STACKED_SIDE_RATIO: float = 1.09
#: ... and with die material beyond it this much farther (share of a side) than
#: the other dice's widest reach, lies on another die.
STACKED_REACH: float = 0.1
#: Without that material: a top face this many times the side of the other dice
#: of its own colour (one set, one size) ...
SET_SIDE_RATIO: float = 1.06
#: ... (at least two, their sides within this ratio of each other) ...
SET_SIDE_SPREAD: float = 1.1
#: ... its outline filling this share of its rectangle (a rim or a side face run
#: into it makes it bigger: flat dice of the stress renders 1.13 times their set
#: at 0.86) ...
SIZE_FILL: float = 0.88
#: ... in a picture whose other dice show side faces at least this share of
#: their distance from the principal point (a die's height over the camera's,
#: :func:`parallax`: a die one height up shows that much bigger; DEV photos
#: 0.001 median, 0.023 at the 90th percentile; the renders 0.08, measured 0.04-0.07)
#: is nearer the camera by a die's height: stacked.
MIN_PARALLAX: float = 0.035
#: A face at most :data:`LEAN_ASPECT` square and this many times its set's side
#: is no top face: a cocked die's top and side face in one light (cocked renders
#: 1.33-1.39; DEV's oblong faces at most 1.1 of their set's, a die pasted
#: touching another 1.21).
MERGED_SIDE_RATIO: float = 1.25
#: Dice whose top faces' Lab ``a, b`` lie within this distance (8-bit Lab units)
#: are of one set (the renders' dice of one look: at most 9.4 apart, the cocked
#: die's tilted face included).
SET_CHROMA: float = 12.0


def cocked_or_stacked(
    image: np.ndarray, boxes: list[tuple[int, int, int, int]]
) -> tuple[list[UnknownReason | None], list[TopFace | None]]:
    """Judge every die of one photo: leaning, stacked or None; and their top faces.

    Parameters
    ----------
    image : ndarray of shape (H, W, 3), dtype uint8
        The photo, BGR.
    boxes : list of N (x, y, w, h)
        The dice found, px.

    Returns
    -------
    verdicts : list of N UnknownReason or None
        :attr:`UnknownReason.LEANING`, :attr:`UnknownReason.STACKED` or None.
    faces : list of N TopFace or None
        Each die's outline (None: none found), for drawing.
    """
    if len(boxes) < 3:
        return [None] * len(boxes), [None] * len(boxes)
    faces = [outline_top_face(image, box, others=boxes[:i] + boxes[i + 1 :]) for i, box in enumerate(boxes)]
    return judge_faces(faces, [towards_centre(image.shape, face) for face in faces]), faces


def towards_centre(image_shape: tuple[int, ...], face: TopFace | None) -> np.ndarray | None:
    """The direction (px, ``(x, y)``) from the face's middle to the photo's principal point, or None.

    The principal point is taken at the photo's centre, as in :mod:`vision.reader_agreement`. None for no
    face, or one within a side of the centre: under the camera no side face shows.
    """
    if face is None:
        return None
    height, width = image_shape[:2]
    p = np.array([width / 2.0, height / 2.0]) - face.quad.mean(axis=0)
    return None if float(np.hypot(*p)) < face.side else p


def lean_shares(image_shape: tuple[int, ...], faces: list[TopFace | None]) -> list[float | None]:
    """For each die, its body's reach beyond its top face where a flat die shows none, over :data:`LEAN_REACH`.

    1 or more is the leaning verdict's reach; a die given a value is under it, and the nearer it comes the
    less sure its value (a warning of :mod:`vision.confidence_model`). None where the outline is not clean
    enough to measure (:func:`trusted`); 0.0 for every die where none is drawn (fewer than three dice: no set
    to judge by, :func:`cocked_or_stacked`).
    """
    if len(faces) < 3:
        return [0.0] * len(faces)
    return [
        reach_beyond(face, towards_centre(image_shape, face)) / LEAN_REACH
        if face is not None and trusted(face)
        else None
        for face in faces
    ]


def reach_beyond(face: TopFace, towards: np.ndarray | None) -> float:
    """How far (share of the top face's side) the body reaches beyond the top face where no side face should show.

    `towards` is the direction (px) from the die to the photo's principal
    point: a flat die's side faces show on that side only, beyond the edges
    whose normals point within about 73 degrees of it. None: every edge.
    """
    reach = [
        width
        for normal, width in face.beyond
        if towards is None or float(np.dot(normal, towards)) < 0.3 * float(np.hypot(*towards))
    ]
    return max(reach, default=0.0) / max(face.side, 1e-6)


def trusted(face: TopFace | None) -> bool:
    """Whether an outline is clean enough to judge by: its body was measured (:data:`vision.top_face.CLEAN_FILL`)."""
    return face is not None and bool(face.beyond)


def parallax(face: TopFace, towards: np.ndarray | None) -> float | None:
    """Height of a die over the camera's, from the width of its side face towards the principal point, or None.

    A flat die's side faces show towards the principal point, as wide (px) as
    its distance from it (px) times die height over camera height; the bevel
    and outline noise are taken off as the body's reach on the opposite side.
    None within two sides of the principal point (no side face to go by).
    """
    if towards is None or not face.beyond:
        return None
    r = float(np.hypot(*towards))
    if r < 2 * face.side:
        return None
    dots = [float(np.dot(normal, towards)) for normal, _ in face.beyond]
    return (face.beyond[int(np.argmax(dots))][1] - face.beyond[int(np.argmin(dots))][1]) / r


def set_sides(i: int, faces: list[TopFace | None], ok: list[bool]) -> list[float] | None:
    """The sides (px) of the other dice of die `i`'s set (its colour, :data:`SET_CHROMA`), or None.

    None unless at least two, within :data:`SET_SIDE_SPREAD` of each other (one set, one size),
    their faces square (:data:`SQUARE_ASPECT`, median: a camera looking down).
    """
    face = faces[i]
    if face is None:
        return None
    a, b = face.colour[1], face.colour[2]
    same = [
        g
        for j, g in enumerate(faces)
        if j != i and ok[j] and g is not None and np.hypot(g.colour[1] - a, g.colour[2] - b) <= SET_CHROMA
    ]
    sides = [g.side for g in same]
    if len(sides) < 2 or max(sides) > SET_SIDE_SPREAD * min(sides):
        return None
    if float(np.median([g.aspect for g in same])) < SQUARE_ASPECT:
        return None  # a camera looking across the table: nearer dice are bigger, whatever lies under them
    return sides


def bigger_than_its_set(i: int, faces: list[TopFace | None], ok: list[bool], height: float | None) -> bool:
    """Whether die `i`'s top face is :data:`SET_SIDE_RATIO` times its set's side, in a close camera.

    `height` is the picture's die height over camera height (:func:`parallax`).
    """
    sides = set_sides(i, faces, ok)
    if sides is None or height is None or height < MIN_PARALLAX or faces[i].fill < SIZE_FILL:
        return False
    return faces[i].side >= SET_SIDE_RATIO * float(np.median(sides))


def two_faces_as_one(i: int, faces: list[TopFace | None], ok: list[bool]) -> bool:
    """Whether die `i`'s "top face" is oblong and longer than its set's side: top and side face in one light."""
    sides = set_sides(i, faces, ok)
    if sides is None:
        return False
    return faces[i].aspect <= LEAN_ASPECT and faces[i].side >= MERGED_SIDE_RATIO * float(np.median(sides))


def judge_faces(faces: list[TopFace | None], towards: list[np.ndarray | None]) -> list[UnknownReason | None]:
    """For each die: leaning (cocked on an edge), stacked (lying on another die) or None.

    Parameters
    ----------
    faces : list of N TopFace or None
        The dice's top faces in one picture.
    towards : list of N ndarray of shape (2,) or None
        Direction (px) from each die to the principal point; None under it.

    Returns
    -------
    list of N UnknownReason or None
    """
    ok = [trusted(f) for f in faces]
    reach = [reach_beyond(f, t) if o else 0.0 for f, t, o in zip(faces, towards, ok)]
    widest = [reach_beyond(f, None) if o else 0.0 for f, o in zip(faces, ok)]
    heights = [parallax(f, t) if o else None for f, t, o in zip(faces, towards, ok)]
    out: list[UnknownReason | None] = []
    for i, face in enumerate(faces):
        others = [j for j in range(len(faces)) if j != i and ok[j]]
        if face is None or not ok[i] or len(others) < 2:
            out.append(None)
            continue
        side = float(np.median([faces[j].side for j in others]))
        square = float(np.median([faces[j].aspect for j in others]))
        usual = float(np.median([reach[j] for j in others]))
        usual_widest = float(np.median([widest[j] for j in others]))
        known = [heights[j] for j in others if heights[j] is not None]
        # the camera's closeness by the other dice's side faces or the die's own (twice as wide if it is stacked)
        seen = ([float(np.median(known))] if len(known) >= 2 else []) + ([heights[i]] if heights[i] is not None else [])
        height = max(seen, default=None)
        if face.side >= STACKED_SIDE_RATIO * side and widest[i] - usual_widest >= STACKED_REACH:
            out.append(UnknownReason.STACKED)
        elif bigger_than_its_set(i, faces, ok, height):
            out.append(UnknownReason.STACKED)
        elif reach[i] >= LEAN_REACH and reach[i] - usual >= LEAN_REACH_OVER or two_faces_as_one(i, faces, ok):
            out.append(UnknownReason.LEANING)
        elif face.aspect <= LEAN_ASPECT and square >= SQUARE_ASPECT and widest[i] >= LEAN_REACH:
            out.append(UnknownReason.LEANING)
        else:
            out.append(None)
    return out
