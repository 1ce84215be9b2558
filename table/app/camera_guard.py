"""The camera thread's guarded calls: opening a camera and reading its frames on helper threads with deadlines.

A camera library may block for ever in its open or its read (a Pi camera whose ribbon cable is loose,
an OpenCV capture of a stream that stopped): :func:`open_camera` and :class:`_FrameReads` run the call on
a thread of their own, so that :class:`table.app.camera.CameraLoop` notices (:class:`OpenTimeout`,
:class:`FrameTimeout`), says so and tries again, and can always be closed.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from vision.sources.base import SourceError

log = logging.getLogger(__name__)


class OpenTimeout(SourceError):
    """Raised when the camera did not open within :attr:`CameraLoop.open_s` seconds (an open that hangs)."""


class FrameTimeout(SourceError):
    """Raised when the camera gave no frame for :attr:`CameraLoop.stall_s` seconds (a read that hangs)."""


class _Stopped(Exception):
    """The loop was asked to stop while it waited for a frame."""


class _SourceFault(Exception):
    """What the frame source raised (its ``__cause__``), told apart from the reader's errors."""


class _FrameReads:
    """``source.read()`` on its own thread, asked for one frame at a time (no read-ahead, so the pace
    stays the loop's), so that a read that hangs is noticed (:class:`FrameTimeout`) instead of blocking
    the camera thread for ever.

    Whatever the read raises is raised again by :meth:`read`, on the camera thread.
    """

    def __init__(self, source: Any, stop: threading.Event) -> None:
        self._source = source
        self._stop = stop
        self._ask = threading.Semaphore(0)
        self._got: queue.Queue[tuple[Any, BaseException | None]] = queue.Queue(maxsize=1)
        self._closed = False
        self.thread = threading.Thread(target=self._run, name="dicetable-camera-read", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            self._ask.acquire()
            if self._closed:
                return
            try:
                item: tuple[Any, BaseException | None] = (self._source.read(), None)
            except BaseException as exc:  # noqa: BLE001 - handed to the camera thread, which says it
                item = (None, exc)
            self._got.put(item)

    def read(self, timeout_s: float) -> Any:
        """The next frame; raises what the read raised, :class:`FrameTimeout` after `timeout_s` s, or _Stopped."""
        self._ask.release()
        end = time.monotonic() + timeout_s
        while True:
            if self._stop.is_set():
                raise _Stopped
            left = end - time.monotonic()
            if left <= 0:
                raise FrameTimeout(f"no frame for {timeout_s:g} s")
            try:
                frame, exc = self._got.get(timeout=min(0.1, left))
            except queue.Empty:
                continue
            if exc is not None:
                raise exc
            return frame

    def close(self, wait_s: float) -> bool:
        """Let the read thread end (after the read in progress); True when it did within `wait_s` s."""
        self._closed = True
        self._ask.release()
        self.thread.join(wait_s)
        return not self.thread.is_alive()


def _check_frame(frame: Any, size: tuple[int, int] | None) -> tuple[int, int]:
    """``(width, height)`` of `frame`'s image; a frame that is None, not (H, W, 3) uint8, or not of `size`
    (the first frame's) raises :class:`SourceError`: the watcher's geometry holds for one size only."""
    image = getattr(frame, "image", None)
    if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        what = (
            "no frame"
            if frame is None
            else "no image"
            if image is None
            else (f"an unusable image (shape {getattr(image, 'shape', '?')}, dtype {getattr(image, 'dtype', '?')})")
        )
        raise SourceError(f"the camera gave {what}")
    got = (int(image.shape[1]), int(image.shape[0]))
    if size is not None and got != size:
        raise SourceError(f"the camera gave a {got[0]}x{got[1]} frame, not {size[0]}x{size[1]} as before")
    return got


class _Opening:
    """``open_source()`` on its own thread; a source that opens after the caller gave up is closed."""

    def __init__(self, open_source: Callable[[], Any]) -> None:
        self._open = open_source
        self._lock = threading.Lock()
        self._abandoned = False
        self.done = threading.Event()
        self.source: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="dicetable-camera-open", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        source, error = None, None
        try:
            source = self._open()
        except BaseException as exc:  # noqa: BLE001 - handed to the camera thread, which says it
            error = exc
        with self._lock:
            late = self._abandoned
            self.source, self.error = source, error
            self.done.set()
        if late and source is not None:
            log.warning("the camera opened after the table had given up on it; it is closed")
            try:
                source.close()
            except Exception as exc:  # noqa: BLE001 - nothing more to do with it
                log.warning("closing the late camera failed: %s", exc)

    def abandon(self) -> bool:
        """Give up unless it is done already; True when given up."""
        with self._lock:
            self._abandoned = not self.done.is_set()
            return self._abandoned


def open_camera(open_source: Callable[[], Any], timeout_s: float, stop: threading.Event) -> Any:
    """``open_source()`` with a deadline: the source, or what the open raised, :class:`OpenTimeout` after
    `timeout_s` s (the open's thread is left to end by itself), or :class:`_Stopped` once `stop` is set."""
    opening = _Opening(open_source)
    end = time.monotonic() + timeout_s
    while not opening.done.wait(0.05):
        if (stop.is_set() or time.monotonic() >= end) and opening.abandon():
            if stop.is_set():
                raise _Stopped
            raise OpenTimeout(f"the camera did not open within {timeout_s:g} s")
    if opening.error is not None:
        raise opening.error
    return opening.source
