"""The table's heap trimmer: glibc's free pages handed back every TRIM_EVERY_S, by the app's worker."""

from __future__ import annotations

import platform
import sys

import pytest

from table.app import TableApp
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
