"""Benchmark of the live pipeline on synthetic roll sequences (``dicetable bench``).

Measures, on the cores :func:`cores` allows (one, as a Pi 4 core would be used,
or all of them, as the table reads): the per-frame cost of
:meth:`RollWatcher.update` (rectify, motion, hand check, and on still frames the
read), split into frames that only check motion and frames that are read; the
settle latency (frames from the last die stopping to the verdict); the compute
from the last die stopping to the verdict (the sum of those frames' costs, and
how many of them were read); and the verdicts against the script's truth
(right, unreadable, wrong, missed).  Frames are rendered before timing, so the
renderer's cost is not counted.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from vision._onnx import THREADS_ENV
from vision.sources import _world as world
from vision.sources.synthetic import SyntheticSource, TruthReader
from vision.watch import EventKind, RollWatcher


def one_core() -> None:
    """Run on one CPU core with one OpenCV thread (as a Pi 4 core would be used), for the rest of the process."""
    cv2.setNumThreads(1)
    if hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
        except OSError:
            pass


@contextlib.contextmanager
def cores(n: int | None) -> Iterator[int]:
    """Run the block on `n` CPU cores (None: all this process may use); yields the number used.

    Sets the process's CPU affinity, OpenCV's threads and ``DICETABLE_THREADS``
    (the onnxruntime sessions of networks loaded inside the block, e.g. by
    :func:`model_reader`), and puts all three back afterwards.
    """
    mine = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    use = len(mine) if n is None else max(1, min(int(n), len(mine)))
    cv_threads, env = cv2.getNumThreads(), os.environ.get(THREADS_ENV)
    pinned = False
    if hasattr(os, "sched_setaffinity") and use < len(mine):
        try:
            os.sched_setaffinity(0, set(mine[:use]))
            pinned = True
        except OSError:
            pass
    cv2.setNumThreads(use)
    os.environ[THREADS_ENV] = str(use)
    try:
        yield use
    finally:
        cv2.setNumThreads(cv_threads)
        if env is None:
            os.environ.pop(THREADS_ENV, None)
        else:
            os.environ[THREADS_ENV] = env
        if pinned:
            os.sched_setaffinity(0, set(mine))


def model_reader() -> Callable[[np.ndarray], Any]:
    """:func:`vision.reader.read_image` with the packaged networks loaded now (so with the threads set now).

    The shared networks (``default_detector`` and the others) keep the threads
    of their first load; fresh ones let :func:`cores` compare thread counts.
    """
    from vision.detect import DieDetector
    from vision.face import reading_face_reader
    from vision.pips import PipFinder
    from vision.reader import read_image

    return functools.partial(
        read_image, detector=DieDetector(), face_reader=reading_face_reader(), pip_finder=PipFinder()
    )


@dataclass
class BenchResult:
    """Numbers of one benchmark run (times in ms, latencies in frames)."""

    size: tuple[int, int]
    reader: str
    frames: int = 0
    all_ms: list[float] = field(default_factory=list)
    motion_ms: list[float] = field(default_factory=list)
    read_ms: list[float] = field(default_factory=list)
    latencies: list[int] = field(default_factory=list)
    settle_ms: list[float] = field(default_factory=list)
    settle_reads: list[int] = field(default_factory=list)
    threads: int = 1
    rolls: int = 0
    right: int = 0
    unreadable: int = 0
    wrong: int = 0
    missed: int = 0
    early: int = 0
    expected_unreadable_ok: int = 0
    wrong_details: list[str] = field(default_factory=list)
    unreadable_details: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """The numbers as a JSON-able dict."""

        def med(xs: Sequence[float]) -> float | None:
            return round(statistics.median(xs), 3) if xs else None

        def p95(xs: Sequence[float]) -> float | None:
            return round(sorted(xs)[int(0.95 * (len(xs) - 1))], 3) if xs else None

        return {
            "size": f"{self.size[0]}x{self.size[1]}",
            "reader": self.reader,
            "frames": self.frames,
            "per_frame_ms_median": med(self.all_ms),
            "per_frame_ms_p95": p95(self.all_ms),
            "motion_frame_ms_median": med(self.motion_ms),
            "read_frame_ms_median": med(self.read_ms),
            "read_frames": len(self.read_ms),
            "settle_latency_frames_median": med(self.latencies),
            "settle_latency_frames_max": max(self.latencies) if self.latencies else None,
            # compute only: what the frames from the last die stopping to the verdict cost, summed
            "settle_compute_ms_median": med(self.settle_ms),
            "settle_compute_ms_max": round(max(self.settle_ms), 3) if self.settle_ms else None,
            "reads_per_roll_median": med(self.settle_reads),
            "threads": self.threads,
            # at 30 fps, with each frame processed as it comes: frames waited plus the last frame's read
            "settle_latency_ms_at_30fps": (
                round(statistics.median(self.latencies) * 1000 / 30 + statistics.median(self.read_ms), 1)
                if self.latencies and self.read_ms
                else None
            ),
            "rolls": self.rolls,
            "right": self.right,
            "unreadable": self.unreadable,
            "wrong": self.wrong,
            "missed": self.missed,
            "verdicts_while_moving": self.early,
            "leaning_rolls_reported_unreadable": self.expected_unreadable_ok,
            "wrong_details": self.wrong_details[:5],
            "unexpected_unreadable": self.unreadable_details[:5],
        }


def _same(values: Sequence[int | None], centres: Sequence[tuple[float, float]], truth: Any) -> bool:
    if len(values) != len(truth.dice):
        return False
    used = set()
    for v, c in zip(values, centres):
        dist = [math.dist(c, t.centre_mm) for t in truth.dice]
        k = int(np.argmin(dist))
        if dist[k] > 8.0 or k in used or truth.dice[k].value != v:
            return False
        used.add(k)
    return True


def bench(
    *,
    size: tuple[int, int] = (640, 480),
    seeds: Sequence[int] = (0, 1, 2),
    reader: str | Callable[[np.ndarray], Any] = "truth",
    threads: int = 1,
) -> BenchResult:
    """Play the default script of each seed through a watcher and measure it.

    Parameters
    ----------
    size : tuple of 2 int, optional
        Camera frame ``(width, height)``.
    seeds : sequence of int, optional
        Scripts to play (each :func:`vision.sources.synthetic.default_script`).
    reader : "truth", "model" or callable, optional
        The pip reader: the script's truth (watcher cost alone), the trained
        model (:func:`model_reader`, loaded here), or any reader.
    threads : int, optional
        The cores it runs on, recorded in the result (the caller sets them: :func:`cores`).
    """
    name = reader if isinstance(reader, str) else getattr(reader, "__name__", "custom")
    result = BenchResult(size=size, reader=name, threads=threads)
    model = model_reader() if reader == "model" else None
    for seed in seeds:
        src = SyntheticSource(seed=seed, size=size)
        frames = list(src)
        geo = src.geometry()
        truth_reader = TruthReader(geo)
        if reader == "truth":
            use: Callable[[np.ndarray], Any] = truth_reader
        elif model is not None:
            use = model
        else:
            use = reader  # type: ignore[assignment]
        watcher = RollWatcher(
            use,
            geometry=geo,
            hold_area_mm=world.HOLD_AREA_MM,
            reference=frames[0].image,
            markers=world.MARKERS,
            expected_dice=5,
        )
        verdicts: dict[int, tuple[int, Any]] = {}
        cost: list[tuple[float, bool]] = []  # per frame: (ms, read)
        for f in frames:
            truth_reader.see(f)
            before = truth_reader.calls if reader == "truth" else None
            n_votes = len(watcher._votes)
            t0 = time.perf_counter()
            events = watcher.update(f)
            ms = (time.perf_counter() - t0) * 1000.0
            read = (
                (truth_reader.calls != before)
                if reader == "truth"
                else (
                    len(watcher._votes) != n_votes
                    or any(e.kind in (EventKind.SETTLED, EventKind.UNREADABLE) for e in events)
                )
            )
            cost.append((ms, read))
            result.all_ms.append(ms)
            (result.read_ms if read else result.motion_ms).append(ms)
            result.frames += 1
            for e in events:
                if e.kind in (EventKind.SETTLED, EventKind.UNREADABLE):
                    roll = f.truth.roll
                    # the voting frames must all show the dice at rest (index >= the stop frame) and no hand
                    stop = f.truth.stop_index
                    if (
                        stop is None
                        or f.index - (e.votes or 3) + 1 < stop
                        or any(frames[k].truth.hand for k in range(f.index - 2, f.index + 1))
                    ):
                        result.early += 1
                        result.wrong_details.append(
                            f"seed {seed} frame {f.index}: {e.kind.value} {list(e.values)} while the tray moved "
                            f"(roll {roll}, phase {f.truth.phase}); {'; '.join(e.problems)}"
                        )
                    verdicts.setdefault(roll, (f.index, e))
        for plan in src.plan:
            result.rolls += 1
            if plan.roll not in verdicts:
                result.missed += 1
                continue
            idx, e = verdicts[plan.roll]
            result.latencies.append(idx - plan.stop_index)
            window = cost[plan.stop_index : idx + 1]
            result.settle_ms.append(sum(ms for ms, _ in window))
            result.settle_reads.append(sum(1 for _, read in window if read))
            if e.kind == EventKind.UNREADABLE:
                result.unreadable += 1
                if plan.expect_unreadable:
                    result.expected_unreadable_ok += 1
                else:
                    result.unreadable_details.append(f"seed {seed} roll {plan.roll}: {'; '.join(e.problems)}")
            elif plan.expect_unreadable:
                result.wrong += 1
                result.wrong_details.append(f"seed {seed} roll {plan.roll}: a leaning die was read as flat")
            elif _same(e.values, [d.centre_mm for d in e.dice], frames[idx].truth):
                result.right += 1
            else:
                result.wrong += 1
                result.wrong_details.append(
                    f"seed {seed} roll {plan.roll}: read {list(e.values)}, truth "
                    f"{[d.value for d in frames[idx].truth.dice]}"
                )
    return result
