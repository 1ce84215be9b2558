"""Training samples for the pip finder: context crops with the top face's pip centres.

The pip finder (:mod:`vision.pips`) marks the pips of a die's top face on a
crop; the reader then fits the pip layouts to those marks, an opinion
independent of the face reader's class. Its targets come from two places:

- **Drawn dice** (:func:`vision.lab.training.synth.draw_die` with ``return_pips``):
  exact pip positions on any die colour, marbled bodies, chromatic pips, side
  faces and neighbours.
- **Real photos** (the TRAIN set, and DEV photos with ``--dev-train``): the
  photo's label says the face value ``v``; the classical layout check
  (:func:`vision._reader_pips.match_subset` on the three binarisations of the
  pip-contrast view) looks for ``v`` blobs that hold the layout of ``v``.
  When it finds them their centres and sizes are the targets; when it does not,
  the die is left out (its pips are unknown). Negative crops (no die in the
  middle) have no pips.

Real dice the classical check cannot read are exactly the ones the pip finder
must learn; the photometric augmentation (hue rotation, channel order,
inversion, low contrast, blur, small dice) turns the readable ones into such
dice, and the drawn dice cover the colours the photos lack.
"""

from __future__ import annotations

import math

import numpy as np

from vision.face import CROP_SIZE, DEFAULT_MARGIN
from vision.lab.training.augment import centre_crop
from vision.lab.training.data import CONTEXT_FACTOR


def pseudo_pips(crop: np.ndarray, value: int, margin: float = DEFAULT_MARGIN) -> np.ndarray | None:
    """Pips of face `value` on a die crop found by the classical layout check, or None.

    Parameters
    ----------
    crop : ndarray of shape (S, S, 3), dtype uint8
        A die crop as :func:`vision.face.crop_die` cuts it with `margin`.
    value : int
        The die's true face value 1..6 (from the labels).
    margin : float, optional
        The crop's margin (fraction of the box's long side).

    Returns
    -------
    ndarray of shape (value, 3), dtype float64, or None
        Centre ``x``, ``y`` and radius of each pip in px of `crop`; None when
        no binarisation holds the layout of `value`.
    """
    from vision._reader_pips import box_inset, match_subset, pip_blobs
    from vision.reader import pip_contrast_view

    m = box_inset(crop.shape[0], margin)
    for blobs in pip_blobs(pip_contrast_view(crop), margin):
        sub = match_subset(blobs, value)
        if sub is not None:
            return _blobs_to_px(blobs[list(sub)], m, crop.shape[0] - 2 * m)
    return None


def _blobs_to_px(blobs: np.ndarray, inset: int, inner: int) -> np.ndarray:
    """Blob rows (centre relative to the searched square, area; in its side) as crop px: ``x, y, radius``."""
    x = (blobs[:, 0] + 0.5) * inner + inset - 0.5
    y = (blobs[:, 1] + 0.5) * inner + inset - 0.5
    return np.column_stack([x, y, np.sqrt(blobs[:, 2] / math.pi) * inner])


def pips_from_map(pip_map: np.ndarray, value: int, margin: float = DEFAULT_MARGIN) -> np.ndarray | None:
    """Pips of face `value` among the marks of an earlier pip finder, or None (self-training targets).

    The map is thresholded at 0.5, 0.3 and 0.15; the first whose blobs hold the
    layout of the *labelled* value (:func:`vision._reader_pips.match_subset`)
    gives the targets; when none does, the labelled layout is fitted to the
    map by pose search (:func:`fit_layout_on_map`). The value comes from the photo's label, never from the
    face reader, so the targets stay independent of it.

    Parameters
    ----------
    pip_map : ndarray of shape (S, S), dtype float32
        :meth:`vision.pips.PipFinder.predict` of a crop cut with `margin`.
    value : int
        The labelled face value 1..6.
    margin : float, optional
        The crop's margin.

    Returns
    -------
    ndarray of shape (value, 3), dtype float64, or None
        Centre ``x``, ``y`` and radius of each pip in px of the crop.
    """
    from vision._reader_pips import _blobs_of, box_inset, match_subset

    side = pip_map.shape[0]
    m = box_inset(side, margin)
    inner = np.ascontiguousarray(pip_map[m : side - m, m : side - m])
    for t in (0.5, 0.3, 0.15):
        blobs = _blobs_of((inner >= t).astype(np.uint8) * 255)
        sub = match_subset(blobs, value)
        if sub is not None:
            return _blobs_to_px(blobs[list(sub)], m, inner.shape[0])
    return fit_layout_on_map(pip_map, value, margin)


#: Poses tried by :func:`fit_layout_on_map`: layout centre offsets from the crop
#: centre (fraction of the box side), pip spacings (centre to corner pip along a
#: face axis, fraction of the box side) and turns (degrees). A layout that a
#: quarter turn maps onto itself (1, 4, 5) is tried at the turns below 90 only;
#: the others (2, 3, 6) repeat only every 180 (a 2 on one diagonal or the other).
FIT_OFFSETS = np.linspace(-0.2, 0.2, 11)
FIT_SPACINGS = np.linspace(0.13, 0.27, 8)
FIT_TURNS = np.arange(0.0, 180.0, 7.5)
#: A fitted layout needs every pip's mark at least this strong ...
FIT_MIN_PIP = 0.2
#: ... and no empty place of the 3 x 3 pip grid marked more than this fraction of
#: its weakest pip (the centre of a 4, the middle row of a 6, ...).
FIT_EMPTY_RATIO = 0.5


def fit_layout_on_map(pip_map: np.ndarray, value: int, margin: float = DEFAULT_MARGIN) -> np.ndarray | None:
    """Fit the layout of a *known* face value to a pip map by pose search (label-guided targets).

    For a labelled die whose marks no threshold separates into the right blobs
    (faint red pips on a smoky body, pips that touch), every pose on a grid of
    centre offsets (:data:`FIT_OFFSETS`), spacings (:data:`FIT_SPACINGS`) and
    turns (:data:`FIT_TURNS`) places the 3 x 3 pip grid on the map. A pose
    passes when the weakest mark under the value's pips (each the map's maximum
    within a third of the spacing) reaches :data:`FIT_MIN_PIP` and no empty
    grid place is marked above :data:`FIT_EMPTY_RATIO` of it; of the passing
    poses the one whose points sit best on the marks' centres (the smoothed
    map there, plus the weakest mark, less the strongest empty place) is kept,
    provided nothing else within two spacings of its centre is marked above
    :data:`FIT_EMPTY_RATIO` of its weakest pip (one column of a 4 is no 2). The value comes from the photo's label, so
    the targets stay independent of the face reader. A template match over a
    pose grid, as in classical pattern matching (Brunelli, *Template Matching
    Techniques in Computer Vision*, Wiley 2009, ch. 2).

    Parameters
    ----------
    pip_map : ndarray of shape (S, S), dtype float32
        An earlier pip finder's map of a crop cut with `margin`.
    value : int
        The labelled face value 1..6.
    margin : float, optional
        The crop's margin (fraction of the box's long side).

    Returns
    -------
    ndarray of shape (value, 3), dtype float64, or None
        Centre ``x``, ``y`` and radius (0.35 of the spacing, the renderer's and
        real dice's ratio) of each pip, px of the crop; None without a fit.
    """
    import cv2

    from vision._reader_pips import PIP_LAYOUTS

    side = pip_map.shape[0]
    box = side / (1.0 + 2.0 * margin)
    grid = np.array([(u, v) for v in (-1, 0, 1) for u in (-1, 0, 1)], np.float64)
    layout = set(PIP_LAYOUTS[value])
    used = np.array([tuple(g) in layout for g in grid])
    quarter_turn_symmetric = {(-y, x) for x, y in layout} == layout
    turns = FIT_TURNS[FIT_TURNS < 90.0] if quarter_turn_symmetric else FIT_TURNS
    raw = np.asarray(pip_map, np.float32)
    yy, xx = np.mgrid[0:side, 0:side].astype(np.float64)
    candidates = []
    for spacing in FIT_SPACINGS:
        k = max(1, int(round(spacing * box / 3)))
        local_max = cv2.dilate(raw, np.ones((2 * k + 1, 2 * k + 1), np.uint8))
        smooth = cv2.GaussianBlur(raw, (0, 0), max(1.0, k / 2))
        for turn in turns:
            a = np.radians(turn)
            rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
            pts = grid @ rot.T * spacing * box  # (9, 2) px around the layout centre
            ox, oy = np.meshgrid(FIT_OFFSETS * box, FIT_OFFSETS * box)
            xs = side / 2 - 0.5 + ox.reshape(-1, 1) + pts[None, :, 0]
            ys = side / 2 - 0.5 + oy.reshape(-1, 1) + pts[None, :, 1]
            xi = np.clip(np.round(xs).astype(int), 0, side - 1)
            yi = np.clip(np.round(ys).astype(int), 0, side - 1)
            marks = local_max[yi, xi]  # (poses, 9)
            weakest = marks[:, used].min(axis=1)
            strongest_empty = marks[:, ~used].max(axis=1) if (~used).any() else np.zeros(len(marks))
            ok = (weakest >= FIT_MIN_PIP) & (strongest_empty <= FIT_EMPTY_RATIO * weakest)
            centred = smooth[yi, xi][:, used].mean(axis=1)  # peaks where the points sit on the pips' centres
            for j in np.flatnonzero(ok):
                candidates.append(
                    (
                        float(centred[j] + weakest[j] - strongest_empty[j]),
                        float(weakest[j]),
                        spacing * box,
                        xs[j, used],
                        ys[j, used],
                    )
                )
    candidates.sort(key=lambda c: -c[0])
    for _, weakest, spacing_px, px, py in candidates[:30]:
        # nothing else marked on the face around the layout (a 2 made of one column of a 4)
        cx, cy = px.mean(), py.mean()
        near = (xx - cx) ** 2 + (yy - cy) ** 2 <= (2.0 * spacing_px) ** 2
        for x, y in zip(px, py):
            near &= (xx - x) ** 2 + (yy - y) ** 2 > (0.6 * spacing_px) ** 2
        if not near.any() or float(raw[near].max()) <= FIT_EMPTY_RATIO * weakest:
            return np.column_stack([px, py, np.full(value, 0.35 * spacing_px)])
    return None


def context_pips(ctx: np.ndarray, value: int, finder=None) -> np.ndarray | None:
    """:func:`pseudo_pips` of a context crop's nominal crop, in px of the context crop.

    Parameters
    ----------
    ctx : ndarray of shape (C, C, 3), dtype uint8
        Context crop (:mod:`vision.lab.training.data`).
    value : int
        Label 0..6; 0 (no die) gives an empty array.

    finder : vision.pips.PipFinder, optional
        An earlier pip finder: where the classical check finds nothing, its
        marks that hold the labelled layout are used (:func:`pips_from_map`).

    Returns
    -------
    ndarray of shape (K, 3), dtype float64, or None
    """
    if value == 0:
        return np.zeros((0, 3), np.float64)
    crop = centre_crop(ctx)
    pips = pseudo_pips(crop, value, DEFAULT_MARGIN)
    if pips is None and finder is not None:
        pips = pips_from_map(finder.predict([crop])[0], value, DEFAULT_MARGIN)
    if pips is None:
        return None
    C = ctx.shape[0]
    nominal = C / CONTEXT_FACTOR
    a = (C - nominal) / 2
    f = nominal / CROP_SIZE
    return np.column_stack([a + (pips[:, 0] + 0.5) * f - 0.5, a + (pips[:, 1] + 0.5) * f - 0.5, pips[:, 2] * f])


def label_real(crops: np.ndarray, labels: np.ndarray, finder=None) -> tuple[np.ndarray, list[np.ndarray]]:
    """Pip targets for real context crops; dice the classical check cannot read are left out.

    Parameters
    ----------
    crops : ndarray of shape (N, C, C, 3), dtype uint8
    labels : ndarray of shape (N,), dtype int64
        0 = no die, 1..6 = face value.
    finder : vision.pips.PipFinder, optional
        An earlier pip finder for the dice the classical check cannot read
        (see :func:`context_pips`).

    Returns
    -------
    kept : ndarray of shape (M,), dtype int64
        Indices into `crops` that got targets.
    pips : list of M ndarrays of shape (K, 3)
        Their pips in px of the context crop.
    """
    kept, pips = [], []
    for i, (c, v) in enumerate(zip(crops, labels)):
        p = context_pips(c, int(v), finder)
        if p is not None:
            kept.append(i)
            pips.append(p)
    return np.array(kept, np.int64), pips


def synth_with_pips(n_per_class: int, seed: int, size: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """Drawn context crops with exact pips: `n_per_class` per face value plus as many without a centred die.

    Returns
    -------
    crops : ndarray of shape (7 * n_per_class, size, size, 3), dtype uint8
    pips : list of ndarrays of shape (K, 3)
        Pips of the centred die in px of the crop (empty for the no-die crops).
    """
    from vision.lab.training.synth import draw_die

    rng = np.random.default_rng(seed)
    crops, pips = [], []
    for value in range(1, 7):
        for _ in range(n_per_class):
            img, p = draw_die(value, rng, size=size, offset=tuple(rng.uniform(-0.06, 0.06, 2)), return_pips=True)
            crops.append(img)
            pips.append(p)
    for i in range(n_per_class):
        if i % 2:
            img = draw_die(0, rng, size=size)  # blank face
        else:
            ang = rng.uniform(0, 2 * np.pi)
            img = draw_die(
                int(rng.integers(1, 7)),
                rng,
                size=size,
                offset=(0.75 * np.cos(ang), 0.75 * np.sin(ang)),
                neighbours=False,
            )
        crops.append(img)
        pips.append(np.zeros((0, 3), np.float64))
    return np.stack(crops), pips


def pip_target(pips: np.ndarray, size: int = CROP_SIZE, *, scale: float = 1.0) -> np.ndarray:
    """The pip finder's target map: 1 inside each pip disc, 0 elsewhere.

    Parameters
    ----------
    pips : ndarray of shape (K, 3)
        Centre ``x``, ``y`` and radius in px of the crop.
    size : int, optional
        Crop side in px.
    scale : float, optional
        Side of the map over `size` (0.5: a map at half resolution).

    Returns
    -------
    ndarray of shape (round(size * scale), round(size * scale)), dtype float32
    """
    n = int(round(size * scale))
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
    out = np.zeros((n, n), np.float32)
    for x, y, r in np.asarray(pips, np.float64).reshape(-1, 3):
        x, y, r = (x + 0.5) * scale - 0.5, (y + 0.5) * scale - 0.5, r * scale
        rr = max(0.8, 0.85 * float(r))
        out[(xx - x) ** 2 + (yy - y) ** 2 <= rr * rr] = 1.0
    return out
