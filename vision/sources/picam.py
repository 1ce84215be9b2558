"""The Raspberry Pi camera through picamera2 (Debian's ``python3-picamera2``).

picamera2 is not on PyPI: it is imported here, lazily, when a
:class:`Picamera2Source` is opened, and nowhere else.  On the Pi, make the venv
with ``--system-site-packages`` so it is found.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

import numpy as np

from vision.sources.base import FrameSource, SourceError

#: Frames captured before exposure, gain and colour gains are locked (~0.5 s at 30 fps).
WARMUP_FRAMES = 15

_INSTALL_HINT = (
    "the Pi camera needs picamera2: on Raspberry Pi OS run 'sudo apt install python3-picamera2' and make "
    "the venv with --system-site-packages; elsewhere use --camera opencv:0 or images:DIR"
)


def _import(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise SourceError(f"cannot import {name} ({exc}); {_INSTALL_HINT}") from None


class Picamera2Source(FrameSource):
    """Frames from the Raspberry Pi camera, BGR, at a fixed frame rate, controls locked.

    The main stream is configured as ``RGB888`` (which picamera2 delivers as
    B, G, R bytes: OpenCV order) at `size` and `fps`.  After `warmup_frames`
    frames the automatic exposure and white balance have settled; their values
    (``ExposureTime``, ``AnalogueGain``, ``ColourGains`` from the metadata) are
    then locked with ``AeEnable``/``AwbEnable`` off, so the image does not drift
    while dice roll.  Values given in `controls` (from the calibration profile)
    are used instead of the measured ones.  With `lens_position` (Camera Module 3)
    the focus is manual at that position, in dioptres.

    Parameters
    ----------
    size : tuple of 2 int, optional
        ``(width, height)`` of the main stream in pixels.
    fps : float, optional
        Fixed frame rate.
    lens_position : float, optional
        Manual focus in dioptres (1 / distance in m); None leaves focus alone.
    controls : mapping, optional
        ``ExposureTime`` (us), ``AnalogueGain``, ``ColourGains`` (red, blue) to lock.
    warmup_frames : int, optional
        Frames to let auto-exposure settle before locking.
    camera_num : int, optional
        Which camera (0 for the first).
    module : module, optional
        The ``picamera2`` module (tests pass a fake); imported when None.
    controls_module : object, optional
        Object with ``AfModeEnum.Manual`` (``libcamera.controls``); imported when
        None and a lens position is set.
    clock : callable, optional
        Monotonic clock in seconds for timestamps.

    Raises
    ------
    SourceError
        If picamera2 is missing or the camera cannot be opened or started.
    """

    kind = "picamera2"

    def __init__(
        self,
        *,
        size: tuple[int, int] = (640, 480),
        fps: float = 30.0,
        lens_position: float | None = None,
        controls: Mapping[str, Any] | None = None,
        warmup_frames: int = WARMUP_FRAMES,
        camera_num: int = 0,
        module: Any = None,
        controls_module: Any = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self._camera_num = int(camera_num)
        self._size = (int(size[0]), int(size[1]))
        self._fps = float(fps)
        self._clock = clock
        self._t0 = clock()
        self._locked: dict[str, Any] = {}
        mod = module if module is not None else _import("picamera2")
        try:
            self._cam = mod.Picamera2(self._camera_num)
        except Exception as exc:  # the library raises plain RuntimeError/IndexError
            raise SourceError(
                f"could not open the Pi camera {self._camera_num} ({exc}): check the ribbon cable and "
                "that no other program uses the camera ('rpicam-hello --list-cameras' lists cameras)"
            ) from None
        try:
            config = self._cam.create_video_configuration(
                main={"size": self._size, "format": "RGB888"}, controls={"FrameRate": self._fps}
            )
            self._cam.configure(config)
            self._cam.start()
            if lens_position is not None:
                self._set_focus(float(lens_position), controls_module)
            for _ in range(max(0, int(warmup_frames))):
                self._cam.capture_array("main")
            self._lock(dict(controls or {}))
        except SourceError:
            self._release()
            raise
        except Exception as exc:
            self._release()
            raise SourceError(f"the Pi camera {self._camera_num} failed to start ({exc})") from None

    @property
    def fps(self) -> float:
        return self._fps

    @property
    def describe(self) -> str:
        return f"picamera2:{self._camera_num} {self._size[0]}x{self._size[1]}@{self._fps:g}"

    def _set_focus(self, lens_position: float, controls_module: Any) -> None:
        if "LensPosition" not in getattr(self._cam, "camera_controls", {"LensPosition": None}):
            raise SourceError(
                "this camera has no focus control (LensPosition), so lens_position cannot be used; "
                "remove lens_position from the profile's [camera] table (only Camera Module 3 focuses)"
            )
        ctl = controls_module if controls_module is not None else _import("libcamera").controls
        self._cam.set_controls({"AfMode": ctl.AfModeEnum.Manual, "LensPosition": lens_position})

    def _lock(self, given: dict[str, Any]) -> None:
        meta = self._cam.capture_metadata()
        locked = {
            "AeEnable": False,
            "AwbEnable": False,
            "ExposureTime": int(given.get("ExposureTime") or meta["ExposureTime"]),
            "AnalogueGain": float(given.get("AnalogueGain") or meta["AnalogueGain"]),
            "ColourGains": tuple(float(g) for g in (given.get("ColourGains") or meta["ColourGains"])),
        }
        self._cam.set_controls(locked)
        self._locked = {k: v for k, v in locked.items() if k not in ("AeEnable", "AwbEnable")}
        if "LensPosition" in meta:
            self._locked["LensPosition"] = float(meta["LensPosition"])

    def lock_controls(self) -> dict[str, Any]:
        """Return the locked ``ExposureTime`` (us), ``AnalogueGain``, ``ColourGains`` (and ``LensPosition``)."""
        return dict(self._locked)

    def _grab(self) -> tuple[np.ndarray, float, Any]:
        try:
            image = self._cam.capture_array("main")
        except Exception as exc:
            raise SourceError(f"the Pi camera stopped giving frames ({exc}); check the cable and restart") from None
        return image, self._clock() - self._t0, None

    def _release(self) -> None:
        cam = getattr(self, "_cam", None)
        if cam is None:
            return
        for step in ("stop", "close"):
            try:
                getattr(cam, step)()
            except Exception:  # closing a half-open camera must not mask the first error
                pass
        self._cam = None
