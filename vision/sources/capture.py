"""OpenCV capture: USB webcams, video files and network streams (RTSP, HTTP)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from vision.sources.base import FrameSource, SourceEnded, SourceError

#: Waits between reconnection tries of a live stream, in seconds.
BACKOFF_S: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0)


class OpenCVSource(FrameSource):
    """Frames from :class:`cv2.VideoCapture`.

    A camera index or a URL (``rtsp://``, ``http://``) is *live*: when a frame
    cannot be read the source reopens the capture, waiting :data:`BACKOFF_S`
    between tries, and raises :class:`SourceError` when every try failed.  A
    video file is *finite*: its end raises :class:`SourceEnded`.

    Parameters
    ----------
    target : int or str
        Camera index (``0`` for the first webcam), video file path or stream URL.
    size : tuple of 2 int, optional
        ``(width, height)`` to ask a camera for, in pixels.
    fps : float, optional
        Frame rate to ask a camera for.
    capture_factory : callable, optional
        Builds the capture from `target` (default :class:`cv2.VideoCapture`);
        tests pass fakes.
    sleep : callable, optional
        Waits a number of seconds (default :func:`time.sleep`).
    clock : callable, optional
        Monotonic clock in seconds for live timestamps.

    Raises
    ------
    SourceError
        If the capture cannot be opened.

    Examples
    --------
    >>> src = OpenCVSource(0)            # doctest: +SKIP
    >>> frame = src.read()               # doctest: +SKIP
    """

    kind = "opencv"

    def __init__(
        self,
        target: int | str,
        *,
        size: tuple[int, int] | None = None,
        fps: float | None = None,
        capture_factory: Callable[[int | str], Any] = cv2.VideoCapture,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self._target = target
        self._live = isinstance(target, int) or "://" in str(target)
        self._size = size
        self._want_fps = fps
        self._factory = capture_factory
        self._sleep = sleep
        self._clock = clock
        self._t0 = clock()
        self._cap: Any = None
        if not self._open():
            hint = (
                "is the camera plugged in and not used by another program? try another index (opencv:1)"
                if isinstance(target, int)
                else "check the path or URL"
            )
            raise SourceError(f"could not open {self.describe}: {hint}")

    @property
    def describe(self) -> str:
        return f"opencv:{self._target}"

    @property
    def fps(self) -> float:
        got = float(self._cap.get(cv2.CAP_PROP_FPS) or 0.0) if self._cap is not None else 0.0
        return got if 1.0 <= got <= 240.0 else float(self._want_fps or 30.0)

    def _open(self) -> bool:
        cap = self._factory(self._target)
        if cap is None or not cap.isOpened():
            if cap is not None:
                cap.release()
            return False
        if self._size is not None:
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, float(self._size[0]))
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, float(self._size[1]))
        if self._want_fps is not None:
            cap.set(cv2.CAP_PROP_FPS, float(self._want_fps))
        self._cap = cap
        return True

    def _grab(self) -> tuple[np.ndarray, float, Any]:
        ok, image = self._cap.read()
        if ok and image is not None:
            return image, self._stamp(), None
        if not self._live:
            raise SourceEnded(f"{self.describe}: end of the video after {self._index} frames")
        self._cap.release()
        self._cap = None
        for wait in BACKOFF_S:
            self._sleep(wait)
            if self._open():
                ok, image = self._cap.read()
                if ok and image is not None:
                    return image, self._stamp(), None
                self._cap.release()
                self._cap = None
        raise SourceError(
            f"{self.describe} stopped giving frames and did not come back after {len(BACKOFF_S)} tries "
            f"over {sum(BACKOFF_S):g} s: check the cable or the stream, then restart"
        )

    def _stamp(self) -> float:
        if self._live:
            return self._clock() - self._t0
        ms = float(self._cap.get(cv2.CAP_PROP_POS_MSEC) or 0.0)
        return ms / 1000.0 if ms > 0 else self._index / self.fps

    def _release(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None
