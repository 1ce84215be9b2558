"""Benchmark: dice of every size in the picture, from close-ups to trays in wide views.

The detector's main look is trained for dice about 24 px across at 384 px; a
die that fills much of the picture is boxed as its pips there, and a coarse
look offers it whole (:meth:`vision.detect.DieDetector.large_candidates`,
judged by the reader: one die, or a group of dice such as a tray). This prints,
for each kind of picture, how the dice were read:

* ``single``: the 300 single-die close-ups of ``../shared/dice-images/dev/single``
  (right = the one die read right and nothing else given a value);
* ``crop S``: every other kingpi and jim DEV die, cropped so that it fills S of
  the picture's side (neighbours partly in view; at 1.0 the picture is the
  die's box);
* ``tray in photo``: a rendered tray centred in a photo 1.6, 2.0 and 2.5 times
  its size (the tray must not be taken for one big die);
* ``tiled 2x2``: four nell DEV photos tiled into one 1280 px photo (ten such);
* ``kingpi 3x3``: nine kingpi DEV photos tiled into one 3840 px photo.

Usage::

    python benchmarks/close_ups.py [--dev ../shared/dice-images/dev] [--face-model ONNX] [--detector-model ONNX]
                                   [--pip-model ONNX]

``--face-model``, ``--detector-model`` and ``--pip-model`` read with other networks than
the packaged ones (a fine-tuned detector, a held-out twin), as in ``benchmarks/stress_sets.py``.

Needs the DEV set for all but the rendered rows (they are skipped, with a note,
when it is absent).
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

import _args  # (imports _checkout: this checkout's vision/ and table/ first on sys.path)
import cv2
import numpy as np

from vision import render
from vision.images import load_image
from vision.lab.evaluate import DEFAULT_DEV_DIR, load_dataset, match_dice
from vision.lab.stress import close_up_window
from vision.reader import networks_from_files, read_image

#: The networks every picture is read with (:func:`vision.reader.networks_from_files`; set by ``main``).
NETWORKS: dict = {}

COLUMNS = ("dice", "right", "unknown", "wrong", "missed", "extraV", "nbWrong")


def _read(image: np.ndarray):
    """Read one picture with :data:`NETWORKS`."""
    return read_image(image, **NETWORKS)


def _score(reading, truth: list[tuple[tuple[int, int, int, int], int]], counts: Counter) -> None:
    """Add one picture's dice to `counts`: each labelled die right, unknown, wrong or missed; extras given a value."""
    matched = dict(match_dice([d.box for d in reading.dice], [box for box, _ in truth]))
    by_truth = {j: i for i, j in matched.items()}
    for j, (_, value) in enumerate(truth):
        counts["dice"] += 1
        if j not in by_truth:
            counts["missed"] += 1
            continue
        read = reading.dice[by_truth[j]].value
        counts["right" if read == value else "unknown" if read is None else "wrong"] += 1
    counts["extraV"] += sum(1 for i, d in enumerate(reading.dice) if i not in matched and d.value is not None)


def single_close_ups(dev: Path) -> Counter:
    counts: Counter = Counter()
    for path in sorted((dev / "single").glob("*/*.jpg")):
        values = _read(load_image(path)).values
        truth = int(path.parent.name)
        counts["dice"] += 1
        right = values.count(truth) >= 1
        counts["right" if right else "unknown" if any(v is None for v in values) else "missed"] += 1
        counts["wrong"] += sum(v is not None and v != truth for v in values) > 0
        counts["extraV"] += max(0, sum(v is not None for v in values) - 1)
    return counts


def cropped_dice(dev: Path, share: float) -> Counter:
    """Every other kingpi and jim die, cropped to fill `share` of the picture; the labelled dice in view are scored."""
    counts: Counter = Counter()
    for item in load_dataset(dev):
        if not item.path.name.startswith(("kingpi", "jim")):
            continue
        image = load_image(item.path)
        for die in item.dice[::2]:
            x0, y0, x1, y1 = close_up_window(die.box, share, image.shape[:2])
            reading = _read(image[y0:y1, x0:x1])
            in_view = []
            main = 0
            for other in item.dice:  # the neighbours in view, clipped: a value for them is not an extra
                ox, oy, ow, oh = other.box
                cx0, cy0, cx1, cy1 = max(ox, x0), max(oy, y0), min(ox + ow, x1), min(oy + oh, y1)
                if other is die:
                    main = len(in_view)
                if cx1 > cx0 and cy1 > cy0:
                    in_view.append(((cx0 - x0, cy0 - y0, cx1 - cx0, cy1 - cy0), other.value))
            matched = dict(match_dice([d.box for d in reading.dice], [b for b, _ in in_view]))
            by_truth = {j: i for i, j in matched.items()}
            counts["dice"] += 1
            if main not in by_truth:
                counts["missed"] += 1
            else:
                read = reading.dice[by_truth[main]].value
                counts["right" if read == die.value else "unknown" if read is None else "wrong"] += 1
            counts["extraV"] += sum(1 for i, d in enumerate(reading.dice) if i not in matched and d.value is not None)
            counts["nbWrong"] += sum(
                1
                for j, i in by_truth.items()
                if j != main and reading.dice[i].value is not None and reading.dice[i].value != in_view[j][1]
            )
    return counts


def tray_in_photo() -> Counter:
    counts: Counter = Counter()
    for seed in range(12):
        tray = render.render_tray([1, 2, 3, 4, 5], seed=seed, style=["felt", "round", "box"][seed % 3])
        h, w = tray.image.shape[:2]
        for factor in (1.6, 2.0, 2.5):
            ch, cw = int(h * factor), int(w * factor)
            photo = np.full((ch, cw, 3), (60 + seed * 10) % 200 + 30, np.uint8)
            oy, ox = (ch - h) // 2, (cw - w) // 2
            photo[oy : oy + h, ox : ox + w] = tray.image
            truth = [((d.box[0] + ox, d.box[1] + oy, d.box[2], d.box[3]), d.value) for d in tray.dice]
            _score(_read(photo), truth, counts)
    return counts


def tiled(dev: Path, prefix: str, grid: int, photos: int) -> Counter:
    """DEV photos of one source tiled `grid` x `grid` into one photo, the first `photos` of them."""
    counts: Counter = Counter()
    items = [it for it in load_dataset(dev) if it.path.name.startswith(prefix)][:photos]
    per = grid * grid
    for k in range(0, len(items) - per + 1, per):
        group = items[k : k + per]
        originals = [load_image(it.path) for it in group]
        h, w = originals[0].shape[:2]
        images = [im if im.shape[:2] == (h, w) else cv2.resize(im, (w, h)) for im in originals]
        photo = np.vstack([np.hstack(images[r * grid : (r + 1) * grid]) for r in range(grid)])
        truth = []
        for j, (it, original) in enumerate(zip(group, originals)):
            sy, sx = h / original.shape[0], w / original.shape[1]
            oy, ox = (j // grid) * h, (j % grid) * w
            truth += [
                (
                    (round(d.box[0] * sx) + ox, round(d.box[1] * sy) + oy, round(d.box[2] * sx), round(d.box[3] * sy)),
                    d.value,
                )
                for d in it.dice
            ]
        _score(_read(photo), truth, counts)
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = _args.parser(__file__, description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dev", type=_args.labelled_dir, default=DEFAULT_DEV_DIR, help="the DEV set (default: %(default)s)"
    )
    for kind in ("face", "detector", "pip"):
        parser.add_argument(
            f"--{kind}-model",
            type=Path,
            default=None,
            metavar="ONNX",
            help=f"{kind} model to read with instead of the packaged one",
        )
    args = parser.parse_args(argv)
    from vision.errors import VisionError

    try:
        NETWORKS.update(networks_from_files(args.face_model, args.detector_model, args.pip_model))
    except VisionError as exc:
        parser.error(str(exc))
    rows: list[tuple[str, Counter]] = []
    have_dev = (args.dev / "labels.json").is_file()
    if not have_dev:
        print(f"note: {args.dev} is absent; only the rendered rows are measured", file=sys.stderr)
    jobs = [("tray in photo", tray_in_photo)]
    if have_dev:
        jobs = (
            [("single", lambda: single_close_ups(args.dev))]
            + [(f"crop {s:.2f}", lambda s=s: cropped_dice(args.dev, s)) for s in (0.2, 0.3, 0.45, 0.65, 0.9, 1.0)]
            + jobs
            + [
                ("tiled 2x2", lambda: tiled(args.dev, "nell", 2, 40)),
                ("kingpi 3x3", lambda: tiled(args.dev, "kingpi", 3, 9)),
            ]
        )
    print(f"{'pictures':<14}" + "".join(f"{c:>9}" for c in COLUMNS) + f"{'seconds':>9}")
    for name, job in jobs:
        start = time.perf_counter()
        counts = job()
        rows.append((name, counts))
        print(
            f"{name:<14}" + "".join(f"{counts[c]:>9}" for c in COLUMNS) + f"{time.perf_counter() - start:>9.1f}",
            flush=True,
        )
    print(
        "right / unknown / wrong / missed: the labelled dice; extraV: values given where no die is in view"
        " (single: values beyond the one die); nbWrong (crops): wrong values given to neighbours in view,"
        " most of them cut by the picture's edge"
    )
    return 0


if __name__ == "__main__":
    _args.run(main)
