"""Classical pip checks on a die crop: dark blobs, and the pip layouts of the six faces fitted to points.

The layout geometry here (:data:`PIP_LAYOUTS`, :func:`layout_spacing`,
:func:`layout_fit`, :func:`is_pip_shaped`, :func:`box_inset`) is what the
reader's second opinion fits to the learned pip finder's marks
(:mod:`vision.pip_marks`). The blob checks (:func:`pip_blobs`,
:func:`pips_match`, :func:`count_pips`) work on
:func:`vision.reader_second_look.pip_contrast_view` of a crop, so coloured
pips on coloured dice count as well as black pips on white ones; the reader
no longer asks them (the learned pip finder made fewer silent errors, see
``docs/reader.md``), ``benchmarks/tune_reader.py`` compares them with it and
the pip finder's training targets use them.

:func:`pips_match` asks "do the dark blobs hold the layout of this face
value, with nothing pip-like left inside that face?" rather than "how many
dark blobs are there?": pips on the side faces of an obliquely seen die,
marbling at the edge of the face and two pips merged into one blob made the
plain count (:func:`count_pips`) disagree with the truth for a third of the
small coloured DEV dice.
"""

from __future__ import annotations

import itertools

import cv2
import numpy as np

__all__ = [
    "count_pips",
    "pip_blobs",
    "pips_match",
    "match_subset",
    "box_inset",
    "is_pip_shaped",
    "layout_spacing",
    "layout_fit",
    "PIP_LAYOUTS",
]

#: Pip centres of face values 1-6 in units of the pip spacing, face centre at
#: the origin, ``(x, y)``.
PIP_LAYOUTS: dict[int, tuple[tuple[float, float], ...]] = {
    1: ((0.0, 0.0),),
    2: ((-1.0, -1.0), (1.0, 1.0)),
    3: ((-1.0, -1.0), (0.0, 0.0), (1.0, 1.0)),
    4: ((-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)),
    5: ((-1.0, -1.0), (1.0, -1.0), (0.0, 0.0), (-1.0, 1.0), (1.0, 1.0)),
    6: ((-1.0, -1.0), (-1.0, 0.0), (-1.0, 1.0), (1.0, -1.0), (1.0, 0.0), (1.0, 1.0)),
}


def _normalised(value: int) -> tuple[np.ndarray, float]:
    a = np.array(PIP_LAYOUTS[value], np.float64)
    a -= a.mean(axis=0)
    rms = float(np.sqrt((a**2).sum(axis=1).mean()))
    return a / rms, rms


_LAYOUT_UNIT = {v: _normalised(v) for v in range(2, 7)}

#: Pip spacing (centre to corner pip along one face axis) allowed for a layout,
#: as a fraction of the searched square's side. On dev the layouts that fit the
#: true value have spacings 0.10-0.21 (median 0.15).
SPACING_RANGE: tuple[float, float] = (0.10, 0.30)

#: Largest distance of a pip from its layout position after the best rotation,
#: in units of the layout's RMS radius.
#: (The learned pip finder's layouts use :data:`vision.pips.LAYOUT_TOLERANCE`.)
LAYOUT_TOLERANCE: float = 0.35

#: Another blob as large as 0.4 of the layout's pips within this many pip
#: spacings of the layout centre is a pip the layout lacks: no match (the
#: centre pip that tells 5 from 4, the middle pips that tell 6 from 4). A pair
#: (2) looks further: two middle pips of a 6 are a 2 at 0.7 times the spacing,
#: whose corner pips then lie 2 spacings out.
EXTRA_PIP_RADIUS: dict[int, float] = {2: 2.1, 3: 1.56, 4: 1.56, 5: 1.56, 6: 1.56}

#: The layout's centre must lie within 0.22 box sides of the box centre, and
#: a pair's (2) within this many pip spacings: a centre pip and a corner pip
#: are a pair of half the spacing whose centre is off the die's centre.
PAIR_CENTRE_OFFSET: float = 1.0

#: A lone 1 has no blob of comparable size within this fraction of the box
#: side of it (any pip of another layout lies closer).
ONE_CLEAR_RADIUS: float = 0.4

#: The local binarisation takes a pixel as dark when it is this many grey
#: levels (of 255, on the pip-contrast view) under the mean of the square a
#: third of the searched side wide around it. On dev 60-120 all gave
#: 83-84.5 % per-die accuracy at 1.4-1.6 % silent errors.
LOCAL_CONTRAST: float = 70.0


def box_inset(side: int, margin: float) -> int:
    """Pixels to cut from each edge of a crop to search only its die box, less 2 px.

    Parameters
    ----------
    side : int
        Side of a crop made by :func:`vision.face.crop_die`, px.
    margin : float
        The margin it was cut with (fraction of the box's long side).

    Returns
    -------
    int
        The inset, px; the searched square is ``side - 2 * inset`` px.
    """
    return int(side * margin / (1.0 + 2.0 * margin)) + 2


def is_pip_shaped(w: float, h: float, area: float, unit_area: float) -> bool:
    """Whether a blob is shaped like a pip (the rules of :func:`pip_blobs`).

    Parameters
    ----------
    w, h : float
        Bounding-box width and height of the blob, px.
    area : float
        Its area, px^2.
    unit_area : float
        Area of the square it is measured against (the die box), px^2.

    Returns
    -------
    bool
        True when it covers 0.3 % to 12 % of `unit_area`, its bounding box is at
        most 2.2 times longer than wide and it fills at least 45 % of it.
    """
    return 0.003 * unit_area <= area <= 0.12 * unit_area and max(w, h) <= 2.2 * min(w, h) and area >= 0.45 * w * h


def _inner_dark(contrast_view: np.ndarray, margin: float) -> np.ndarray | None:
    grey = contrast_view[..., 0] if contrast_view.ndim == 3 else contrast_view
    side = grey.shape[0]
    m = box_inset(side, margin)
    inner = np.ascontiguousarray(grey[m : side - m, m : side - m])
    if inner.shape[0] < 8:
        return None
    _, dark = cv2.threshold(inner, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    return dark


def count_pips(contrast_view: np.ndarray, margin: float) -> int:
    """Count pip-like dark blobs inside the die box of a crop.

    Parameters
    ----------
    contrast_view : ndarray of shape (S, S, 3) or (S, S), dtype uint8
        :func:`vision.reader_second_look.pip_contrast_view` of a crop made by
        :func:`vision.face.crop_die` (dark pips on a light face).
    margin : float
        The margin the crop was made with (fraction of the box's long side); only
        the box itself, less 2 px, is searched.

    Returns
    -------
    int
        Number of dark blobs (Otsu threshold) that do not touch the searched
        square, have an area of 0.4 % to 5 % of it, an aspect ratio up to 2.2 and
        fill at least half their bounding box: 0 when none.
    """
    dark = _inner_dark(contrast_view, margin)
    if dark is None:
        return 0
    s = dark.shape[0]
    n, _, stats, _ = cv2.connectedComponentsWithStats(dark)
    count = 0
    for x, y, w, h, area in stats[1:n]:
        if x == 0 or y == 0 or x + w >= s or y + h >= s:
            continue
        if 0.004 * s * s <= area <= 0.05 * s * s and max(w, h) <= 2.2 * min(w, h) and area >= 0.5 * w * h:
            count += 1
    return count


def _binarisations(contrast_view: np.ndarray, margin: float) -> list[np.ndarray]:
    """Dark masks (uint8 0/255) of the searched square: Otsu over it, Otsu of its centre, local contrast.

    The Otsu threshold of the whole square often splits the background from the
    face (a dark die on a light table) rather than pips from the face; the
    threshold of the central three fifths (mostly face and pips) and a local
    threshold (:data:`LOCAL_CONTRAST` below the mean of a third of the square
    around) do not.
    """
    grey = contrast_view[..., 0] if contrast_view.ndim == 3 else contrast_view
    side = grey.shape[0]
    m = box_inset(side, margin)
    inner = np.ascontiguousarray(grey[m : side - m, m : side - m])
    s = inner.shape[0]
    if s < 8:
        return []
    _, whole = cv2.threshold(inner, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    q = s // 5
    t, _ = cv2.threshold(
        np.ascontiguousarray(inner[q : s - q, q : s - q]), 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU
    )
    _, centre = cv2.threshold(inner, t, 255, cv2.THRESH_BINARY_INV)
    local = cv2.adaptiveThreshold(
        inner, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, max(3, (s // 3) | 1), LOCAL_CONTRAST
    )
    return [whole, centre, local]


def _blobs_of(dark: np.ndarray) -> np.ndarray:
    s = dark.shape[0]
    n, _, stats, cents = cv2.connectedComponentsWithStats(dark)
    out = []
    for (x, y, w, h, area), (cx, cy) in zip(stats[1:n], cents[1:n]):
        if x == 0 or y == 0 or x + w >= s or y + h >= s:
            continue
        if is_pip_shaped(w, h, area, s * s):
            out.append((cx / s - 0.5, cy / s - 0.5, area / (s * s)))
    return np.array(out, np.float64).reshape(-1, 3)


def pip_blobs(contrast_view: np.ndarray, margin: float) -> list[np.ndarray]:
    """Pip-like dark blobs inside the die box of a crop, for each of three binarisations.

    Parameters
    ----------
    contrast_view : ndarray of shape (S, S, 3) or (S, S), dtype uint8
        :func:`vision.reader_second_look.pip_contrast_view` of a crop made by
        :func:`vision.face.crop_die` (dark pips on a light face).
    margin : float
        The margin the crop was made with (fraction of the box's long side); the
        box itself, less 2 px, is searched.

    Returns
    -------
    list of ndarray of shape (N, 3), dtype float64
        For the Otsu threshold of the searched square, the Otsu threshold of its
        central three fifths and a local threshold (in that order; empty list
        when the square is under 8 px), one row per blob: centre ``x``, ``y``
        relative to the centre of the searched square and area, in units of its
        side (area in side squared). Blobs are the dark components that do not
        touch the square's edge, cover 0.3 % to 12 % of it, have an aspect ratio
        up to 2.2 and fill at least 45 % of their bounding box.
    """
    return [_blobs_of(d) for d in _binarisations(contrast_view, margin)]


def layout_spacing(points: np.ndarray, value: int) -> float:
    """Pip spacing (centre to corner pip along a face axis) of `value` pips at `points`.

    Parameters
    ----------
    points : ndarray of shape (value, 2)
        Pip centres, in any unit (the spacing comes out in the same unit).
    value : int
        Face value 2..6 whose layout the points are taken as.

    Returns
    -------
    float
        The points' RMS distance from their mean over the layout's RMS radius
        in spacings (:data:`PIP_LAYOUTS`).
    """
    c = points - points.mean(axis=0)
    return float(np.sqrt((c**2).sum(axis=1).mean())) / _LAYOUT_UNIT[value][1]


def layout_fit(points: np.ndarray, value: int) -> tuple[float, float]:
    """The best rotation of layout `value` onto `points`, and its worst pip distance.

    The rotations tried turn each point off the centre onto each layout pip
    off the centre; a rotation counts when every layout pip has its own
    nearest point. All rotations are tried at once (arrays of shape
    (rotations, points, layout pips)).

    Parameters
    ----------
    points : ndarray of shape (value, 2)
        Pip centres, any unit.
    value : int
        Face value 2..6.

    Returns
    -------
    error : float
        Worst distance of a point from its layout pip after the best rotation,
        in units of the points' RMS radius; inf if no rotation gives every
        layout pip its own nearest point.
    angle : float
        That rotation, radians: turning the points (about their mean) by it
        lays them on :data:`PIP_LAYOUTS`, whose axes are the face's edges.
        NaN when `error` is inf.
    """
    unit, _ = _LAYOUT_UNIT[value]
    c = points - points.mean(axis=0)
    c = c / float(np.sqrt((c**2).sum(axis=1).mean()))
    a = c[np.hypot(c[:, 0], c[:, 1]) >= 0.3]
    b = unit[np.hypot(unit[:, 0], unit[:, 1]) >= 0.3]
    if not len(a) or not len(b):
        return np.inf, np.nan
    ang = (np.arctan2(b[:, 1], b[:, 0])[None, :] - np.arctan2(a[:, 1], a[:, 0])[:, None]).ravel()
    cos, sin = np.cos(ang)[:, None], np.sin(ang)[:, None]
    rx = cos * c[None, :, 0] - sin * c[None, :, 1]  # (rotations, points)
    ry = sin * c[None, :, 0] + cos * c[None, :, 1]
    d = np.sqrt((rx[:, :, None] - unit[None, None, :, 0]) ** 2 + (ry[:, :, None] - unit[None, None, :, 1]) ** 2)
    nearest = np.sort(d.argmin(axis=1), axis=1)  # (rotations, layout pips): the nearest point of each
    one_each = (np.diff(nearest, axis=1) != 0).all(axis=1)  # one point per layout pip
    if not one_each.any():
        return np.inf, np.nan
    worst = np.where(one_each, d.min(axis=1).max(axis=1), np.inf)
    best = int(np.argmin(worst))
    return float(worst[best]), float(ang[best])


def pips_match(contrast_view: np.ndarray, value: int, margin: float) -> bool:
    """Whether the dark blobs of a die crop hold the pip layout of `value`.

    Passes when the blobs of any of the three binarisations of
    :func:`pip_blobs` do. Looks for `value` blobs of similar size (areas
    within 3x, each at most 6 % of the box) centred near the box centre (within
    0.22 box sides; a pair within :data:`PAIR_CENTRE_OFFSET` spacings) whose
    positions fit the layout of `value` after a rotation (within
    :data:`LAYOUT_TOLERANCE`) with a pip spacing in :data:`SPACING_RANGE`, and
    no other blob of comparable size within :data:`EXTRA_PIP_RADIUS` spacings
    of their centre. For 1: a blob of at least 0.6 % of the box within 0.2 box
    sides of the centre with no blob of comparable size within
    :data:`ONE_CLEAR_RADIUS` box sides of it.
    Blobs outside the face (pips on side faces, neighbours) do not matter.

    Parameters
    ----------
    contrast_view : ndarray of shape (S, S, 3) or (S, S), dtype uint8
        :func:`vision.reader_second_look.pip_contrast_view` of a crop made by
        :func:`vision.face.crop_die`.
    value : int
        Face value 1..6 to check.
    margin : float
        The margin the crop was made with (fraction of the box's long side).

    Returns
    -------
    bool

    Raises
    ------
    ValueError
        If `value` is not 1..6.
    """
    if value not in PIP_LAYOUTS:
        raise ValueError(f"value must be a face value 1..6, got {value!r}")
    return any(_match_blobs(b, value) for b in pip_blobs(contrast_view, margin))


def _match_blobs(blobs: np.ndarray, value: int) -> bool:
    return match_subset(blobs, value) is not None


def match_subset(blobs: np.ndarray, value: int) -> tuple[int, ...] | None:
    """The blobs that hold the pip layout of `value` (see :func:`pips_match`), or None.

    Parameters
    ----------
    blobs : ndarray of shape (N, 3), dtype float64
        Rows of :func:`pip_blobs`: centre ``x``, ``y`` (relative to the searched
        square's centre) and area, in units of its side.
    value : int
        Face value 1..6.

    Returns
    -------
    tuple of int or None
        Row indices of the `value` blobs that form the layout (the first fit
        found), or None when no subset does.
    """
    if len(blobs) == 0:
        return None
    pts, areas = blobs[:, :2], blobs[:, 2]
    if value == 1:
        for i in range(len(blobs)):
            if np.hypot(*pts[i]) <= 0.2 and areas[i] >= 0.006:
                near = np.hypot(*(pts - pts[i]).T) <= ONE_CLEAR_RADIUS
                near[i] = False
                if not np.any(near & (areas >= 0.3 * areas[i])):
                    return (i,)
        return None
    if not value <= len(blobs) <= 12:
        return None
    for sub in itertools.combinations(range(len(blobs)), value):
        idx = list(sub)
        a = areas[idx]
        if a.max() > 3.0 * a.min() or a.max() > 0.06:
            continue
        p = pts[idx]
        centre = p.mean(axis=0)
        spacing = layout_spacing(p, value)
        if not SPACING_RANGE[0] <= spacing <= SPACING_RANGE[1]:
            continue
        if np.hypot(*centre) > (min(0.22, PAIR_CENTRE_OFFSET * spacing) if value == 2 else 0.22):
            continue
        if layout_fit(p, value)[0] > LAYOUT_TOLERANCE:
            continue
        others = np.ones(len(blobs), bool)
        others[idx] = False
        close = np.hypot(*(pts - centre).T) <= EXTRA_PIP_RADIUS[value] * spacing
        if not np.any(others & close & (areas >= 0.4 * float(np.median(a)))):
            return tuple(idx)
    return None
