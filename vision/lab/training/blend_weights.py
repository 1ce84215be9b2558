"""Blend two float face readers of one graph layer by layer: ``(1 - alpha) x A + alpha x B``.

Usage::

    python -m vision.lab.training.blend_weights INIT.onnx TUNED.onnx --alpha 0.5 --out DIR

Weight-space interpolation between a network and its fine-tuned copy (WiSE-FT: Wortsman et al.,
"Robust fine-tuning of zero-shot models", CVPR 2022): the fine-tuned copy
(:mod:`vision.lab.training.finetune_face`) learned the new class-0 clutter but lost some of the
start's confidence on real dice; a point between the two keeps most of both. Every convolution's
and the classifier's weights and biases are blended (the exports fold their batch norms, so the
two graphs hold the same initializers in the same order). Writes ``DIR/face_reader.onnx`` and
``DIR/face_reader.json`` (B's JSON with the blend recorded, the fixed probes and DEV metrics
re-measured); quantise it as any other (:mod:`vision.lab.training.quantise`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def blend(a_path: Path, b_path: Path, alpha: float, out_path: Path) -> int:
    """Write ``(1 - alpha) A + alpha B`` to `out_path`; returns the number of tensors blended.

    Raises
    ------
    ValueError
        If the two graphs' convolutions and classifier do not match in number or shape.
    """
    import onnx
    from onnx import numpy_helper

    def weights(model) -> list:
        inits = {i.name: i for i in model.graph.initializer}
        return [inits[n.input[k]] for n in model.graph.node if n.op_type in ("Conv", "Gemm") for k in (1, 2)]

    a, b = onnx.load(str(a_path)), onnx.load(str(b_path))
    wa, wb = weights(a), weights(b)
    if len(wa) != len(wb):
        raise ValueError(f"{a_path} has {len(wa)} weight tensors, {b_path} {len(wb)}")
    for ta, tb in zip(wa, wb):
        xa, xb = numpy_helper.to_array(ta), numpy_helper.to_array(tb)
        if xa.shape != xb.shape:
            raise ValueError(f"{ta.name}: shapes {xa.shape} and {xb.shape}")
        mixed = ((1.0 - alpha) * xa.astype(np.float64) + alpha * xb.astype(np.float64)).astype(xa.dtype)
        ta.CopyFrom(numpy_helper.from_array(mixed, ta.name))
    onnx.save(a, str(out_path))
    return len(wa)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m vision.lab.training.blend_weights", description=__doc__.split("\n")[0])
    p.add_argument("a", type=Path, help="float face_reader.onnx at alpha 0 (the start of the fine-tuning)")
    p.add_argument("b", type=Path, help="float face_reader.onnx at alpha 1 (the fine-tuned one), its JSON beside it")
    p.add_argument("--alpha", type=float, required=True)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / "face_reader.onnx"
    n = blend(args.a, args.b, args.alpha, out)
    meta_path = args.b.with_suffix(".json")
    meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {}
    meta.setdefault("fine_tune", {})["blend"] = {
        "alpha": args.alpha,
        "method": f"(1 - alpha) x {args.a.name} + alpha x the fine-tuned net, {n} tensors (WiSE-FT)",
        "command": f"python -m vision.lab.training.blend_weights {args.a} {args.b} --alpha {args.alpha}",
    }
    from vision.face import FaceReader
    from vision.lab.training.evaluate import DEFAULT_DEV_DIR, dev_crops, evaluate, face_probe_answers, format_table

    reader = FaceReader(out)
    meta["fixed_probes"] = face_probe_answers(reader)
    if DEFAULT_DEV_DIR.is_dir():
        meta["dev_metrics"] = evaluate(reader, dev_crops(DEFAULT_DEV_DIR))
        print(format_table(meta["dev_metrics"]), flush=True)
    (args.out / "face_reader.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}: {n} tensors blended at alpha {args.alpha}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
