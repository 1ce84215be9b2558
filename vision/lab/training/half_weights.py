"""Store an ONNX model's weights as float16, halving its file, with the arithmetic kept in float32.

The package ships at most 5 MB of weights (issue #7). Each float32 weight
tensor (initializer) with more than :data:`MIN_ELEMENTS` elements is stored as
float16 and followed by a ``Cast`` node back to float32 under its old name, so
the graph is valid ONNX (``onnx.checker``) and every operator still computes in
float32. OpenCV's ``dnn`` module folds the casts when it loads the model, so
reading is as fast as before. Rounding to float16 (11 significant bits)
changes a face reader's logits by about 1e-3; the caller measures the change
(see :func:`store_half_weights`) and the training commands report it.

Usage::

    python -m vision.lab.training.half_weights vision/models/face_reader.onnx [OUT.onnx]

Needs the ``train`` extra (``onnx``); nothing here runs when dice are read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

__all__ = ["MIN_ELEMENTS", "store_half_weights", "main"]

#: Weight tensors this small (biases of a few channels, shape constants) are
#: left in float32: halving them saves nothing worth a Cast node.
MIN_ELEMENTS: int = 16


def store_half_weights(src: Path, dst: Path) -> int:
    """Write `src` to `dst` with its float32 weight tensors stored as float16.

    Parameters
    ----------
    src : Path
        An ONNX model whose initializers are float32 (as ``torch.onnx.export`` writes them).
    dst : Path
        Where to write the converted model (may be `src`).

    Returns
    -------
    int
        The number of weight tensors converted (0 when `src` has none left in float32,
        for instance when it was converted already: the conversion is idempotent).

    Raises
    ------
    ValueError
        If a weight holds values beyond float16's range (65504), which would
        become infinite.
    onnx.checker.ValidationError
        If the converted graph is not valid ONNX.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(src))
    casts = []
    for tensor in model.graph.initializer:
        if tensor.data_type != TensorProto.FLOAT or int(np.prod(tensor.dims)) <= MIN_ELEMENTS:
            continue
        weights = numpy_helper.to_array(tensor)
        if np.abs(weights).max(initial=0.0) > np.finfo(np.float16).max:
            raise ValueError(f"{src}: weight {tensor.name!r} exceeds float16's range; keep this model in float32")
        name = tensor.name
        tensor.CopyFrom(numpy_helper.from_array(weights.astype(np.float16), f"{name}_fp16"))
        casts.append(helper.make_node("Cast", [f"{name}_fp16"], [name], to=TensorProto.FLOAT, name=f"{name}_to_fp32"))
    nodes = list(model.graph.node)
    del model.graph.node[:]
    model.graph.node.extend(casts + nodes)
    onnx.checker.check_model(model)
    onnx.save(model, str(dst))
    return len(casts)


def main(argv: list[str] | None = None) -> int:
    """Command line: convert a model in place or to a new file; prints sizes in bytes."""
    p = argparse.ArgumentParser(prog="python -m vision.lab.training.half_weights", description=__doc__.splitlines()[0])
    p.add_argument("model", type=Path, help="ONNX model to convert")
    p.add_argument("out", type=Path, nargs="?", help="where to write it (default: in place)")
    args = p.parse_args(argv)
    if not args.model.is_file():
        print(f"half_weights: error: no model at {args.model}", file=sys.stderr)
        return 2
    before = args.model.stat().st_size
    out = args.out or args.model
    n = store_half_weights(args.model, out)
    print(f"{out}: {n} weight tensors stored as float16, {before} -> {out.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
