"""Oblique and close-up dice (issue 37, item 2): held-out TRAIN photos and tilted renders, read and scored.

Usage: python benchmarks/oblique.py [--quick] [--seed 0] [--renders 40] [--sets matteo,close 0-25,...]
       [--train-dir ../shared/dice-images/train] [--json FILE] [--save DIR] [--reasons]
       [--face-model ONNX] [--detector-model ONNX] [--pip-model ONNX]

Reads every picture of each set of :data:`vision.lab.oblique.SETS` (the
photos held out by :mod:`vision.lab.holdout`, listed in
``benchmarks/oblique_holdout.txt``; renders with the camera tilted 20-60
degrees; close-ups of one die) with :func:`vision.reader.read_image` on one
OpenCV thread and prints per set: pictures, dice, right, unknown, wrong
(silent), missed, dice read where none is labelled with a value (xtraV,
silent) and without (xtraU), accuracy, the silent rate ((wrong + xtraV) /
dice) and the unknown rate (unknown / dice). ``--quick``: 8 renders per set
(the photos are few: all are read). Seeded. ``--save DIR`` writes each picture
with a silent error: labels in green, the reading in red (``?`` unknown);
``--reasons`` prints why the unknown dice were left unknown (counted over
every die read without a value, extras too).
Photo sets are skipped, with a note, when the TRAIN set is absent. Tables:
``docs/oblique.md``.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import _args  # (imports _checkout: this checkout's vision/ and table/ first on sys.path)
import cv2

from vision.lab.oblique import PHOTO_SETS, SETS, run_set
from vision.lab.silent_pictures import silent_saver
from vision.lab.training.data import DEFAULT_TRAIN_DIR


def main() -> None:
    parser = _args.parser(__file__, description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="8 renders per rendered set")
    parser.add_argument("--seed", type=int, default=0, help="seed of every render (default 0)")
    parser.add_argument("--renders", type=_args.positive(), default=40, help="pictures per rendered set (default 40)")
    parser.add_argument("--sets", default="", help="comma-separated subset (default: all)")
    parser.add_argument("--train-dir", type=_args.labelled_dir, default=DEFAULT_TRAIN_DIR, help="the TRAIN set")
    parser.add_argument("--json", default="", type=_args.out_file, help="also write the numbers to this JSON file")
    parser.add_argument(
        "--save", default="", type=_args.out_dir, help="write pictures with silent errors to this folder"
    )
    parser.add_argument("--reasons", action="store_true", help="print the reasons of the unknown dice per set")
    for kind in ("face", "detector", "pip"):
        parser.add_argument(f"--{kind}-model", type=Path, default=None, metavar="ONNX", help=f"another {kind} model")
    args = parser.parse_args()
    from vision.errors import VisionError
    from vision.reader import networks_from_files, read_image

    try:
        networks = networks_from_files(args.face_model, args.detector_model, args.pip_model)
    except VisionError as exc:
        parser.error(str(exc))
    names = [c.strip() for c in args.sets.split(",") if c.strip()] or list(SETS)
    for c in names:
        if c not in SETS:
            parser.error(f"unknown set {c!r}; use some of {', '.join(SETS)}")
    has_train = (args.train_dir / "labels.json").is_file()
    renders = 8 if args.quick else args.renders
    cv2.setNumThreads(1)
    print(f"held-out photos of {args.train_dir}, {renders} renders per rendered set, seed {args.seed}")
    print(
        f"{'set':<13} {'pics':>4} {'dice':>5} {'right':>5} {'unkn':>5} {'wrong':>5} {'miss':>5} "
        f"{'xtraV':>5} {'xtraU':>5} {'acc':>6} {'silent':>6} {'unkn%':>6}"
    )
    out = {}
    for c in names:
        if c in PHOTO_SETS and not has_train:
            print(f"{c:<13} skipped: no TRAIN set at {args.train_dir}")
            continue
        saver = silent_saver(Path(args.save), c) if args.save else None
        reasons: Counter = Counter()

        def on_image(k, pic, reading, counts, saver=saver, reasons=reasons):
            reasons.update(str(d.reason) for d in reading.dice if d.value is None)
            if saver is not None:
                saver(k, pic, reading, counts)

        r = run_set(
            c,
            lambda image: read_image(image, **networks),
            train_dir=args.train_dir,
            renders=renders,
            seed=args.seed,
            on_image=on_image,
        )
        unknown_rate = r.unknown / r.dice if r.dice else 0.0
        print(
            f"{c:<13} {r.images:4d} {r.dice:5d} {r.right:5d} {r.unknown:5d} {r.wrong:5d} {r.missed:5d} "
            f"{r.extra_valued:5d} {r.extra_unknown:5d} {100 * r.accuracy:5.1f}% {100 * r.silent_rate:5.2f}% "
            f"{100 * unknown_rate:5.1f}%",
            flush=True,
        )
        if args.reasons:
            print(f"{'':<13} unknown: " + (", ".join(f"{n} {why}" for why, n in reasons.most_common()) or "none"))
        out[c] = {f: getattr(r, f) for f in r.__slots__} | {
            "reasons": dict(reasons),
            "accuracy": r.accuracy,
            "silent": r.silent,
            "silent_rate": r.silent_rate,
            "unknown_rate": unknown_rate,
        }
    print(
        "xtraV / xtraU: dice read where none is labelled, with / without a value; silent = (wrong + xtraV) / dice; "
        "unkn% = unknown / dice; photo sets: held out from training since this list (the packaged networks saw them)"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    _args.run(main)
