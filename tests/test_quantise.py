"""vision.lab.training.quantise.

Int8 face readers and pip finders that follow their float networks, in both runtimes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="onnx (the test or train extra) is needed to build and quantise models")
pytest.importorskip("onnxruntime", reason="onnxruntime does the quantising")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from vision.face import CLASS_NAMES, CROP_SIZE, FaceReader  # noqa: E402
from vision.lab.training.quantise import float_layers, main, quantise  # noqa: E402
from vision.lab.training.synth import fixed_probe_crops, plain_face  # noqa: E402
from vision.pips import PipFinder  # noqa: E402


def _save(path: Path, nodes: list, out_shape: list, weights: dict[str, np.ndarray], meta: dict) -> Path:
    graph = helper.make_graph(
        nodes,
        "tiny",
        [helper.make_tensor_value_info("crops", TensorProto.FLOAT, ["n", 3, CROP_SIZE, CROP_SIZE])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, out_shape)],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    path.with_suffix(".json").write_text(json.dumps(meta), encoding="utf-8")
    return path


def _face_reader(path: Path) -> Path:
    """A face-reader-shaped model: two convolutions, pooling, a classifier; (N, 3, 64, 64) -> (N, 7) logits."""
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("Conv", ["crops", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fc", "fb"], ["out"], transB=1),
    ]
    weights = {
        "w1": rng.normal(0, 0.4, (16, 3, 3, 3)),
        "b1": rng.normal(0, 0.1, 16),
        "w2": rng.normal(0, 0.2, (32, 16, 3, 3)),
        "b2": rng.normal(0, 0.1, 32),
        "fc": rng.normal(0, 1.0, (7, 32)),
        "fb": rng.normal(0, 0.1, 7),
    }
    return _save(
        path,
        nodes,
        ["n", 7],
        weights,
        {
            "model": "face_reader.onnx",
            "crop_size": CROP_SIZE,
            "class_names": list(CLASS_NAMES),
            "command": "train it",
            "export_max_abs_diff_cv2_vs_torch": 1e-6,
        },
    )


def _pip_finder(path: Path) -> Path:
    """A pip-finder-shaped model: (N, 3, 64, 64) -> two convolutions -> sigmoid -> (N, 1, 32, 32)."""
    rng = np.random.default_rng(1)
    nodes = [
        helper.make_node("Conv", ["crops", "w1", "b1"], ["c1"], name="stem", pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="head", pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["c2"], ["out"], name="prob"),
    ]
    weights = {
        "w1": rng.normal(0, 0.4, (8, 3, 3, 3)),
        "b1": rng.normal(0, 0.1, 8),
        "w2": rng.normal(0, 0.3, (1, 8, 3, 3)),
        "b2": np.array([-1.0]),
    }
    return _save(path, nodes, ["n", 1, 32, 32], weights, {"model": "pip_finder.onnx", "command": "train it"})


def _crops(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    faces = [plain_face(int(v), angle_deg=float(a)) for v, a in zip(rng.integers(1, 7, n), rng.uniform(0, 90, n))]
    return np.stack(faces).astype(np.uint8)


def test_quantised_face_reader_follows_the_float_one_in_both_runtimes(tmp_path, monkeypatch):
    src = _face_reader(tmp_path / "float" / "face_reader.onnx")
    meta = quantise(src, tmp_path / "int8", _crops(48, 0), _crops(32, 1), command="quantise it")
    out = tmp_path / "int8" / "face_reader.onnx"
    ops = [n.op_type for n in onnx.load(str(out)).graph.node]
    assert ops.count("QLinearConv") == 1 and ops.count("Conv") == 1  # the first convolution stays float
    assert meta["quantisation"]["float_layers"] == ["conv1"] == float_layers(src)
    assert json.loads(out.with_suffix(".json").read_text()) == meta
    assert meta["command"] == "train it" and meta["quantisation"]["command"] == "quantise it"
    assert meta["quantisation"]["float_model"]["export_max_abs_diff_cv2_vs_torch"] == 1e-6
    assert "export_max_abs_diff_cv2_vs_torch" not in meta
    crops = _crops(24, 2)
    full, int8 = FaceReader(src).predict(crops), FaceReader(out).predict(crops)
    assert np.abs(full - int8).max() < 0.05 and not np.array_equal(full, int8)
    agreement = meta["quantisation"]["agreement_with_float"]
    assert agreement["crops"] == 32 and 0 <= agreement["max_abs_prob_change"] < 0.05
    probes, names = fixed_probe_crops()
    answers = FaceReader(out).predict(probes)
    assert [meta["fixed_probes"][n]["top"] for n in names] == [int(p.argmax()) for p in answers]
    monkeypatch.setenv("DICETABLE_ONNX_BACKEND", "opencv")  # OpenCV's dnn runs the QOperator graph too
    assert np.abs(FaceReader(out).predict(crops) - int8).max() < 0.05


def test_quantised_pip_finder_keeps_its_sigmoid_float(tmp_path):
    src = _pip_finder(tmp_path / "pip_finder.onnx")
    meta = quantise(src, tmp_path / "int8", _crops(48, 0), _crops(16, 1))
    out = tmp_path / "int8" / "pip_finder.onnx"
    ops = [n.op_type for n in onnx.load(str(out)).graph.node]
    assert "Sigmoid" in ops and "QLinearSigmoid" not in ops and "QLinearConv" in ops
    assert meta["quantisation"]["float_layers"] == ["stem", "prob"]
    maps, full = PipFinder(out).predict(_crops(8, 3)), PipFinder(src).predict(_crops(8, 3))
    assert maps.shape == (8, CROP_SIZE, CROP_SIZE) and np.abs(maps - full).max() < 0.1
    assert set(meta["fixed_probes"]["plain_3_rot0"]) == {"layouts", "pip_pixels"}
    assert (
        meta["quantisation"]["agreement_with_float"]["pixels"] == 16 * CROP_SIZE * CROP_SIZE
    )  # the maps the reader reads


def test_what_cannot_be_quantised_says_why(tmp_path):
    src = _face_reader(tmp_path / "face_reader.onnx")
    crops = _crops(8, 0)
    quantise(src, tmp_path / "int8", crops, crops)
    with pytest.raises(ValueError, match="quantised already"):
        quantise(tmp_path / "int8" / "face_reader.onnx", tmp_path / "again", crops, crops)
    meta = json.loads(src.with_suffix(".json").read_text())
    src.with_suffix(".json").write_text(json.dumps({**meta, "cascade": {"second": "x.onnx"}}))
    with pytest.raises(ValueError, match="cascade"):
        quantise(src, tmp_path / "c", crops, crops)
    src.with_suffix(".json").write_text(json.dumps({**meta, "model": "die_detector"}))
    with pytest.raises(ValueError, match="only face_reader.onnx and pip_finder.onnx"):
        quantise(src, tmp_path / "d", crops, crops)
    src.with_suffix(".json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="calibration crops"):
        quantise(src, tmp_path / "f", crops[:0], crops)
    src.with_suffix(".json").unlink()
    with pytest.raises(FileNotFoundError, match="training record"):
        quantise(src, tmp_path / "e", crops, crops)


def test_command_refuses_a_quantised_model_before_gathering_crops(tmp_path, capsys):
    src = _face_reader(tmp_path / "face_reader.onnx")
    quantise(src, tmp_path / "int8", _crops(8, 0), _crops(8, 1))
    # no TRAIN set here either: the model's own fault is what gets reported
    assert (
        main(
            [
                str(tmp_path / "int8" / "face_reader.onnx"),
                "--out",
                str(tmp_path / "again"),
                "--train-dir",
                str(tmp_path / "no_train"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "quantised already" in err and "TRAIN" not in err


def test_command_without_the_train_set_says_where_crops_come_from(tmp_path, capsys):
    src = _face_reader(tmp_path / "face_reader.onnx")
    assert main([str(src), "--out", str(tmp_path / "int8"), "--train-dir", str(tmp_path / "no_train")]) == 2
    assert "no TRAIN set" in capsys.readouterr().err
    assert not (tmp_path / "int8" / "face_reader.onnx").exists()
