"""Combine face readers trained alike from different seeds: one merged ONNX model, or a cascade.

Networks trained alike from different random seeds make different mistakes;
averaging their answers is more accurate and better calibrated than any one of
them (Lakshminarayanan, Pritzel and Blundell, "Simple and Scalable Predictive
Uncertainty Estimation using Deep Ensembles", NeurIPS 2017). The merged graph
takes the members' common input ``crops`` (N, 3, S, S) and outputs ``logits``
(N, 7): the mean of the members' log-softmax outputs. :class:`vision.face.FaceReader`
applies softmax to it as to any face reader, which gives the normalised
geometric mean of the members' probabilities, so nothing changes at read time
but the model file.

A merged model costs every member's time on every crop. A **cascade** of two
members (``--consult-below P``) costs the second member's time only on the
crops where the first is unsure (top probability below ``P``): the two files
are copied side by side (``OUT.onnx``, ``OUT_2.onnx``) and ``OUT.json`` gets a
``"cascade"`` entry that :class:`vision.face.FaceReader` follows (Wang et al.,
"Wisdom of Committees", ICLR 2022).

Usage::

    python -m vision.lab.training.ensemble OUT.onnx MEMBER.onnx MEMBER.onnx [...]
    python -m vision.lab.training.ensemble --consult-below 0.9 OUT.onnx FIRST.onnx SECOND.onnx

writes the merged model (or the cascade's two files) and ``OUT.json`` (the
members' training records, the fixed probes answered by the combined reader,
its DEV crop accuracy).

Needs the ``train`` extra (``onnx``); nothing here runs when dice are read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

__all__ = ["merge_face_readers", "second_path", "write_cascade", "write_metadata", "main"]


def _load_alike(members: list[Path]) -> list:
    """Load `members` with onnx; ValueError unless two or more, with the same input name and opsets."""
    import onnx

    if len(members) < 2:
        raise ValueError(f"an ensemble needs at least two members, got {len(members)}")
    models = [onnx.load(str(p)) for p in members]
    input_names = [i.name for i in models[0].graph.input]
    opsets = {(o.domain, o.version) for o in models[0].opset_import}
    for path, model in zip(members, models):
        if [i.name for i in model.graph.input] != input_names or {
            (o.domain, o.version) for o in model.opset_import
        } != opsets:
            raise ValueError(f"{path}: its input or opset differs from {members[0]}'s; train the members alike")
    return models


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

    models = _load_alike(members)
    first = models[0]
    input_name = first.graph.input[0].name
    nodes, initializers, terms = [], [], []
    for k, model in enumerate(models):
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
    out_info = helper.make_tensor_value_info(
        "logits", TensorProto.FLOAT, ["n", first.graph.output[0].type.tensor_type.shape.dim[1].dim_value]
    )
    graph = helper.make_graph(nodes, "face_reader_ensemble", [first.graph.input[0]], [out_info], initializers)
    merged = helper.make_model(
        graph, opset_imports=list(first.opset_import), producer_name="vision.lab.training.ensemble"
    )
    merged.ir_version = first.ir_version
    onnx.checker.check_model(merged)
    onnx.save(merged, str(out))


def second_path(out: Path) -> Path:
    """Where a cascade written to `out` keeps its second network: ``OUT_2.onnx`` beside it."""
    return out.with_name(f"{out.stem}_2{out.suffix}")


def write_cascade(members: list[Path], out: Path) -> None:
    """Copy a cascade's two networks to `out` and :func:`second_path` (`out`).

    Parameters
    ----------
    members : list of Path
        Exactly two face-reader ONNX files trained alike: the first, read on
        every crop, and the second, consulted where the first is unsure.
    out : Path
        Where the first network goes; the second goes to ``OUT_2.onnx``.

    Raises
    ------
    ValueError
        If not exactly two members are given, or their input names or opsets differ.
    """
    import shutil

    if len(members) != 2:
        raise ValueError(f"a cascade has two members (the first and the one it consults), got {len(members)}")
    _load_alike(members)
    shutil.copyfile(members[0], out)
    shutil.copyfile(members[1], second_path(out))


def write_metadata(
    members: list[Path], out: Path, command: str, dev_dir: Path | None, consult_below: float | None = None
) -> dict:
    """Write ``OUT.json`` beside the combined model: the first member's description, the members' records, fresh probes.

    Parameters
    ----------
    members : list of Path
        The member ONNX files; each must have its training JSON beside it
        (same stem, as ``train_face`` writes it).
    out : Path
        The combined model, already written (by :func:`merge_face_readers`
        or :func:`write_cascade`).
    command : str
        The command that made the ensemble, recorded.
    dev_dir : Path or None
        A DEV folder to measure the combined reader's crop accuracy on
        (:func:`vision.lab.training.evaluate.evaluate`), or None.
    consult_below : float or None
        For a cascade (written by :func:`write_cascade`), the first network's
        top probability under which the second is consulted; None for a
        merged model.

    Returns
    -------
    dict
        The metadata written.

    Raises
    ------
    FileNotFoundError
        If a member has no JSON beside it.
    vision.face.FaceModelError
        If the combined model does not load as a face reader (e.g. a
        cascade's second file is missing); ``OUT.json`` is then removed
        rather than left half-written.
    """
    import json

    from vision.face import FaceReader
    from vision.lab.training.evaluate import face_probe_answers

    records = []
    for path in members:
        meta_path = path.with_suffix(".json")
        if not meta_path.is_file():
            raise FileNotFoundError(
                f"{meta_path}: a member's training record is missing; "
                "merge models written by python -m vision.lab.training.train_face"
            )
        records.append(json.loads(meta_path.read_text(encoding="utf-8")))
    keep = ("crop_size", "crop_margin", "class_names", "preprocessing", "architecture", "training_data")
    meta: dict = {k: records[0][k] for k in keep if k in records[0]}
    meta["model"] = out.name
    if consult_below is None:
        kind = f"ensemble of {len(records)} networks trained alike"
        meta["output"] = (
            "mean over the members of log-softmax(logits); FaceReader applies softmax, which gives "
            "the normalised geometric mean of the members' probabilities"
        )
    else:
        kind = (
            f"cascade of 2 networks trained alike, the second ({second_path(out).name}) consulted where the "
            f"first's top probability is below {consult_below}"
        )
        meta["output"] = (
            "logits of the first network; where FaceReader consults the second, the mean of the two "
            "log-softmax outputs, renormalised"
        )
        meta["cascade"] = {"second": second_path(out).name, "consult_below": float(consult_below)}
    if "architecture" in meta:
        meta["architecture"] = f"{kind}, each: {meta['architecture']}"
    meta["n_params"] = sum(int(r.get("n_params", 0)) for r in records)
    meta["command"] = command
    meta["members"] = [
        {k: r.get(k) for k in ("command", "n_params", "training", "weights_storage", "dev_metrics")} for r in records
    ]
    meta_path = out.with_suffix(".json")
    meta_path.write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")  # FaceReader reads the cascade from it
    try:
        reader = FaceReader(out)
        meta["fixed_probes"] = face_probe_answers(reader)
        if dev_dir is not None and Path(dev_dir).is_dir():
            from vision.lab.training.evaluate import dev_crops, evaluate

            meta["dev_metrics"] = evaluate(reader, dev_crops(Path(dev_dir)))
    except BaseException:
        meta_path.unlink(missing_ok=True)
        raise
    meta_path.write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return meta


def _output_problem(members: list[Path], out: Path, cascade: bool, no_metadata: bool) -> str | None:
    """Why writing to `out` would spoil an input or leave a wrong description; None when it is safe."""
    written = [out, *([second_path(out)] if cascade else []), *([] if no_metadata else [out.with_suffix(".json")])]
    read = [*members, *(m.with_suffix(".json") for m in members)]
    clash = [str(w) for w in written if any(w.resolve() == r.resolve() for r in read)]
    if clash:
        return (
            f"{', '.join(clash)} would overwrite a member or its training record; choose an OUT apart from the members"
        )
    if no_metadata and out.with_suffix(".json").exists():
        return (
            f"{out.with_suffix('.json')} exists and would then describe another model (a face reader reads it "
            "as the model's metadata); remove it, or drop --no-metadata"
        )
    return None


def main(argv: list[str] | None = None) -> int:
    """Command line: merge the members into OUT, or write them as a cascade (and OUT.json); prints the size in bytes."""
    p = argparse.ArgumentParser(prog="python -m vision.lab.training.ensemble", description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path, help="the ONNX model to write (a cascade also writes OUT_2.onnx beside it)")
    p.add_argument("members", type=Path, nargs="+", help="face-reader ONNX models trained alike (different seeds)")
    p.add_argument(
        "--dev-dir",
        type=Path,
        default=None,
        help="DEV folder to measure the combined reader on (default ../shared/dice-images/dev when present)",
    )
    p.add_argument("--no-metadata", action="store_true", help="write the model only, no OUT.json")
    p.add_argument(
        "--consult-below",
        type=float,
        default=None,
        metavar="P",
        help="write a cascade of exactly two members instead of merging them: the second network is "
        "consulted where the first's top probability is below P (0 < P <= 1)",
    )
    args = p.parse_args(argv)
    cascade = args.consult_below is not None
    if cascade and not 0.0 < args.consult_below <= 1.0:
        print(f"ensemble: error: --consult-below must be in (0, 1], got {args.consult_below}", file=sys.stderr)
        return 2
    if cascade and args.no_metadata:
        print("ensemble: error: a cascade lives in OUT.json; drop --no-metadata", file=sys.stderr)
        return 2
    missing = [str(m) for m in args.members if not m.is_file()]
    if missing:
        print(f"ensemble: error: no model at {', '.join(missing)}", file=sys.stderr)
        return 2
    problem = _output_problem(args.members, args.out, cascade, args.no_metadata)
    if problem:
        print(f"ensemble: error: {problem}", file=sys.stderr)
        return 2
    try:
        (write_cascade if cascade else merge_face_readers)(args.members, args.out)
    except ValueError as err:
        print(f"ensemble: error: {err}", file=sys.stderr)
        return 2
    if not args.no_metadata:
        from vision.lab.training.data import recorded_command
        from vision.lab.training.evaluate import DEFAULT_DEV_DIR

        try:
            write_metadata(
                args.members,
                args.out,
                recorded_command("vision.lab.training.ensemble", argv),
                args.dev_dir or DEFAULT_DEV_DIR,
                args.consult_below,
            )
        except OSError as err:  # a missing training record, or the result does not load (FaceModelError)
            print(f"ensemble: error: {err}", file=sys.stderr)
            return 2
    size = args.out.stat().st_size + (second_path(args.out).stat().st_size if cascade else 0)
    print(f"{args.out}: {'a cascade of 2' if cascade else len(args.members)} members, {size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
