"""Training samples from the synthetic tray renderer (:mod:`vision.render`).

Each rendered tray image gives one context crop per die (label = its value)
and a few class-0 crops: background squares with IoU < 0.1 against every die
box and squares half off a die (same rules as :mod:`vision.lab.training.data`).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from vision.lab.training.data import (
    CONTEXT_SIZE,
    _far_from_dice,
    context_px,
    cut_context,
    iou,
    nominal_side,
    save_npz_atomically,
    source_hash,
)
from vision.render import PIP_LAYOUTS, STYLES, Conditions, RenderedDie, Unreadable, render_randomised, render_tray
from vision.render._die import PIP_OFFSET


def render_samples(
    n_images: int, seed: int, *, randomised: bool = False, leaning: bool = False, with_pips: bool = False
) -> tuple[np.ndarray, np.ndarray] | tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Context crops from `n_images` rendered trays of 2-6 dice.

    Parameters
    ----------
    n_images : int
        Tray images to render (about 0.3 s each at 640x480).
    seed : int
        Seed of the values, styles and renderer.
    randomised : bool, optional
        Render with :func:`vision.render.render_randomised` (every condition at
        random: dark, translucent and marbled dice, more surfaces, glare, camera
        tilt, heavy blur, noise and JPEG, leaning and border-cut dice) instead of
        :func:`vision.render.render_tray`. A leaning die's crop is labelled 0 (not
        a readable face); a die cut by the border gives no crop.
    leaning : bool, optional
        With `randomised`: every image gets a die leaning on a tray wall or on
        another die where one fits (labelled 0; 3 of 4 images at seed 3), every
        other factor still at random (the border condition off). At random only
        one image in ten has one.
    with_pips : bool, optional
        Also return where each crop's top-face pips are.

    Returns
    -------
    crops : ndarray of shape (N, CONTEXT_SIZE, CONTEXT_SIZE, 3), dtype uint8
    labels : ndarray of shape (N,), dtype int64
    pips : list of N ndarrays of shape (K, 3), float64
        Only with `with_pips`: each crop's top-face pips (``x``, ``y``, radius,
        context-crop px); empty for class 0.

    Raises
    ------
    ValueError
        If `leaning` is given without `randomised`.
    """
    if leaning and not randomised:
        raise ValueError("leaning=True puts leaning dice in domain-randomised renders: pass randomised=True too")
    rng = np.random.default_rng(seed)
    crops, labels, pips = [], [], []
    none = np.zeros((0, 3), np.float64)
    for i in range(n_images):
        values = [int(v) for v in rng.integers(1, 7, int(rng.integers(2, 7)))]
        style = STYLES[i % len(STYLES)] if i % 2 else "round"
        if randomised and leaning:
            draw = np.random.default_rng(int(rng.integers(2**31)))
            conditions = dataclasses.replace(Conditions.sample(draw), leaning=True, border=False)
            tray = render_randomised(values, seed=draw, conditions=conditions)
        elif randomised:
            tray = render_randomised(values, seed=int(rng.integers(2**31)))
        else:
            tray = render_tray(values, seed=int(rng.integers(2**31)), style=style, touching=bool(rng.random() < 0.4))
        img = np.asarray(tray.image)
        H, W = img.shape[:2]
        boxes = [tuple(float(v) for v in d.box) for d in tray.dice]
        for d, b in zip(tray.dice, boxes):
            if d.unreadable == Unreadable.PARTIAL:
                continue
            cx, cy, side = b[0] + b[2] / 2, b[1] + b[3] / 2, nominal_side(b[2], b[3])
            crops.append(cut_context(img, cx, cy, side))
            labels.append(0 if d.unreadable == Unreadable.LEANING else d.value)
            pips.append(none if labels[-1] == 0 else context_px(top_face_pips(d), cx, cy, side))
        if not boxes:  # every die fell outside the picture: nothing to take negatives beside
            continue
        sizes = [max(b[2:]) for b in boxes]
        for _ in range(2):
            for _try in range(20):
                s = float(rng.choice(sizes)) * rng.uniform(0.8, 1.25)
                cand = (rng.uniform(0, W - s), rng.uniform(0, H - s), s, s)
                if max(iou(cand, b) for b in boxes) < 0.1:
                    crops.append(cut_context(img, cand[0] + s / 2, cand[1] + s / 2, nominal_side(s, s)))
                    labels.append(0)
                    pips.append(none)
                    break
        a = boxes[int(rng.integers(len(boxes)))]
        for _try in range(10):
            ang = rng.uniform(0, 2 * np.pi)
            dd = rng.uniform(0.6, 0.85) * max(a[2:])
            cand = (a[0] + dd * np.cos(ang), a[1] + dd * np.sin(ang), a[2], a[3])
            cx, cy = cand[0] + a[2] / 2, cand[1] + a[3] / 2
            if max(iou(cand, b) for b in boxes) <= 0.4 and _far_from_dice(cx, cy, boxes):
                crops.append(cut_context(img, cx, cy, nominal_side(a[2], a[3])))
                labels.append(0)
                pips.append(none)
                break
    if with_pips:
        return np.stack(crops), np.array(labels, np.int64), pips
    return np.stack(crops), np.array(labels, np.int64)


def top_face_pips(die: RenderedDie, pip_radius: float = 0.095) -> np.ndarray:
    """Where the renderer put the pips of a die's top face, in image px.

    Uses the die's recorded pose: the face centre ``centre_xy``, the face side
    ``face_px`` and ``angle_deg``, with the renderer's own pip layout
    (:data:`vision.render.PIP_LAYOUTS` scaled by ``PIP_OFFSET``). Under a tilted
    camera the pose is that of the warped face (centre and size exact, angle
    and shape approximate: a few percent of the face side at 25 degrees).

    Parameters
    ----------
    die : RenderedDie
    pip_radius : float, optional
        Pip radius as a fraction of the face side (the renderer draws 0.085-0.1).

    Returns
    -------
    ndarray of shape (value, 3), dtype float64
        Centre ``x``, ``y`` and radius of each pip, image px.
    """
    off = PIP_OFFSET * die.face_px
    a = math.radians(die.angle_deg)
    c, s = math.cos(a), math.sin(a)
    cx, cy = die.centre_xy
    out = [
        (cx + u * off * c + v * off * s, cy - u * off * s + v * off * c, pip_radius * die.face_px)
        for u, v in PIP_LAYOUTS[die.value]
    ]
    return np.array(out, np.float64).reshape(-1, 3)


def cached_render_samples(
    n_images: int, seed: int, cache_dir, *, randomised: bool = False, leaning: bool = False, with_pips: bool = False
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """:func:`render_samples`, kept in `cache_dir` and redrawn when the renderer's code changes.

    Parameters
    ----------
    n_images, seed, randomised, leaning, with_pips
        As for :func:`render_samples`.
    cache_dir : str or Path
        Folder for the cache file (created when missing).

    Returns
    -------
    crops : ndarray of shape (N, CONTEXT_SIZE, CONTEXT_SIZE, 3), dtype uint8
    labels : ndarray of shape (N,), dtype int64
    pips : list of N ndarrays of shape (K, 3)
        Empty arrays unless `with_pips`.
    """
    import time
    from pathlib import Path

    import vision.render

    if n_images <= 0:
        return np.zeros((0, CONTEXT_SIZE, CONTEXT_SIZE, 3), np.uint8), np.zeros(0, np.int64), []
    code = source_hash(*sorted(Path(vision.render.__file__).parent.glob("*.py")), __file__)
    kind = ("randomised_leaning" if leaning else "randomised") if randomised else "tray"
    path = Path(cache_dir) / f"render_{kind}_{n_images}_{seed}_{CONTEXT_SIZE}_{code}.npz"
    if path.is_file():
        z = np.load(path)
        bounds = np.cumsum(z["pip_counts"])[:-1]
        return z["crops"], z["labels"], list(np.split(z["pips"], bounds))
    t = time.time()
    crops, labels, pips = render_samples(n_images, seed, randomised=randomised, leaning=leaning, with_pips=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_npz_atomically(
        path,
        crops=crops,
        labels=labels,
        pips=np.concatenate(pips).reshape(-1, 3),
        pip_counts=np.array([len(p) for p in pips], np.int64),
    )
    print(f"rendered {n_images} {kind} images -> {len(labels)} crops in {time.time() - t:.0f} s", flush=True)
    return crops, labels, pips
