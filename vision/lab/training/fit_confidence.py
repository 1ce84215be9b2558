"""Fit the reader's confidence map (:mod:`vision.confidence`) on photos the networks did not train on.

Usage::

    python -m vision.lab.training.fit_confidence \\
        --twin 0 FOLD0/face_reader.onnx FOLD0/pip_finder.onnx \\
        --twin 1 FOLD1/face_reader.onnx FOLD1/pip_finder.onnx --out vision/models/reader_confidence.json

Each ``--twin K FACE PIPS`` names networks trained without DEV fold K
(``train_face``/``train_pips --dev-train fold:K``). The whole reader
(:func:`vision.reader.read_image` with ``calibrated=False``) reads the DEV
photos of each fold with that fold's twins, which is cross-validation: with
one twin per fold every DEV die is read once, by networks that never saw it.
Each reported value is paired with whether it is right (a value on a die that
is not there counts as wrong), and :func:`vision.confidence.fit_isotonic`
fits the map to all pairs. The shipped networks are trained on all of DEV, so
the map fitted on the twins stands in for them; the JSON says so.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from vision.confidence import fit_isotonic
from vision.lab.training.data import DEFAULT_DEV_DIR, DEV_FOLDS, dev_fold, recorded_command


def _twin(text: list[str]) -> tuple[int, Path, Path]:
    fold, face, pips = text
    if fold not in {str(k) for k in range(DEV_FOLDS)}:
        raise argparse.ArgumentTypeError(f"fold must be one of 0-{DEV_FOLDS - 1}, got {fold!r}")
    return int(fold), Path(face), Path(pips)


def _described(path: Path, network: object, fold: int) -> str:
    """`path`, with the training command its JSON recorded (``"command"``, when the file had one).

    The fold metrics then say which networks were the twins without anyone
    writing it by hand: ``"F.onnx (fold-0 twin, trained by: python -m ...
    --dev-train fold:0 ...)"``.
    """
    command = getattr(network, "metadata", {}).get("command")
    return f"{path} (fold-{fold} twin, trained by: {command})" if command else str(path)


#: Fewest reported values in a block of the fitted map. Cross-fitted on DEV's held-out pairs
#: (stop 31: fit on one fold, Brier score on the other), blocks of any size lost to one block
#: (0.0103 against 0.0090, 0.0045 against 0.0044); from 100 values a block it matched it
#: (0.0091 and 0.0044), and from 200 it is one block. Six wrong values in 893 shape no curve.
MIN_BLOCK = 100


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m vision.lab.training.fit_confidence", description=__doc__.split("\n\n")[0]
    )
    p.add_argument(
        "--twin",
        nargs=3,
        action="append",
        required=True,
        metavar=("K", "FACE_ONNX", "PIPS_ONNX"),
        help="a DEV fold and the face reader and pip finder trained without it (repeat for each fold)",
    )
    p.add_argument("--dev-dir", type=Path, default=DEFAULT_DEV_DIR)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument(
        "--min-block",
        type=int,
        default=MIN_BLOCK,
        metavar="N",
        help=f"fewest reported values in a block of the map (default {MIN_BLOCK}; see fit_isotonic)",
    )
    args = p.parse_args(argv)
    if args.min_block < 1:
        p.error(f"--min-block must be 1 or more, got {args.min_block}")
    try:
        twins = [_twin(t) for t in args.twin]
    except argparse.ArgumentTypeError as exc:
        p.error(f"--twin: {exc}")
    folds = [k for k, _, _ in twins]
    if len(set(folds)) != len(folds):
        p.error(f"--twin: each fold once, got folds {folds}")
    import cv2

    from vision.errors import VisionError
    from vision.lab.evaluate import evaluate
    from vision.reader import VALUE_THRESHOLD, networks_from_files, read_image

    cv2.setNumThreads(1)
    probs, right, photos, per_fold = [], [], 0, {}
    for fold, face_path, pips_path in sorted(twins):
        try:
            twin = networks_from_files(face_model=face_path, pip_model=pips_path)
        except VisionError as exc:
            print(f"fit_confidence: error: fold {fold}: {exc}", file=sys.stderr)
            return 2
        result = evaluate(
            args.dev_dir,
            lambda img: read_image(img, calibrated=False, **twin),  # noqa: B023  (evaluate() runs it this iteration)
            keep=lambda name: dev_fold(name) == fold,  # noqa: B023  (evaluate() runs it this iteration)
        )
        photos += len(result.images)
        for im in result.images:
            for o in im.outcomes:
                if o.read is not None and o.kind in ("correct", "wrong", "extra"):
                    probs.append(o.confidence)
                    right.append(o.kind == "correct")
        m = result.metrics()
        per_fold[str(fold)] = {
            "face_model": _described(face_path, twin["face_reader"], fold),
            "pip_model": _described(pips_path, twin["pip_finder"], fold),
            **{k: m[k] for k in ("accuracy", "silent_error_rate") if k in m},
        }
    cmap = fit_isotonic(probs, right, min_block=args.min_block)
    names = " and ".join(str(k) for k in sorted(folds))
    out = {
        "map": cmap.to_json(),
        "fitted_on": f"DEV fold{'s' if len(folds) > 1 else ''} {names} ({photos} photos, {len(probs)} reported values, "
        f"{sum(right)} right), each read by networks trained without it",
        "fold_metrics": per_fold,
        "method": "isotonic regression (pool-adjacent-violators), blocks of at least "
        f"{args.min_block} values, each Laplace-smoothed (+1 right, +1 wrong)",
        "value_threshold": VALUE_THRESHOLD,
        "command": recorded_command("vision.lab.training.fit_confidence", argv),
    }
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
