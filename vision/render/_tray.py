"""Place dice on a tray without overlap and render the picture."""

from __future__ import annotations

import math
from collections.abc import Sequence

import cv2
import numpy as np

from vision.render._die import DieLook, DiePose, Light, die_outline, draw_die, draw_shadow
from vision.render._scene import Tray, finish, make_tray
from vision.render._types import DICE_COLOURS, MAX_DICE, STYLES, RenderedDie, RenderedTray

_PLACE_TRIES = 600


def _rng(seed: int | np.random.Generator) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, (bool, float)) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an int or a numpy.random.Generator, got {seed!r}")
    return np.random.default_rng(int(seed))


def _check_values(values: Sequence[int]) -> tuple[int, ...]:
    try:
        vals = tuple(values)
    except TypeError:
        raise ValueError(f"values must be a sequence of face values 1-6, got {values!r}") from None
    if not vals:
        raise ValueError("values is empty; give 1 to 30 face values 1-6, e.g. [3, 5, 6, 6, 1]")
    if len(vals) > MAX_DICE:
        raise ValueError(
            f"too many dice for the tray: {len(vals)} values given, at most {MAX_DICE} fit; "
            "render them in several images"
        )
    for v in vals:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= 6:
            raise ValueError(f"face value {v!r} is impossible on a d6; every value must be 1-6 (got {list(vals)})")
    return tuple(int(v) for v in vals)


def _check_size(size: tuple[int, int]) -> tuple[int, int]:
    try:
        w, h = (int(x) for x in size)
    except (TypeError, ValueError):
        raise ValueError(f"size must be (width, height) in pixels, got {size!r}") from None
    if w < 64 or h < 64 or w > 8192 or h > 8192:
        raise ValueError(f"size must be (width, height) between 64 and 8192 px each, got {size!r}")
    return w, h


def _looks(rng: np.random.Generator, n: int) -> list[tuple[str, DieLook]]:
    names = list(DICE_COLOURS)
    corner = rng.uniform(0.12, 0.2)
    bevel = rng.uniform(0.05, 0.1)
    pip_r = rng.uniform(0.085, 0.1)
    gloss = rng.uniform(0.05, 0.35)
    if rng.random() < 0.5:
        chosen = [names[int(rng.integers(len(names)))]] * n
    else:
        chosen = [names[int(rng.integers(len(names)))] for _ in range(n)]
    out = []
    for name in chosen:
        body, pip = DICE_COLOURS[name]
        jit = (1 + rng.uniform(-0.06, 0.06, 3)).astype(np.float32)
        b = tuple(float(x) for x in np.clip(np.asarray(body) * jit, 0, 1))
        out.append((name, DieLook(b, pip, corner=corner, bevel=bevel, pip_radius=pip_r, gloss=gloss)))
    return out


def _overlaps(hull: np.ndarray, centre: tuple[float, float], radius: float,
              placed: list[tuple[np.ndarray, tuple[float, float], float]]) -> bool:
    for other, oc, orad in placed:
        if math.hypot(centre[0] - oc[0], centre[1] - oc[1]) > radius + orad + 1:
            continue
        area, _ = cv2.intersectConvexConvex(hull, other)
        if area > 0.05:
            return True
    return False


def _fits(hull: np.ndarray, tray: Tray, w: int, h: int) -> bool:
    if hull[:, 0].min() < 1 or hull[:, 1].min() < 1 or hull[:, 0].max() > w - 2 or hull[:, 1].max() > h - 2:
        return False
    return bool(tray.floor_distance(hull).max() <= -1.5)


def _hull_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Gap in px between two convex outlines (0 or less when they touch or overlap)."""
    ca, cb = a.reshape(-1, 1, 2), b.reshape(-1, 1, 2)
    d = min(-cv2.pointPolygonTest(cb, (float(x), float(y)), True) for x, y in a)
    d = min(d, min(-cv2.pointPolygonTest(ca, (float(x), float(y)), True) for x, y in b))
    return float(d)


def _place(rng, n, faces, looks, tray, w, h, k, origin, touching):
    """Choose poses for ``n`` dice; None when they do not fit."""
    placed: list[tuple[np.ndarray, tuple[float, float], float]] = []
    poses: list[DiePose] = []
    want_touch = [False] * n
    if touching and n >= 2:
        want_touch[1] = True
        for j in range(2, n):
            want_touch[j] = rng.random() < 0.25
    for j in range(n):
        face = faces[j]
        look = looks[j][1]
        radius = face * 0.75 + 2
        done = False
        tries = 0
        while tries < _PLACE_TRIES and not done:
            tries += 1
            angle = float(rng.uniform(0, 360))
            if want_touch[j] and tries <= _PLACE_TRIES // 3:
                i = j - 1 if j == 1 else int(rng.integers(j))
                if rng.random() < 0.4:
                    angle = poses[i].angle_deg
                direction = rng.uniform(0, 2 * math.pi)
                ux, uy = math.cos(direction), math.sin(direction)
                bx, by = poses[i].base_xy
                target = placed[i][0]

                def hull_at(t: float) -> np.ndarray:
                    p = DiePose((bx + ux * t, by + uy * t), angle, face, k, origin)
                    return die_outline(p, look)

                lo, hi = 0.0, 2.4 * max(face, poses[i].face_px)
                if cv2.intersectConvexConvex(hull_at(hi), target)[0] > 0:
                    continue
                for _ in range(24):
                    mid = (lo + hi) / 2
                    if cv2.intersectConvexConvex(hull_at(mid), target)[0] > 1e-3:
                        lo = mid
                    else:
                        hi = mid
                base = (bx + ux * hi, by + uy * hi)
            else:
                base = (float(rng.uniform(face * 0.5, w - face * 0.5)), float(rng.uniform(face * 0.5, h - face * 0.5)))
            pose = DiePose(base, angle, face, k, origin)
            hull = die_outline(pose, look)
            if not _fits(hull, tray, w, h):
                continue
            centre = pose.top[:2]
            if _overlaps(hull, centre, radius, placed):
                continue
            placed.append((hull, centre, radius))
            poses.append(pose)
            done = True
        if not done:
            return None, None
    return poses, [p[0] for p in placed]


def _floor_area(tray: Tray, w: int, h: int) -> float:
    ys, xs = np.mgrid[2:h - 2:4, 2:w - 2:4]
    inside = tray.floor.sdf(xs.astype(np.float64), ys.astype(np.float64)) < -4
    return float(inside.sum()) * 16.0


def render_tray(values: Sequence[int], *, seed: int | np.random.Generator = 0,
                size: tuple[int, int] = (640, 480), die_px: float | None = None,
                style: str | None = None, touching: bool = False, noise: float | None = None,
                blur: float | None = None, jpeg: bool | None = None) -> RenderedTray:
    """Render a top-down photo-like picture of d6 dice lying in a tray.

    Parameters
    ----------
    values : sequence of int
        Face values 1-6 of the dice to draw, 1 to 30 of them; one die per value.
    seed : int or numpy.random.Generator, optional
        Seed of every random choice; the same seed and arguments give the same
        image, bit for bit.  A Generator is used (and advanced) as given.
    size : tuple of 2 int, optional
        ``(width, height)`` of the image in pixels (OpenCV order).
    die_px : float, optional
        Side of each die's top face in pixels.  Default: random in 42-56 px for a
        640x480 image (scaled with the image), smaller when many dice must fit.
    style : str, optional
        Tray style, one of :data:`STYLES`; random when None.
    touching : bool, optional
        Place at least one pair of dice touching each other (when 2+ dice).
    noise : float, optional
        Standard deviation of the Gaussian sensor noise in grey levels (0-255
        scale); 0 for none; random in 1.5-5 when None.
    blur : float, optional
        Gaussian blur sigma in pixels; 0 for none; random in 0.3-0.9 when None.
    jpeg : bool, optional
        Pass the image through JPEG at a random quality 60-92 when True, never when
        False, with probability 0.6 when None.

    Returns
    -------
    RenderedTray
        ``image`` of shape (height, width, 3), dtype uint8, BGR; ``dice`` in the
        order of `values` with boxes ``(x, y, w, h)`` of the whole visible die.

    Raises
    ------
    ValueError
        If a value is not 1-6, there are no values or more than 30, `size`,
        `die_px`, `style` or `noise` is out of range, or the dice do not fit on
        the tray without overlapping (fewer dice or a smaller `die_px` helps).

    Notes
    -----
    The camera model is a pinhole straight above the tray: each die's top face is
    2.5-5 % nearer the camera than the floor, so dice away from the image centre
    show the side faces turned towards the centre.  Shading is Lambert plus a
    Blinn-Phong highlight under one distant light, with soft cast shadows.

    Examples
    --------
    >>> tray = render_tray([1, 2, 3, 4, 5], seed=7)
    >>> tray.image.shape, tray.values
    ((480, 640, 3), (1, 2, 3, 4, 5))
    """
    vals = _check_values(values)
    w, h = _check_size(size)
    if style is not None and style not in STYLES:
        raise ValueError(f"unknown tray style {style!r}; use one of {', '.join(STYLES)} (or None for random)")
    if die_px is not None and not (8.0 <= float(die_px) <= min(w, h) / 2):
        raise ValueError(f"die_px must be 8 to {min(w, h) / 2:g} px for a {w}x{h} image, got {die_px!r}")
    if noise is not None and not (0.0 <= float(noise) <= 80.0):
        raise ValueError(f"noise must be a standard deviation of 0-80 grey levels, got {noise!r}")
    if blur is not None and not (0.0 <= float(blur) <= 10.0):
        raise ValueError(f"blur must be a sigma of 0-10 px, got {blur!r}")
    rng = _rng(seed)
    n = len(vals)
    scale = min(w / 640, h / 480)
    st = style if style is not None else STYLES[int(rng.integers(len(STYLES)))]
    az = rng.uniform(0, 2 * math.pi)
    el = math.radians(rng.uniform(40, 72))
    light = Light((math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)),
                  ambient=float(rng.uniform(0.35, 0.55)))
    origin = (w / 2 + rng.uniform(-0.05, 0.05) * w, h / 2 + rng.uniform(-0.05, 0.05) * h)
    k = float(rng.uniform(0.025, 0.05))
    base_px = float(die_px) if die_px is not None else float(rng.uniform(42, 56)) * scale
    img, tray = make_tray(rng, st, w, h, origin, light, wall_px=base_px * rng.uniform(0.8, 1.6))
    area = _floor_area(tray, w, h)
    if die_px is None:
        base_px = min(base_px, math.sqrt(0.28 * area / n) / 1.1)
    elif n * (base_px * 1.15) ** 2 > 0.55 * area:
        raise ValueError(
            f"too many dice for the tray: {n} dice of {base_px:g} px need about "
            f"{n * (base_px * 1.15) ** 2:.0f} px^2 but the {st} tray floor in a {w}x{h} image has "
            f"{area:.0f} px^2; use fewer dice, a smaller die_px or a larger size"
        )
    looks = _looks(rng, n)
    poses = hulls = None
    for attempt in range(4):
        faces = [base_px * float(rng.uniform(0.97, 1.03)) for _ in range(n)]
        poses, hulls = _place(rng, n, faces, looks, tray, w, h, k, origin, touching)
        if poses is not None:
            break
        if die_px is not None:
            break
        base_px *= 0.9
    if poses is None:
        raise ValueError(
            f"too many dice for the tray: could not place {n} dice of {base_px:.0f} px without overlap "
            f"on the {st} tray of a {w}x{h} image; use fewer dice, a smaller die_px or a larger size"
        )
    strength = float(rng.uniform(0.2, 0.45))
    for pose, (_, look) in zip(poses, looks):
        draw_shadow(img, pose, look, light, strength)
    for pose, (_, look), v in zip(poses, looks, vals):
        draw_die(img, pose, look, light, v, tint=float(rng.uniform(0.95, 1.05)))
    nz = float(rng.uniform(1.5, 5.0)) if noise is None else float(noise)
    bl = float(rng.uniform(0.3, 0.9)) * max(scale, 0.5) if blur is None else float(blur)
    use_jpeg = (rng.random() < 0.6) if jpeg is None else bool(jpeg)
    quality = int(rng.integers(60, 93))
    image = finish(img, rng, noise=nz, blur=bl, jpeg_quality=quality if use_jpeg else None)
    image.setflags(write=False)

    dice = []
    for pose, hull, (name, _), v in zip(poses, hulls, looks, vals):
        x0 = int(math.floor(hull[:, 0].min()))
        y0 = int(math.floor(hull[:, 1].min()))
        x1 = int(math.ceil(hull[:, 0].max()))
        y1 = int(math.ceil(hull[:, 1].max()))
        tx, ty, _ = pose.top
        dice.append(RenderedDie(
            value=v, box=(x0, y0, x1 - x0, y1 - y0), centre_xy=(float(tx), float(ty)),
            angle_deg=float(pose.angle_deg % 360.0), colour=name, face_px=float(pose.face_px),
            outline=tuple((float(x), float(y)) for x, y in hull),
        ))
    pairs = []
    for i in range(n):
        for j in range(i + 1, n):
            ci, cj = dice[i].centre_xy, dice[j].centre_xy
            if math.hypot(ci[0] - cj[0], ci[1] - cj[1]) > 1.6 * (dice[i].face_px + dice[j].face_px):
                continue
            if _hull_distance(hulls[i], hulls[j]) <= 0.5:
                pairs.append((i, j))
    return RenderedTray(image=image, dice=tuple(dice), style=st, touching=tuple(pairs))


def render_die_crop(value: int, *, seed: int | np.random.Generator = 0, size: int = 64,
                    style: str | None = None, margin: float | None = None,
                    noise: float | None = None) -> RenderedTray:
    """Render one die and crop a square around it, as a face reader would see it.

    Parameters
    ----------
    value : int
        Face value 1-6.
    seed : int or numpy.random.Generator, optional
        Seed of every random choice (deterministic for an int).
    size : int, optional
        Side of the square crop in pixels, 16-512.
    style : str, optional
        Tray style, one of :data:`STYLES`; random when None.
    margin : float, optional
        Crop side over the larger side of the die's box; random in 1.1-1.4 when None.
    noise : float, optional
        Sensor noise as for :func:`render_tray`.

    Returns
    -------
    RenderedTray
        ``image`` of shape (size, size, 3), dtype uint8, BGR, and the one die with
        its box, centre and face size in crop pixels.

    Raises
    ------
    ValueError
        If `value` is not 1-6 or `size` is not 16-512.
    """
    _check_values([value])
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or not 16 <= size <= 512:
        raise ValueError(f"size must be a whole number of pixels 16-512, got {size!r}")
    rng = _rng(seed)
    m = float(rng.uniform(1.1, 1.4)) if margin is None else float(margin)
    if not 1.0 <= m <= 4.0:
        raise ValueError(f"margin must be 1-4 (crop side over die box side), got {margin!r}")
    tray = render_tray([value], seed=rng, size=(320, 240), die_px=float(rng.uniform(40, 56)),
                       style=style, noise=noise)
    die = tray.dice[0]
    x, y, bw, bh = die.box
    side = max(bw, bh) * m
    cx, cy = x + bw / 2 + rng.uniform(-0.04, 0.04) * side, y + bh / 2 + rng.uniform(-0.04, 0.04) * side
    f = size / side
    mat = np.float32([[f, 0, size / 2 - cx * f], [0, f, size / 2 - cy * f]])
    crop = cv2.warpAffine(np.asarray(tray.image), mat, (size, size), flags=cv2.INTER_AREA,
                          borderMode=cv2.BORDER_REFLECT)
    crop.setflags(write=False)

    def tf(px: float, py: float) -> tuple[float, float]:
        return px * f + mat[0, 2], py * f + mat[1, 2]

    outline = tuple(tf(px, py) for px, py in die.outline)
    xs = [p[0] for p in outline]
    ys = [p[1] for p in outline]
    box = (int(math.floor(min(xs))), int(math.floor(min(ys))),
           int(math.ceil(max(xs)) - math.floor(min(xs))), int(math.ceil(max(ys)) - math.floor(min(ys))))
    one = RenderedDie(value=die.value, box=box, centre_xy=tf(*die.centre_xy), angle_deg=die.angle_deg,
                      colour=die.colour, face_px=die.face_px * f, outline=outline)
    return RenderedTray(image=crop, dice=(one,), style=tray.style)
