"""Add the dice no reader should read to a randomised render: a leaning die, a cut die.

:func:`_add_leaning` leans a die on a tray wall or another die; :func:`_add_partial`
puts one across the image border. Each draws the die in place and returns its
ground truth, labelled :class:`~vision.render.Unreadable`, or None when it found no room.
"""

from __future__ import annotations

import math

import numpy as np

from vision.render._die import DiePose, die_outline, draw_shadow
from vision.render._effects import draw_material_die
from vision.render._layout import Placement, TrayScene, _fits, _overlaps
from vision.render._leaning import draw_leaning_die, leaning_outline, leaning_vertices
from vision.render._truth import _box, _truth, _visible_fraction
from vision.render._types import RenderedDie, Unreadable


def _add_leaning(img, scene: TrayScene, placements, hulls, value, slot, light, rng) -> RenderedDie | None:
    """Lean a die on a tray wall (half the time, when the tray has walls) or on one of
    the flat dice (or, failing both, stand it tilted in a free spot); draw it."""
    w, h = scene.size
    look = scene._looks[slot][1]
    face = scene.die_px * scene._faces[slot]
    side = face * (1 - scene._k)
    cam_h = side / scene._k
    origin = scene._origin
    placed = [(hl, scene._pose(p).top[:2], p.face_px * 0.75 + 2) for p, hl in zip(placements, hulls)]
    on_wall = scene.style != "paper" and rng.random() < 0.5
    for tries in range(300):
        tilt = float(rng.uniform(25, 50))
        yaw = float(rng.uniform(0, 360))
        wall = on_wall and tries < 150
        if wall:
            # Top edge against the wall's foot: the edge it stands on is side * sin(tilt)
            # from the wall; it tips towards the wall (the floor edge's outward normal).
            px_, py_ = float(rng.uniform(0, w)), float(rng.uniform(0, h))
            floor = scene._tray.floor
            d = float(floor.sdf(np.float64(px_), np.float64(py_)))
            gx = float(
                floor.sdf(np.float64(px_ + 0.5), np.float64(py_)) - floor.sdf(np.float64(px_ - 0.5), np.float64(py_))
            )
            gy = float(
                floor.sdf(np.float64(px_), np.float64(py_ + 0.5)) - floor.sdf(np.float64(px_), np.float64(py_ - 0.5))
            )
            gn = math.hypot(gx, gy)
            if gn < 1e-6:
                continue
            gx, gy = gx / gn, gy / gn
            shift = -(side * 0.5 + side * math.sin(math.radians(tilt))) - d
            base = (px_ + gx * shift, py_ + gy * shift)
            yaw = math.degrees(math.atan2(-gy, gx)) % 360.0
            skip = set()
        elif placements and tries < 200:
            other = placements[int(rng.integers(len(placements)))]
            # The die tips towards +x (its own axis at `yaw`): put it beside `other` on the far side.
            c, s = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
            # Its top edge rests on the other die's side face: the gap between that
            # face and the edge it stands on is side * sin(tilt).
            dist = (other.face_px * (1 - scene._k) + side) * 0.5 + side * math.sin(math.radians(tilt))
            base = (other.base_xy[0] - c * dist, other.base_xy[1] + s * dist)
            skip = {placements.index(other)}
        else:
            base = (float(rng.uniform(face, w - face)), float(rng.uniform(face, h - face)))
            skip = set()
        verts = leaning_vertices(base, side, yaw, tilt)
        hull = leaning_outline(verts, origin, cam_h)
        if wall:
            inside = hull.min() >= 1 and hull[:, 0].max() <= w - 2 and hull[:, 1].max() <= h - 2
            if not inside or scene._tray.floor_distance(hull).max() > 0.15 * side:
                continue
        elif not _fits(hull, scene._tray, w, h):
            continue
        centre = tuple(hull.mean(axis=0))
        others = [pl for k, pl in enumerate(placed) if k not in skip]
        if _overlaps(hull, centre, face * 1.2, others):
            continue
        draw_leaning_die(img, verts, look, light, value, origin, cam_h, scene._shadow)
        return RenderedDie(
            value=value,
            box=_box(hull, w, h),
            centre_xy=(float(centre[0]), float(centre[1])),
            angle_deg=yaw % 360.0,
            colour=scene._looks[slot][0],
            face_px=float(face),
            outline=tuple((float(x), float(y)) for x, y in hull),
            unreadable=Unreadable.LEANING,
        )
    return None


def _add_partial(img, scene: TrayScene, placements, hulls, value, slot, light, looks, rng) -> RenderedDie | None:
    """Put a die across the image border (20-80 % of it outside); draw it."""
    w, h = scene.size
    look = scene._looks[slot][1]
    face = scene.die_px * scene._faces[slot]
    placed = [(hl, scene._pose(p).top[:2], p.face_px * 0.75 + 2) for p, hl in zip(placements, hulls)]
    for _ in range(300):
        edge = int(rng.integers(4))
        t = float(rng.uniform(0.2, 0.8))
        off = float(rng.uniform(-0.3, 0.3)) * face
        base = ((t * w, off), (w - off, t * h), (t * w, h - off), (off, t * h))[edge]
        p = Placement(value, base, float(rng.uniform(0, 360)), face, slot)
        pose = DiePose(p.base_xy, p.angle_deg, p.face_px, scene._k, scene._origin)
        hull = die_outline(pose, look)
        frac = _visible_fraction(hull, w, h)
        if not 0.2 <= frac <= 0.8:
            continue
        if _overlaps(hull, pose.top[:2], face * 0.75 + 2, placed):
            continue
        draw_shadow(img, pose, look, light, scene._shadow)
        draw_material_die(img, pose, look, light, value, looks[slot][2], rng, tint=scene._tints[slot])
        return _truth(scene, p, hull, Unreadable.PARTIAL)
    return None
