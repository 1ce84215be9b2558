"""The app's camera thread: frames -> roll watcher -> :class:`table.app.TableApp`, plus the small live view."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import cv2

from vision.errors import VisionError
from vision.sources.base import SourceEnded, SourceError

log = logging.getLogger(__name__)

#: Width of the camera view sent to the page, in pixels.
VIEW_WIDTH = 360
#: Seconds between tries to open a camera that could not be opened.
RETRY_S = 3.0


def camera_retries(spec: str) -> bool:
    """True for a camera the table keeps trying to open: a Pi camera, a webcam index, a stream URL.

    False for recordings (``opencv:FILE``, ``images:...``) and the synthetic
    camera: a file or folder that cannot be opened will not appear by waiting.

    Raises
    ------
    vision.sources.UnknownSourceError
        If `spec` is not a camera source.
    """
    from vision.sources import parse_spec

    kind, arg = parse_spec(spec)
    return kind == "picamera2" or (kind == "opencv" and (arg.isdigit() or "://" in arg))


class CameraLoop:
    """Read frames, feed the watcher, send its events and a small annotated view to the app.

    Parameters
    ----------
    app : TableApp
        Receives :meth:`~table.app.TableApp.roll_event` and :meth:`~table.app.TableApp.camera_update`.
    open_source : callable
        ``open_source() -> FrameSource``; called again after the camera is lost.
    make_watcher : callable
        ``make_watcher(source) -> (watcher, see)``: the roll watcher and a per-frame hook.
    speed : float, optional
        Pace of finite sources (synthetic, recorded) relative to their fps; 0 runs
        as fast as the CPU allows while dice move (still frames are paced at the fps).
    view_every_s : float, optional
        Seconds between camera views while nothing is decided (verdicts always send one).
    """

    def __init__(
        self,
        app: Any,
        open_source: Callable[[], Any],
        make_watcher: Callable[[Any], Any],
        *,
        speed: float = 1.0,
        view_every_s: float = 0.5,
    ) -> None:
        self.app = app
        self.open_source = open_source
        self.make_watcher = make_watcher
        self.speed = float(speed)
        self.view_every_s = float(view_every_s)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.frames = 0
        self.watch_s = 0.0
        self.source: Any = None
        self.watcher: Any = None
        self._said: str | None = None  # the camera's trouble line last shown

    def start(self) -> CameraLoop:
        """Start the thread; return self."""
        self._thread = threading.Thread(target=self._run, name="dicetable-camera", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop the thread and close the camera."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._thread = None

    def _trouble(self, check: Any) -> None:
        """Put the doctor's line for the camera on every screen (None clears it); print it once when it changes."""
        line = None if check is None else check.screen_line()
        if line != self._said and line is not None:
            log.warning("dicetable: %s", line)
        self._said = line
        trouble = getattr(self.app, "trouble", None)
        if trouble is not None:
            trouble("camera", line)

    def _run(self) -> None:
        from table.doctor.camera import camera_problem

        spec = str(getattr(self.app, "camera_name", "") or "the camera")
        while not self._stop.is_set():
            try:
                self.source = self.open_source()
            except (SourceError, OSError, ValueError) as exc:
                self.app.camera_update(
                    status="lost",
                    warning=("camera-lost", f"Camera lost ({exc}): check the camera cable. Trying again..."),
                )
                self._trouble(camera_problem(spec, exc))
                self._stop.wait(RETRY_S)
                continue
            try:
                self.watcher, see = self.make_watcher(self.source)
                self.app.camera_update(status="watching", warning=("camera-lost", None))
                self._trouble(None)
                self._loop(self.source, see)
            except SourceEnded:
                self.app.camera_update(status="ended")
                return
            except SourceError as exc:
                self._lost(spec, exc)
            except VisionError as exc:  # a model that cannot load (FaceModelError is an OSError too): no retry
                self._stopped(exc)
                return
            except OSError as exc:
                self._lost(spec, exc)
            except Exception as exc:  # noqa: BLE001 - a reader that cannot run: said, not silent
                self._stopped(exc)
                return
            finally:
                self.source.close()

    def _lost(self, spec: str, exc: BaseException) -> None:
        """The camera stopped giving frames: say so; the loop opens it again after a pause."""
        from table.doctor.camera import camera_problem

        log.warning("camera lost: %s", exc)
        self.app.camera_update(
            status="lost", warning=("camera-lost", "Camera lost: check the camera cable. Trying again...")
        )
        self._trouble(camera_problem(spec, exc, opened=True))
        self._stop.wait(2.0)

    def _stopped(self, exc: BaseException) -> None:
        """The reader failed (a broken model, a bug): the thread ends, and every screen says so."""
        from table.doctor.check import Check, first_line

        log.error("the dice reader stopped", exc_info=exc)
        self.app.camera_update(status="failed")
        self._trouble(
            Check(
                "reader",
                "fail",
                f"the dice reader stopped ({type(exc).__name__}: {first_line(exc)})",
                "run 'dicetable doctor' to see which part is broken, then restart the table",
            )
        )

    def _loop(self, source: Any, see: Callable[[Any], Any]) -> None:
        fps = max(1.0, float(source.fps))
        last_view = 0.0
        next_t = time.monotonic()
        still_image = None
        while not self._stop.is_set():
            frame = source.read()
            see(frame)
            t0 = time.perf_counter()
            events = self.watcher.update(frame)
            self.watch_s += time.perf_counter() - t0
            self.frames += 1
            mono = time.monotonic()
            verdict = None
            for event in events:
                self.app.roll_event(event, mono)
                if str(event.kind.value) in ("settled", "unreadable"):
                    verdict = event
            if verdict is not None or mono - last_view >= self.view_every_s:
                if verdict is not None or frame.image is not still_image:
                    self.app.camera_update(jpeg=self._view(frame, verdict))
                    still_image = frame.image
                last_view = mono
            # Pace: live cameras block in read(); finite sources follow their fps times speed.
            if source.kind in ("synthetic", "synthetic-live", "images"):
                moving = bool(getattr(source, "busy", True))
                step = (
                    1.0 / fps
                    if (self.speed <= 0 and not moving)
                    else (0.0 if self.speed <= 0 else 1.0 / (fps * self.speed))
                )
                next_t = max(next_t + step, time.monotonic() - 0.5)
                delay = next_t - time.monotonic()
                if delay > 0:
                    self._stop.wait(delay)

    def _view(self, frame: Any, event: Any) -> bytes:
        from vision.liveview import annotate

        img = annotate(frame.image, self.watcher, event=event)
        h, w = img.shape[:2]
        small = cv2.resize(img, (VIEW_WIDTH, int(round(h * VIEW_WIDTH / w))), interpolation=cv2.INTER_AREA)
        ok, buf = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, 75])
        return buf.tobytes() if ok else b""
