"""The reader on DEV photos as other cameras would take them (:mod:`vision.lab.camera_changes`).

Usage: python benchmarks/camera_changes.py [--dev DIR] [--changes none,warm,...] [--fold K]
       [--source PREFIX] [--seed S] [--quarter-turns K] [--save DIR] [--face-model ONNX]
       [--detector-model ONNX] [--pip-model ONNX]

Each change (white balance, exposure, haze, sensor noise, defocus, JPEG,
more or fewer pixels, a turned or tilted camera) is applied to every DEV
photo, with its labelled boxes moved along, and the photo is read and scored
as by ``dicetable eval``. Prints per change: labelled dice, right, wrong,
unknown, missed, extras given a value, per-die accuracy, silent-error rate
and the change in accuracy from the unchanged photos (``none``), so the
changes the reader is weak against stand out. The acceptance photos come from
other cameras, so this is how DEV's real dice say the reader will travel.

The packaged networks were trained on DEV, so their numbers are in-sample;
``--fold K`` with twins trained with ``--dev-train fold:K`` (``--face-model``,
``--pip-model``) reads only the photos those twins never saw.
``--quarter-turns K`` turns every photo by K quarter turns before the change
(a camera mounted another way round): a network's answer on a borderline die
moves with the die's orientation, so a result on the photos as they are can
be a lucky or unlucky draw; read all four to see. ``--save DIR`` writes, per
change, a sheet of the changed photos with an error (up to 6), drawn as in
``dicetable eval --report``.
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

import _args  # (imports _checkout: this checkout's vision/ and table/ first on sys.path)
import cv2
import numpy as np

from vision.annotate import annotate_outcomes
from vision.images import load_image
from vision.lab.camera_changes import apply_change, change_names, quarter_turn
from vision.lab.evaluate import DEFAULT_DEV_DIR, EvalResult, LabelledDie, load_dataset, score_image
from vision.lab.training.data import DEV_FOLDS, dev_fold
from vision.reader import networks_from_files, read_image

#: Changed photos with an error drawn on each change's sheet (``--save``).
SHEET_PHOTOS = 6


def _sheet(drawings: list[np.ndarray], height: int = 360) -> np.ndarray:
    """The drawings side by side in rows of three, each scaled to `height` px high."""
    tiles = [
        cv2.resize(d, (max(1, round(d.shape[1] * height / d.shape[0])), height), interpolation=cv2.INTER_AREA)
        for d in drawings
    ]
    rows = []
    for k in range(0, len(tiles), 3):
        row = np.hstack(tiles[k : k + 3])
        rows.append(row)
    width = max(r.shape[1] for r in rows)
    return np.vstack([np.pad(r, ((0, 0), (0, width - r.shape[1]), (0, 0))) for r in rows])


def main(argv: list[str] | None = None) -> int:
    parser = _args.parser(__file__, description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dev", type=_args.labelled_dir, default=DEFAULT_DEV_DIR, help="labelled photos (default: %(default)s)"
    )
    parser.add_argument(
        "--changes", default=",".join(change_names()), help="comma-separated changes (default: all: %(default)s)"
    )
    parser.add_argument(
        "--fold",
        type=int,
        choices=range(DEV_FOLDS),
        default=None,
        help="only the photos of DEV fold K (for twins trained with --dev-train fold:K)",
    )
    parser.add_argument("--source", default=None, metavar="PREFIX", help="only photos whose name starts with PREFIX")
    parser.add_argument("--seed", type=int, default=0, help="seed of the noise changes (default 0)")
    parser.add_argument(
        "--quarter-turns",
        type=int,
        choices=range(4),
        default=0,
        metavar="K",
        help="turn every photo by K quarter turns (0-3) before the change (default 0)",
    )
    parser.add_argument(
        "--save",
        type=lambda text: Path(_args.out_dir(text)),
        default=None,
        metavar="DIR",
        help="write a sheet of photos with errors per change into DIR",
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
    names = [n.strip() for n in args.changes.split(",") if n.strip()]
    unknown = [n for n in names if n not in change_names()]
    if unknown or not names:
        parser.error(
            f"unknown camera change(s) {', '.join(unknown) or '(none given)'}; choose from {', '.join(change_names())}"
        )
    if not (args.dev / "labels.json").is_file():
        print(
            f"camera_changes: {args.dev} has no labels.json; the DEV set is needed "
            "(../shared/dice-images/dev beside the checkout, or --dev DIR)",
            file=sys.stderr,
        )
        return 2
    from vision.errors import VisionError

    try:
        networks = networks_from_files(args.face_model, args.detector_model, args.pip_model)
        items = load_dataset(args.dev)
    except VisionError as exc:
        parser.error(str(exc))
    items = [
        it
        for it in items
        if (args.fold is None or dev_fold(it.path.name) == args.fold)
        and (args.source is None or it.path.name.startswith(args.source))
    ]
    if not items:
        parser.error("no photo is in the selection (--fold, --source)")
    photos = []
    for k, item in enumerate(items):
        photo, boxes = quarter_turn(load_image(item.path), [d.box for d in item.dice], args.quarter_turns)
        items[k] = replace(item, dice=tuple(LabelledDie(d.value, b) for d, b in zip(item.dice, boxes)))
        photos.append(photo)
    if args.save is not None:
        args.save.mkdir(parents=True, exist_ok=True)

    print(
        f"{len(items)} photos, {sum(len(it.dice) for it in items)} labelled dice"
        + (f", DEV fold {args.fold}" if args.fold is not None else "")
        + (f", source {args.source}" if args.source else "")
        + (f", turned by {args.quarter_turns} quarter turn(s)" if args.quarter_turns else "")
    )
    header = ("change", "dice", "right", "wrong", "unknown", "missed", "extraV", "accuracy", "silent", "vs none", "s")
    print(f"{header[0]:<13}" + "".join(f"{h:>9}" for h in header[1:]), flush=True)
    baseline = None
    for name in names:
        rng = np.random.default_rng(args.seed)
        result = EvalResult(args.dev)
        drawings: list[np.ndarray] = []
        start = time.perf_counter()
        for item, photo in zip(items, photos):
            changed, boxes = apply_change(name, photo, [d.box for d in item.dice], rng)
            truth = replace(
                item,
                dice=tuple(LabelledDie(d.value, b) for d, b in zip(item.dice, boxes)),
                size=(changed.shape[1], changed.shape[0]),
            )
            scored = score_image(read_image(changed, **networks), truth)
            result.images.append(scored)
            if args.save is not None and not scored.exact and len(drawings) < SHEET_PHOTOS:
                drawings.append(annotate_outcomes(changed, scored.outcomes))
        m = result.metrics()
        if name == "none":
            baseline = m["accuracy"]
        delta = "" if baseline is None or name == "none" else f"{100 * (m['accuracy'] - baseline):+.1f}"
        print(
            f"{name:<13}"
            + "".join(f"{m[k]:>9}" for k in ("labelled", "correct", "wrong", "unknown", "missed", "extra_valued"))
            + f"{100 * m['accuracy']:>8.1f}%{100 * m['silent_error_rate']:>8.2f}%{delta:>9}"
            + f"{time.perf_counter() - start:>9.1f}",
            flush=True,
        )
        if drawings:
            path = args.save / f"{name}.png"
            cv2.imwrite(str(path), _sheet(drawings))
    print(
        "right / wrong / unknown / missed: the labelled dice; extraV: values given where no die is labelled; "
        "silent = (wrong + extraV) / dice; vs none: accuracy change in points from the unchanged photos"
        + (" (run with the change 'none' to see it)" if baseline is None else "")
    )
    if args.save is not None:
        print(f"sheets of photos with errors: {args.save}")
    return 0


if __name__ == "__main__":
    _args.run(main)
