"""Frame sources: one interface for the Pi camera, OpenCV captures, recorded and synthetic frames.

Pick one with a spec string (:func:`open_source`):

==============================  ===============================================
``picamera2`` / ``picamera2:N``  Raspberry Pi camera N (Debian's python3-picamera2)
``opencv:0``                     USB webcam 0 (any integer is a camera index)
``opencv:PATH_OR_URL``           video file, or ``rtsp://`` / ``http://`` stream
``images:DIR_OR_GLOB[@FPS]``     recorded frames in name order (default 30 fps)
``synthetic[:SEED]``             scripted synthetic rolls (default seed 0)
==============================  ===============================================

Examples
--------
>>> from vision.sources import open_source
>>> with open_source("synthetic:3") as src:
...     first = src.read()
>>> first.image.shape
(480, 640, 3)
"""

from __future__ import annotations

from typing import Any

from vision.sources.base import Frame, FrameSource, SourceEnded, SourceError, UnknownSourceError

#: Source kinds :func:`open_source` knows, with the spec syntax of each.
SOURCE_KINDS: dict[str, str] = {
    "picamera2": "picamera2 or picamera2:N (Raspberry Pi camera N)",
    "opencv": "opencv:0 (webcam index) or opencv:PATH_OR_URL (video file, rtsp:// stream)",
    "images": "images:DIR_OR_GLOB[@FPS] (recorded frames in name order)",
    "synthetic": "synthetic[:SEED] (scripted synthetic rolls)",
}


def _usage(spec: str, why: str) -> UnknownSourceError:
    kinds = "; ".join(SOURCE_KINDS.values())
    return UnknownSourceError(f"bad camera source {spec!r}: {why}; use one of: {kinds}")


def parse_spec(spec: str) -> tuple[str, str]:
    """Split a source spec into ``(kind, argument)``; the argument may be empty.

    Raises
    ------
    UnknownSourceError
        If the kind is not one of :data:`SOURCE_KINDS`.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise _usage(str(spec), "it is empty")
    kind, _, arg = spec.strip().partition(":")
    if kind not in SOURCE_KINDS:
        raise _usage(spec, f"unknown kind {kind!r}")
    return kind, arg


def open_source(spec: str, **options: Any) -> FrameSource:
    """Open the frame source a spec string names.

    Parameters
    ----------
    spec : str
        See the module docstring (e.g. ``"opencv:0"``, ``"images:rec/*.png@15"``).
    **options
        Passed to the source's constructor (e.g. ``size=(640, 480)``, ``fps=30``,
        ``lens_position=2.5`` and ``controls={...}`` for the Pi camera).  Options
        a source does not take are ignored, so one profile serves every source.

    Returns
    -------
    FrameSource

    Raises
    ------
    UnknownSourceError
        If the spec is malformed.
    SourceError
        If the source cannot be opened (no camera, no files, picamera2 missing).
    """
    kind, arg = parse_spec(spec)
    if kind == "picamera2":
        from vision.sources.picam import Picamera2Source

        if arg and not arg.isdigit():
            raise _usage(spec, f"the camera number {arg!r} is not a whole number")
        opts = _pick(
            options, ("size", "fps", "lens_position", "controls", "warmup_frames", "module", "controls_module", "clock")
        )
        return Picamera2Source(camera_num=int(arg or 0), **opts)
    if kind == "opencv":
        from vision.sources.capture import OpenCVSource

        if not arg:
            raise _usage(spec, "give a camera index, file or URL after 'opencv:'")
        target: int | str = int(arg) if arg.isdigit() else arg
        return OpenCVSource(target, **_pick(options, ("size", "fps", "capture_factory", "sleep", "clock")))
    if kind == "images":
        from vision.sources.files import ImageFilesSource

        pattern, at, fps = arg.rpartition("@") if "@" in arg else (arg, "", "")
        if not pattern:
            raise _usage(spec, "give a folder or glob after 'images:'")
        opts = _pick(options, ("loop",))
        if at:
            try:
                opts["fps"] = float(fps)
            except ValueError:
                raise _usage(spec, f"the frame rate {fps!r} after '@' is not a number") from None
        elif "fps" in options:
            opts["fps"] = options["fps"]
        return ImageFilesSource(pattern, **opts)
    from vision.sources.synthetic import SyntheticSource

    if arg and not arg.lstrip("-").isdigit():
        raise _usage(spec, f"the seed {arg!r} is not a whole number")
    opts = _pick(options, ("script", "size", "fps", "idle_frames", "noise", "colour", "loop"))
    return SyntheticSource(seed=int(arg or 0), **opts)


def _pick(options: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k in names and v is not None}


__all__ = [
    "SOURCE_KINDS",
    "Frame",
    "FrameSource",
    "SourceEnded",
    "SourceError",
    "UnknownSourceError",
    "open_source",
    "parse_spec",
]
