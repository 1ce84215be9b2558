"""The reader's second opinion: do the pip finder's marks hold the face value the face reader names?

A value is given only when two opinions agree (issue #7): the face reader
names it, and the pip finder (:mod:`vision.pips`), another network with
another task, marks exactly that many pips in that value's layout on the same
die (:func:`vision.pip_marks.holds_layout_of`). :func:`_pips_agree` asks it in up
to three looks, each only at the dice the one before left in doubt.

Conventions: images are BGR ``uint8`` arrays indexed ``(row, col)``; boxes are
``(x, y, w, h)`` in pixels of the image given, ``x`` right, ``y`` down.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

__all__ = ["FACE_CROP_MARGIN", "TIGHT_PIP_MARGIN", "PipFinderLike"]

#: Margin around each detected box for the face reader's and the pip finder's
#: crop, as a fraction of the box's longer side (see
#: :func:`vision.face.crop_die`): 0.085 read the most DEV dice (77.5 %, against
#: 74.3 % at 0.15, with face reader v1).
FACE_CROP_MARGIN: float = 0.085

#: Margin of the pip finder's last look at a die whose pips disagree with a sure
#: face value, after the turned crops (:func:`_pip_maps_turned`): the die's box
#: alone, turned four ways, so that the pips of its side faces and of its
#: neighbours, marked too, do not spoil the layout. It agreed, rightly, for 3 of
#: the 13 dice still disagreeing on the held-out DEV fold; silent errors unchanged.
TIGHT_PIP_MARGIN: float = 0.0


class PipFinderLike(Protocol):
    """Anything with the pip finder's ``predict(crops) -> ndarray (N, S, S)`` (:class:`vision.pips.PipFinder`)."""

    def predict(self, crops) -> np.ndarray: ...


def _pips_agree(
    pip_finder: PipFinderLike,
    image: np.ndarray,
    boxes: list[tuple[int, int, int, int]],
    crops: list[np.ndarray],
    values: list[int],
    first_maps: list[np.ndarray] | None = None,
    known_maps: list[np.ndarray | None] | None = None,
) -> list[bool]:
    """The second opinion: whether the pip finder's marks hold each die's face value in its layout.

    Marks of the side faces that face the photo's centre may be left out
    (:func:`vision.pip_marks.holds_layout_of`, :func:`_towards_principal_point`).
    Up to three looks, each only at the dice the one before left in doubt: the
    face crop; its four 90-degree turns (:func:`_pip_maps_turned`: faint pips
    marked in any turn count); the die's box alone, turned too
    (:data:`TIGHT_PIP_MARGIN`: pips of side faces and neighbours left out).

    Parameters
    ----------
    pip_finder : object with ``predict(crops) -> ndarray (N, S, S)``
        The pip finder.
    image : ndarray of shape (H, W, 3), dtype uint8
        The photo, for the tight crops.
    boxes : list of N (x, y, w, h)
        The dice's boxes, px of `image`.
    crops : list of N ndarray of shape (S, S, 3), dtype uint8
        Their face crops (margin :data:`FACE_CROP_MARGIN`).
    values : list of N int
        The face reader's values, 1-6.
    first_maps : list, optional
        Extended with the N maps of the first look (for the glint check,
        :func:`vision.reader_glare.glint_may_hide_pip`, without asking again).
    known_maps : list of N ndarray or None, optional
        The first look's map of each crop where the pip finder was asked
        already (:class:`vision.reader_seen.Seen`); None: ask.

    Returns
    -------
    list of N bool
    """
    from vision.face import crop_die
    from vision.pip_marks import holds_layout_of
    from vision.reader_seen import predict_unseen

    if not crops:
        return []
    towards = [_towards_principal_point(image, box) for box in boxes]
    maps = np.asarray(predict_unseen(pip_finder.predict, crops, known_maps or [None] * len(crops)), np.float32)
    if first_maps is not None:
        first_maps.extend(maps)
    agrees = [holds_layout_of(m, FACE_CROP_MARGIN, v, t) for m, v, t in zip(maps, values, towards)]
    again = [i for i, agree in enumerate(agrees) if not agree]
    if again:
        turned = _pip_maps_turned(pip_finder, [crops[i] for i in again], maps[again])
        for i, m in zip(again, turned):
            agrees[i] = holds_layout_of(m, FACE_CROP_MARGIN, values[i], towards[i])
    still = [i for i in again if not agrees[i]]
    if still:
        tight = [crop_die(image, boxes[i], margin=TIGHT_PIP_MARGIN) for i in still]
        tight_maps = np.asarray(pip_finder.predict(tight), np.float32)
        for i, m in zip(still, _pip_maps_turned(pip_finder, tight, tight_maps)):
            agrees[i] = holds_layout_of(m, TIGHT_PIP_MARGIN, values[i], towards[i])
    return agrees


def _towards_principal_point(image: np.ndarray, box: tuple[float, float, float, float]) -> tuple[float, float] | None:
    """Direction (px) from a die's box centre to the photo's centre, where its side faces are seen; None under it.

    The principal point is taken at the photo's centre (a camera looking at
    the tray, not a crop of a bigger photo). A die within one box side of it
    shows no side face worth counting, so its pips are held by the exact
    count alone (:func:`vision.pip_marks.holds_layout_of`).
    """
    height, width = image.shape[:2]
    x, y, w, h = box
    dx, dy = width / 2.0 - (x + w / 2.0), height / 2.0 - (y + h / 2.0)
    return None if float(np.hypot(dx, dy)) < max(w, h) else (dx, dy)


def _pip_maps_turned(pip_finder: PipFinderLike, crops: list[np.ndarray], maps: np.ndarray) -> np.ndarray:
    """The pip finder's maps of `crops` at their four 90-degree turns, turned back and combined by maximum.

    Parameters
    ----------
    pip_finder : object with ``predict(crops) -> ndarray (N, S, S)``
        The pip finder.
    crops : list of N ndarray of shape (S, S, 3), dtype uint8
        Square face crops.
    maps : ndarray of shape (N, S, S), dtype float32
        The maps of the crops as they are (the first turn), already computed.

    Returns
    -------
    ndarray of shape (N, S, S), dtype float32
        Per pixel, the strongest mark of the four turns: a faint pip (a red pip
        on a smoky die) is often marked in one turn and not in another.
    """
    turned = [np.ascontiguousarray(np.rot90(c, k)) for k in (1, 2, 3) for c in crops]
    more = np.asarray(pip_finder.predict(turned), np.float32).reshape(3, len(crops), *maps.shape[1:])
    out = np.array(maps, np.float32, copy=True)
    for k in (1, 2, 3):
        out = np.maximum(out, np.stack([np.rot90(m, -k) for m in more[k - 1]]))
    return out
