"""The pip reader on rendered stress sets, one per condition (issue 7, item 5).

Usage: python benchmarks/stress_sets.py [--n 20] [--seed 0] [--conditions plain,glare,...] [--json FILE]
       [--save DIR] [--save-all] [--floors] [--threshold T]
       [--face-model ONNX] [--detector-model ONNX] [--pip-model ONNX]

Renders ``--n`` images of five dice per condition of
:data:`vision.render.CONDITIONS` (plus ``random``: every factor at random) with
:func:`vision.render.render_randomised`, reads each with
:func:`vision.reader.read_image` on one OpenCV thread and prints per condition:
readable dice, right, wrong (silent), unknown, missed, unreadable dice drawn
(leaning / cut by the border) and how many of them were given a misleading
value, dice found where none was drawn (with and without a value), per-die
accuracy, silent-error rate (all silent errors over all dice drawn) and ms per
image (reading only). Scoring rules: :mod:`vision.lab.stress`.
``--save DIR`` writes each image with a silent error (every image with
``--save-all``) as ``DIR/<condition>_<k>.png``: the truth in green (grey for
unreadable dice, value above), the reading in red (``?`` for unknown).
``--face-model``, ``--detector-model`` and ``--pip-model`` read with other
networks than the packaged ones (a retrained model, a quantised one, a
held-out twin: the renders are the same for every model, so two runs with one
seed compare them die for die). ``--floors`` ends with a ``FLOORS`` dict for ``tests/test_stress_sets.py``
(run it with ``--n 6``, the test's set size): accuracy less 0.1, rounded down
to 0.01; the silent limit is the measured count, at least 1 (GAP above 1).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import _args  # (imports _checkout: this checkout's vision/ and table/ first on sys.path)
import cv2
import numpy as np

from vision.lab.stress import run_stress
from vision.render import CONDITIONS


def main() -> None:
    parser = _args.parser(__file__, description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=_args.positive(), default=20, help="images per condition (default 20)")
    parser.add_argument("--seed", type=int, default=0, help="seed of values and renders (default 0)")
    parser.add_argument("--conditions", default="", help="comma-separated subset (default: all and random)")
    parser.add_argument("--json", default="", type=_args.out_file, help="also write the numbers to this JSON file")
    parser.add_argument(
        "--save", default="", type=_args.out_dir, help="write annotated images with silent errors to this folder"
    )
    parser.add_argument("--save-all", action="store_true", help="with --save: write every image")
    parser.add_argument("--floors", action="store_true", help="print a FLOORS dict for tests/test_stress_sets.py")
    parser.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="the reader's value threshold to try, strictly between 0 and 1 "
        "(default: the shipped vision.reader.VALUE_THRESHOLD, 0.75)",
    )
    for kind in ("face", "detector", "pip"):
        parser.add_argument(
            f"--{kind}-model",
            type=Path,
            default=None,
            metavar="ONNX",
            help=f"{kind} model to read with instead of the packaged one",
        )
    args = parser.parse_args()
    if args.threshold is not None and not 0.0 < args.threshold < 1.0:
        parser.error(f"--threshold must be strictly between 0 and 1 (e.g. 0.5), got {args.threshold}")
    from vision.errors import VisionError
    from vision.reader import VALUE_THRESHOLD, networks_from_files, read_image

    threshold = VALUE_THRESHOLD if args.threshold is None else args.threshold
    try:
        networks = networks_from_files(args.face_model, args.detector_model, args.pip_model)
    except VisionError as exc:
        parser.error(str(exc))

    def read(image):
        return read_image(image, value_threshold=threshold, **networks)

    cv2.setNumThreads(1)
    names = [c for c in args.conditions.split(",") if c] or [*CONDITIONS, "random"]
    for c in names:
        if c != "random" and c not in CONDITIONS:
            parser.error(f"unknown condition {c!r}; use some of {', '.join(CONDITIONS)}, random")
    models = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in vars(args).items() if k.endswith("_model") and v)
    print(
        f"{args.n} images of 5 dice per condition, seed {args.seed}, value threshold {threshold:.2f}"
        + (f"; {models}" if models else "")
    )
    print(
        f"{'condition':<12} {'dice':>5} {'right':>5} {'wrong':>5} {'unkn':>5} {'miss':>5} "
        f"{'unrd':>5} {'unrdV':>5} {'xtraV':>5} {'xtraU':>5} {'acc':>6} {'silent':>6} {'ms/img':>7}"
    )
    out = {}
    for c in names:
        saver = _saver(Path(args.save), c, args.save_all) if args.save else None
        r = run_stress(None if c == "random" else c, args.n, seed=args.seed, on_image=saver, read=read)
        print(
            f"{c:<12} {r.dice:5d} {r.right:5d} {r.wrong:5d} {r.unknown:5d} {r.missed:5d} "
            f"{r.unreadable:5d} {r.unreadable_valued:5d} {r.extra_valued:5d} {r.extra_unknown:5d} "
            f"{100 * r.accuracy:5.1f}% "
            f"{100 * r.silent_rate:5.1f}% {r.ms_per_image:7.1f}",
            flush=True,
        )
        out[c] = {
            "images": r.images,
            "dice": r.dice,
            "right": r.right,
            "wrong": r.wrong,
            "unknown": r.unknown,
            "missed": r.missed,
            "unreadable": r.unreadable,
            "unreadable_valued": r.unreadable_valued,
            "extra_valued": r.extra_valued,
            "extra_unknown": r.extra_unknown,
            "accuracy": r.accuracy,
            "silent_rate": r.silent_rate,
            "ms_per_image": r.ms_per_image,
        }
    print(
        "unrd: leaning or border-cut dice drawn; unrdV: of those given a misleading value; "
        "xtraV: valued dice where none was drawn; xtraU: unknown dice where none was drawn (phantoms); "
        "silent = (wrong + unrdV + xtraV) / all dice drawn"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
    if args.floors:
        print("FLOORS: dict[str, tuple[float, int]] = {")
        for c, r in out.items():
            silent = r["wrong"] + r["unreadable_valued"] + r["extra_valued"]
            floor = max(0.0, math.floor((r["accuracy"] - 0.1) * 100) / 100)
            note = f"{r['right']}/{r['dice']}"
            if r["unknown"] or r["missed"]:
                note += f" ({r['unknown']} unknown, {r['missed']} missed)"
            note += f"; {silent}" + (" GAP" if silent > 1 else "")
            print(f'    "{c}": ({floor:.2f}, {max(1, silent)}),  # {note}')
        print("}")


def _saver(folder: Path, condition: str, every: bool):
    folder.mkdir(parents=True, exist_ok=True)

    def save(k, tray, reading, counts):
        if not (every or counts.silent):
            return
        img = np.asarray(tray.image).copy()
        for d in tray.dice:
            x, y, w, h = d.box
            colour = (160, 160, 160) if d.unreadable else (0, 200, 0)
            cv2.rectangle(img, (x, y), (x + w, y + h), colour, 1)
            cv2.putText(
                img,
                f"{d.value}{'*' if d.unreadable else ''}",
                (x, max(y - 3, 10)),
                cv2.FONT_HERSHEY_SIMPLEX,
                0.5,
                colour,
                1,
                cv2.LINE_AA,
            )
        for d in reading.dice:
            x, y, w, h = d.box
            cv2.rectangle(img, (x + 2, y + 2), (x + w - 2, y + h - 2), (0, 0, 255), 1)
            cv2.putText(
                img,
                "?" if d.value is None else str(d.value),
                (x + w - 12, y + h + 14),
                cv2.FONT_HERSHEY_SIMPLEX,
                0.5,
                (0, 0, 255),
                1,
                cv2.LINE_AA,
            )
        cv2.imwrite(str(folder / f"{condition}_{k}.png"), img)

    return save


if __name__ == "__main__":
    _args.run(main)
