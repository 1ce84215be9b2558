"""The perturbation suite (issue 37, item 6): DEV photos edited as other readers' users report failures.

Usage: python benchmarks/perturbations.py [DATASET_DIR] [--quick] [--seed 0] [--renders 40]
       [--conditions glare,clutter,...] [--json FILE] [--save DIR] [--floors] [--reliability [PNG]]
       [--label-review JSON] [--face-model ONNX] [--detector-model ONNX] [--pip-model ONNX]

Edits every DEV photo (``--quick``: every fourth, 40 photos, and 12 renders
per rendered condition) per condition of :data:`vision.lab.perturb_suite.PERTURBATIONS`,
reads each with :func:`vision.reader.read_image` on one OpenCV thread and
prints per condition: pictures, dice that should be read, right, unknown,
wrong (silent), missed, dice that must get no value (cocked, stacked) and how
many got one, dice read where none is with a value (xtraV, silent) and without
(xtraU), accuracy, the silent rate (wrong + novalV + xtraV over all dice), and
a reliability line per condition (issue 37, item 5): the mean stated
confidence of the values given against the share of them that were right
(``--reliability``: per bin of stated confidence, and a plot with ``PNG``).
Seeded: the same seed gives the same pictures. ``--save DIR`` writes each
picture with a silent error, truth in green (red: must get no value), the
reading in red (``?`` unknown). ``--floors`` prints a ``FLOORS`` dict for
``tests/test_perturbations.py`` (run it with the test's options).
``--label-review benchmarks/dev_label_review.json`` measures against DEV's
reviewed labels (5 dice labelled otherwise than their top face shows; the
labels as given stay the official measure). The
edits: :mod:`vision.lab.perturb`, :mod:`vision.lab.perturb_compose`,
:mod:`vision.lab.perturb_render`; measured tables: ``docs/perturbations.md``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import _args  # (imports _checkout: this checkout's vision/ and table/ first on sys.path)
import cv2

from vision.lab.confidence_suite import (
    ValuedDie,
    draw_reliability_grid,
    format_reliability,
    reliability_table,
    valued_outcomes,
)
from vision.lab.dataset import load_dataset
from vision.lab.perturb_suite import PERTURBATIONS, run_condition
from vision.lab.silent_pictures import silent_saver


def main() -> None:
    parser = _args.parser(
        __file__,
        description=__doc__.split("\n\n")[0],
        epilog=f"conditions: {', '.join(PERTURBATIONS)} (what each is: docs/perturbations.md)",
    )
    _args.dataset_argument(parser)
    parser.add_argument("--quick", action="store_true", help="every fourth photo and 12 renders per condition")
    parser.add_argument("--seed", type=int, default=0, help="seed of every edit and render (default 0)")
    parser.add_argument(
        "--renders", type=_args.positive(), default=40, help="scenes per rendered condition (default 40)"
    )
    parser.add_argument("--conditions", default="", help="comma-separated subset (default: all)")
    parser.add_argument("--json", default="", type=_args.out_file, help="also write the numbers to this JSON file")
    parser.add_argument(
        "--save", default="", type=_args.out_dir, help="write pictures with silent errors to this folder"
    )
    parser.add_argument("--floors", action="store_true", help="print a FLOORS dict for tests/test_perturbations.py")
    parser.add_argument(
        "--reliability",
        default=None,
        nargs="?",
        const="",
        metavar="PNG",
        type=_args.out_file,
        help="print the reliability curve per condition (stated confidence against observed, per bin; "
        "vision.lab.confidence_suite), into --json too; with PNG also draw it",
    )
    parser.add_argument(
        "--label-review",
        type=Path,
        default=None,
        metavar="JSON",
        help="measure against reviewed labels (benchmarks/dev_label_review.json for DEV: 5 dice whose labels "
        "disagree with their plain top face); every edited photo otherwise carries those 5 as silent errors",
    )
    for kind in ("face", "detector", "pip"):
        parser.add_argument(f"--{kind}-model", type=Path, default=None, metavar="ONNX", help=f"another {kind} model")
    args = parser.parse_args()
    from vision.errors import DatasetError, VisionError
    from vision.reader import networks_from_files, read_image

    try:
        networks = networks_from_files(args.face_model, args.detector_model, args.pip_model)
        photos = load_dataset(args.dataset)
        if args.label_review is not None:
            from vision.lab.label_review import load_label_review

            photos = load_label_review(args.label_review).apply(photos, args.dataset)
    except (VisionError, DatasetError) as exc:
        parser.error(str(exc))
    names = [c for c in args.conditions.split(",") if c] or list(PERTURBATIONS)
    for c in names:
        if c not in PERTURBATIONS:
            parser.error(f"unknown condition {c!r}; use some of {', '.join(PERTURBATIONS)}")
    renders = 12 if args.quick else args.renders
    if args.quick:
        photos = photos[::4]
    cv2.setNumThreads(1)
    print(f"{len(photos)} photos of {args.dataset}, {renders} renders per rendered condition, seed {args.seed}")
    if args.label_review is not None:
        print(f"labels as reviewed in {args.label_review}")
    print(
        f"{'condition':<14} {'pics':>4} {'dice':>5} {'right':>5} {'unkn':>5} {'wrong':>5} {'miss':>5} "
        f"{'noval':>5} {'novalV':>6} {'xtraV':>5} {'xtraU':>5} {'acc':>6} {'silent':>6} {'stated':>7} {'observd':>7}"
    )
    out = {}
    given: list[ValuedDie] = []  # every value given, for --reliability
    for c in names:
        saver = silent_saver(Path(args.save), c) if args.save else None
        stated: list[float] = []

        def on_image(k, pic, reading, counts, saver=saver, stated=stated, c=c, given=given):
            stated.extend(d.confidence for d in reading.dice if d.value is not None)
            given.extend(ValuedDie(c, reading.dice[i].confidence, ok, None) for i, ok in valued_outcomes(pic, reading))
            if saver is not None:
                saver(k, pic, reading, counts)

        r = run_condition(
            c, photos, lambda image: read_image(image, **networks), seed=args.seed, renders=renders, on_image=on_image
        )
        valued = r.right + r.silent
        observed = r.right / valued if valued else 0.0
        mean_stated = sum(stated) / len(stated) if stated else 0.0
        print(
            f"{c:<14} {r.images:4d} {r.dice:5d} {r.right:5d} {r.unknown:5d} {r.wrong:5d} {r.missed:5d} "
            f"{r.unreadable:5d} {r.unreadable_valued:6d} {r.extra_valued:5d} {r.extra_unknown:5d} "
            f"{100 * r.accuracy:5.1f}% {100 * r.silent_rate:5.2f}% {100 * mean_stated:6.1f}% {100 * observed:6.1f}%",
            flush=True,
        )
        out[c] = {f: getattr(r, f) for f in r.__slots__} | {
            "accuracy": r.accuracy,
            "silent": r.silent,
            "stated_confidence": mean_stated,
            "observed_precision": observed,
        }
    print(
        "noval: dice that must get no value (cocked, stacked); novalV: of those given one; xtraV / xtraU: dice "
        "read where none is, with / without a value; silent = (wrong + novalV + xtraV) / all dice; "
        "stated: mean stated confidence of the values given; observed: right / values given"
    )
    if args.reliability is not None:
        table = reliability_table(given)
        print("\n".join(format_reliability(table)))
        out["reliability"] = table
        if args.reliability:
            cv2.imwrite(args.reliability, draw_reliability_grid(table), [cv2.IMWRITE_PNG_COMPRESSION, 9])
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    if args.floors:
        print("FLOORS: dict[str, tuple[float, int]] = {")
        for c, r in out.items():
            floor = max(0.0, math.floor((r["accuracy"] - 0.05) * 100) / 100)
            print(f'    "{c}": ({floor:.2f}, {r["silent"]}),  # {r["right"]}/{r["dice"]} right, {r["silent"]} silent')
        print("}")


if __name__ == "__main__":
    _args.run(main)
