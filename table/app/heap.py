"""Keep the table process's heap from holding freed memory: glibc's malloc options, and a trim now and then.

A table process frees far more than it keeps: camera frames (640x480x3 uint8, 0.9 MB each, several a
second), the pip reader's buffers and the strategy's distributions churn through glibc's per-thread
arenas, which keep freed pages instead of returning them. A soak's table process held 80 MB in use and
101-128 MB free in its heap (mallinfo2) after 1-5 minutes: RSS grew with the free part, not with a leak
(docs/faults.md). Blocks of 0.9 MB are served from the heap because glibc raises its mmap threshold
after the first large free (up to 32 MB), and each thread gets its own arena. :func:`tune_malloc` fixes
the threshold at :data:`MMAP_THRESHOLD` (large blocks mmapped, returned at free) and caps the arenas
at :data:`ARENA_MAX`: an 8-minute soak with them set so (threshold 256 KB; glibc's tunables) held
2.5 MB free in its heap instead of 100-140 MB, its RSS 50 MB lower. ``malloc_trim(0)`` hands what is
left of the free pages back. Elsewhere: no-ops.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable

#: Bytes from which a block is mmapped: under a camera frame (640x480x3 uint8, 921,600 bytes).
MMAP_THRESHOLD = 512 * 1024
#: Malloc arenas: the table's threads (worker, camera, page, chances) mostly run under the GIL.
ARENA_MAX = 2
_M_MMAP_THRESHOLD, _M_ARENA_MAX = -3, -8  # glibc's mallopt parameters (malloc.h)

#: Seconds between trims: a minute of play left 5-10 MB more free in the untuned soak's heap.
TRIM_EVERY_S = 60.0


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim, libc.mallopt  # noqa: B018  (glibc has both)
        return libc
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to tune
        return None


def tune_malloc() -> bool:
    """Set glibc's mmap threshold and arena cap for this process (see the module); False if not glibc."""
    libc = _libc()
    if libc is None:
        return False
    return bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(libc.mallopt(_M_ARENA_MAX, ARENA_MAX))


class HeapTrimmer:
    """Calls ``malloc_trim(0)`` when :meth:`maybe_trim` is called and `every_s` passed since the last.

    ``clock`` gives seconds (``time.monotonic`` by default); ``trims`` counts the trims done. Made by the
    app before its threads start, it tunes glibc's malloc for the process (:func:`tune_malloc`).
    """

    def __init__(self, every_s: float = TRIM_EVERY_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.every_s = every_s
        self._clock = clock
        libc = _libc()
        self._trim = None if libc is None else libc.malloc_trim
        tune_malloc()
        self._last = clock()
        self.trims = 0

    def maybe_trim(self) -> bool:
        """Trim if it is due; return whether it did."""
        now = self._clock()
        if self._trim is None or now - self._last < self.every_s:
            return False
        self._last = now
        self._trim(0)
        self.trims += 1
        return True
