"""Domain-randomised renders and named stress conditions: :func:`render_randomised`.

The ground-truth records are made in :mod:`vision.render._truth`, the leaning and
cut dice added in :mod:`vision.render._unreadable` (both re-exported here).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.render._clutter import add_clutter
from vision.render._die import DieLook, draw_shadow
from vision.render._effects import (
    COLOURED_PIP_DICE,
    DARK_DICE,
    FLAT_SURFACES,
    MARBLED_DICE,
    TRANSLUCENT_DICE,
    Material,
    add_glare,
    draw_material_die,
    flat_surface,
    tilt_homography,
)
from vision.render._layout import TrayScene, _check_values, _hull_distance, _rng
from vision.render._scene import finish
from vision.render._truth import _box as _box
from vision.render._truth import _truth, _warped
from vision.render._truth import _visible_fraction as _visible_fraction
from vision.render._types import DICE_COLOURS, RenderedDie, RenderedTray
from vision.render._unreadable import _add_leaning, _add_partial

#: Named stress conditions of :func:`render_randomised`. Each renders an ordinary
#: tray scene (mild noise, blur and JPEG) with one thing pushed hard:
#:
#: * looks of the dice: ``"plain"`` (nothing pushed), ``"dark_dice"`` (dark bodies,
#:   light or gold pips), ``"translucent"`` (the floor and the bottom face's pips
#:   show through), ``"marbled"`` (veined bodies), ``"coloured_pips"`` (red, yellow
#:   or black pips on coloured, often marbled bodies: red on smoke, yellow on red),
#:   ``"rounded"`` (big corner radius and bevel);
#: * the surface under them: ``"felt"``, ``"wood"``, ``"paper"``, ``"cardboard"``,
#:   ``"black_cloth"``, ``"white_card"`` (flat, filling the view) and ``"tray"`` (a
#:   tray with walls and a rim, one of :data:`vision.render.STYLES`);
#: * light and camera: ``"glare"`` (a lamp reflection and hot spots on the faces),
#:   ``"perspective"`` (camera tilted 12-25 degrees), ``"blur"`` (sigma 1.5-3 px),
#:   ``"noise"`` (sigma 10-22 grey levels), ``"jpeg"`` (quality 8-25);
#: * placement: ``"touching"`` (dice touching each other), ``"leaning"`` (the last
#:   die leans on another die: labelled unreadable), ``"border"`` (the last die is
#:   cut by the image border: labelled unreadable);
#: * around them: ``"clutter"`` (1-3 objects that are not dice beside them: a stand with
#:   a lit LED edge, a dark block, a pen, a coin; :func:`vision.render.add_clutter`).
CONDITIONS: tuple[str, ...] = (
    "plain",
    "dark_dice",
    "translucent",
    "marbled",
    "coloured_pips",
    "rounded",
    "felt",
    "wood",
    "paper",
    "cardboard",
    "black_cloth",
    "white_card",
    "tray",
    "glare",
    "perspective",
    "blur",
    "noise",
    "jpeg",
    "touching",
    "leaning",
    "border",
    "clutter",
)

_TRAY_STYLES = ("round", "box", "felt", "wood")
_TRAY_SCALE = 2  # trays and surfaces drawn at half size and upscaled: several times faster
SURFACES: tuple[str, ...] = tuple(f"tray_{s}" for s in _TRAY_STYLES) + tuple(FLAT_SURFACES)
LOOKS: tuple[str, ...] = ("solid", "dark", "translucent", "marbled", "coloured_pips")


@dataclass(frozen=True, slots=True)
class Conditions:
    """Every randomised choice of one render, explicit (see :meth:`sample`).

    Parameters
    ----------
    surface : str
        One of :data:`SURFACES`: ``"tray_<style>"`` draws a tray with walls (a
        :data:`vision.render.STYLES` style), the others a flat surface filling the view.
    look : str
        Die material, one of :data:`LOOKS`.
    rounded : bool
        Large corner radius and bevel.
    glare : float
        Strength of the glare (0 none, about 1 strong).
    tilt_deg : float
        Camera tilt off straight-down, degrees, 0-30.
    blur : float
        Gaussian blur sigma, px (at 640x480).
    noise : float
        Sensor noise sigma, grey levels.
    jpeg_quality : int or None
        JPEG quality 5-100, or None for no JPEG.
    touching : bool
        Lay dice touching each other.
    leaning : bool
        The last die leans on another die (needs 2+ dice); labelled unreadable.
    border : bool
        The last die is cut by the image border; labelled unreadable.
    clutter : bool
        Draw 1-3 objects that are not dice beside the dice (:func:`vision.render.add_clutter`).
        Never drawn at random, so the renders of ``condition=None`` are those of
        before this option.
    """

    surface: str = "tray_round"
    look: str = "solid"
    rounded: bool = False
    glare: float = 0.0
    tilt_deg: float = 0.0
    blur: float = 0.5
    noise: float = 3.0
    jpeg_quality: int | None = None
    touching: bool = False
    leaning: bool = False
    border: bool = False
    clutter: bool = False

    def __post_init__(self) -> None:
        if self.surface not in SURFACES:
            raise ValueError(f"unknown surface {self.surface!r}; use one of {', '.join(SURFACES)}")
        if self.look not in LOOKS:
            raise ValueError(f"unknown die look {self.look!r}; use one of {', '.join(LOOKS)}")
        if not 0.0 <= self.tilt_deg <= 30.0:
            raise ValueError(f"tilt_deg must be 0-30 degrees, got {self.tilt_deg!r}")
        if not (0.0 <= self.blur <= 10.0 and 0.0 <= self.noise <= 80.0 and 0.0 <= self.glare <= 3.0):
            raise ValueError(
                f"blur must be 0-10 px, noise 0-80 grey levels and glare 0-3; got "
                f"{self.blur!r}, {self.noise!r}, {self.glare!r}"
            )
        if self.jpeg_quality is not None and not 5 <= self.jpeg_quality <= 100:
            raise ValueError(f"jpeg_quality must be 5-100 or None, got {self.jpeg_quality!r}")

    @classmethod
    def sample(cls, rng: np.random.Generator, condition: str | None = None) -> Conditions:
        """Draw conditions: every factor at random (``condition=None``), or a mild
        scene with the named condition of :data:`CONDITIONS` pushed hard.

        Raises
        ------
        ValueError
            If `condition` is not None and not one of :data:`CONDITIONS`.
        """
        if condition is None:
            return cls(
                surface=SURFACES[int(rng.integers(len(SURFACES)))],
                look=str(rng.choice(LOOKS, p=[0.45, 0.12, 0.12, 0.13, 0.18])),
                rounded=bool(rng.random() < 0.25),
                glare=float(rng.uniform(0.3, 1.0)) if rng.random() < 0.25 else 0.0,
                tilt_deg=float(rng.uniform(0, 25)) if rng.random() < 0.4 else 0.0,
                blur=float(rng.uniform(0.3, 2.0)),
                noise=float(rng.uniform(1.0, 12.0)),
                jpeg_quality=int(rng.integers(20, 93)) if rng.random() < 0.6 else None,
                touching=bool(rng.random() < 0.4),
                leaning=bool(rng.random() < 0.1),
                border=bool(rng.random() < 0.15),
            )
        if condition not in CONDITIONS:
            raise ValueError(
                f"unknown condition {condition!r}; use one of {', '.join(CONDITIONS)} "
                "(or None for every factor at random)"
            )
        tray = f"tray_{_TRAY_STYLES[int(rng.integers(len(_TRAY_STYLES)))]}"
        base = cls(
            surface=tray,
            blur=float(rng.uniform(0.3, 0.8)),
            noise=float(rng.uniform(1.5, 4.0)),
            jpeg_quality=int(rng.integers(70, 93)) if rng.random() < 0.5 else None,
        )
        push = {
            "plain": {},
            "dark_dice": {"look": "dark"},
            "translucent": {"look": "translucent"},
            "marbled": {"look": "marbled"},
            "coloured_pips": {"look": "coloured_pips"},
            "rounded": {"rounded": True},
            "tray": {},
            "glare": {"glare": float(rng.uniform(0.6, 1.2))},
            "perspective": {"tilt_deg": float(rng.uniform(12, 25))},
            "blur": {"blur": float(rng.uniform(1.5, 3.0))},
            "noise": {"noise": float(rng.uniform(10, 22))},
            "jpeg": {"jpeg_quality": int(rng.integers(8, 26))},
            "touching": {"touching": True},
            "leaning": {"leaning": True},
            "border": {"border": True},
            "clutter": {"clutter": True},
        }.get(condition, {"surface": condition})
        return dataclasses.replace(base, **push)


def render_randomised(
    values: Sequence[int],
    *,
    seed: int | np.random.Generator = 0,
    condition: str | None = None,
    conditions: Conditions | None = None,
    size: tuple[int, int] = (640, 480),
) -> RenderedTray:
    """Render dice under randomised or named stress conditions, with unreadable dice labelled.

    Parameters
    ----------
    values : sequence of int
        Face values 1-6, 1 to 30 dice. With the leaning or border condition the
        *last* die is the leaning or cut one (its value is still recorded).
    seed : int or numpy.random.Generator, optional
        Seed of every random choice (deterministic for an int).
    condition : str, optional
        One of :data:`CONDITIONS`: a mild scene with that condition pushed hard;
        None: every factor drawn at random (domain randomisation).
    conditions : Conditions, optional
        Explicit conditions; overrides `condition`.
    size : tuple of 2 int, optional
        ``(width, height)`` in pixels.

    Returns
    -------
    RenderedTray
        ``image`` (height, width, 3) uint8 BGR; ``dice`` in `values` order, each
        with its box ``(x, y, w, h)`` (clipped to the image) and ``unreadable``
        set to :attr:`Unreadable.LEANING` or :attr:`Unreadable.PARTIAL` for dice
        no reader should give a value (a die tilted out of the picture entirely
        is left out); ``style`` the surface; ``condition`` the condition name
        (``"random"`` when drawn at random, ``"custom"`` for explicit conditions).

    Raises
    ------
    ValueError
        On bad values, an unknown condition, bad conditions, or dice that do not fit.

    Examples
    --------
    >>> tray = render_randomised([3, 1, 6, 6, 2], seed=5, condition="leaning")
    >>> tray.image.shape, [d.unreadable for d in tray.dice][-1]
    ((480, 640, 3), <Unreadable.LEANING: 'leaning'>)
    """
    vals = _check_values(values)
    rng = _rng(seed)
    cond = conditions if conditions is not None else Conditions.sample(rng, condition)
    name = "custom" if conditions is not None else (condition or "random")
    special = 1 if (cond.leaning or cond.border) and len(vals) >= 2 else 0
    flat_vals = vals[: len(vals) - special]

    style = cond.surface[5:] if cond.surface.startswith("tray_") else "paper"
    scene = TrayScene(seed=rng, size=size, style=style, n_dice=len(vals), tray_scale=_TRAY_SCALE)
    w, h = scene.size
    if not cond.surface.startswith("tray_") and cond.surface != "paper":
        scene._background = flat_surface(rng, cond.surface, w, h, _TRAY_SCALE)
    looks = _looks(rng, len(vals), cond)
    scene._looks = [(n, lk) for n, lk, _ in looks]
    light = scene._light
    placements = scene.layout(flat_vals, seed=rng, touching=cond.touching) if flat_vals else ()

    img = scene._background.copy()
    hulls = [scene._hull(p) for p in placements]
    extra: RenderedDie | None = None
    for p in placements:
        draw_shadow(img, scene._pose(p), scene._looks[p.slot][1], light, scene._shadow)
    if special and cond.leaning:
        extra = _add_leaning(img, scene, placements, hulls, vals[-1], len(vals) - 1, light, rng)
    for p in placements:
        draw_material_die(
            img,
            scene._pose(p),
            scene._looks[p.slot][1],
            light,
            p.value,
            looks[p.slot][2],
            rng,
            tint=scene._tints[p.slot],
        )
    if special and cond.border:
        extra = _add_partial(img, scene, placements, hulls, vals[-1], len(vals) - 1, light, looks, rng)
    if cond.glare > 0:
        spots = [(*scene._pose(p).top[:2], p.face_px) for p in placements]
        add_glare(img, rng, spots, cond.glare)

    dice = [_truth(scene, p, hull) for p, hull in zip(placements, hulls)]
    if extra is not None:
        dice.append(extra)
    pairs = [
        (i, j)
        for i in range(len(placements))
        for j in range(i + 1, len(placements))
        if _hull_distance(hulls[i], hulls[j]) <= 0.5
    ]
    if cond.tilt_deg > 0:
        H = tilt_homography(rng, w, h, cond.tilt_deg)
        img = cv2.warpPerspective(img, H, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        dice = [_warped(d, H, w, h) for d in dice]
    scale = min(w / 640, h / 480)
    image = finish(
        img,
        rng,
        light=scene._lighting,
        noise=cond.noise,
        blur=cond.blur * max(scale, 0.5),
        jpeg_quality=cond.jpeg_quality,
    )
    kept = [d for d in dice if d is not None]
    if cond.clutter:
        image = add_clutter(image, rng, [d.box for d in kept])
    image.setflags(write=False)
    return RenderedTray(image=image, dice=tuple(kept), style=cond.surface, touching=tuple(pairs), condition=name)


def _looks(rng: np.random.Generator, n: int, cond: Conditions) -> list[tuple[str, DieLook, Material]]:
    if cond.rounded:
        corner, bevel = rng.uniform(0.24, 0.33), rng.uniform(0.12, 0.2)
    else:
        corner, bevel = rng.uniform(0.12, 0.2), rng.uniform(0.05, 0.1)
    pip_r = rng.uniform(0.085, 0.1)
    gloss = rng.uniform(0.05, 0.35)
    same = rng.random() < 0.5
    out = []
    first = None
    for _ in range(n):
        if same and first is not None:
            out.append(first)
            continue
        if cond.look == "solid":
            nm = list(DICE_COLOURS)[int(rng.integers(len(DICE_COLOURS)))]
            body, pip = DICE_COLOURS[nm]
            mat = Material()
        elif cond.look == "dark":
            nm, body, pip = DARK_DICE[int(rng.integers(len(DARK_DICE)))]
            mat = Material()
        elif cond.look == "translucent":
            nm, body, pip = TRANSLUCENT_DICE[int(rng.integers(len(TRANSLUCENT_DICE)))]
            mat = Material("translucent", clarity=float(rng.uniform(0.35, 0.6)))
        elif cond.look == "coloured_pips":
            nm, body, second, pip = COLOURED_PIP_DICE[int(rng.integers(len(COLOURED_PIP_DICE)))]
            mat = Material("marbled", second=second) if second is not None else Material()
        else:
            nm, body, second, pip = MARBLED_DICE[int(rng.integers(len(MARBLED_DICE)))]
            mat = Material("marbled", second=second)
        jit = 1 + rng.uniform(-0.06, 0.06, 3)
        b = tuple(float(x) for x in np.clip(np.asarray(body) * jit, 0, 1))
        entry = (
            nm,
            DieLook(
                b, tuple(pip), corner=float(corner), bevel=float(bevel), pip_radius=float(pip_r), gloss=float(gloss)
            ),
            mat,
        )
        first = first or entry
        out.append(entry)
    return out
