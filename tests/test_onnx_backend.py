"""The ONNX runtimes (vision/_onnx.py): onnxruntime and cv2.dnn give the same answers; bad settings say what to do."""

from __future__ import annotations

import numpy as np
import pytest

from vision._onnx import BACKEND_ENV, chosen_backend
from vision.detect import DieDetector
from vision.face import FaceModelError, FaceReader
from vision.lab.training.synth import fixed_probe_crops
from vision.pips import PipFinder
from vision.render import render_tray

ort = pytest.importorskip("onnxruntime", reason="onnxruntime is not installed: only cv2.dnn can run the models")


def _both(monkeypatch, make):
    monkeypatch.setenv(BACKEND_ENV, "onnxruntime")
    fast = make()
    monkeypatch.setenv(BACKEND_ENV, "opencv")
    slow = make()
    assert fast._net.backend == "onnxruntime" and slow._net.backend == "opencv"
    return fast, slow


def test_default_is_onnxruntime_when_installed(monkeypatch):
    monkeypatch.delenv(BACKEND_ENV, raising=False)
    assert chosen_backend() == "onnxruntime"
    monkeypatch.setenv(BACKEND_ENV, " OpenCV ")
    assert chosen_backend() == "opencv"


def _tolerance(model, float_atol: float, int8_atol: float) -> float:
    """Float networks agree to rounding.

    Quantised ones (vision.lab.training.quantise) agree to their int8 kernels' rounding.
    """
    return int8_atol if "quantisation" in model.metadata else float_atol


def test_face_reader_and_pip_finder_agree_across_runtimes(monkeypatch):
    from vision.face import DEFAULT_MARGIN
    from vision.pips import layouts_on_map

    crops, _ = fixed_probe_crops()
    fast, slow = _both(monkeypatch, FaceReader)
    a, b = fast.predict(crops), slow.predict(crops)
    # the two runtimes' int8 convolutions round differently: 0.0074 at most on these probes
    assert np.allclose(a, b, atol=_tolerance(fast, 1e-4, 0.02))
    assert (a.argmax(axis=1) == b.argmax(axis=1)).all()
    fast, slow = _both(monkeypatch, PipFinder)
    a, b = fast.predict(crops), slow.predict(crops)
    assert np.allclose(a, b, atol=_tolerance(fast, 1e-4, 0.1))  # 0.027 at most
    assert [layouts_on_map(m, DEFAULT_MARGIN) for m in a] == [layouts_on_map(m, DEFAULT_MARGIN) for m in b]


@pytest.mark.parametrize("size", [(640, 480), (1280, 960), (480, 640)])
def test_detector_agrees_across_runtimes_at_any_picture_shape(monkeypatch, size):
    image = np.asarray(render_tray([1, 2, 3, 4, 5], seed=2, size=size).image)
    fast, slow = _both(monkeypatch, DieDetector)
    a, b = fast.detect(image), slow.detect(image)
    assert len(a) == len(b) == 5
    assert np.allclose([d.box for d in a], [d.box for d in b], atol=0.5)


def test_unknown_runtime_says_which_exist(monkeypatch):
    monkeypatch.setenv(BACKEND_ENV, "tensorrt")
    with pytest.raises(FaceModelError, match="DICETABLE_ONNX_BACKEND='tensorrt'.*auto, onnxruntime, opencv"):
        FaceReader()
