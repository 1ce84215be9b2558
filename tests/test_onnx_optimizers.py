"""vision._onnx: the graph rewrites left out (DISABLED_OPTIMIZERS) change no output of the packaged networks."""

from __future__ import annotations

import numpy as np
import pytest

from vision._onnx import DISABLED_OPTIMIZERS, load_onnx

ort = pytest.importorskip("onnxruntime")


@pytest.mark.parametrize("stem", ["face_reader", "pip_finder"])
def test_the_int8_networks_answer_bit_for_bit_as_with_every_rewrite(stem, monkeypatch):
    from vision.face import DEFAULT_MODEL_PATH

    monkeypatch.setenv("DICETABLE_ONNX_BACKEND", "onnxruntime")
    path = DEFAULT_MODEL_PATH.parent / f"{stem}.onnx"
    net, _ = load_onnx(path, stem, RuntimeError, "")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    every = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    assert DISABLED_OPTIMIZERS  # else there is nothing to compare
    blob = np.random.default_rng(0).normal(size=(5, 3, 64, 64)).astype(np.float32)
    expected = every.run(None, {every.get_inputs()[0].name: blob})[0]
    assert np.array_equal(net.forward(blob), expected)
