"""Fit the reader's warning confidence model (:mod:`vision.confidence_model`) on DEV and the perturbation suite.

Usage (the command that made the shipped model; rerun it after the reader changes)::

    python -m vision.lab.training.fit_confidence_model --seed 1 --data /tmp/confidence_rows.npz

The whole reader (:func:`vision.reader.read_image`, with the packaged
networks) reads every picture of every condition of the perturbation suite
(:data:`vision.lab.perturb_suite.PERTURBATIONS`; ``none`` is DEV as it is),
edited with ``--seed`` (not the benchmark's default 0, so that
``benchmarks/perturbations.py --reliability`` reports on other pictures than
these). Each value given becomes one row: its warnings and whether it is right
(:mod:`vision.lab.confidence_suite`). :func:`vision.confidence_model.fit_confidence_model`
fits the model to all rows, and it is written under ``"model"`` of ``--out``
(default the packaged ``vision/models/reader_confidence.json``; its other keys,
the isotonic map of the probability alone, are kept). ``--data FILE`` also
saves the rows, and ``--from-data FILE`` refits from saved rows without reading.

The shipped networks were trained on DEV's photos, so DEV's rows are in-sample;
the edited pictures are not pictures they trained on, and hold most wrong values.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from vision.confidence import DEFAULT_MAP_PATH
from vision.lab.training.data import recorded_command

#: Ridge penalty of the fit (:func:`vision.confidence_model.fit_confidence_model`).
L2 = 1.0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m vision.lab.training.fit_confidence_model", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--seed", type=int, default=1, help="seed of the edits (default 1; 0 is the benchmark's)")
    p.add_argument("--quick", action="store_true", help="every fourth DEV photo and 12 renders per condition")
    p.add_argument("--renders", type=int, default=40, help="scenes per rendered condition (default 40)")
    p.add_argument("--conditions", default="", help="comma-separated subset (default: all)")
    p.add_argument("--dev-dir", type=Path, default=None, help="labelled photos (default DEV)")
    p.add_argument("--out", type=Path, default=DEFAULT_MAP_PATH, help="JSON to write the model into")
    p.add_argument("--data", type=Path, default=None, help="also save the rows (NPZ)")
    p.add_argument("--from-data", type=Path, default=None, help="fit on saved rows instead of reading")
    p.add_argument("--l2", type=float, default=L2, help=f"ridge penalty (default {L2})")
    args = p.parse_args(argv)
    from vision.confidence_model import FEATURES, fit_confidence_model

    if args.from_data is not None:
        saved = np.load(args.from_data)
        feats, right, conds, seed = saved["features"], saved["right"], saved["condition"], int(saved["seed"])
        made_by = str(saved["command"]) if "command" in saved else str(args.from_data)
    else:
        if args.seed == 0:
            p.error("--seed 0 makes the benchmark's pictures; fit on another seed and report on 0")
        feats, right, conds = _read_rows(args, p)
        seed = args.seed
        made_by = recorded_command("vision.lab.training.fit_confidence_model", argv)
        if args.data is not None:
            np.savez_compressed(args.data, features=feats, right=right, condition=conds, seed=seed, command=made_by)
    ok = ~np.isnan(feats).any(axis=1)
    model = fit_confidence_model(feats[ok], right[ok], l2=args.l2)
    stated = model(feats[ok])
    per = {}
    for c in dict.fromkeys(conds[ok].tolist()):
        sel = conds[ok] == c
        per[c] = {
            "values": int(sel.sum()),
            "right": round(float(right[ok][sel].mean()), 4),
            "stated": round(float(stated[sel].mean()), 4),
        }
    doc = json.loads(args.out.read_text(encoding="utf-8")) if args.out.is_file() else {}
    doc["model"] = {
        **model.to_json(),
        "fitted_on": f"perturbation suite seed {seed} (DEV as it is and every condition): "
        f"{int(ok.sum())} values given, {int(right[ok].sum())} right",
        "method": f"logistic regression, ridge {args.l2}, logit_p's weight >= 0 and every warning's <= 0 "
        "(active set); vision.confidence_model",
        "per_condition": per,
        "command": recorded_command("vision.lab.training.fit_confidence_model", argv),
        "rows_read_by": made_by,
    }
    args.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(doc["model"], indent=1))
    print(f"wrote the model into {args.out} ({', '.join(FEATURES)})", file=sys.stderr)
    return 0


def _read_rows(args: argparse.Namespace, p: argparse.ArgumentParser):
    import cv2

    from vision.errors import DatasetError
    from vision.lab.confidence_suite import collect
    from vision.lab.dataset import DEFAULT_DEV_DIR, load_dataset
    from vision.lab.perturb_suite import PERTURBATIONS
    from vision.reader import read_image

    try:
        photos = load_dataset(args.dev_dir or DEFAULT_DEV_DIR)
    except DatasetError as exc:
        p.error(str(exc))
    names = [c for c in args.conditions.split(",") if c] or list(PERTURBATIONS)
    for c in names:
        if c not in PERTURBATIONS:
            p.error(f"unknown condition {c!r}; use some of {', '.join(PERTURBATIONS)}")
    if args.quick:
        photos = photos[::4]
    cv2.setNumThreads(1)

    def said(name, counts, found):
        wrong = sum(not r.right for r in found)
        print(f"{name:<14} {len(found):5d} values given, {wrong:4d} wrong", file=sys.stderr, flush=True)

    rows = collect(
        names, photos, read_image, seed=args.seed, renders=12 if args.quick else args.renders, on_condition=said
    )
    feats = np.array([r.features for r in rows], np.float64).reshape(-1, len(rows[0].features) if rows else 0)
    return feats, np.array([r.right for r in rows], bool), np.array([r.condition for r in rows])


if __name__ == "__main__":
    raise SystemExit(main())
