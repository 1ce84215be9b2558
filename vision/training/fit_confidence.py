"""Fit the reader's confidence map (:mod:`vision.confidence`) on photos the networks did not train on.

Usage::

    python -m vision.training.fit_confidence --face-model FOLD_FACE.onnx --pip-model FOLD_PIPS.onnx \\
        --fold 1 --out vision/models/reader_confidence.json

Runs the whole reader (:func:`vision.reader.read_image` with ``calibrated=False``)
with the given networks on the DEV photos of one fold (the fold those networks
were *not* trained on: ``train_face``/``train_pips --dev-train fold:K``), pairs
each reported value with whether it is right (a value on a die that is not
there counts as wrong), and fits :func:`vision.confidence.fit_isotonic`. The
shipped networks are trained on all of DEV, so the map fitted on the fold
models stands in for them; the JSON says so.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from vision.confidence import fit_isotonic
from vision.training.data import DEFAULT_DEV_DIR, dev_fold


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m vision.training.fit_confidence", description=__doc__.split("\n\n")[0])
    p.add_argument("--face-model", type=Path, required=True)
    p.add_argument("--pip-model", type=Path, required=True)
    p.add_argument("--fold", type=int, required=True, help="the DEV fold the two networks were not trained on")
    p.add_argument("--dev-dir", type=Path, default=DEFAULT_DEV_DIR)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    import cv2

    from vision.evaluate import evaluate
    from vision.face import FaceReader
    from vision.pips import PipFinder
    from vision.reader import read_image

    cv2.setNumThreads(1)
    faces, pips = FaceReader(args.face_model), PipFinder(args.pip_model)
    result = evaluate(args.dev_dir, lambda img: read_image(img, face_reader=faces, pip_finder=pips, calibrated=False),
                      keep=lambda name: dev_fold(name) == args.fold)
    probs, right = [], []
    for im in result.images:
        for o in im.outcomes:
            if o.read is not None and o.kind in ("correct", "wrong", "extra"):
                probs.append(o.confidence)
                right.append(o.kind == "correct")
    cmap = fit_isotonic(probs, right)
    m = result.metrics()
    out = {
        "map": cmap.to_json(),
        "fitted_on": f"DEV fold {args.fold} ({len(result.images)} photos, {len(probs)} reported values, "
                     f"{sum(right)} right) read by networks trained without that fold",
        "face_model": args.face_model.name, "pip_model": args.pip_model.name,
        "fold_metrics": {k: m[k] for k in ("accuracy", "silent_error_rate") if k in m},
        "method": "isotonic regression (pool-adjacent-violators), each block Laplace-smoothed (+1 right, +1 wrong)",
    }
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
