"""Quantise a trained face reader or pip finder to 8-bit integers, for faster reading on one core.

Usage::

    pip install -e .[train]          # onnx, needed by onnxruntime.quantization
    python -m vision.lab.training.quantise FOLDER/face_reader.onnx --out vision/models
    python -m vision.lab.training.quantise FOLDER/pip_finder.onnx --out vision/models

Static post-training quantisation (Jacob et al., "Quantization and Training of
Neural Networks for Efficient Integer-Arithmetic-Only Inference", CVPR 2018),
as ``onnxruntime.quantization.quantize_static`` does it:

- every layer onnxruntime can quantise is quantised (convolutions with their
  ReLUs, pooling, concatenation, the classifier), **except**
  :func:`float_layers`: the first convolution, which reads the standardised
  pixels themselves (quantised, it changed the face reader's top class on 25
  of 1024 TRAIN crops, 4 with it float, and moved the 99th percentile of the
  probability change from 0.019 to 0.29), and any sigmoid (OpenCV's ``dnn``
  reads a quantised sigmoid as zeros). Weights are int8 with one scale per
  output channel; activations uint8, their ranges set on calibration crops at
  the :data:`CALIBRATION_PERCENTILE` percentile so that a few outliers do not
  waste the range.
- the **QOperator** format (``QLinearConv`` nodes) runs in onnxruntime and
  in OpenCV's ``dnn`` module alike (the QDQ format does not load in
  ``cv2.dnn`` 5.0).
- **calibration crops** come from the TRAIN set (``../shared/dice-images/train``,
  the face reader's crop cache), never from DEV, so DEV stays a measurement.

The command measures how closely the quantised network follows the float one
on other TRAIN crops (not the calibration ones) and records it in the JSON
beside the model (``"quantisation"``), with the float model's SHA-256 and size
and the fixed probes' answers re-recorded from the quantised network.

Through the reader the median DEV photo takes 0.85-0.87 of the float
networks' time (``benchmarks/speed.py --against FLOAT_DIR``) and the files
shrink from 4.4 MB to 1.2 MB. The die detector stays float: quantised the
same way it took 6.5 against 6.7 ms. The measurements, dated, are in
``docs/training.md`` ("Quantising").

Nothing here runs when dice are read; the quantised model is loaded like any other.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

__all__ = ["CALIBRATION_PERCENTILE", "float_layers", "quantise", "train_crops", "training_record", "main"]

#: Percentile of each activation's magnitudes that sets its uint8 range.
CALIBRATION_PERCENTILE: float = 99.99
#: Networks this command knows, by the ``"model"`` field of their JSON.
KINDS = ("face_reader.onnx", "pip_finder.onnx")


def float_layers(model: Path) -> list[str]:
    """Names of the nodes :func:`quantise` leaves in float: the first convolution and every sigmoid.

    Parameters
    ----------
    model : Path
        An ONNX model.

    Returns
    -------
    list of str
        Node names, in graph order.
    """
    import onnx

    nodes = onnx.load(str(model)).graph.node
    first_conv = next((n.name for n in nodes if n.op_type == "Conv"), None)
    return [n.name for n in nodes if n.name == first_conv or n.op_type == "Sigmoid"]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _network(kind: str, path: Path):
    """The project's reader of a face-reader or pip-finder file.

    It is :class:`vision.face.FaceReader` or :class:`vision.pips.PipFinder`.
    """
    from vision.face import FaceReader
    from vision.pips import PipFinder

    return FaceReader(path) if kind == "face_reader.onnx" else PipFinder(path)


def _agreement(kind: str, float_path: Path, int8_path: Path, crops: np.ndarray) -> dict:
    """How closely the quantised network follows the float one.

    `crops` is (N, 64, 64, 3) uint8, as the reader reads them.
    """
    a, b = _network(kind, float_path).predict(crops), _network(kind, int8_path).predict(crops)
    if kind == "face_reader.onnx":
        diff = np.abs(a - b).max(axis=1)
        return {
            "crops": int(len(crops)),
            "top_class_changed": int((a.argmax(1) != b.argmax(1)).sum()),
            "max_abs_prob_change": round(float(diff.max()), 4),
            "p99_abs_prob_change": round(float(np.quantile(diff, 0.99)), 4),
        }
    from vision.face import DEFAULT_MARGIN
    from vision.pips import layouts_on_map

    same = [layouts_on_map(x, DEFAULT_MARGIN) == layouts_on_map(y, DEFAULT_MARGIN) for x, y in zip(a, b)]
    return {
        "crops": int(len(crops)),
        "layouts_changed": int(len(same) - sum(same)),
        "pixels_flipped_at_0.5": int(((a >= 0.5) != (b >= 0.5)).sum()),
        "pixels": int(a.size),
        "mean_abs_change": round(float(np.abs(a - b).mean()), 5),
    }


def training_record(model: Path) -> dict:
    """The JSON beside a float face reader or pip finder that :func:`quantise` can take.

    Raises
    ------
    FileNotFoundError
        If the model or its JSON is missing.
    ValueError
        If the model is not a face reader or pip finder, is a cascade, or is quantised already.
    """
    model = Path(model)
    meta_path = model.with_suffix(".json")
    if not model.is_file() or not meta_path.is_file():
        raise FileNotFoundError(
            f"{model} or its training record {meta_path.name} is missing: "
            "quantise the output folder of vision.lab.training.train_face or train_pips"
        )
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    kind = meta.get("model")
    if kind not in KINDS:
        raise ValueError(f"{meta_path} describes {kind!r}; only {' and '.join(KINDS)} can be quantised")
    if "cascade" in meta:
        raise ValueError(f"{model} is a cascade of two networks; quantise each member before writing the cascade")
    if "quantisation" in meta:
        raise ValueError(
            f'{model} is quantised already (see "quantisation" in {meta_path.name}); '
            "quantise the float model the trainer wrote"
        )
    return meta


def quantise(model: Path, out_dir: Path, calibration: np.ndarray, check: np.ndarray, *, command: str = "") -> dict:
    """Write the int8 version of a face reader or pip finder, and its JSON, to `out_dir`.

    Parameters
    ----------
    model : Path
        A float ``face_reader.onnx`` or ``pip_finder.onnx`` with its JSON beside
        it (as :mod:`vision.lab.training.train_face` and :mod:`vision.lab.training.train_pips` write them).
    out_dir : Path
        Folder for the quantised model, under the same file name, and its JSON
        (may be the model's own folder: the float model is then replaced).
    calibration : ndarray of shape (N, 64, 64, 3), dtype uint8
        BGR die crops (:func:`vision.face.crop_die`) whose activations set the uint8 ranges.
    check : ndarray of shape (M, 64, 64, 3), dtype uint8
        Other crops on which the agreement with the float model is measured.
    command : str, optional
        The command line, recorded in the JSON.

    Returns
    -------
    dict
        The JSON written: the float model's, with ``"quantisation"`` added and
        ``"fixed_probes"`` re-recorded from the quantised network.

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`training_record` says; ValueError also when either crop array is empty.
    """
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    from vision.face import preprocess
    from vision.lab.training.evaluate import face_probe_answers, pip_probe_answers

    model = Path(model)
    meta = training_record(model)
    kind = meta["model"]
    if not len(calibration) or not len(check):
        raise ValueError(
            "quantising needs calibration crops and other crops to check the result on; got "
            f"{len(calibration)} and {len(check)}"
        )
    blobs = preprocess(calibration)

    class _Crops(CalibrationDataReader):
        def __init__(self) -> None:
            # one crop per run: the percentile calibrator stacks each run's activations, so all must be one shape
            self._batches = iter([{"crops": blobs[i : i + 1]} for i in range(len(blobs))])

        def get_next(self) -> dict | None:
            return next(self._batches, None)

    kept_float = float_layers(model)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        float_copy = Path(tmp) / model.name
        shutil.copyfile(model, float_copy)
        int8 = Path(tmp) / "int8.onnx"
        # onnxruntime prints its calibration steps and suggests a pre-processing pass (shape inference,
        # which changes nothing for these fixed-shape networks); the caller reports what matters
        with contextlib.redirect_stdout(io.StringIO()), _quiet_root_logger():
            quantize_static(
                str(float_copy),
                str(int8),
                _Crops(),
                quant_format=QuantFormat.QOperator,
                nodes_to_exclude=kept_float,
                per_channel=True,
                weight_type=QuantType.QInt8,
                activation_type=QuantType.QUInt8,
                calibrate_method=CalibrationMethod.Percentile,
                extra_options={"CalibPercentile": CALIBRATION_PERCENTILE},
            )
        agreement = _agreement(kind, float_copy, int8, check)
        probes = face_probe_answers if kind == "face_reader.onnx" else pip_probe_answers
        meta["fixed_probes"] = probes(_network(kind, int8))
        float_diff = meta.pop("export_max_abs_diff_cv2_vs_torch", None)
        meta["quantisation"] = {
            "method": (
                f"onnxruntime.quantization.quantize_static, QOperator format: int8 weights per output "
                f"channel, uint8 activations at the {CALIBRATION_PERCENTILE} percentile of "
                f"{len(calibration)} calibration crops"
            ),
            "float_layers": kept_float,
            "calibration_crops": int(len(calibration)),
            "agreement_with_float": agreement,
            "float_model": {
                "sha256": _sha256(float_copy),
                "bytes": float_copy.stat().st_size,
                "export_max_abs_diff_cv2_vs_torch": float_diff,
            },
            "command": command,
            "note": "the other measurements in this file (DEV metrics, layout agreement, ...) are the float model's",
        }
        target = out_dir / model.name
        shutil.copyfile(int8, target)
    meta["weights_storage"] = 'int8 (per output channel), but the float layers under "quantisation"'
    target.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return meta


@contextlib.contextmanager
def _quiet_root_logger():
    """Silence the root logger's warnings (onnxruntime.quantization logs through it) for a while."""
    import logging

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)


def train_crops(n: int, seed: int, cache_dir: Path | None = None, train_dir: Path | None = None) -> np.ndarray:
    """`n` die crops (not class 0) from the TRAIN set's crop cache, drawn with `seed`.

    Returns
    -------
    ndarray of shape (n, 64, 64, 3), dtype uint8
        Nominal crops (:func:`vision.lab.training.augment.centre_crop` of the context crops).

    Raises
    ------
    FileNotFoundError
        If the TRAIN set is absent (the cache is built from it on first use).
    """
    from vision.lab.training.augment import centre_crop
    from vision.lab.training.data import DEFAULT_CACHE_DIR, DEFAULT_TRAIN_DIR, load_cache

    train_dir = Path(train_dir or DEFAULT_TRAIN_DIR)
    if not (train_dir / "labels.json").is_file():
        raise FileNotFoundError(f"no TRAIN set at {train_dir}: calibration crops come from ../shared/dice-images/train")
    crops, labels, _ = load_cache(train_dir, cache_dir or DEFAULT_CACHE_DIR, seed=0)
    dice = np.flatnonzero(labels > 0)
    pick = np.random.default_rng(seed).choice(dice, size=min(n, len(dice)), replace=False)
    return np.stack([centre_crop(crops[i]) for i in pick])


def main(argv: list[str] | None = None) -> int:
    from vision.lab.training.data import DEFAULT_CACHE_DIR, DEFAULT_TRAIN_DIR, recorded_command

    p = argparse.ArgumentParser(
        prog="python -m vision.lab.training.quantise",
        description="Quantise a trained face reader or pip finder to int8 (see module docs).",
    )
    p.add_argument("model", type=Path, help="a float face_reader.onnx or pip_finder.onnx, with its JSON beside it")
    p.add_argument("--out", type=Path, required=True, help="folder for the quantised model and its JSON")
    p.add_argument("--calibration", type=int, default=512, help="TRAIN crops that set the ranges (default 512)")
    p.add_argument("--check", type=int, default=1024, help="other TRAIN crops the agreement is measured on")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--train-dir", type=Path, default=DEFAULT_TRAIN_DIR)
    p.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR)
    args = p.parse_args(argv)
    try:
        training_record(args.model)  # say what is wrong with the model before the crops are gathered
        print(
            f"quantising {args.model}: {args.calibration} TRAIN crops set the ranges, "
            f"{args.check} others check the result",
            flush=True,
        )
        crops = train_crops(args.calibration + args.check, args.seed, args.cache_dir, args.train_dir)
        meta = quantise(
            args.model,
            args.out,
            crops[: args.calibration],
            crops[args.calibration :],
            command=recorded_command("vision.lab.training.quantise", argv),
        )
    except (FileNotFoundError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    q = meta["quantisation"]
    size = (args.out / args.model.name).stat().st_size
    print(
        f"wrote {args.out / args.model.name} ({size} bytes, float {q['float_model']['bytes']}); "
        f"against the float model on {args.check} other TRAIN crops: {q['agreement_with_float']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
