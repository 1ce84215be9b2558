"""Procedurally drawn die crops: a top view of one d6 with pips, for training and tests.

The drawings are simple on purpose (rounded square, round pips at the standard
layouts, optional side faces, shadow, neighbours, lighting gradient, noise);
they teach the network the pip layouts on dice colours and trays that the real
training photos lack (ivory dice on a dark tray, as in the product). Uses only
numpy and OpenCV.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.probe_crops import _SS, PIP_LAYOUTS, _rounded_square, fixed_probe_crops, plain_face

__all__ = ["PIP_LAYOUTS", "draw_die", "fixed_probe_crops", "plain_face", "synth_set"]


def _colour(rng: np.random.Generator, kind: str) -> np.ndarray:
    if kind == "ivory":
        base = rng.uniform(190, 255)
        return np.array([base * rng.uniform(0.8, 0.95), base * rng.uniform(0.9, 1.0), base], np.float64)
    if kind == "dark_tray":
        v = rng.uniform(5, 70)
        return np.array([v * rng.uniform(0.8, 1.2), v * rng.uniform(0.8, 1.2), v * rng.uniform(0.8, 1.2)])
    return rng.uniform(0, 255, 3)


def draw_die(
    value: int,
    rng: np.random.Generator,
    *,
    size: int = 96,
    box_side: float | None = None,
    offset: tuple[float, float] = (0.0, 0.0),
    style: str | None = None,
    neighbours: bool = True,
    return_pips: bool = False,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Draw a square image with one die seen from above.

    Parameters
    ----------
    value : int
        Face value 0..6 of the top face; 0 draws a blank face (no pips).
    rng : numpy.random.Generator
        Source of every random choice (colours, rotation, lighting, noise).
    size : int, optional
        Side of the image in px.
    box_side : float, optional
        Side of the die's bounding box in px; default ``size / (1.6 * 1.3)``,
        so that the image is a context crop of :mod:`vision.lab.training.data`.
    offset : tuple of float, optional
        Shift of the die centre from the image centre, in units of `box_side`.
    style : {"ivory_dark", "ivory", "random"}, optional
        Colour scheme; random when None.
    neighbours : bool, optional
        Allow other dice around the edges.
    return_pips : bool, optional
        Also return where the top face's pips were drawn (for the pip finder).

    Returns
    -------
    image : ndarray of shape (size, size, 3), dtype uint8
        BGR image.
    pips : ndarray of shape (value, 3), dtype float64
        Only with `return_pips`: centre ``x``, ``y`` and radius of each pip of
        the centre die's top face, in px of `image`.
    """
    if style is None:
        style = str(rng.choice(["ivory_dark", "ivory", "random"], p=[0.3, 0.2, 0.5]))
    box_side = size / (1.6 * 1.3) if box_side is None else box_side
    S = size * _SS
    # background
    if style == "ivory_dark":
        bg = _colour(rng, "dark_tray")
    else:
        bg = _colour(rng, "any")
    img = np.empty((S, S, 3), np.float64)
    img[:] = bg
    # texture on the background
    tex = cv2.resize(rng.normal(0, rng.uniform(0, 18), (8, 8)), (S, S), interpolation=cv2.INTER_CUBIC)
    img += tex[..., None]
    body_map: np.ndarray | None = None
    if style == "random":
        body = _colour(rng, "any")
        lum = float(body @ np.array([0.114, 0.587, 0.299]))
        r = rng.random()
        if r < 0.35:
            # chromatic pips: red / yellow / white / black picked against the body
            options = [
                np.array([40.0, 40.0, 200.0]),
                np.array([40.0, 210.0, 230.0]),
                np.array([235.0, 235.0, 235.0]),
                np.array([20.0, 20.0, 20.0]),
                np.array([60.0, 160.0, 210.0]),
            ]
            dist = [np.abs(o - body).sum() for o in options]
            cands = [o for o, d in zip(options, dist) if d > 250] or [options[int(np.argmax(dist))]]
            pip = cands[int(rng.integers(len(cands)))] + rng.uniform(-15, 15, 3)
        else:
            pip = np.full(3, rng.uniform(0, 50)) if lum > 110 else np.full(3, rng.uniform(200, 255))
        if rng.random() < 0.6:
            # marbled body: two colours mixed by noise, smooth or swirly (veins, speckles);
            # teaches that texture on the face is not a pip
            other = np.clip(body + rng.normal(0, 70, 3), 0, 255)
            cells = int(rng.choice([5, 10, 18, 30]))
            noise = cv2.resize(rng.normal(0, 1, (cells, cells)), (S, S), interpolation=cv2.INTER_CUBIC)
            if rng.random() < 0.5:
                noise = np.sin(noise * rng.uniform(3, 8))  # veins
            mix = np.clip(0.5 + noise * rng.uniform(0.5, 3.0), 0, 1)[..., None]
            body_map = body * mix + other * (1 - mix)
    else:
        body = _colour(rng, "ivory")
        pip = np.full(3, rng.uniform(0, 60)) + rng.uniform(-10, 10, 3)
        if rng.random() < 0.08:
            pip = np.array([40, 40, rng.uniform(120, 200)])  # red pips (e.g. the 1 on some dice)

    def one_die(centre: np.ndarray, face_side: float, angle: float, val: int, main: bool) -> None:
        nonlocal img
        # shadow
        if rng.random() < 0.6:
            sh = _rounded_square(S, centre + rng.uniform(-0.12, 0.12, 2) * face_side, face_side * 1.05, angle, 0.2)
            sh = cv2.GaussianBlur(sh.astype(np.float32) / 255, (0, 0), face_side * 0.08)
            img *= 1 - rng.uniform(0.2, 0.6) * sh[..., None]
        # side faces (oblique view or leaning): a darker copy shifted below the top face
        if rng.random() < 0.5:
            shift = rng.uniform(-0.18, 0.18, 2) * face_side
            side_mask = _rounded_square(S, centre + shift, face_side, angle, 0.15)
            img[side_mask > 0] = body * rng.uniform(0.45, 0.8)
        rad = rng.uniform(0.08, 0.2)
        m = _rounded_square(S, centre, face_side, angle, rad)
        # face with a lighting gradient
        g = rng.uniform(-0.15, 0.15, 2)
        yy, xx = np.mgrid[0:S, 0:S].astype(np.float32) / S - 0.5
        shade = 1 + g[0] * xx + g[1] * yy
        face = (body_map if body_map is not None else body[None, None, :]) * shade[..., None]
        img[m > 0] = face[m > 0]
        if val == 0:
            return
        c, s = np.cos(angle), np.sin(angle)
        spread = rng.uniform(0.24, 0.3) * face_side
        pr = rng.uniform(0.075, 0.11) * face_side
        jitter = rng.normal(0, 0.01 * face_side, (6, 2))
        for k, (px, py) in enumerate(PIP_LAYOUTS[val]):
            u, v = px * spread + jitter[k, 0], py * spread + jitter[k, 1]
            x = centre[0] + u * c - v * s
            y = centre[1] + u * s + v * c
            if main:
                drawn_pips.append(((x + 0.5) / _SS - 0.5, (y + 0.5) / _SS - 0.5, pr / _SS))
            cv2.circle(
                img, (int(round(x)), int(round(y))), int(round(pr)), tuple(float(t) for t in pip), -1, cv2.LINE_AA
            )

    drawn_pips: list[tuple[float, float, float]] = []
    angle = rng.uniform(0, np.pi / 2)
    face_side = box_side * _SS * rng.uniform(0.68, 0.78)  # rotated square's box is up to 1.41x larger
    centre = np.array([S / 2, S / 2]) + np.array(offset) * box_side * _SS
    if neighbours and rng.random() < 0.4:
        for _ in range(int(rng.integers(1, 3))):
            ang = rng.uniform(0, 2 * np.pi)
            dist = rng.uniform(1.05, 1.5) * box_side * _SS
            nc = centre + dist * np.array([np.cos(ang), np.sin(ang)])
            one_die(nc, face_side * rng.uniform(0.9, 1.1), rng.uniform(0, np.pi / 2), int(rng.integers(1, 7)), False)
    one_die(centre, face_side, angle, value, True)
    # specular highlight
    if rng.random() < 0.3:
        hl = np.zeros((S, S), np.float32)
        cv2.circle(
            hl, tuple(int(v) for v in rng.uniform(S * 0.3, S * 0.7, 2)), int(face_side * rng.uniform(0.1, 0.3)), 1.0, -1
        )
        hl = cv2.GaussianBlur(hl, (0, 0), face_side * 0.1)
        img += rng.uniform(30, 90) * hl[..., None]
    out = cv2.resize(np.clip(img, 0, 255).astype(np.float32), (size, size), interpolation=cv2.INTER_AREA)
    out += rng.normal(0, rng.uniform(0, 6), out.shape)
    image = np.clip(out, 0, 255).astype(np.uint8)
    if return_pips:
        return image, np.array(drawn_pips, np.float64).reshape(-1, 3)
    return image


def synth_set(n_per_class: int, seed: int, *, size: int = 96) -> tuple[np.ndarray, np.ndarray]:
    """Drawn context crops: `n_per_class` dice of each value 1-6 plus class-0 crops.

    Class 0 gets `n_per_class` crops: half with a die shifted at least 0.6
    box sides off centre, a quarter of blank faces, a quarter of empty background
    (a die far off centre).

    Returns
    -------
    crops : ndarray of shape (7 * n_per_class, size, size, 3), dtype uint8
    labels : ndarray of shape (7 * n_per_class,), dtype int64
    """
    rng = np.random.default_rng(seed)
    crops, labels = [], []
    for value in range(1, 7):
        for _ in range(n_per_class):
            off = tuple(rng.uniform(-0.06, 0.06, 2))
            crops.append(draw_die(value, rng, size=size, offset=off))
            labels.append(value)
    for i in range(n_per_class):
        r = i % 4
        if r < 2:
            ang = rng.uniform(0, 2 * np.pi)
            d = rng.uniform(0.65, 0.9)
            off = (d * np.cos(ang), d * np.sin(ang))
            if max(abs(off[0]), abs(off[1])) < 0.6:
                off = (float(np.sign(off[0]) * 0.65), off[1])
            crops.append(draw_die(int(rng.integers(1, 7)), rng, size=size, offset=off, neighbours=False))
        elif r == 2:
            crops.append(draw_die(0, rng, size=size, offset=(0.0, 0.0)))
        else:
            crops.append(draw_die(int(rng.integers(1, 7)), rng, size=size, offset=(1.6, 1.6), neighbours=False))
        labels.append(0)
    return np.stack(crops), np.array(labels, np.int64)
