"""Which face values the pip finder's marks hold: the layout check on its maps.

The pip finder (:class:`vision.pips.PipFinder`) marks, on a die crop, where
the pips of the top face are. This module reads those marks as pips (blobs of
the thresholded map, and the map's peaks) and fits the pip layouts of the six
faces to them with the classical layout fit of :mod:`vision._reader_pips`: the
right number of pips, of similar size, near the centre, in the pattern of the
value (:func:`layouts_on_map`); pips of side faces may be left out on the side
facing the photo's principal point (:func:`holds_layout_of`).

Conventions: maps are ``float32`` probabilities in ``[0, 1]``, ``(S, S)``, on
crops cut by :func:`vision.face.crop_die` with a margin (fraction of the die
box's long side); pip positions are relative to the crop centre, in units of
the die box side.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterator

import cv2
import numpy as np

__all__ = ["layouts_on_map", "holds_layout_of", "marked_peaks", "marked_pips", "PIP_THRESHOLD"]

#: A pixel is part of a pip when the map's probability is at least this: on
#: the held-out DEV fold the true value's layout was found for 80.8 % of dice
#: and a wrong layout for 1.7 % (at 0.5: 80.4 % / 3.2 %).
PIP_THRESHOLD: float = 0.3

#: Higher thresholds also tried: close pips whose marks merge at
#: :data:`PIP_THRESHOLD` (small dice, glare on the pips) separate at these.
SPLIT_THRESHOLDS: tuple[float, ...] = (0.5, 0.7)

#: The map's peaks are also taken as pips, at these least heights: a faint
#: pip (red on a smoky die) can be marked too weakly or too small for a blob
#: of its own and still be a clear local maximum (held-out DEV fold: 88.8 ->
#: 89.2 % per-die accuracy, silent errors unchanged; 0.2 made the faint glare
#: in the middle of a red 2 a third pip).
PEAK_THRESHOLDS: tuple[float, ...] = (0.3, 0.5)
#: Two peaks closer than this (fraction of the die box side) are one pip.
PEAK_SEPARATION: float = 0.09

#: A marked layout's centre lies within this many box sides of the crop
#: centre (the box covers the side faces too, so the top face sits off-centre
#: in the box of a die seen at an angle).
CENTRE_OFFSET: float = 0.25
#: Pip spacing (centre to corner pip along one face axis) of a marked layout,
#: as a fraction of the searched square's side.
SPACING_RANGE: tuple[float, float] = (0.07, 0.32)
#: Largest distance of a marked pip from its layout position after the best
#: rotation, in units of the layout's RMS radius. At 0.35 a translucent red 2
#: whose top pip is marked twice (pip and swirl) held a 3 bent by about 50
#: degrees (errors 0.356 and 0.39). (The classical check's tolerance,
#: :data:`vision._reader_pips.LAYOUT_TOLERANCE`, is a separate setting for its
#: own, noisier blobs.)
LAYOUT_TOLERANCE: float = 0.3
#: Least area of a lone pip (a 1), as a fraction of the searched square.
ONE_MIN_AREA: float = 0.003
#: Largest ratio of the biggest to the smallest marked pip.
AREA_RATIO: float = 3.0


def _holds_layout(blobs: np.ndarray, sized: bool = True) -> bool:
    """Whether all marked pips together form the layout of their count (`sized`: rows carry areas to compare)."""
    return _layout_turn(blobs, sized) is not None


def _layout_turn(blobs: np.ndarray, sized: bool = True) -> float | None:
    """The turn (radians, :func:`vision._reader_pips.layout_fit`; 0 for a lone pip) of the layout that all
    marked pips together hold, or None when they hold none (:func:`_holds_layout`'s rules)."""
    from vision._reader_pips import layout_fit, layout_spacing

    n = len(blobs)
    pts, areas = blobs[:, :2], blobs[:, 2]
    centre = pts.mean(axis=0)
    if float(np.hypot(*centre)) > CENTRE_OFFSET:
        return None
    if n == 1:
        return 0.0 if sized and float(areas[0]) >= ONE_MIN_AREA else None
    if sized and float(areas.max()) > AREA_RATIO * float(areas.min()):
        return None
    if not SPACING_RANGE[0] <= layout_spacing(pts, n) <= SPACING_RANGE[1]:
        return None
    error, turn = layout_fit(pts, n)
    return turn if error <= LAYOUT_TOLERANCE else None


#: Marks left out as side-face pips lie at least this many pip spacings from
#: the layout's centre along one of its face's axes: beyond the face's edge,
#: which is 0.5 / 0.27 = 1.85 spacings out (pips 0.27 of the side from the
#: centre, :data:`vision.render.PIP_OFFSET`). A face's own pips are 1 spacing
#: out. On the held-out DEV folds 1.6-2.2 give the same readings.
SIDE_FACE_DISTANCE: float = 1.9
#: ... and at most this many spacings along the other axis: beside an edge,
#: where a side face's pips are seen, not beyond a corner.
SIDE_FACE_ALONG: float = 1.85
#: Most marks a layout may leave out as side-face pips (a side face shows up
#: to three pips of a row).
SIDE_FACE_MARKS: int = 3
#: Least face value held with side-face marks left out. The layouts of 2 and
#: 3 are lines: any two marks make a 2, and a 3 is also the column of a 6 whose
#: middle pip on the other column went unmarked (that column then lies beside
#: the "3"), or two pips and a side-face mark spaced a little unevenly. The
#: layouts of 4-6 are squares that fix the face's edges.
SIDE_FACE_MIN_VALUE: int = 4
#: Largest angle, degrees, between the direction from the layout's centre to
#: a mark left out and the direction from the die to the principal point. A
#: camera above the tray sees the side faces that face the principal point
#: (the model of :mod:`vision.render`; in the nell DEV photos within 15
#: degrees of it), at most two of them, 45 degrees either side of it for a die
#: seen across its corner. The second face of a die leaning on another can face
#: anywhere (94 degrees away in the stress-set die that forced this rule).
SIDE_FACE_ANGLE_DEG: float = 75.0


def layouts_on_map(pip_map: np.ndarray, margin: float) -> set[int]:
    """Face values whose pip layout the marked pips of one crop hold.

    The map is thresholded at :data:`PIP_THRESHOLD` (and at
    :data:`SPLIT_THRESHOLDS`, for pips whose marks touch); its blobs are the pips
    (:func:`vision._reader_pips.pip_blobs` rules: size,
    roundness, not touching the box edge). Its peaks above each of
    :data:`PEAK_THRESHOLDS` are a second reading of where the pips are
    (:func:`marked_peaks`; 2 to 6 of them, sizes not compared, no lone peak
    taken as a 1). A value counts when the
    number of pips is exactly the value *and* all of them hold its layout:
    centred within :data:`CENTRE_OFFSET`, similar sizes, spacing in
    :data:`SPACING_RANGE`, every pip within :data:`LAYOUT_TOLERANCE` of the
    pattern after the best rotation. The pip finder marks only the top face,
    so every marked pip must be explained; testing subsets instead (as the
    classical check does among noisy blobs) let the column of a 6 pass as a 3
    and half of a 4 as a 2 (a wrong layout on 27 % of held-out DEV dice; with
    the count rule, 1.7 %).

    Side faces are the one exception, in :func:`holds_layout_of` only, when
    the caller says where the principal point is.

    Parameters
    ----------
    pip_map : ndarray of shape (S, S), dtype float32
        One map from :meth:`PipFinder.predict`.
    margin : float
        The margin the crop was cut with (fraction of the box's long side).

    Returns
    -------
    set of int
        Usually empty (no layout) or one value.
    """
    return set(_held_layouts(pip_map, margin, range(1, 7)))


def holds_layout_of(
    pip_map: np.ndarray, margin: float, value: int, side_faces_towards: tuple[float, float] | None = None
) -> bool:
    """Whether the marked pips of one crop hold the layout of `value`.

    Without `side_faces_towards`, ``value in layouts_on_map(...)``. With it,
    pips of side faces may be marked too. A die seen off the camera's axis
    shows the side faces that face the principal point, and the pip finder
    marks some of their pips, so the exact count refuses a die whose face
    reader is sure and right (7 of the 10 such dice on held-out DEV fold 1).
    When no reading's marks hold a layout as a whole, a value of at least
    :data:`SIDE_FACE_MIN_VALUE` is held by that many of one reading's marks
    that hold its layout, provided the up to :data:`SIDE_FACE_MARKS` marks
    left out all lie beside the layout's face: beyond one of its edges (at
    least :data:`SIDE_FACE_DISTANCE` pip spacings out along one face axis, at
    most :data:`SIDE_FACE_ALONG` along the other), within
    :data:`SIDE_FACE_ANGLE_DEG` of `side_faces_towards` (without the
    direction, a die leaning on another was given a value: its other face's
    pips, 94 degrees away from the principal point, left out as a side face).

    Parameters
    ----------
    pip_map : ndarray of shape (S, S), dtype float32
        One map from :meth:`PipFinder.predict`.
    margin : float
        The margin the crop was cut with (fraction of the box's long side).
    value : int
        The face value 1-6 to check.
    side_faces_towards : (dx, dy), optional
        Direction in the crop (any length, px of the photo) from the die to
        the photo's principal point, where its side faces are seen; None when
        none are (a die under the camera).

    Returns
    -------
    bool
    """
    return next(_held_layouts(pip_map, margin, (value,), side_faces_towards), None) is not None


def _readings(pip_map: np.ndarray, margin: float) -> Iterator[tuple[np.ndarray, bool]]:
    """Each reading of where the pips are: ``(marks, sized)``.

    The blobs at each threshold, then the peaks at each height.
    """
    for threshold in (PIP_THRESHOLD, *SPLIT_THRESHOLDS):
        yield marked_pips(pip_map, margin, threshold), True
    all_peaks = marked_peaks(pip_map, margin, min(PEAK_THRESHOLDS)) if PEAK_THRESHOLDS else np.zeros((0, 3))
    for threshold in PEAK_THRESHOLDS:  # a peak kept at the lowest height is kept at any (suppression goes by height)
        yield all_peaks[all_peaks[:, 2] >= threshold], False


def _held_layouts(
    pip_map: np.ndarray, margin: float, values: Collection[int], side_faces_towards: tuple[float, float] | None = None
) -> Iterator[int]:
    """Yield each value in `values` whose layout the marks hold (see :func:`holds_layout_of`); repeats possible.

    Lazy: :func:`holds_layout_of` stops at the first value, so the later
    readings and the side-face search are computed only for dice in doubt.
    """
    seen = []  # (marks, sized, whether they hold a layout as a whole; None: not checked yet)
    for marks, sized in _readings(pip_map, margin):
        held = _holds_whole(marks, sized) if len(marks) in values else None
        seen.append((marks, sized, held))
        if held:
            yield len(marks)
    if side_faces_towards is None or any(
        _holds_whole(marks, sized) if held is None else held for marks, sized, held in seen
    ):
        return  # marks that hold some layout as a whole are that face's pips, none a side face's
    towards = np.asarray(side_faces_towards, np.float64)
    for marks, sized, _ in seen:
        yield from (v for v in values if _holds_layout_beside_side_faces(marks, v, sized, towards))


def _holds_whole(marks: np.ndarray, sized: bool) -> bool:
    """Whether one reading's marks, all of them, hold the layout of their count (1-6 blobs, or 2-6 peaks)."""
    return (1 if sized else 2) <= len(marks) <= 6 and _holds_layout(marks, sized)


def _holds_layout_beside_side_faces(marks: np.ndarray, value: int, sized: bool, towards: np.ndarray) -> bool:
    """Whether `value` of the marks hold its layout and the others lie beside that face.

    The face is `towards` (:func:`holds_layout_of`).
    """
    from vision._reader_pips import layout_spacing

    n = len(marks)
    if value < SIDE_FACE_MIN_VALUE or not value < n <= value + SIDE_FACE_MARKS:
        return False
    for chosen in itertools.combinations(range(n), value):
        layout = marks[list(chosen)]
        turn = _layout_turn(layout, sized)
        if turn is None:
            continue
        centre = layout[:, :2].mean(axis=0)
        away = np.delete(marks, list(chosen), axis=0)[:, :2] - centre
        cos, sin = np.cos(turn), np.sin(turn)
        face = np.abs(np.column_stack([cos * away[:, 0] - sin * away[:, 1], sin * away[:, 0] + cos * away[:, 1]]))
        face /= layout_spacing(layout[:, :2], value)  # (K, 2): spacings out along the face's two axes
        beside_an_edge = (face.max(axis=1) >= SIDE_FACE_DISTANCE) & (face.min(axis=1) <= SIDE_FACE_ALONG)
        cos_to = away @ towards / (np.hypot(*away.T) * float(np.hypot(*towards)) + 1e-12)
        if beside_an_edge.all() and (cos_to >= np.cos(np.radians(SIDE_FACE_ANGLE_DEG))).all():
            return True
    return False


def marked_peaks(pip_map: np.ndarray, margin: float, threshold: float) -> np.ndarray:
    """The peaks of one map: local maxima at least `threshold` high, at least :data:`PEAK_SEPARATION` apart.

    The map is smoothed (Gaussian, sigma 1 px) and its local maxima over a
    square of :data:`PEAK_SEPARATION` box sides are taken from the highest
    down, each dropped when it lies closer than that to a higher one
    (non-maximum suppression, as in the corner and keypoint detectors of
    Harris and Stephens, 1988, and Lowe, 2004).

    Parameters
    ----------
    pip_map : ndarray of shape (S, S), dtype float32
    margin : float
        The crop's margin (fraction of the box's long side).
    threshold : float
        Least height of a peak (probability).

    Returns
    -------
    ndarray of shape (N, 3), dtype float64
        Centre ``x``, ``y`` relative to the crop centre, in units of the die
        box side, and the peak's height; highest first.
    """
    side = pip_map.shape[0]
    box = side / (1.0 + 2.0 * margin)
    smooth = cv2.GaussianBlur(np.asarray(pip_map, np.float32), (0, 0), 1.0)
    k = max(3, int(round(PEAK_SEPARATION * box)) | 1)
    local_max = cv2.dilate(smooth, np.ones((k, k), np.uint8))
    ys, xs = np.nonzero((smooth >= local_max - 1e-6) & (smooth >= threshold))
    kept: list[tuple[float, float, float]] = []
    min_d2 = (PEAK_SEPARATION * box) ** 2
    for j in np.argsort(-smooth[ys, xs], kind="stable"):
        x, y = float(xs[j]), float(ys[j])
        if all((x - a) ** 2 + (y - b) ** 2 >= min_d2 for a, b, _ in kept):
            kept.append((x, y, float(smooth[ys[j], xs[j]])))
    out = np.array(kept, np.float64).reshape(-1, 3)
    out[:, :2] = (out[:, :2] + 0.5) / box - side / (2 * box)
    return out


def marked_pips(pip_map: np.ndarray, margin: float, threshold: float = PIP_THRESHOLD) -> np.ndarray:
    """The pips marked on one map: blobs of the thresholded map, anywhere on the crop.

    A blob counts when it covers 0.3 % to 12 % of the die box, its bounding box
    is at most 2.2 times longer than wide and it fills at least 45 % of it (the
    rules of :func:`vision._reader_pips.pip_blobs`). Unlike the classical
    blobs, marks that reach past the die box still count: the pip finder marks
    only the centred die's top face, whose pips can lie near the box edge when
    the die is seen at an angle.

    Parameters
    ----------
    pip_map : ndarray of shape (S, S), dtype float32
    margin : float
        The crop's margin (fraction of the box's long side).
    threshold : float, optional
        Least probability of a marked pixel.

    Returns
    -------
    ndarray of shape (N, 3), dtype float64
        Centre ``x``, ``y`` relative to the crop centre and area, in units of
        the die box side (area in side squared).
    """
    from vision._reader_pips import is_pip_shaped

    side = pip_map.shape[0]
    box = side / (1.0 + 2.0 * margin)
    mask = (np.asarray(pip_map) >= threshold).astype(np.uint8)
    n, _, stats, cents = cv2.connectedComponentsWithStats(mask)
    out = []
    for (_x, _y, w, h, area), (cx, cy) in zip(stats[1:n], cents[1:n]):
        if is_pip_shaped(w, h, area, box * box):
            out.append(((cx + 0.5) / box - side / (2 * box), (cy + 0.5) / box - side / (2 * box), area / (box * box)))
    return np.array(out, np.float64).reshape(-1, 3)
