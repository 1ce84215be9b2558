"""Training samples from the synthetic tray renderer (:mod:`vision.render`).

Each rendered tray image gives one context crop per die (label = its value)
and a few class-0 crops: background squares with IoU < 0.1 against every die
box and squares half off a die (same rules as :mod:`vision.training.data`).
"""

from __future__ import annotations

import numpy as np

from vision.render import STYLES, Unreadable, render_randomised, render_tray
from vision.training.data import _far_from_dice, cut_context, iou, nominal_side


def render_samples(n_images: int, seed: int, *, randomised: bool = False) -> tuple[np.ndarray, np.ndarray]:
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

    Returns
    -------
    crops : ndarray of shape (N, CONTEXT_SIZE, CONTEXT_SIZE, 3), dtype uint8
    labels : ndarray of shape (N,), dtype int64
    """
    rng = np.random.default_rng(seed)
    crops, labels = [], []
    for i in range(n_images):
        values = [int(v) for v in rng.integers(1, 7, int(rng.integers(2, 7)))]
        style = STYLES[i % len(STYLES)] if i % 2 else "round"
        if randomised:
            tray = render_randomised(values, seed=int(rng.integers(2**31)))
        else:
            tray = render_tray(values, seed=int(rng.integers(2**31)), style=style, touching=bool(rng.random() < 0.4))
        img = np.asarray(tray.image)
        H, W = img.shape[:2]
        boxes = [tuple(float(v) for v in d.box) for d in tray.dice]
        for d, b in zip(tray.dice, boxes):
            if d.unreadable == Unreadable.PARTIAL:
                continue
            crops.append(cut_context(img, b[0] + b[2] / 2, b[1] + b[3] / 2, nominal_side(b[2], b[3])))
            labels.append(0 if d.unreadable == Unreadable.LEANING else d.value)
        sizes = [max(b[2:]) for b in boxes]
        for _ in range(2):
            for _try in range(20):
                s = float(rng.choice(sizes)) * rng.uniform(0.8, 1.25)
                cand = (rng.uniform(0, W - s), rng.uniform(0, H - s), s, s)
                if max(iou(cand, b) for b in boxes) < 0.1:
                    crops.append(cut_context(img, cand[0] + s / 2, cand[1] + s / 2, nominal_side(s, s)))
                    labels.append(0)
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
                break
    return np.stack(crops), np.array(labels, np.int64)
