"""The oblique and close-up evaluation set (issue 37, item 2): held-out photos and tilted renders, scored.

Sets (``benchmarks/oblique.py`` prints one row each):

- ``matteo``, ``rune_phone``, ``rune_white``: the TRAIN photos held out by
  :mod:`vision.lab.holdout` (oblique webcam, phone photos of dice trays, phone
  photos on white paper). Their labels do not all box the whole die
  (``box_kind``): a ``"pips"`` box covers only the upper face's pip pattern
  and a ``"face"`` box one face, both inside the die. A read die is paired
  with such a label when the label box's centre lies inside the read box
  (:func:`match_by_centre`: the reader boxes whole dice, so a fair box holds
  its own top face); ``"die"`` boxes pair as in ``dicetable eval``
  (:func:`vision.lab.evaluate.match_dice`: IoU 0.5, or the read centre inside).
- ``render A-B``: :func:`vision.lab.oblique_render.render_oblique_scene`, the
  camera tilted A-B degrees from the vertical (uniform), every die's top face
  seen at A-B degrees (:func:`vision.lab.oblique_render.view_angle`: between
  its normal and the ray to the camera).
- ``close A-B``: :func:`vision.lab.oblique_render.render_close_up`, one die
  filling 0.3-0.9 of the picture's height, camera and top face at A-B degrees.

Every die is counted as in :func:`vision.lab.stress.score_rendered`: right,
unknown, wrong (silent), missed; dice read where none is labelled with a
value (silent) or without. Seeded: the same seed gives the same renders.
"""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from vision.images import load_image
from vision.lab.evaluate import match_dice
from vision.lab.holdout import HOLDOUT_KINDS, held_out_names, holdout_kind
from vision.lab.oblique_render import render_close_up, render_oblique_scene
from vision.lab.perturb import Perturbed, Truth
from vision.lab.stress import StressCounts
from vision.reading import ImageReading

__all__ = ["PHOTO_SETS", "RENDER_SETS", "SETS", "match_by_centre", "score", "pictures", "run_set"]

PHOTO_SETS: tuple[str, ...] = tuple(HOLDOUT_KINDS)
#: Rendered set -> (kind, least tilt, most tilt), degrees from the vertical.
RENDER_SETS: dict[str, tuple[str, float, float]] = {
    "render 20-35": ("scene", 20.0, 35.0),
    "render 35-50": ("scene", 35.0, 50.0),
    "render 50-60": ("scene", 50.0, 60.0),
    "close 0-25": ("close", 0.0, 25.0),
    "close 25-50": ("close", 25.0, 50.0),
}
SETS: tuple[str, ...] = (*PHOTO_SETS, *RENDER_SETS)


def match_by_centre(read_boxes, label_boxes) -> list[tuple[int, int]]:
    """Pair read dice with labels whose box centre lies inside the read box, nearest centres first.

    Parameters
    ----------
    read_boxes, label_boxes : array_like of shape (N, 4), (M, 4)
        ``(x, y, w, h)`` px.

    Returns
    -------
    list of (read index, label index)
        Each index at most once.
    """
    r = np.asarray(read_boxes, np.float64).reshape(-1, 4)
    t = np.asarray(label_boxes, np.float64).reshape(-1, 4)
    tc = t[:, :2] + t[:, 2:] / 2
    rc = r[:, :2] + r[:, 2:] / 2
    inside = (
        (tc[None, :, 0] >= r[:, None, 0])
        & (tc[None, :, 0] <= r[:, None, 0] + r[:, None, 2])
        & (tc[None, :, 1] >= r[:, None, 1])
        & (tc[None, :, 1] <= r[:, None, 1] + r[:, None, 3])
    )
    dist = np.hypot(rc[:, None, 0] - tc[None, :, 0], rc[:, None, 1] - tc[None, :, 1])
    used_r, used_t, out = set(), set(), []
    for _, i, j in sorted((dist[i, j], i, j) for i, j in zip(*np.nonzero(inside))):
        if i not in used_r and j not in used_t:
            used_r.add(i)
            used_t.add(j)
            out.append((int(i), int(j)))
    return out


def score(pic: Perturbed, reading: ImageReading, by_centre: bool = False, ms: float = 0.0) -> StressCounts:
    """Count one picture's dice (module text); `by_centre` pairs by :func:`match_by_centre`."""
    boxes = [d.box for d in reading.dice]
    match = match_by_centre if by_centre else match_dice
    pairs = match(boxes, [t.box for t in pic.dice])
    by_true = {j: reading.dice[i] for i, j in pairs}
    c = dict(right=0, wrong=0, unknown=0, missed=0)
    for j, t in enumerate(pic.dice):
        r = by_true.get(j)
        key = "missed" if r is None else "unknown" if r.value is None else "right" if r.value == t.value else "wrong"
        c[key] += 1
    matched = {i for i, _ in pairs}
    extras = [d for i, d in enumerate(reading.dice) if i not in matched]
    valued = sum(1 for d in extras if d.value is not None)
    return StressCounts(
        images=1, dice=len(pic.dice), **c, extra_valued=valued, extra_unknown=len(extras) - valued, ms=ms
    )


def _photos(kind: str, train_dir: Path, every: int) -> Iterator[tuple[Perturbed, bool]]:
    entries = json.loads((Path(train_dir) / "labels.json").read_text(encoding="utf-8"))["images"]
    held = held_out_names()
    chosen = [e for e in entries if e["file"] in held and holdout_kind(e) == kind]
    for e in chosen[::every]:
        dice = tuple(Truth(int(d["value"]), tuple(int(round(v)) for v in d["box"])) for d in e["dice"])
        pips = any(d.get("box_kind", "die") != "die" for d in e["dice"])
        yield Perturbed(load_image(Path(train_dir) / e["file"]), dice), pips


def pictures(
    name: str, *, train_dir: Path, renders: int = 40, seed: int = 0, every: int = 1
) -> Iterator[tuple[Perturbed, bool]]:
    """The pictures of set `name` with whether to pair by centre: ``(picture, by_centre)``.

    A photo set yields every `every`-th held-out photo, in ``labels.json``'s order.
    Renders are drawn until `renders` could be made (one without room for its
    dice at the set's angles is drawn again with the next seed, at most
    ``4 * renders`` tries).

    Raises
    ------
    ValueError
        If `name` is not in :data:`SETS`.
    FileNotFoundError
        If a photo set's ``labels.json`` is not in `train_dir`.
    """
    if name in PHOTO_SETS:
        yield from _photos(name, train_dir, every)
        return
    if name not in RENDER_SETS:
        raise ValueError(f"unknown set {name!r}; use one of {', '.join(SETS)}")
    kind, lo, hi = RENDER_SETS[name]
    salt = zlib.crc32(name.encode())
    made = k = 0
    while made < renders and k < 4 * renders:
        rng = np.random.default_rng([seed, salt, k])
        sub = int(rng.integers(2**31))
        tilt = float(rng.uniform(lo, hi))
        k += 1
        if kind == "scene":
            pic = render_oblique_scene(sub, tilt, angles=(lo, hi))
        else:
            pic = render_close_up(sub, tilt, float(rng.uniform(0.3, 0.9)), angles=(lo, hi))
        if pic.applied:
            made += 1
            yield pic, False


def run_set(
    name: str,
    read: Callable[[np.ndarray], ImageReading],
    *,
    train_dir: Path,
    renders: int = 40,
    seed: int = 0,
    every: int = 1,
    on_image: Callable[[int, Perturbed, ImageReading, StressCounts], None] | None = None,
) -> StressCounts:
    """Read and score every picture of set `name` (:func:`pictures`); ``on_image(k, pic, reading, counts)``."""
    total = StressCounts()
    made = pictures(name, train_dir=train_dir, renders=renders, seed=seed, every=every)
    for k, (pic, by_centre) in enumerate(made):
        t0 = time.perf_counter()
        reading = read(pic.image)
        counts = score(pic, reading, by_centre, (time.perf_counter() - t0) * 1000.0)
        if on_image is not None:
            on_image(k, pic, reading, counts)
        total = total + counts
    return total
