"""The camera: it opens, gives frames (their size and rate), its exposure is locked.

:func:`camera_problem` is also the line ``dicetable play`` puts on the table's screen when the
camera cannot be opened or is lost (:class:`table.app.camera.CameraLoop`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from table.doctor.check import Check, first_line
from table.doctor.versions import CLASH_SIGNS, clash_fix

#: Frames read to measure a live camera's rate (1 s at 30 fps), and the most seconds spent on it.
RATE_FRAMES = 30
RATE_TIMEOUT_S = 5.0

#: The camera specs, for fixes that say which to give.
SPECS = "picamera2 (the Pi camera), opencv:0 (a USB webcam), images:DIR (recorded frames) or synthetic"


@dataclass
class Look:
    """What a look at the camera found (:func:`look_at_camera`).

    Attributes
    ----------
    spec : str
        The camera asked for.
    describe : str
        The source's own one-line name (e.g. ``picamera2:0 640x480@30``); empty when it did not open.
    live : bool
        A camera that gives frames as they come (Pi camera, webcam, stream), not a recording.
    frames : int
        Frames read.
    size : tuple of 2 int or None
        ``(width, height)`` of the frames, px.
    fps : float or None
        Measured frames per second (live cameras), else the source's nominal rate.
    locked : dict
        The exposure controls the source locked (empty: it locks none).
    frame : ndarray of shape (H, W, 3), dtype uint8, or None
        The last frame read, BGR (the profile check looks for the tray markers in it).
    problem : Check or None
        Why it could not be opened or read (:func:`camera_problem`).
    """

    spec: str
    describe: str = ""
    live: bool = False
    frames: int = 0
    size: tuple[int, int] | None = None
    fps: float | None = None
    locked: dict[str, Any] = field(default_factory=dict)
    frame: np.ndarray | None = None
    problem: Check | None = None


def is_live(spec: str) -> bool:
    """Whether `spec` names a live camera (Pi camera, webcam index, stream URL); False when it is malformed."""
    from table.app.camera import camera_retries

    try:
        return camera_retries(spec)
    except ValueError:
        return False


def look_at_camera(
    spec: str,
    options: dict[str, Any] | None = None,
    *,
    opener: Callable[..., Any] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Look:
    """Open the camera `spec` with `options` (the profile's), read frames, close it.

    A live camera is read for :data:`RATE_FRAMES` frames (at most :data:`RATE_TIMEOUT_S`
    seconds) to measure its rate; a recording gives one frame and its nominal rate.
    `opener` is :func:`vision.sources.open_source` unless given (tests pass a fake).
    Never raises: what went wrong is :attr:`Look.problem`.
    """
    if opener is None:
        from vision.sources import open_source as opener
    look = Look(spec=spec, live=is_live(spec))
    try:
        source = opener(spec, **(options or {}))
    except Exception as exc:  # noqa: BLE001 - SourceError, and whatever a camera library raises
        look.problem = camera_problem(spec, exc)
        return look
    try:
        look.describe = str(source.describe)
        look.locked = dict(source.lock_controls() or {})
        stamps = []
        start = clock()
        while look.frames < (RATE_FRAMES if look.live else 1) and (
            look.frames == 0 or clock() - start < RATE_TIMEOUT_S
        ):
            frame = source.read()
            look.frames += 1
            look.frame = frame.image
            stamps.append(float(frame.timestamp_s))
        h, w = look.frame.shape[:2]
        look.size = (int(w), int(h))
        span = stamps[-1] - stamps[0] if len(stamps) > 1 else 0.0
        look.fps = (len(stamps) - 1) / span if look.live and span > 0 else float(source.fps)
    except Exception as exc:  # noqa: BLE001 - SourceEnded (an empty recording), SourceError (a lost camera)
        look.problem = camera_problem(spec, exc, opened=True)
    finally:
        try:
            source.close()
        except Exception:  # noqa: BLE001 - closing must not hide what was found
            pass
    return look


def check_camera(look: Look, running: str | None = None) -> Check:
    """The camera's line from a :class:`Look`.

    `running` names a dicetable that holds the game store (:func:`table.store.store_holder`):
    a camera it has open cannot be opened twice, which is a warning, not a fault.
    """
    if look.problem is not None:
        if running and look.live:
            return Check(
                "camera",
                "warning",
                f"{look.spec} cannot be opened now; the running table "
                f"({running}) probably has it ({look.problem.detail})",
                "to test the camera alone: 'sudo systemctl stop dicetable', run the doctor, then "
                "'sudo systemctl start dicetable'",
            )
        return look.problem
    w, h = look.size or (0, 0)
    rate = f"{look.fps:.1f} fps measured" if look.live else f"{look.fps:g} fps"
    text = f"{look.describe}: {look.frames} frame{'s' if look.frames != 1 else ''} of {w}x{h}, {rate}"
    if look.locked:
        shown = ", ".join(f"{k} {_short(v)}" for k, v in look.locked.items())
        return Check("camera", "ok", f"{text}; exposure locked ({shown})")
    if not look.live:
        return Check("camera", "ok", f"{text}; not a live camera: no exposure to lock")
    return Check(
        "camera",
        "warning",
        f"{text}; this camera does not lock its exposure, so a change of light can look like moving dice",
        "use the Pi camera (--camera picamera2), whose exposure dicetable locks",
    )


def camera_problem(spec: str, exc: BaseException | str, *, opened: bool = False) -> Check:
    """The ``fail`` line for a camera that cannot be opened (or, `opened`, stopped giving frames).

    The numpy clash (:func:`table.doctor.versions.clash_fix`) is named as such; a missing
    picamera2 says how to install it.
    """
    from table.app.camera import RETRY_MAX_S
    from vision.sources import SourceEnded, UnknownSourceError

    text = first_line(exc)
    if isinstance(exc, UnknownSourceError):
        return Check("camera", "fail", text, f"give --camera one of: {SPECS}")
    if isinstance(exc, SourceEnded):
        return Check(
            "camera",
            "fail",
            f"{spec} gave no frames ({text})",
            "give a folder or video that has frames, or a live camera",
        )
    clash = clash_fix(text)
    if clash is not None:
        sign = next(s for s in CLASH_SIGNS if s in text)
        return Check(
            "camera", "fail", f'{spec} cannot be opened: the Pi camera\'s libraries do not import ("{sign}")', clash
        )
    if "cannot import picamera2" in text or "cannot import libcamera" in text:
        return Check(
            "camera",
            "fail",
            f"{spec} cannot be opened: picamera2 is missing",
            "on the Pi: 'sudo apt install python3-picamera2' and rerun the installer; "
            "elsewhere give --camera opencv:0 or images:DIR",
        )
    if opened:
        return Check(
            "camera",
            "fail",
            f"{spec} stopped giving frames ({text})",
            f"check the camera cable; a running table opens the camera again by itself (every "
            f"{RETRY_MAX_S:g} s at most), no restart needed",
        )
    if is_live(spec):
        return Check(
            "camera",
            "fail",
            f"{spec} cannot be opened ({text})",
            "check that the camera is plugged in (the Pi camera's ribbon cable, contacts the right way "
            "round), then reboot; 'rpicam-hello --list-cameras' lists the cameras the Pi sees",
        )
    return Check("camera", "fail", f"{spec} cannot be opened ({text})", f"give --camera one of: {SPECS}")


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, (tuple, list)):
        return "/".join(_short(v) for v in value)
    return str(value)
