"""The frame-source interface: frames with timestamps, errors, lifetimes.

Every source (Pi camera, OpenCV capture, recorded images, synthetic rolls) is a
:class:`FrameSource`: ``read()`` gives the next :class:`Frame` or raises
:class:`SourceEnded` when a finite stream is over, :class:`SourceError` when the
camera fails for good; iterate it to get frames until the end; close it (or use
``with``) to release the camera.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from vision.errors import VisionError


class SourceError(VisionError, OSError):
    """Raised when a frame source cannot be opened or fails for good (camera unplugged)."""


class SourceEnded(SourceError):
    """Raised by :meth:`FrameSource.read` when a finite stream (file, folder, script) is over."""


class UnknownSourceError(VisionError, ValueError):
    """Raised when a source spec string names no known source or is malformed."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One camera frame.

    Parameters
    ----------
    image : ndarray of shape (H, W, 3), dtype uint8
        The picture, BGR (OpenCV order), read-only.
    timestamp_s : float
        When it was taken, in seconds: monotonic clock for live cameras, stream
        time for files and recorded or synthetic frames (index / fps).
    index : int
        0-based number of the frame in this source.
    truth : object, optional
        What is really in the frame (synthetic sources only: a
        :class:`vision.sources.synthetic.FrameTruth`); None otherwise.
    """

    image: np.ndarray
    timestamp_s: float
    index: int
    truth: Any = None


def check_image(image: Any, where: str) -> np.ndarray:
    """Return `image` as a read-only (H, W, 3) uint8 BGR array; gray and BGRA are converted.

    Raises
    ------
    SourceError
        If `image` is None or not an 8-bit picture (naming `where` it came from).
    """
    if image is None:
        raise SourceError(f"{where} gave no image")
    arr = np.asarray(image)
    if arr.dtype != np.uint8 or arr.ndim not in (2, 3) or min(arr.shape[:2]) < 8:
        raise SourceError(
            f"{where} gave an unusable image: shape {arr.shape}, dtype {arr.dtype}; expected (H, W, 3) uint8"
        )
    if arr.ndim == 2:
        arr = np.repeat(arr[:, :, None], 3, axis=2)
    elif arr.shape[2] == 4:
        arr = np.ascontiguousarray(arr[:, :, :3])
    elif arr.shape[2] != 3:
        raise SourceError(f"{where} gave an image with {arr.shape[2]} channels; expected 3 (BGR)")
    if arr.flags.writeable:
        arr = arr.copy() if not arr.flags.owndata else arr
        arr.setflags(write=False)
    return arr


class FrameSource(abc.ABC):
    """A stream of frames (abstract).

    Subclasses implement :meth:`_grab` (and usually :meth:`_release`); the base
    class numbers the frames, checks the images and manages the lifetime.

    Examples
    --------
    >>> from vision.sources import open_source
    >>> with open_source("synthetic:1") as src:
    ...     frame = src.read()
    >>> frame.image.shape, frame.index
    ((480, 640, 3), 0)
    """

    #: True when each frame carries the scripted truth (synthetic sources), so the
    #: ``TruthReader`` can stand in for the pip reader to test the watcher alone.
    carries_truth: bool = False

    #: Short name used in reprs and messages.
    kind: str = "source"

    def __init__(self) -> None:
        self._closed = False
        self._index = 0

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    @property
    def fps(self) -> float:
        """Nominal frames per second of the stream."""
        return 30.0

    @property
    def describe(self) -> str:
        """One line saying what this source reads from."""
        return self.kind

    def read(self) -> Frame:
        """Return the next frame.

        Raises
        ------
        SourceEnded
            When a finite stream is over.
        SourceError
            When the source is closed or the camera failed for good.
        """
        if self._closed:
            raise SourceError(f"{self.describe} is closed; open the source again")
        image, ts, truth = self._grab()
        frame = Frame(check_image(image, self.describe), float(ts), self._index, truth)
        self._index += 1
        return frame

    def __iter__(self) -> Iterator[Frame]:
        while True:
            try:
                yield self.read()
            except SourceEnded:
                return

    def lock_controls(self) -> dict[str, Any]:
        """Lock exposure, gain and colour gains where the camera has them.

        Returns
        -------
        dict
            The locked control values (camera-specific names); empty for sources
            without camera controls.
        """
        return {}

    @abc.abstractmethod
    def _grab(self) -> tuple[np.ndarray, float, Any]:
        """Return ``(image, timestamp_s, truth)`` of the next frame."""

    def _release(self) -> None:  # noqa: B027  (optional hook; the default has nothing to free)
        """Free the device; called once by :meth:`close`. Subclasses may override; the default does nothing."""

    def close(self) -> None:
        """Release the camera or file; safe to call twice."""
        if not self._closed:
            self._closed = True
            self._release()

    def __enter__(self) -> FrameSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"frame {self._index}"
        return f"<{type(self).__name__} {self.describe} ({state})>"
