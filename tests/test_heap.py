"""The table's heap trimmer: glibc's free pages handed back every TRIM_EVERY_S, by the app's worker."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from table.app import TableApp, heap
from table.app.heap import HeapTrimmer
from table.display.snapshot import Setup


def test_the_trimmer_trims_once_per_period_on_its_clock():
    now = [100.0]
    heap = HeapTrimmer(every_s=60.0, clock=lambda: now[0])
    assert not heap.maybe_trim()
    now[0] += 59.0
    assert not heap.maybe_trim()
    now[0] += 1.0
    assert heap.maybe_trim() and heap.trims == 1
    now[0] += 30.0
    assert not heap.maybe_trim()
    now[0] += 30.0
    assert heap.maybe_trim() and heap.trims == 2


def _rss_mb() -> float:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux") or "glibc" not in platform.libc_ver()[0], reason="glibc")
def test_a_trim_hands_freed_heap_back():
    """60 MB of small blocks freed stay resident in glibc's heap (the last one pins its top) until a trim."""
    keep = [bytearray(3000) for _ in range(20000)]  # under the mmap threshold: from the heap
    del keep[:-1]
    before = _rss_mb()
    assert HeapTrimmer(every_s=0.0).maybe_trim()
    assert before - _rss_mb() > 30.0, "the freed 60 MB stayed resident"
    assert len(keep) == 1


def test_the_apps_worker_trims_the_heap(tmp_path):
    app = TableApp(tmp_path / "g.sqlite3", setup=Setup("yacht", "forced", ["Ann", "Bo"]), autostart=True)
    app.heap = HeapTrimmer(every_s=0.0)
    app.start()
    try:
        app.submit(lambda: None).result(timeout=10)
        app.submit(lambda: None).result(timeout=10)
    finally:
        app.close()
    assert app.heap.trims >= 1


@pytest.mark.skipif(not sys.platform.startswith("linux") or "glibc" not in platform.libc_ver()[0], reason="glibc")
def test_tuned_malloc_returns_freed_frames_at_once():
    """Frames freed go back to the OS at once, even after glibc saw a larger block freed (untuned, that
    raises its mmap threshold: the next frames come from the heap and stay resident between small blocks).
    In a fresh process, as the table's: malloc options are the process's (this one ran other tests); heap.py
    is loaded alone there (importing the strategy's tables moves glibc's threshold by itself)."""
    code = """
import importlib.util
import numpy as np
spec = importlib.util.spec_from_file_location("heap", HEAP_PY)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
def rss():
    return next(int(ln.split()[1]) / 1024 for ln in open("/proc/self/status") if ln.startswith("VmRSS:"))
assert TUNED is False or module.tune_malloc()
big = np.ones(2_000_000, np.uint8)
del big
frames, small = [], []
for _ in range(80):  # 74 MB of frames, a small block after each
    frames.append(np.ones(921_600, np.uint8))
    small.append(np.ones(3000, np.uint8))
before = rss()
del frames
print(before - rss())
"""
    freed = {}
    for tuned in (False, True):
        run = [sys.executable, "-c", code.replace("HEAP_PY", repr(heap.__file__)).replace("TUNED", str(tuned))]
        freed[tuned] = float(subprocess.run(run, capture_output=True, text=True, timeout=120, check=True).stdout)
    assert freed[True] > 50.0, f"only {freed[True]} MB of the 74 MB freed left the tuned process"
    assert freed[False] < 20.0, f"untuned, {freed[False]} MB left: the test no longer shows what tuning changes"
