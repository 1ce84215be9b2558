"""Lay dice on a tray without overlap and draw them: :class:`TrayScene`.

The argument checks live in :mod:`vision.render._arguments`; :class:`Placement` and the
overlap and fit geometry in :mod:`vision.render._placement` (both re-exported here).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import cv2
import numpy as np

from vision.render._arguments import _check_size, _check_values, _rng
from vision.render._die import DieLook, DiePose, Light, die_outline, draw_die, draw_shadow
from vision.render._placement import Placement, _fits, _floor_area, _hull_distance, _overlaps
from vision.render._scene import Tray as Tray
from vision.render._scene import finish, lighting, make_tray
from vision.render._types import DICE_COLOURS, MAX_DICE, STYLES, RenderedDie, RenderedTray

_PLACE_TRIES = 600


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


class _NoRoom(Exception):
    """Internal: the dice did not fit."""


class TrayScene:
    """A tray under a fixed light and camera, on which dice are laid out and drawn.

    Drawing the tray is most of the work of :func:`render_tray`; a scene draws it
    once, then renders many rolls on it (the demo keeps held dice where they lie
    and lays out only the re-rolled ones).

    Parameters
    ----------
    seed : int or numpy.random.Generator, optional
        Seed of the tray, light, camera and dice colours.
    size : tuple of 2 int, optional
        ``(width, height)`` of the images in pixels.
    style : str, optional
        Tray style, one of :data:`STYLES`; random when None.
    die_px : float, optional
        Side of a die's top face in pixels; random 42-56 px at 640x480 when None,
        smaller when `n_dice` dice would crowd the floor.
    n_dice : int, optional
        How many dice (each with its own colour) the scene holds, 1-30.
    tray_scale : int, optional
        Draw the empty tray at ``1 / tray_scale`` of the image size and upscale it:
        faster, slightly softer. 1 (the default) keeps every render of a seed as it
        was; :func:`vision.render.render_randomised` uses 2.

    Raises
    ------
    ValueError
        On an unknown style, a size or die_px out of range, or when `n_dice` dice
        of `die_px` cannot fit on the tray floor.

    Examples
    --------
    >>> scene = TrayScene(seed=4, style="felt")
    >>> first = scene.layout([3, 3, 5, 1, 6], seed=1)
    >>> again = scene.layout([3, 3, 2, 2, 4], seed=2, keep={0: first[0], 1: first[1]})
    >>> again[0] == first[0]
    True
    >>> scene.render(again, seed=2).values
    (3, 3, 2, 2, 4)
    """

    def __init__(
        self,
        *,
        seed: int | np.random.Generator = 0,
        size: tuple[int, int] = (640, 480),
        style: str | None = None,
        die_px: float | None = None,
        n_dice: int = 5,
        tray_scale: int = 1,
    ) -> None:
        w, h = _check_size(size)
        if style is not None and style not in STYLES:
            raise ValueError(f"unknown tray style {style!r}; use one of {', '.join(STYLES)} (or None for random)")
        if die_px is not None and not (8.0 <= float(die_px) <= min(w, h) / 2):
            raise ValueError(f"die_px must be 8 to {min(w, h) / 2:g} px for a {w}x{h} image, got {die_px!r}")
        if isinstance(n_dice, bool) or not isinstance(n_dice, (int, np.integer)) or not 1 <= n_dice <= MAX_DICE:
            raise ValueError(f"n_dice must be 1 to {MAX_DICE}, got {n_dice!r}")
        rng = _rng(seed)
        self.size = (w, h)
        scale = min(w / 640, h / 480)
        self.style = style if style is not None else STYLES[int(rng.integers(len(STYLES)))]
        az = rng.uniform(0, 2 * math.pi)
        el = math.radians(rng.uniform(40, 72))
        self._light = Light(
            (math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)),
            ambient=float(rng.uniform(0.35, 0.55)),
        )
        self._origin = (w / 2 + rng.uniform(-0.05, 0.05) * w, h / 2 + rng.uniform(-0.05, 0.05) * h)
        self._k = float(rng.uniform(0.03, 0.07))
        base_px = float(die_px) if die_px is not None else float(rng.uniform(42, 56)) * scale
        if isinstance(tray_scale, bool) or not isinstance(tray_scale, (int, np.integer)) or not 1 <= tray_scale <= 8:
            raise ValueError(f"tray_scale must be a whole number 1-8, got {tray_scale!r}")
        self._background, self._tray = make_tray(
            rng,
            self.style,
            w,
            h,
            self._origin,
            self._light,
            wall_px=base_px * rng.uniform(0.8, 1.6),
            scale=int(tray_scale),
        )
        area = _floor_area(self._tray, w, h)
        if die_px is None:
            base_px = min(base_px, math.sqrt(0.28 * area / n_dice) / 1.1)
        elif n_dice * (base_px * 1.15) ** 2 > 0.55 * area:
            raise ValueError(
                f"too many dice for the tray: {n_dice} dice of {base_px:g} px need about "
                f"{n_dice * (base_px * 1.15) ** 2:.0f} px^2 but the {self.style} tray floor in a {w}x{h} "
                f"image has {area:.0f} px^2; use fewer dice, a smaller die_px or a larger size"
            )
        self.die_px = base_px
        self._fixed_size = die_px is not None
        self.n_dice = int(n_dice)
        self._looks = _looks(rng, self.n_dice)
        self._shadow = float(rng.uniform(0.2, 0.45))
        self._tints = [float(rng.uniform(0.95, 1.05)) for _ in range(self.n_dice)]
        self._faces = [float(rng.uniform(0.97, 1.03)) for _ in range(self.n_dice)]
        self._scale = scale
        self._lighting = lighting(rng, w, h)

    def __repr__(self) -> str:
        w, h = self.size
        return f"<TrayScene {self.style} {w}x{h} die_px={self.die_px:.1f} n_dice={self.n_dice}>"

    def _pose(self, p: Placement) -> DiePose:
        return DiePose(p.base_xy, p.angle_deg, p.face_px, self._k, self._origin)

    def _hull(self, p: Placement) -> np.ndarray:
        return die_outline(self._pose(p), self._looks[p.slot][1])

    def layout(
        self,
        values: Sequence[int],
        *,
        seed: int | np.random.Generator = 0,
        keep: Mapping[int, Placement] | None = None,
        touching: bool = False,
    ) -> tuple[Placement, ...]:
        """Lay dice showing `values` on the floor without overlap (touching allowed).

        Parameters
        ----------
        values : sequence of int
            Face values 1-6, one per die slot ``0 .. len(values) - 1`` (at most
            `n_dice`).
        seed : int or numpy.random.Generator, optional
            Seed of the positions and rotations.
        keep : mapping of int to Placement, optional
            Slots whose dice stay exactly where they are (held dice); their
            values must equal ``values[slot]``.
        touching : bool, optional
            Lay at least one new die touching another die.

        Returns
        -------
        tuple of Placement
            One per value, in slot order.

        Raises
        ------
        ValueError
            On bad values, a kept placement that does not match, or when the
            dice do not fit.
        """
        vals = _check_values(values)
        if len(vals) > self.n_dice:
            raise ValueError(
                f"this scene holds {self.n_dice} dice, got {len(vals)} values; make a TrayScene with n_dice={len(vals)}"
            )
        keep = dict(keep or {})
        for slot, p in keep.items():
            if not 0 <= slot < len(vals) or p.slot != slot or p.value != vals[slot]:
                raise ValueError(f"kept die {p!r} does not match slot {slot} showing {vals[slot : slot + 1]}")
        rng = _rng(seed)
        shrink = 1.0
        for _ in range(4):
            try:
                return self._layout(vals, rng, keep, touching, shrink)
            except _NoRoom:
                if self._fixed_size or keep:
                    break
                shrink *= 0.9
        w, h = self.size
        raise ValueError(
            f"too many dice for the tray: could not place {len(vals)} dice of {self.die_px * shrink:.0f} px "
            f"without overlap on the {self.style} tray of a {w}x{h} image; use fewer dice, a smaller "
            "die_px or a larger size"
        )

    def _layout(self, vals, rng, keep, touching, shrink) -> tuple[Placement, ...]:
        w, h = self.size
        n = len(vals)
        out: dict[int, Placement] = dict(keep)
        placed = {i: (self._hull(p), self._pose(p).top[:2], p.face_px * 0.75 + 2) for i, p in keep.items()}
        new = [i for i in range(n) if i not in keep]
        want = {i: False for i in new}
        if touching and n >= 2:
            first = new[1] if not keep and len(new) > 1 else (new[0] if new else None)
            for i in new:
                want[i] = i == first or (i != new[0] and rng.random() < 0.25)
        for j in new:
            face = self.die_px * self._faces[j] * shrink
            look = self._looks[j][1]
            radius = face * 0.75 + 2
            for tries in range(_PLACE_TRIES):
                angle = float(rng.uniform(0, 360))
                if want[j] and placed and tries < _PLACE_TRIES // 3:
                    ids = sorted(placed)
                    i = ids[-1] if rng.random() < 0.5 else ids[int(rng.integers(len(ids)))]
                    if rng.random() < 0.4:
                        angle = out[i].angle_deg
                    base = self._slide(out[i], placed[i][0], face, angle, look, rng)
                    if base is None:
                        continue
                else:
                    base = (
                        float(rng.uniform(face * 0.5, w - face * 0.5)),
                        float(rng.uniform(face * 0.5, h - face * 0.5)),
                    )
                p = Placement(vals[j], base, angle, face, j)
                hull = self._hull(p)
                if not _fits(hull, self._tray, w, h):
                    continue
                centre = self._pose(p).top[:2]
                if _overlaps(hull, centre, radius, list(placed.values())):
                    continue
                placed[j] = (hull, centre, radius)
                out[j] = p
                break
            else:
                raise _NoRoom()
        return tuple(out[i] for i in range(n))

    def _slide(self, other: Placement, target: np.ndarray, face: float, angle: float, look, rng):
        """Footprint centre of a new die pushed against `other` from a random side."""
        direction = rng.uniform(0, 2 * math.pi)
        ux, uy = math.cos(direction), math.sin(direction)
        bx, by = other.base_xy

        def hull_at(t: float) -> np.ndarray:
            return die_outline(DiePose((bx + ux * t, by + uy * t), angle, face, self._k, self._origin), look)

        lo, hi = 0.0, 2.4 * max(face, other.face_px)
        if cv2.intersectConvexConvex(hull_at(hi), target)[0] > 0:
            return None
        for _ in range(24):
            mid = (lo + hi) / 2
            if cv2.intersectConvexConvex(hull_at(mid), target)[0] > 1e-3:
                lo = mid
            else:
                hi = mid
        return (bx + ux * hi, by + uy * hi)

    def nudge(
        self,
        placements: Sequence[Placement],
        *,
        seed: int | np.random.Generator = 0,
        max_px: float = 4.0,
        max_deg: float = 6.0,
    ) -> tuple[Placement, ...]:
        """Jostle every die a little (as a bumped tray would); a die that would hit
        another or leave the floor stays put.

        Parameters
        ----------
        placements : sequence of Placement
            The dice as laid out by :meth:`layout`.
        seed : int or numpy.random.Generator, optional
            Seed of the small moves.
        max_px : float, optional
            Largest move in pixels along each axis.
        max_deg : float, optional
            Largest turn in degrees.

        Returns
        -------
        tuple of Placement
            Same values and slots, slightly moved.
        """
        rng = _rng(seed)
        w, h = self.size
        cur = list(placements)
        for i, p in enumerate(cur):
            dx, dy = rng.uniform(-max_px, max_px, 2)
            q = Placement(
                p.value,
                (p.base_xy[0] + float(dx), p.base_xy[1] + float(dy)),
                float((p.angle_deg + rng.uniform(-max_deg, max_deg)) % 360.0),
                p.face_px,
                p.slot,
            )
            hull = self._hull(q)
            others = [(self._hull(o), self._pose(o).top[:2], o.face_px * 0.75 + 2) for k, o in enumerate(cur) if k != i]
            if _fits(hull, self._tray, w, h) and not _overlaps(
                hull, self._pose(q).top[:2], q.face_px * 0.75 + 2, others
            ):
                cur[i] = q
        return tuple(cur)

    def render(
        self,
        placements: Sequence[Placement],
        *,
        seed: int | np.random.Generator = 0,
        noise: float | None = None,
        blur: float | None = None,
        jpeg: bool | None = None,
    ) -> RenderedTray:
        """Draw the dice on the tray and take the picture.

        Parameters
        ----------
        placements : sequence of Placement
            From :meth:`layout` or :meth:`nudge`.
        seed : int or numpy.random.Generator, optional
            Seed of the camera effects (lighting drift, noise, JPEG quality).
        noise, blur, jpeg : optional
            As for :func:`render_tray`.

        Returns
        -------
        RenderedTray
            The image (H, W, 3) uint8 BGR and the truth, dice in `placements` order.
        """
        if noise is not None and not (0.0 <= float(noise) <= 80.0):
            raise ValueError(f"noise must be a standard deviation of 0-80 grey levels, got {noise!r}")
        if blur is not None and not (0.0 <= float(blur) <= 10.0):
            raise ValueError(f"blur must be a sigma of 0-10 px, got {blur!r}")
        rng = _rng(seed)
        img = self._background.copy()
        for p in placements:
            draw_shadow(img, self._pose(p), self._looks[p.slot][1], self._light, self._shadow)
        for p in placements:
            draw_die(img, self._pose(p), self._looks[p.slot][1], self._light, p.value, tint=self._tints[p.slot])
        nz = float(rng.uniform(1.5, 5.0)) if noise is None else float(noise)
        bl = float(rng.uniform(0.3, 0.9)) * max(self._scale, 0.5) if blur is None else float(blur)
        use_jpeg = (rng.random() < 0.6) if jpeg is None else bool(jpeg)
        quality = int(rng.integers(60, 93))
        image = finish(img, rng, light=self._lighting, noise=nz, blur=bl, jpeg_quality=quality if use_jpeg else None)
        image.setflags(write=False)
        dice = []
        hulls = []
        for p in placements:
            hull = self._hull(p)
            hulls.append(hull)
            x0, y0 = int(math.floor(hull[:, 0].min())), int(math.floor(hull[:, 1].min()))
            x1, y1 = int(math.ceil(hull[:, 0].max())), int(math.ceil(hull[:, 1].max()))
            tx, ty, _ = self._pose(p).top
            dice.append(
                RenderedDie(
                    value=p.value,
                    box=(x0, y0, x1 - x0, y1 - y0),
                    centre_xy=(float(tx), float(ty)),
                    angle_deg=float(p.angle_deg % 360.0),
                    colour=self._looks[p.slot][0],
                    face_px=float(p.face_px),
                    outline=tuple((float(x), float(y)) for x, y in hull),
                )
            )
        pairs = []
        for i in range(len(dice)):
            for j in range(i + 1, len(dice)):
                ci, cj = dice[i].centre_xy, dice[j].centre_xy
                if math.hypot(ci[0] - cj[0], ci[1] - cj[1]) > 1.6 * (dice[i].face_px + dice[j].face_px):
                    continue
                if _hull_distance(hulls[i], hulls[j]) <= 0.5:
                    pairs.append((i, j))
        return RenderedTray(image=image, dice=tuple(dice), style=self.style, touching=tuple(pairs))
