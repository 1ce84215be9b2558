"""Merge several face readers into one ONNX model that reads with all of them (a deep ensemble).

Networks trained alike from different random seeds make different mistakes;
averaging their answers is more accurate and better calibrated than any one of
them (Lakshminarayanan, Pritzel and Blundell, "Simple and Scalable Predictive
Uncertainty Estimation using Deep Ensembles", NeurIPS 2017). The merged graph
takes the members' common input ``crops`` (N, 3, S, S) and outputs ``logits``
(N, 7): the mean of the members' log-softmax outputs. :class:`vision.face.FaceReader`
applies softmax to it as to any face reader, which gives the normalised
geometric mean of the members' probabilities, so nothing changes at read time
but the model file.

Usage::

    python -m vision.training.ensemble OUT.onnx MEMBER.onnx MEMBER.onnx [...]

Needs the ``train`` extra (``onnx``); nothing here runs when dice are read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

__all__ = ["merge_face_readers", "main"]


def merge_face_readers(members: list[Path], out: Path) -> None:
    """Write one ONNX model whose ``logits`` are the mean log-softmax of `members`.

    Parameters
    ----------
    members : list of Path
        Two or more face-reader ONNX files, each with one input ``crops`` of
        shape (N, 3, S, S) float32 and one output of shape (N, C) (logits).
    out : Path
        Where to write the merged model.

    Raises
    ------
    ValueError
        If fewer than two members are given, or their input names or opsets differ.
    onnx.checker.ValidationError
        If the merged graph is not valid ONNX.
    """
    import onnx
    from onnx import TensorProto, compose, helper, numpy_helper

    if len(members) < 2:
        raise ValueError(f"an ensemble needs at least two members, got {len(members)}")
    models = [onnx.load(str(p)) for p in members]
    first = models[0]
    input_name = first.graph.input[0].name
    opsets = {(o.domain, o.version) for o in first.opset_import}
    nodes, initializers, terms = [], [], []
    for k, (path, model) in enumerate(zip(members, models)):
        if [i.name for i in model.graph.input] != [input_name] or {(o.domain, o.version) for o in model.opset_import} != opsets:
            raise ValueError(f"{path}: its input or opset differs from {members[0]}'s; train the members alike")
        prefixed = compose.add_prefix(model, f"m{k}_")
        graph = prefixed.graph
        for node in graph.node:
            node.input[:] = [input_name if name == f"m{k}_{input_name}" else name for name in node.input]
        nodes.extend(graph.node)
        initializers.extend(graph.initializer)
        member_out = graph.output[0].name
        nodes.append(helper.make_node("LogSoftmax", [member_out], [f"m{k}_logp"], axis=1, name=f"m{k}_logsoftmax"))
        terms.append(f"m{k}_logp")
    initializers.append(numpy_helper.from_array(np.array(1.0 / len(members), np.float32), "ensemble_weight"))
    nodes.append(helper.make_node("Sum", terms, ["ensemble_sum"], name="ensemble_sum"))
    nodes.append(helper.make_node("Mul", ["ensemble_sum", "ensemble_weight"], ["logits"], name="ensemble_mean"))
    out_info = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["n", first.graph.output[0].type.tensor_type.shape.dim[1].dim_value])
    graph = helper.make_graph(nodes, "face_reader_ensemble", [first.graph.input[0]], [out_info], initializers)
    merged = helper.make_model(graph, opset_imports=list(first.opset_import), producer_name="vision.training.ensemble")
    merged.ir_version = first.ir_version
    onnx.checker.check_model(merged)
    onnx.save(merged, str(out))


def main(argv: list[str] | None = None) -> int:
    """Command line: merge the members into OUT; prints the size in bytes."""
    p = argparse.ArgumentParser(prog="python -m vision.training.ensemble", description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path, help="the merged ONNX model to write")
    p.add_argument("members", type=Path, nargs="+", help="face-reader ONNX models trained alike (different seeds)")
    args = p.parse_args(argv)
    missing = [str(m) for m in args.members if not m.is_file()]
    if missing:
        print(f"ensemble: error: no model at {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        merge_face_readers(args.members, args.out)
    except ValueError as err:
        print(f"ensemble: error: {err}", file=sys.stderr)
        return 2
    print(f"{args.out}: {len(args.members)} members, {args.out.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
