"""Speed where it runs.

The networks' threads (``DICETABLE_THREADS``) and ``dicetable bench``'s settle-to-verdict compute.
"""

from __future__ import annotations

import json
import os

import cv2
import pytest

from table.cli import main
from vision._onnx import THREADS_ENV, onnx_threads, usable_cores
from vision.lab.livebench import cores


def test_threads_default_to_every_usable_core_but_follow_opencv(monkeypatch):
    monkeypatch.delenv(THREADS_ENV, raising=False)
    before = cv2.getNumThreads()
    try:
        cv2.setNumThreads(max(usable_cores(), 1))
        assert onnx_threads() == usable_cores()
        cv2.setNumThreads(1)  # as benchmarks and `dicetable eval` do: their one-core numbers stay one-core
        assert onnx_threads() == 1
    finally:
        cv2.setNumThreads(before)


@pytest.mark.parametrize("value, threads", [("all", None), ("3", 3), (" 1 ", 1)])
def test_threads_from_the_environment(monkeypatch, value, threads):
    monkeypatch.setenv(THREADS_ENV, value)
    assert onnx_threads() == (usable_cores() if threads is None else threads)


@pytest.mark.parametrize("value", ["0", "-2", "four"])
def test_bad_threads_say_what_to_give(monkeypatch, value):
    from vision.face import FaceModelError, FaceReader

    monkeypatch.setenv(THREADS_ENV, value)
    with pytest.raises(ValueError, match="whole number >= 1, or 'all'"):
        onnx_threads()
    with pytest.raises(FaceModelError, match=f"{THREADS_ENV}="):
        FaceReader()


def test_a_network_loaded_under_a_setting_keeps_its_threads(monkeypatch):
    pytest.importorskip("onnxruntime")
    from vision._onnx import BACKEND_ENV
    from vision.pips import PipFinder

    monkeypatch.setenv(BACKEND_ENV, "onnxruntime")
    monkeypatch.setenv(THREADS_ENV, "1")
    assert PipFinder()._net.threads == 1
    monkeypatch.setenv(THREADS_ENV, "2")
    assert PipFinder()._net.threads == 2


def test_cores_sets_and_puts_back_affinity_opencv_and_the_variable(monkeypatch):
    monkeypatch.setenv(THREADS_ENV, "7")
    before = (cv2.getNumThreads(), sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None)
    with cores(1) as used:
        assert used == 1 and cv2.getNumThreads() == 1 and os.environ[THREADS_ENV] == "1"
        if before[1] is not None:
            assert len(os.sched_getaffinity(0)) == 1
    assert (cv2.getNumThreads(), sorted(os.sched_getaffinity(0)) if before[1] is not None else None) == before
    assert os.environ[THREADS_ENV] == "7"
    with cores(None) as used:
        assert used == usable_cores()


def test_bench_prints_the_settle_to_verdict_compute_on_one_core_and_on_all(capsys):
    status = main(["bench", "--reader", "truth", "--seeds", "1", "--sizes", "640x480", "--json"])
    s = json.loads(capsys.readouterr().out)
    assert status == 0 and s["threads"] == 1
    assert s["settle_compute_ms_median"] > 0 and s["settle_compute_ms_max"] >= s["settle_compute_ms_median"]
    assert 1 <= s["reads_per_roll_median"] <= s["settle_latency_frames_max"] + 1
    if usable_cores() > 1:
        assert s["all_cores"]["threads"] == usable_cores() and s["all_cores"]["wrong"] == 0
    main(["bench", "--reader", "truth", "--seeds", "1", "--sizes", "640x480", "--cores", "one"])
    out = capsys.readouterr().out
    assert "compute from the dice stopping to the verdict: median" in out and "reads per roll) on one core" in out
