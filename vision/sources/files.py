"""Recorded frames: a folder or glob of image files, played in name order."""

from __future__ import annotations

import glob
import os
from typing import Any

import cv2
import numpy as np

from vision.sources.base import FrameSource, SourceEnded, SourceError

#: File name endings read as frames (case-insensitive).
IMAGE_SUFFIXES: tuple[str, ...] = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")


def list_frames(pattern: str) -> list[str]:
    """Image files of a folder or glob, sorted by name.

    Raises
    ------
    SourceError
        If the folder does not exist or nothing matches.
    """
    if os.path.isdir(pattern):
        names = [os.path.join(pattern, n) for n in os.listdir(pattern)]
    else:
        names = glob.glob(pattern)
        if not names and not any(c in pattern for c in "*?["):
            raise SourceError(f"no folder or file {pattern!r}; give images:DIR or images:'DIR/*.png'")
    files = sorted(n for n in names if n.lower().endswith(IMAGE_SUFFIXES) and os.path.isfile(n))
    if not files:
        raise SourceError(
            f"no image files ({', '.join(IMAGE_SUFFIXES)}) in {pattern!r}; record some frames or check the path"
        )
    return files


class ImageFilesSource(FrameSource):
    """Frames from image files, in name order, at a nominal frame rate.

    Parameters
    ----------
    pattern : str
        A folder (every image file in it) or a glob such as ``"rec/*.png"``.
    fps : float, optional
        Frame rate the files stand for; timestamps are ``index / fps`` seconds.
    loop : bool, optional
        Start again from the first file instead of ending.

    Raises
    ------
    SourceError
        If no file matches, or (on read) a file is not a readable image.
    """

    kind = "images"

    def __init__(self, pattern: str, *, fps: float = 30.0, loop: bool = False) -> None:
        super().__init__()
        if not (0.1 <= float(fps) <= 1000.0):
            raise ValueError(f"fps must be 0.1-1000 frames per second, got {fps!r}")
        self._pattern = pattern
        self._files = list_frames(pattern)
        self._fps = float(fps)
        self._loop = bool(loop)
        self._pos = 0

    @property
    def fps(self) -> float:
        return self._fps

    @property
    def files(self) -> tuple[str, ...]:
        """The image files, in playing order."""
        return tuple(self._files)

    @property
    def describe(self) -> str:
        return f"images:{self._pattern} ({len(self._files)} files)"

    def _grab(self) -> tuple[np.ndarray, float, Any]:
        if self._pos >= len(self._files):
            if not self._loop:
                raise SourceEnded(f"{self.describe}: all {len(self._files)} frames played")
            self._pos = 0
        path = self._files[self._pos]
        self._pos += 1
        image = cv2.imread(path, cv2.IMREAD_COLOR)
        if image is None:
            raise SourceError(f"{path!r} is not a readable image; remove it from {self._pattern!r} or re-record it")
        return image, self._index / self._fps, None
