"""Give the heap's free memory back to the OS now and then (glibc's ``malloc_trim``).

A table process frees far more than it keeps: camera frames (640x480x3 uint8, 0.9 MB each, several a
second), the pip reader's buffers and the strategy's distributions churn through glibc's per-thread
arenas, which keep freed pages instead of returning them. A soak's table process held 80 MB in use and
101-128 MB free in its heap (mallinfo2) after 1-5 minutes: RSS grew with the free part, not with a leak
(docs/faults.md). ``malloc_trim(0)`` hands the free pages of every arena back; elsewhere it is a no-op.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable

#: Seconds between trims: one trim takes a few ms, and a minute of play frees ~20-30 MB (the soak).
TRIM_EVERY_S = 60.0


def _libc_trim() -> Callable[[], object] | None:
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim  # type: ignore[no-any-return]
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to trim
        return None


class HeapTrimmer:
    """Calls ``malloc_trim(0)`` when :meth:`maybe_trim` is called and `every_s` passed since the last.

    ``clock`` gives seconds (``time.monotonic`` by default); ``trims`` counts the trims done.
    """

    def __init__(self, every_s: float = TRIM_EVERY_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.every_s = every_s
        self._clock = clock
        self._trim = _libc_trim()
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
