"""Training data for the die detector: a compact cache of resized photos and boxes.

Reads ``labels.json`` datasets in the format of ``../shared/dice-images`` and
stores each photo re-encoded as JPEG at :data:`CACHE_LONG_SIDE` pixels on the
long side, with its die boxes scaled to match, in one ``.npz`` file. Caching
once keeps the training loop free of 1280-px decodes and lets the training run
travel to another machine as one small file.

Only images whose boxes cover whole dice (``box_kind == "die"``, or no
``box_kind`` as in dev) give positive boxes. Boxes of other kinds (``"face"``,
``"pips"``) cover only part of a die, so they become *ignore* regions: the
detector is not taught there, but the rest of those photos still teach it what
is not a die.

With ``--renders N`` the cache also holds N domain-randomised renders
(:func:`vision.render.render_randomised`, every factor at random: surfaces,
die looks, glare, tilt, blur, noise, JPEG, touching, leaning and cut dice),
each die boxed by the renderer (a leaning die or one cut by the border is
still a die to find; the reader, not the detector, refuses to value it).

Run as ``python -m vision.lab.training.detect_data --out /tmp/det_cache.npz [--renders N]
[--clutter-share S] [--close-up-share S]``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np

from vision.lab.holdout import is_held_out, without_held_out
from vision.lab.training.data import save_npz_atomically

#: Long side, in pixels, of the cached photos.
CACHE_LONG_SIDE: int = 512

#: Cache names of renders start with this (:func:`is_render`); photos keep their file names.
RENDER_NAME_PREFIX: str = "render_"


def build_cache(
    dataset_dirs: list[Path],
    out: Path,
    *,
    long_side: int = CACHE_LONG_SIDE,
    renders: int = 0,
    render_seed: int = 0,
    clutter_share: float = 0.0,
    close_up_share: float = 0.0,
) -> int:
    """Write the cache of every image in `dataset_dirs` (and `renders` renders) to `out`; return the image count.

    Parameters
    ----------
    dataset_dirs : list of Path
        Folders that each hold ``labels.json`` and the images it names.
    out : Path
        The ``.npz`` file to write.
    long_side : int, optional
        Long side of the cached images, in pixels; smaller images are not enlarged.
    renders : int, optional
        Domain-randomised renders to add (see :func:`rendered_examples`); 0: none.
    render_seed : int, optional
        Seed of the renders.
    clutter_share : float, optional
        Share of the renders given objects that are not dice (see :func:`rendered_examples`).
    close_up_share : float, optional
        Share of the renders made close-ups of one die (see :func:`rendered_examples`).

    Returns
    -------
    int
        Number of images cached.
    """
    jpegs, boxes, ignores, names = [], [], [], []

    def add(image: np.ndarray, die: list, ign: list, name: str) -> None:
        scale = min(1.0, long_side / max(image.shape[:2]))
        if scale < 1.0:
            image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 92])
        jpegs.append(np.frombuffer(buf.tobytes(), np.uint8))
        boxes.append(np.array(die, np.float32).reshape(-1, 4) * np.float32(scale))
        ignores.append(np.array(ign, np.float32).reshape(-1, 4) * np.float32(scale))
        names.append(name)

    for folder in dataset_dirs:
        labels = json.loads((folder / "labels.json").read_text())
        for entry in without_held_out(labels["images"]):  # the oblique evaluation slice (vision/lab/holdout.py)
            image = cv2.imread(str(folder / entry["file"]), cv2.IMREAD_COLOR)
            if image is None:
                continue
            die, ign = [], []
            for d in entry["dice"]:
                (die if d.get("box_kind", "die") == "die" else ign).append(d["box"])
            add(image, die, ign, entry["file"])
    for k, (image, die) in enumerate(rendered_examples(renders, render_seed, clutter_share, close_up_share)):
        add(image, die, [], f"{RENDER_NAME_PREFIX}{render_seed}_{k}")
        if (k + 1) % 100 == 0 or k + 1 == renders:
            print(f"rendered {k + 1} of {renders}", flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    save_npz_atomically(
        out,
        jpegs=_objects(jpegs),
        boxes=_objects(boxes),
        ignores=_objects(ignores),
        names=np.array(names),
    )
    return len(jpegs)


def is_render(name: str) -> bool:
    """Whether a cache entry named `name` is a render (its boxes follow the renderer's outlines, not a label)."""
    return name.startswith(RENDER_NAME_PREFIX)


def rendered_examples(n: int, seed: int = 0, clutter_share: float = 0.0, close_up_share: float = 0.0):
    """Yield `n` domain-randomised renders and their die boxes: ``(image, boxes)``.

    Each render holds 1-12 dice drawn under conditions all at random
    (:func:`vision.render.render_randomised` with ``condition=None``), at
    640 x 480 px or, one time in four, 1280 x 960 px (dice twice as many pixels
    across, as in a Pi camera's full frame). A `clutter_share` of them also show
    objects that are not dice and are not boxed (:func:`vision.render.add_clutter`:
    lit stands, dark blocks, pens, coins), drawn from a random stream of their own,
    so the dice of every render are the same whatever the share. A
    `close_up_share` of them are close-ups instead: rendered at 1280 x 960 px,
    cut to a 4:3 window in which one die fills 0.2-0.7 of the height
    (:func:`close_up_of`) and enlarged to 640 x 480 px, so that a big die is
    boxed as one die and its pips are not.

    Parameters
    ----------
    n : int
        Renders to make.
    seed : int, optional
        Seed of the dice values, counts, sizes and renders.
    clutter_share : float, optional
        Share of the renders, 0-1, given 1-3 objects that are not dice (default 0).
    close_up_share : float, optional
        Share of the renders, 0-1, made close-ups of one die (default 0).

    Yields
    ------
    image : ndarray of shape (H, W, 3), dtype uint8
        The render, BGR.
    boxes : list of [x, y, w, h]
        Every die drawn (flat, leaning or cut by the border), px, clipped to the image.
    """
    from vision.render import add_clutter, render_randomised

    for name, share in (("clutter_share", clutter_share), ("close_up_share", close_up_share)):
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"{name} must be 0-1, got {share!r}")
    rng = np.random.default_rng(seed)
    clutter_rng = np.random.default_rng([seed, 1])
    close_up_rng = np.random.default_rng([seed, 2])
    for _ in range(n):
        values = [int(v) for v in rng.integers(1, 7, int(rng.integers(1, 13)))]
        size = (1280, 960) if rng.random() < 0.25 else (640, 480)
        close_up = close_up_rng.random() < close_up_share
        if close_up:
            size = (1280, 960)
        try:
            tray = render_randomised(values, seed=int(rng.integers(2**31)), size=size)
        except ValueError:  # the dice did not fit this tray: fewer next time
            tray = render_randomised(values[:5], seed=int(rng.integers(2**31)), size=size)
        boxes = [list(d.box) for d in tray.dice if d.box[2] > 1 and d.box[3] > 1]
        image = tray.image
        if clutter_rng.random() < clutter_share:
            image = add_clutter(image, clutter_rng, boxes)
        if close_up and boxes:
            image, boxes = close_up_of(image, boxes, close_up_rng)
        yield np.ascontiguousarray(image), boxes


def close_up_of(
    image: np.ndarray, boxes: list, rng: np.random.Generator, *, out_size: tuple[int, int] = (640, 480)
) -> tuple[np.ndarray, list]:
    """A close-up of one die of a render: a 4:3 window in which it fills 0.2-0.7 of the height, enlarged.

    Parameters
    ----------
    image : ndarray of shape (H, W, 3), dtype uint8
        The render.
    boxes : list of [x, y, w, h]
        Its die boxes, px; one of them (at least 8 px across, at random) is the close-up's die.
    rng : numpy.random.Generator
        Picks the die, its share of the window (0.2-0.7) and its place in it.
    out_size : (width, height), optional
        Size of the close-up, px.

    Returns
    -------
    image : ndarray of shape (out_size[1], out_size[0], 3), dtype uint8
    boxes : list of [x, y, w, h]
        The dice in the close-up, px, clipped to it; dice with less than a third
        of their box in view are left out.
    """
    h, w = image.shape[:2]
    whole = [b for b in boxes if min(b[2], b[3]) >= 8] or boxes
    x, y, bw, bh = whole[int(rng.integers(len(whole)))]
    win_h = min(h, max(bw, bh) / rng.uniform(0.2, 0.7))
    win_w = min(w, win_h * out_size[0] / out_size[1])
    win_h = win_w * out_size[1] / out_size[0]
    cx = x + bw / 2 + rng.uniform(-0.25, 0.25) * (win_w - bw)
    cy = y + bh / 2 + rng.uniform(-0.25, 0.25) * (win_h - bh)
    x0 = float(np.clip(cx - win_w / 2, 0, w - win_w))
    y0 = float(np.clip(cy - win_h / 2, 0, h - win_h))
    f = out_size[0] / win_w
    mat = np.float32([[f, 0, -x0 * f], [0, f, -y0 * f]])
    out = cv2.warpAffine(np.asarray(image), mat, out_size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    kept = []
    for bx, by, bw_, bh_ in boxes:
        x1, y1 = max(0.0, (bx - x0) * f), max(0.0, (by - y0) * f)
        x2, y2 = min(out_size[0], (bx + bw_ - x0) * f), min(out_size[1], (by + bh_ - y0) * f)
        if x2 > x1 and y2 > y1 and (x2 - x1) * (y2 - y1) >= (bw_ * f) * (bh_ * f) / 3:
            kept.append([int(round(x1)), int(round(y1)), int(round(x2 - x1)), int(round(y2 - y1))])
    return out, kept


def _objects(items: list) -> np.ndarray:
    arr = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        arr[i] = item
    return arr


def load_cache(path: Path) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray], list[str]]:
    """Read a cache written by :func:`build_cache`: (jpegs, boxes, ignores, names)."""
    data = np.load(path, allow_pickle=True)
    jpegs, boxes, ignores, names = (data[key] for key in ("jpegs", "boxes", "ignores", "names"))  # each read once
    keep = [k for k, n in enumerate(names) if not is_held_out(str(n))]  # a cache built before the hold-out
    return [jpegs[k] for k in keep], [boxes[k] for k in keep], [ignores[k] for k in keep], [str(names[k]) for k in keep]


def main(argv: list[str] | None = None) -> int:
    """Command line: build the detector's training cache."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data",
        type=Path,
        nargs="+",
        default=[Path("../shared/dice-images/train")],
        help="dataset folders with labels.json (default: ../shared/dice-images/train)",
    )
    parser.add_argument("--out", type=Path, default=Path("/tmp/dicetable_detect_cache.npz"))
    parser.add_argument(
        "--renders", type=int, default=0, help="also cache this many domain-randomised renders (default 0)"
    )
    parser.add_argument("--render-seed", type=int, default=0)
    parser.add_argument(
        "--clutter-share",
        type=float,
        default=0.0,
        help="share of the renders, 0-1, that also show objects that are not dice: lit stands, "
        "dark blocks, pens, coins (default 0)",
    )
    parser.add_argument(
        "--close-up-share",
        type=float,
        default=0.0,
        help="share of the renders, 0-1, made close-ups of one die filling 0.2-0.7 of the picture's height (default 0)",
    )
    args = parser.parse_args(argv)
    if args.renders < 0:
        parser.error(f"--renders must be 0 or more, got {args.renders}")
    for flag, share in (("--clutter-share", args.clutter_share), ("--close-up-share", args.close_up_share)):
        if not 0.0 <= share <= 1.0:
            parser.error(f"{flag} must be 0-1, got {share}")
    n = build_cache(
        args.data,
        args.out,
        renders=args.renders,
        render_seed=args.render_seed,
        clutter_share=args.clutter_share,
        close_up_share=args.close_up_share,
    )
    print(f"cached {n} images into {args.out} ({args.out.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
