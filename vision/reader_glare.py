"""Glints are not pips: taken off a die's crop before it is read; one that may hide a pip leaves the die unknown.

A glint (a small lamp reflected in a glossy face,
:func:`vision.reader_glints.glint_spots_and_mask`) is brighter than any pip
colour and than the face, often elongated. :func:`glare_free_crops` paints
each glint over with the face around it (inpainting, Telea 2004, OpenCV's
``cv2.inpaint``) before the face reader and the pip finder look: a glint
beside a pip no longer adds one, and one over part of a pip leaves the rest
of that pip to be read. Which light spots are glints, by what the pip finder
marks on the die as it is:

* pips not light (red, black, yellow: their least channel is dark): every spot;
* light pips (a pip marked off the spots is :data:`LIGHT_PIPS_ABOVE_FACE`
  over the face): a streak (:data:`STREAK`), or a spot under no mark of a
  pip's size, or one much smaller or bigger than the pips (the pips of one
  face are one size);
* every pip marked on a spot: two or more spots of one size, none a streak,
  are white pips, left alone; otherwise glints when the face reader then
  names another value (:data:`FACE_LEFT`: a face whose pips the pip finder
  missed), else light pips (a white 1 reads 1 or no face without its pip).

A glint can also cover a whole pip. :func:`glint_may_hide_pip` fits the
face's 3x3 pip grid to the pips seen: a glint on an empty cell where a pip
would make another face with them (a glint in the middle of a 4, a 5's middle
pip) leaves the die unknown ("glare on the face").

Conventions: images are BGR ``uint8`` arrays indexed ``(row, col)``; boxes are
``(x, y, w, h)`` in pixels, ``x`` right, ``y`` down; pip and glint positions
are relative to the box centre in units of its long side
(:func:`vision.pip_marks.marked_pips`).
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.face_crops import CROP_SIZE
from vision.fast_stats import least_channel
from vision.reader_glints import glint_spots_and_mask
from vision.reader_seen import Seen

__all__ = ["glare_free_crops", "glint_may_hide_pip"]

#: The spot's mask grows by this share of the box side before it is painted
#: over: a glint's edge is blurred, lighter than the face but under GLINT_LEVEL.
GLINT_HALO: float = 0.025
#: A glint and a pip mark are one spot when their centres are closer than
#: their radii together plus this share of the box side.
MATCH_SLACK: float = 0.04
#: Pips are light when the median level (least channel) of a pip marked off
#: the spots is this much over the face's; one is enough, a shadow can cross the
#: face (white and pink pips on a dark or red die; red or yellow pips have a
#: dark least channel, as a smoky face).
LIGHT_PIPS_ABOVE_FACE: int = 60
#: Where every pip marked lies on a spot, the spots are taken off only when the
#: face reader then names another value with at least this probability (a
#: white 1 at +1 EV, its pip taken off, reads as no face).
FACE_LEFT: float = 0.5
#: ... and when those spots are of one size (white pips, or two glints on a face whose dark pips the pip
#: finder missed: a smoky 4 with red pips read 2), with at least this probability.
FACE_LEFT_ONE_SIZE: float = 0.9
#: Most glints on one face: a die with more light spots is left alone (white
#: swirls on a smoky die at +1 EV make 7).
MOST_GLINTS: int = 3
#: A spot at least this elongated (long over short axis) is a streak, no pip:
#: a pip is a disc (white pips that are such spots: at most 1.65 on DEV, 2.02
#: where a shadow's edge crosses one).
STREAK: float = 2.5
#: Around a lone pip (a 1), a glint this close (box sides) may hide a pip of a
#: 2 or 3: corner to corner is 2 * sqrt(2) * 0.27 = 0.76 of a face's side
#: (:data:`vision.render.PIP_OFFSET`), centre to corner half that.
LONE_PIP_REACH: float = 0.45
#: On a die with light pips, a mark is a pip's when its area is at least this
#: share of the median mark off the spots (white pips that are spots on DEV:
#: 0.7 and more; glints marked on a white 1: 0.3 and 0.54).
PIP_MARK_SHARE: float = 0.6
#: On a die with light pips, a spot under a pip mark is that pip only when its
#: radius is at least this share of the pips' (a white pip's blown-out centre
#: at +1 EV: 0.54; a glint on the middle of a white 4 marked as a fifth pip: 0.45).
PIP_SHARE: float = 0.5
#: ... and at most this many times its radius (white pips that are such spots:
#: at most 1.0 on DEV and under shadows; a glint over a pink pip, 1.7).
BIGGER_THAN_PIP: float = 1.3
#: A glint with a radius under this share of the pips' can hide no pip: it must
#: cover most of one (quick glare set: at 1.0, 3 glints over pips went through;
#: at 0.65, 5 more dice were unknown than at 0.8).
HIDE_SHARE: float = 0.8
#: A die's glints are painted over on its surroundings shrunk to at most this
#: many times the networks' crop (CROP_SIZE px), never enlarged (full hard_shadow
#: run: at 2, one right close-up die of 948 read unknown; at 3 every value as at full size).
PAINT_SCALE: float = 3.0


#: Every face's pips as cells of its 3x3 grid (column, row: -1, 0, 1), each way round.
FACES: tuple[frozenset[tuple[int, int]], ...] = tuple(
    frozenset(f)
    for f in (
        [(0, 0)],
        [(-1, -1), (1, 1)],
        [(-1, 1), (1, -1)],
        [(-1, -1), (0, 0), (1, 1)],
        [(-1, 1), (0, 0), (1, -1)],
        [(-1, -1), (1, -1), (-1, 1), (1, 1)],
        [(-1, -1), (1, -1), (-1, 1), (1, 1), (0, 0)],
        [(-1, -1), (1, -1), (-1, 1), (1, 1), (-1, 0), (1, 0)],
        [(-1, -1), (1, -1), (-1, 1), (1, 1), (0, -1), (0, 1)],
    )
)


def glare_free_crops(
    pip_finder,
    face_reader,
    image: np.ndarray,
    boxes: list,
    crops: list[np.ndarray],
    margin: float,
    seen: Seen | None = None,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The dice's crops with their glints painted over, and the glints taken off each.

    The pip finder is asked (once, as a batch) only about the dice with a
    glint-like spot, which of the spots are glints (the rules in the module
    text).

    Parameters
    ----------
    pip_finder : object with ``predict(crops) -> ndarray (N, S, S)``
    face_reader : object with ``predict(crops) -> ndarray (N, 7)``
        Asked only about dice whose every marked pip lies on a spot.
    image : ndarray of shape (H, W, 3), dtype uint8
    boxes : list of N (x, y, w, h)
        The dice's boxes, px.
    crops : list of N ndarray of shape (S, S, 3), dtype uint8
        Their crops (:func:`vision.face.crop_die` with `margin`).
    margin : float
        The crops' margin (fraction of the box's long side).
    seen : Seen, optional
        Filled with what was found and asked on the way, by die index, so that
        the reader does not find or ask it again (:class:`vision.reader_seen.Seen`).

    Returns
    -------
    crops : list of N ndarray
        The crops, a new one for each die whose glints were taken off.
    glints : list of N ndarray of shape (G, 3), dtype float64
        The glints taken off each die (centre ``x``, ``y``, radius); empty when none.
    """
    from vision.face import crop_die
    from vision.pip_marks import PIP_THRESHOLD, marked_pips

    found = [glint_spots_and_mask(image, b) for b in boxes]
    if seen is not None:
        seen.glint_spots.update((i, len(spots)) for i, (spots, _) in enumerate(found))
    out_crops, glints = list(crops), [np.zeros((0, 3)) for _ in boxes]
    # a lamp makes a glint or two on a face; many light spots are the die's own marks (swirls, pip rings)
    ask = [i for i, (spots, _) in enumerate(found) if 0 < len(spots) <= MOST_GLINTS]
    unsure: list[int] = []
    one_size: set[int] = set()  # every mark on a spot, the spots of one size: white pips, or glints on dark pips
    if not ask:
        return out_crops, glints
    maps = np.asarray(pip_finder.predict([crops[i] for i in ask]), np.float32)
    for i, m in zip(ask, maps):
        spots, (x0, y0, labels) = found[i]
        marks = marked_pips(m, margin, PIP_THRESHOLD)
        off = marks[~_on_spots(marks, spots)]
        levels = [_level_at(image, boxes[i], mark) for mark in off]
        if len(marks) and not len(off):
            # light pips (discs of one size), or glints on a face whose pips are not marked
            under = spots[np.array([_on_spots(marks, spot[None]).any() for spot in spots], bool)]
            if (
                len(marks) >= 2
                and under[:, 2].max() <= BIGGER_THAN_PIP * under[:, 2].min()
                and under[:, 4].max() < STREAK
            ):
                one_size.add(i)
            unsure.append(i)
            glint = np.ones(len(spots), bool)
        elif levels and max(levels) >= _face_level(image, boxes[i]) + LIGHT_PIPS_ABOVE_FACE:
            # light pips, of one size on a face: a streak, a spot under no mark of a pip's size, or one much
            # smaller or bigger than the pips is a glint
            pip_area = float(np.median(marks[:, 2]))  # the pips of one face are one size
            pip_marks = marks[marks[:, 2] >= PIP_MARK_SHARE * float(np.median(off[:, 2]))]
            under_pip = np.array([_on_spots(pip_marks, spot[None]).any() for spot in spots], bool)
            pip_r = np.sqrt(pip_area / np.pi)
            under_pip &= spots[:, 2] >= PIP_SHARE * pip_r  # a blown-out pip is most of its disc
            under_pip &= spots[:, 2] <= BIGGER_THAN_PIP * pip_r  # and no more
            glint = (spots[:, 4] >= STREAK) | ~under_pip
        else:
            glint = np.ones(len(spots), bool)  # pips not light (or none marked)
        if glint.any():
            paint = np.isin(labels, np.flatnonzero(glint) + 1)
            out_crops[i] = _painted_crop(image, boxes[i], margin, x0, y0, paint, crop_die)
            glints[i] = spots[glint, :3]
    if unsure:
        # light pips read the same without their blown-out centres, or as no face; a glint's face reads otherwise
        probs = np.asarray(face_reader.predict([c for i in unsure for c in (crops[i], out_crops[i])]), np.float64)
        for i, before, after in zip(unsure, probs[0::2], probs[1::2]):
            least = FACE_LEFT_ONE_SIZE if i in one_size else FACE_LEFT
            if float(after[1:].max()) < least or np.argmax(after[1:]) == np.argmax(before[1:]):
                out_crops[i], glints[i] = crops[i], np.zeros((0, 3))
        if seen is not None:  # the face reader's answer for the crop that is read, painted or not
            seen.face_probs.update(
                (i, a if out_crops[i] is not crops[i] else b) for i, b, a in zip(unsure, probs[0::2], probs[1::2])
            )
    if seen is not None:  # the pip finder's map of a crop left as cut is the reader's first look at it
        seen.pip_maps.update((i, m) for i, m in zip(ask, maps) if out_crops[i] is crops[i])
    return out_crops, glints


def glint_may_hide_pip(pip_map: np.ndarray, margin: float, value: int, glints: np.ndarray) -> bool:
    """Whether a glint taken off a die may hide a pip of its face: the value read could be another.

    Parameters
    ----------
    pip_map : ndarray of shape (S, S), dtype float32
        The pip finder's map of the die's glare-free crop.
    margin : float
        The crop's margin.
    value : int
        The value read, 1-6.
    glints : ndarray of shape (G, 3)
        The glints taken off (:func:`glare_free_crops`).

    Returns
    -------
    bool
        True when glints big enough to cover a pip, on no pip marked, lie
        on empty positions of the face's 3x3 pip grid (fitted to the pips
        marked: the one farthest from their centre is a corner) where pips
        would make another face with the pips seen (:data:`FACES`), or for a
        1 within :data:`LONE_PIP_REACH` of its pip; also when no reading of
        the map holds `value`'s layout whole (the grid cannot be fitted).
    """
    from vision.pip_marks import _holds_layout, _readings

    if not len(glints):
        return False
    for marks, sized in _readings(pip_map, margin):
        if len(marks) == value and _holds_layout(marks, sized):
            break
    else:
        return True
    area = float(np.median(marks[:, 2])) if sized else 1.0
    pip_r = float(np.sqrt(area / np.pi)) if sized else 0.06
    free = [
        (gx, gy, area)
        for gx, gy, gr in glints
        if gr >= HIDE_SHARE * pip_r  # big enough to cover a pip
        and not np.any(np.hypot(marks[:, 0] - gx, marks[:, 1] - gy) < max(pip_r, gr))  # not on a seen pip
    ]
    if not free:
        return False
    pts = marks[:, :2]
    centre = pts.mean(axis=0)
    if value == 1:
        # a lone pip: the other pips of a 2 or 3 would lie up to a face's diagonal pip spacing from it
        return any(np.hypot(gx - centre[0], gy - centre[1]) < LONE_PIP_REACH for gx, gy, _ in free)
    # the face's 3x3 grid: the pip farthest from the centre is a corner, s * sqrt(2) out
    corner = pts[int(np.argmax(np.hypot(*(pts - centre).T)))] - centre
    spacing = float(np.hypot(*corner)) / np.sqrt(2.0)
    turn = np.arctan2(corner[1], corner[0]) - np.pi / 4
    u = np.array([np.cos(turn), np.sin(turn)]) * spacing
    v = np.array([-np.sin(turn), np.cos(turn)]) * spacing
    cells = [(i, j) for i in (-1, 0, 1) for j in (-1, 0, 1)]
    at = np.array([centre + i * u + j * v for i, j in cells])

    def cells_near(points) -> set[tuple[int, int]]:
        d = np.hypot(*(np.asarray(points)[:, None, :2] - at[None]).transpose(2, 0, 1))
        return {cells[k] for k in np.flatnonzero(d.min(axis=0) < 0.5 * spacing)}

    seen = cells_near(pts)
    # a glint on an empty grid position leaves it bright where a pip may be: the die is unsure when the pips
    # seen and some pips there make a face
    bright = cells_near(np.array([g[:2] for g in free])) - seen
    return any(seen < layout <= seen | bright for layout in FACES)


def _on_spots(marks: np.ndarray, spots: np.ndarray) -> np.ndarray:
    """Which marks lie on one of the spots (bool per mark)."""
    on = np.zeros(len(marks), bool)
    mark_r = np.sqrt(marks[:, 2] / np.pi)
    for gx, gy, gr in spots[:, :3]:
        on |= np.hypot(marks[:, 0] - gx, marks[:, 1] - gy) < mark_r + gr + MATCH_SLACK
    return on


def _painted_crop(image, box, margin, x0, y0, mask, crop_die) -> np.ndarray:
    """The die's crop cut from a copy of the photo around it with the spots' pixels painted over."""
    x, y, w, h = box
    side = max(w, h)
    half = side * (0.5 + margin) + 2
    cx, cy = x + w / 2, y + h / 2
    H, W = image.shape[:2]
    rx0, ry0 = max(0, int(cx - half)), max(0, int(cy - half))
    rx1, ry1 = min(W, int(np.ceil(cx + half)) + 1), min(H, int(np.ceil(cy + half)) + 1)
    roi = np.ascontiguousarray(image[ry0:ry1, rx0:rx1])
    paint = np.zeros(roi.shape[:2], np.uint8)
    mask = mask.astype(np.uint8)
    mh, mw = mask.shape
    ya, xa = y0 - ry0, x0 - rx0
    ys, xs = slice(max(0, ya), min(paint.shape[0], ya + mh)), slice(max(0, xa), min(paint.shape[1], xa + mw))
    paint[ys, xs] = mask[ys.start - ya : ys.stop - ya, xs.start - xa : xs.stop - xa]
    # the networks see a CROP_SIZE crop: paint at most PAINT_SCALE times that (a close-up kingpi die's inpaint:
    # 27 ms at full size, a few ms), the spots' mask shrunk keeping every pixel it touches
    scale = min(1.0, PAINT_SCALE * CROP_SIZE / (side * (1.0 + 2.0 * margin)))
    if scale < 1.0:
        size = (max(1, round(roi.shape[1] * scale)), max(1, round(roi.shape[0] * scale)))
        roi = cv2.resize(roi, size, interpolation=cv2.INTER_AREA)
        paint = (cv2.resize(paint * 255, size, interpolation=cv2.INTER_AREA) > 0).astype(np.uint8)
        sx, sy = size[0] / (rx1 - rx0), size[1] / (ry1 - ry0)
    else:
        sx = sy = 1.0
    grow = max(1, int(round(GLINT_HALO * side * sx)))
    paint = cv2.dilate(paint, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * grow + 1,) * 2))
    roi = cv2.inpaint(roi, paint, max(2, int(round(0.05 * side * sx))), cv2.INPAINT_TELEA)
    return crop_die(roi, ((x - rx0) * sx, (y - ry0) * sy, w * sx, h * sy), margin=margin)


def _face_level(image: np.ndarray, box) -> float:
    """The face's level: median least channel over the box's central three fifths."""
    x, y, w, h = (int(v) for v in box)
    roi = image[max(0, y) : y + h, max(0, x) : x + w]
    rh, rw = roi.shape[:2]
    middle = roi[rh // 5 : rh - rh // 5, rw // 5 : rw - rw // 5]
    return float(np.median(least_channel(middle))) if middle.size else 0.0


def _level_at(image: np.ndarray, box, mark: np.ndarray) -> int:
    """The median level (least channel) of the photo within 0.04 box sides of a mark's centre (box side units)."""
    x, y, w, h = box
    side = max(w, h)
    px, py = int(x + w / 2 + mark[0] * side), int(y + h / 2 + mark[1] * side)
    r = max(1, int(0.04 * side))
    patch = image[max(0, py - r) : py + r + 1, max(0, px - r) : px + r + 1]
    return int(np.median(least_channel(patch))) if patch.size else 0
