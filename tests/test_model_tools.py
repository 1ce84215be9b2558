"""Tools that rewrite the shipped ONNX models (float16 weights, ensembles).

Valid graphs, the same answers in both runtimes.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="onnx (the test extra) is needed to build and check ONNX graphs")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from vision.lab.training.half_weights import MIN_ELEMENTS, main, store_half_weights  # noqa: E402

MODELS = Path(__file__).resolve().parents[1] / "vision" / "models"


def _conv_model(path: Path, weights: np.ndarray, bias: np.ndarray) -> None:
    """A one-layer ONNX model: Conv 3x3 (weights (C_out, 3, 3, 3)) then Relu, input (N, 3, 8, 8)."""
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"])],
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", weights.shape[0], 8, 8])],
        [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(bias, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))


def _run_cv2(path: Path, x: np.ndarray) -> np.ndarray:
    net = cv2.dnn.readNetFromONNX(str(path))
    net.setInput(x)
    return net.forward()


@pytest.fixture
def conv_pair(tmp_path):
    rng = np.random.default_rng(0)
    src, dst = tmp_path / "full.onnx", tmp_path / "half.onnx"
    # MIN_ELEMENTS output channels: as many biases (left in float32) and 27 times as many weights (halved)
    _conv_model(
        src,
        rng.normal(0, 0.5, (MIN_ELEMENTS, 3, 3, 3)).astype(np.float32),
        rng.normal(0, 0.1, MIN_ELEMENTS).astype(np.float32),
    )
    return src, dst, rng.normal(size=(2, 3, 8, 8)).astype(np.float32)


def test_big_weights_become_float16_and_small_ones_stay(conv_pair):
    src, dst, _ = conv_pair
    assert store_half_weights(src, dst) == 1  # the weights; the biases, MIN_ELEMENTS of them, stay float32
    model = onnx.load(str(dst))
    kinds = {t.name: t.data_type for t in model.graph.initializer}
    assert kinds == {"w_fp16": TensorProto.FLOAT16, "b": TensorProto.FLOAT}
    assert [n.op_type for n in model.graph.node] == ["Cast", "Conv", "Relu"]
    onnx.checker.check_model(model, full_check=True)  # types agree: the Conv still sees float32


def test_answers_change_only_by_float16_rounding_in_both_runtimes(conv_pair):
    src, dst, x = conv_pair
    store_half_weights(src, dst)
    full, half = _run_cv2(src, x), _run_cv2(dst, x)
    assert full.shape == half.shape == (2, MIN_ELEMENTS, 8, 8)
    assert 0 < np.abs(full - half).max() < 5e-3
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(str(dst), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, {"x": x})[0], half, atol=1e-5)


def test_conversion_is_idempotent_and_the_command_converts_in_place(conv_pair, capsys):
    src, dst, x = conv_pair
    store_half_weights(src, dst)
    once = dst.read_bytes()
    before = _run_cv2(dst, x)
    assert store_half_weights(dst, dst) == 0
    assert dst.read_bytes() == once
    np.testing.assert_array_equal(_run_cv2(dst, x), before)
    assert main([str(src)]) == 0
    assert "1 weight tensors stored as float16" in capsys.readouterr().out
    assert src.read_bytes() == once


def test_weights_beyond_float16_range_are_refused(tmp_path):
    src = tmp_path / "big.onnx"
    weights = np.ones((4, 3, 3, 3), np.float32)
    weights[0, 0, 0, 0] = 1e6
    _conv_model(src, weights, np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="float16's range"):
        store_half_weights(src, tmp_path / "out.onnx")


def test_missing_model_is_a_clear_error(tmp_path, capsys):
    assert main([str(tmp_path / "nope.onnx")]) == 2
    assert "no model at" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["die_detector", "face_reader", "pip_finder"])
def test_shipped_models_are_valid_onnx(name):
    # onnxruntime (the default runtime) type-checks graphs: half-stored weights must keep the graph valid
    onnx.checker.check_model(onnx.load(str(MODELS / f"{name}.onnx")), full_check=True)


def _tiny_face_reader(path: Path, seed: int, input_name: str = "crops", logit_scale: float = 1.0) -> None:
    """A face-reader-shaped ONNX model.

    (N, 3, H, W) -> Conv -> Relu -> mean pool -> Gemm -> (N, 7) logits (times `logit_scale`).
    """
    rng = np.random.default_rng(seed)
    graph = helper.make_graph(
        [
            helper.make_node("Conv", [input_name, "w", "b"], ["c"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["r"]),
            helper.make_node("GlobalAveragePool", ["r"], ["g"]),
            helper.make_node("Flatten", ["g"], ["f"]),
            helper.make_node("Gemm", ["f", "fc", "fb"], ["out"], transB=1),
        ],
        "tiny",
        [helper.make_tensor_value_info(input_name, TensorProto.FLOAT, ["n", 3, "h", "w"])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["n", 7])],
        [
            numpy_helper.from_array(rng.normal(0, 0.5, (8, 3, 3, 3)).astype(np.float32), "w"),
            numpy_helper.from_array(rng.normal(0, 0.1, 8).astype(np.float32), "b"),
            numpy_helper.from_array((logit_scale * rng.normal(0, 1.0, (7, 8))).astype(np.float32), "fc"),
            numpy_helper.from_array((logit_scale * rng.normal(0, 0.1, 7)).astype(np.float32), "fb"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))


def _log_softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def test_ensemble_outputs_the_mean_log_probabilities_of_its_members(tmp_path):
    from vision.lab.training.ensemble import merge_face_readers

    members = [tmp_path / f"m{k}.onnx" for k in range(3)]
    for k, path in enumerate(members):
        _tiny_face_reader(path, seed=k)
    merged = tmp_path / "ensemble.onnx"
    merge_face_readers(members, merged)
    onnx.checker.check_model(onnx.load(str(merged)), full_check=True)
    x = np.random.default_rng(9).normal(size=(5, 3, 8, 8)).astype(np.float32)
    member_logits = [_run_cv2(p, x) for p in members]
    assert not np.allclose(member_logits[0], member_logits[1])  # the members really differ
    want = np.mean([_log_softmax(z) for z in member_logits], axis=0)
    np.testing.assert_allclose(_run_cv2(merged, x), want, atol=1e-5)
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(str(merged), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, {"crops": x})[0], want, atol=1e-5)


def test_ensemble_refuses_one_member_or_unlike_members(tmp_path, capsys):
    from vision.lab.training.ensemble import main, merge_face_readers

    a, b = tmp_path / "a.onnx", tmp_path / "b.onnx"
    _tiny_face_reader(a, seed=0)
    _tiny_face_reader(b, seed=1, input_name="images")
    with pytest.raises(ValueError, match="at least two members"):
        merge_face_readers([a], tmp_path / "out.onnx")
    with pytest.raises(ValueError, match="input or opset differs"):
        merge_face_readers([a, b], tmp_path / "out.onnx")
    assert main([str(tmp_path / "out.onnx"), str(a), str(tmp_path / "missing.onnx")]) == 2
    assert "no model at" in capsys.readouterr().err
    assert not (tmp_path / "out.onnx").exists()


def test_ensemble_metadata_records_the_members_and_the_merged_answers(tmp_path):
    import json

    from vision.face import CLASS_NAMES, CROP_SIZE, FaceReader
    from vision.lab.training.ensemble import merge_face_readers, write_metadata
    from vision.lab.training.synth import fixed_probe_crops

    members = [tmp_path / f"face{k}.onnx" for k in range(2)]
    for k, path in enumerate(members):
        _tiny_face_reader(path, seed=k)
        path.with_suffix(".json").write_text(
            json.dumps(
                {
                    "crop_size": CROP_SIZE,
                    "class_names": list(CLASS_NAMES),
                    "n_params": 100 + k,
                    "training_data": {"train_set": "tiny"},
                    "command": f"train seed {k}",
                    "training": {"seed": k},
                }
            )
        )
    merged = tmp_path / "face_reader.onnx"
    merge_face_readers(members, merged)
    meta = write_metadata(members, merged, "merge them", None)
    assert json.loads(merged.with_suffix(".json").read_text()) == meta
    assert [m["command"] for m in meta["members"]] == ["train seed 0", "train seed 1"]
    assert meta["n_params"] == 201 and meta["command"] == "merge them" and "dev_metrics" not in meta
    crops, names = fixed_probe_crops()
    probs = FaceReader(merged).predict(crops)  # the merged model loads as a face reader, its JSON read as metadata
    assert list(meta["fixed_probes"]) == names
    assert [meta["fixed_probes"][n]["top"] for n in names] == [int(p.argmax()) for p in probs]
    members[1].with_suffix(".json").unlink()
    with pytest.raises(FileNotFoundError, match="training record is missing"):
        write_metadata(members, merged, "merge them", None)


def _cascade_of(first: np.ndarray, second: np.ndarray, unsure: np.ndarray) -> np.ndarray:
    """What a cascade should answer: `first`, with the `unsure` rows the renormalised geometric mean of both."""
    want = first.astype(np.float64).copy()
    mean_logp = (
        np.log(np.clip(first[unsure], 1e-300, 1.0, dtype=np.float64))
        + np.log(np.clip(second[unsure], 1e-300, 1.0, dtype=np.float64))
    ) / 2
    want[unsure] = np.exp(mean_logp) / np.exp(mean_logp).sum(axis=1, keepdims=True)
    return want


def _members(tmp_path, logit_scale: float = 4.0, seeds: tuple[int, int] = (3, 4)) -> list[Path]:
    """Two tiny face readers of different seeds, each with a training record, in tmp_path/seed0 and seed1.

    At the default `logit_scale` the fixed probes are read with top probabilities from about 0.24 to 0.99.
    """
    import json

    from vision.face import CLASS_NAMES, CROP_SIZE

    members = [tmp_path / f"seed{k}" / "face_reader.onnx" for k in range(2)]
    for k, path in enumerate(members):
        path.parent.mkdir()
        _tiny_face_reader(path, seed=seeds[k], logit_scale=logit_scale)
        path.with_suffix(".json").write_text(
            json.dumps(
                {
                    "crop_size": CROP_SIZE,
                    "class_names": list(CLASS_NAMES),
                    "n_params": 100,
                    "architecture": "tiny",
                    "command": f"train seed {k}",
                    "training": {"seed": k},
                }
            )
        )
    return members


def _cascade(members: list[Path], out: Path, consult_below: float) -> Path:
    """`members` written as a cascade to `out` with its JSON."""
    from vision.lab.training.ensemble import write_cascade, write_metadata

    write_cascade(members, out)
    write_metadata(members, out, "cascade them", None, consult_below)
    return out


def test_cascade_consults_the_second_network_exactly_where_the_first_is_unsure(tmp_path):
    from vision.face import FaceReader
    from vision.lab.training.synth import fixed_probe_crops

    crops, _ = fixed_probe_crops()
    members = _members(tmp_path)
    first, second = FaceReader(members[0]).predict(crops), FaceReader(members[1]).predict(crops)
    gate = float(np.median(first.max(axis=1)))  # the rows below the median are "unsure"
    unsure = first.max(axis=1) < gate
    assert 0 < unsure.sum() < len(crops) and first.max() > 0.95
    want = _cascade_of(first, second, unsure)
    assert not np.allclose(want[unsure], first[unsure])  # consulting changes the unsure rows
    reader = FaceReader(_cascade(members, tmp_path / "face_reader.onnx", gate))
    assert reader.second_model_path == tmp_path / "face_reader_2.onnx" and reader.consult_below == gate
    np.testing.assert_allclose(reader.predict(crops), want, atol=1e-5)
    # read four ways: each network's four turns are averaged, then the two networks combined
    first4 = FaceReader(members[0], rotations=4).predict(crops)
    second4 = FaceReader(members[1], rotations=4).predict(crops)
    np.testing.assert_allclose(
        FaceReader(tmp_path / "face_reader.onnx", rotations=4).predict(crops),
        _cascade_of(first4, second4, first4.max(axis=1) < gate),
        atol=1e-5,
    )
    # consult_below 1.0: every crop, even one read with certainty (probability 1.0 in float64), is read by
    # both networks, as the merged ensemble reads it
    (tmp_path / "sure").mkdir()
    from vision.face import preprocess

    sure = _members(tmp_path / "sure", logit_scale=60.0, seeds=(3, 5))
    logp = [_log_softmax(_run_cv2(m, preprocess(crops)).astype(np.float64)) for m in sure]
    assert ((logp[0].max(axis=1) == 0.0) & (logp[0].argmax(axis=1) != logp[1].argmax(axis=1))).any()
    both = np.exp(_log_softmax((logp[0] + logp[1]) / 2))  # probabilities too small for float32 matter here
    np.testing.assert_allclose(FaceReader(_cascade(sure, tmp_path / "all.onnx", 1.0)).predict(crops), both, atol=1e-5)
    assert FaceReader(_cascade(members, tmp_path / "x.onnx", gate)).predict(crops[:0]).shape == (0, 7)


def test_cascade_metadata_records_it_and_the_answers_of_the_pair(tmp_path):
    import json

    from vision.face import FaceReader
    from vision.lab.training.synth import fixed_probe_crops

    out = _cascade(_members(tmp_path), tmp_path / "face_reader.onnx", 0.5)
    meta = json.loads(out.with_suffix(".json").read_text())
    assert meta["cascade"] == {"second": "face_reader_2.onnx", "consult_below": 0.5}
    assert meta["architecture"].startswith("cascade of 2 networks") and meta["architecture"].endswith("each: tiny")
    crops, names = fixed_probe_crops()
    probs = FaceReader(out).predict(crops)
    assert [meta["fixed_probes"][n]["top"] for n in names] == [int(p.argmax()) for p in probs]


def test_a_broken_cascade_says_what_is_wrong(tmp_path, capsys):
    import json

    from vision.face import FaceModelError, FaceReader
    from vision.lab.training.ensemble import main, write_cascade

    members = _members(tmp_path)
    out = _cascade(members, tmp_path / "face_reader.onnx", 0.5)
    meta_path = out.with_suffix(".json")
    meta = json.loads(meta_path.read_text())
    for entry in ["face_reader_2.onnx", ["face_reader_2.onnx", 0.5], {"second": "face_reader_2.onnx"}]:
        meta_path.write_text(json.dumps({**meta, "cascade": entry}))
        with pytest.raises(FaceModelError, match='without "second"'):
            FaceReader(out)
    for second in ["../face_reader_2.onnx", str(tmp_path / "face_reader_2.onnx"), "face_reader.onnx", 7]:
        meta_path.write_text(json.dumps({**meta, "cascade": {"second": second, "consult_below": 0.5}}))
        with pytest.raises(FaceModelError, match="must name another model file beside 'face_reader.onnx'"):
            FaceReader(out)
    for below in [0, 1.5, True, "0.5"]:
        meta_path.write_text(json.dumps({**meta, "cascade": {"second": "face_reader_2.onnx", "consult_below": below}}))
        with pytest.raises(FaceModelError, match=r"must be a number in \(0, 1\]"):
            FaceReader(out)
    meta_path.write_text(json.dumps(meta))
    (tmp_path / "face_reader_2.onnx").unlink()
    with pytest.raises(FaceModelError, match="second network.*face_reader_2.onnx"):
        FaceReader(out)
    with pytest.raises(ValueError, match="a cascade has two members"):
        write_cascade(members + members[:1], tmp_path / "three.onnx")
    assert main(["--consult-below", "0", str(tmp_path / "x.onnx"), *map(str, members)]) == 2
    assert "--consult-below must be in (0, 1]" in capsys.readouterr().err
    assert main(["--consult-below", "0.9", "--no-metadata", str(tmp_path / "x.onnx"), *map(str, members)]) == 2
    assert "a cascade lives in OUT.json" in capsys.readouterr().err
    assert not (tmp_path / "x.onnx").exists()


def test_ensemble_refuses_to_overwrite_its_members_or_leave_a_wrong_description(tmp_path, capsys):
    import json

    from vision.face import FaceModelError
    from vision.lab.training.ensemble import main, write_metadata

    members = _members(tmp_path)
    before = [m.read_bytes() for m in members]
    # OUT on a member, or OUT_2 (the cascade's second file) on one
    clashes = [
        [str(members[1]), *map(str, members)],
        ["--consult-below", "0.9", str(members[1]), *map(str, members)],
        [
            "--consult-below",
            "0.9",
            str(tmp_path / "seed0" / "face_reader_2.onnx"),
            str(tmp_path / "seed0" / "face_reader_2_2.onnx"),
            str(members[1]),
        ],
    ]
    (tmp_path / "seed0" / "face_reader_2_2.onnx").write_bytes(before[0])
    (tmp_path / "seed0" / "face_reader_2_2.json").write_text(members[0].with_suffix(".json").read_text())
    for argv in clashes:
        assert main(argv) == 2
        assert "choose an OUT apart from the members" in capsys.readouterr().err
    assert [m.read_bytes() for m in members] == before
    # --no-metadata beside an older OUT.json, which a face reader would read as this model's
    old = tmp_path / "merged.json"
    old.write_text(json.dumps({"cascade": {"second": "merged_2.onnx", "consult_below": 0.9}}))
    assert main(["--no-metadata", str(tmp_path / "merged.onnx"), *map(str, members)]) == 2
    assert "remove it, or drop --no-metadata" in capsys.readouterr().err
    # a description that fails to load is removed, not left half-written
    out = _cascade(members, tmp_path / "face_reader.onnx", 0.5)
    (tmp_path / "face_reader_2.onnx").unlink()
    with pytest.raises(FaceModelError):
        write_metadata(members, out, "cascade them", None, 0.5)
    assert not out.with_suffix(".json").exists()
