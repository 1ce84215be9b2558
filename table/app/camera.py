"""The app's camera thread: frames -> roll watcher -> :class:`table.app.TableApp`, plus the small live view."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import cv2

from table.app.camera_guard import (
    FrameTimeout,
    OpenTimeout,
    _check_frame,
    _FrameReads,
    _SourceFault,
    _Stopped,
    open_camera,
)
from vision.errors import VisionError
from vision.sources.base import SourceEnded

__all__ = ["CameraLoop", "FrameTimeout", "OpenTimeout", "camera_retries"]

log = logging.getLogger(__name__)

#: Width of the camera view sent to the page, in pixels.
VIEW_WIDTH = 360
#: Seconds before the first try to open the camera again after it failed; each failure in a row doubles
#: the pause, up to :data:`RETRY_MAX_S` (a camera that fails at once is not reopened 30 times a minute).
RETRY_S = 1.0
RETRY_MAX_S = 30.0
#: Seconds without a frame after which the camera counts as hung and is opened again (a Pi camera
#: gives its first frame within about 2 s of opening, then one every 33 ms).
STALL_S = 5.0
#: Seconds a camera may take to open before it counts as hung and is tried again (a Pi camera opens in
#: about 1-2 s; an OpenCV capture of a dead stream URL gives up after its own 30 s).
OPEN_S = 10.0
#: Seconds :meth:`CameraLoop.close` waits for the camera thread.
CLOSE_WAIT_S = 3.0


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

    Nothing a frame source or the reader raises ends the thread (but :class:`SourceEnded`, the end
    of a recording): what happened is said on the page (:meth:`TableApp.trouble`, the camera status),
    and the camera is opened again after :data:`RETRY_S`, 2, 4 ... up to :data:`RETRY_MAX_S` seconds.
    A camera that gives no frame for `stall_s` seconds is reopened the same way.

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
    stall_s : float, optional
        Seconds without a frame after which the camera counts as hung (:data:`STALL_S`).
    open_s : float, optional
        Seconds an open may take before it counts as hung (:data:`OPEN_S`): said, and tried again.
    """

    def __init__(
        self,
        app: Any,
        open_source: Callable[[], Any],
        make_watcher: Callable[[Any], Any],
        *,
        speed: float = 1.0,
        view_every_s: float = 0.5,
        stall_s: float | None = None,
        open_s: float | None = None,
    ) -> None:
        self.app = app
        self.open_source = open_source
        self.make_watcher = make_watcher
        self.speed = float(speed)
        self.view_every_s = float(view_every_s)
        self.stall_s = STALL_S if stall_s is None else float(stall_s)
        self.open_s = OPEN_S if open_s is None else float(open_s)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.frames = 0
        self.watch_s = 0.0
        self.source: Any = None
        self.watcher: Any = None
        self.opens = 0  # times a camera was opened and a watcher made for it
        self.left_behind: list[threading.Thread] = []  # read threads stuck in a read that close() did not end
        self._said: str | None = None  # the camera's trouble line last shown
        self._no_view = False  # the annotated view failed once (said once in the log)
        self._size: tuple[int, int] | None = None  # (width, height) of the first frame

    def start(self) -> CameraLoop:
        """Start the thread; return self."""
        self._thread = threading.Thread(target=self._run, name="dicetable-camera", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop the thread and close the camera (within about :data:`CLOSE_WAIT_S` s, even when a read hangs)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=CLOSE_WAIT_S)
            if self._thread.is_alive():
                log.warning("the camera thread did not stop within %g s (a camera that does not open?)", CLOSE_WAIT_S)
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
        delay = RETRY_S
        while not self._stop.is_set():
            try:
                self.source = open_camera(self.open_source, self.open_s, self._stop)
            except _Stopped:
                return
            except Exception as exc:  # noqa: BLE001 - SourceError, and whatever a camera library raises
                self._not_opened(spec, exc, camera_problem, delay)
                self._stop.wait(delay)
                delay = min(RETRY_MAX_S, delay * 2)
                continue
            started, frames = time.monotonic(), self.frames
            try:
                try:
                    self.watcher, see = self.make_watcher(self.source)
                except Exception as exc:  # noqa: BLE001 - a model or profile that cannot load: the reader's fault
                    self._reader_failed(exc)
                else:
                    self.opens += 1
                    self.app.camera_update(status="opened")  # a new watcher: the dice lying there are not thrown
                    if not self._loop(self.source, see, spec):
                        return
            finally:
                self._close_source()
            if self.frames > frames and time.monotonic() - started >= RETRY_MAX_S:
                delay = RETRY_S  # it ran well for a while: the next fault starts the back-off anew
            self._stop.wait(delay)
            delay = min(RETRY_MAX_S, delay * 2)

    def _not_opened(self, spec: str, exc: BaseException, camera_problem: Callable[..., Any], delay: float) -> None:
        """The camera did not open (it failed, or hung for :attr:`open_s` s): say so; the loop tries again."""
        from table.doctor.check import Check

        if isinstance(exc, OpenTimeout):
            text = f"The camera did not open within {self.open_s:g} s: trying again in {delay:g} s..."
            check = Check(
                "camera",
                "fail",
                f"{spec} did not open within {self.open_s:g} s (it hangs)",
                f"the table tries again by itself (every {RETRY_MAX_S:g} s at most); if it keeps hanging, check "
                "the camera cable and that no other program uses the camera",
            )
            log.warning("camera not opened: %s", exc)
        else:
            text, check = f"Camera lost ({exc}): check the camera cable. Trying again...", camera_problem(spec, exc)
        self.app.camera_update(status="lost", warning=("camera-lost", text))
        self._trouble(check)

    def _close_source(self) -> None:
        source, self.source = self.source, None
        if source is None:
            return
        try:
            source.close()
        except Exception as exc:  # noqa: BLE001 - a camera that fails to close is opened anew all the same
            log.warning("closing the camera failed: %s", exc)

    def _lost(self, spec: str, exc: BaseException) -> None:
        """The camera stopped giving frames (or gave bad ones, or hung): say so; the loop opens it again."""
        from table.doctor.check import Check, first_line

        log.warning("camera lost: %s", exc)
        hung = isinstance(exc, FrameTimeout)
        text = (
            f"The camera gave no picture for {self.stall_s:g} s: opening it again..."
            if hung
            else "Camera lost: check the camera cable. Trying again..."
        )
        self.app.camera_update(status="lost", warning=("camera-lost", text))
        what = first_line(exc) if isinstance(exc, OSError) else f"{type(exc).__name__}: {first_line(exc)}"
        self._trouble(
            Check(
                "camera",
                "fail",
                f"{spec} stopped giving frames ({what})",
                "the table opens it again by itself; if it keeps "
                + ("hanging" if hung else "failing")
                + ", check the camera cable",
            )
        )

    def _reader_failed(self, exc: BaseException) -> None:
        """The reader failed (a broken model or profile, a bug): every screen says so; the loop tries again."""
        from table.doctor.check import Check, first_line

        if isinstance(exc, (VisionError, ValueError)):  # a model or setting named in its message: no traceback
            log.error("the dice reader stopped (its model or settings): %s: %s", type(exc).__name__, first_line(exc))
        else:  # a bug: the traceback says where
            log.error("the dice reader stopped (it failed)", exc_info=exc)
        self.app.camera_update(status="failed")
        self._trouble(
            Check(
                "reader",
                "fail",
                f"the dice reader stopped ({type(exc).__name__}: {first_line(exc)})",
                "run 'dicetable doctor' to see which part is broken; the table tries again by itself "
                f"(every {RETRY_MAX_S:g} s at most)",
            )
        )

    def _loop(self, source: Any, see: Callable[[Any], Any], spec: str) -> bool:
        """Watch `source` until it fails (said on the page: True, open it again) or ends or the loop stops (False)."""
        reads = _FrameReads(source, self._stop)
        try:
            self._watch(source, see, reads)
        except _Stopped:
            return False
        except SourceEnded:
            self.app.camera_update(status="ended")
            return False
        except (FrameTimeout, _SourceFault) as exc:
            self._lost(spec, exc.__cause__ if isinstance(exc, _SourceFault) else exc)
        except Exception as exc:  # noqa: BLE001 - the reader's (a FaceModelError, though an OSError, is the model's
            # fault, not the cable's; cv2.error, a malformed confidence map): said, not silent
            self._reader_failed(exc)
        finally:
            if not reads.close(CLOSE_WAIT_S / 3):  # a read that hangs: closing the camera should end it
                self._close_source()
                if not reads.close(CLOSE_WAIT_S / 3):
                    log.warning("a camera read still hangs after the camera was closed; its thread is left")
                    self.left_behind.append(reads.thread)
        return not self._stop.is_set()

    def _watch(self, source: Any, see: Callable[[Any], Any], reads: _FrameReads) -> None:
        fps = max(1.0, float(source.fps))
        last_view = 0.0
        next_t = time.monotonic()
        still_image = None
        first = True
        while not self._stop.is_set():
            try:
                frame = reads.read(self.stall_s)
                self._size = _check_frame(frame, self._size)
            except (_Stopped, SourceEnded, FrameTimeout):
                raise
            except Exception as exc:  # noqa: BLE001 - whatever the camera raised is the camera's fault
                raise _SourceFault(str(exc)) from exc
            see(frame)
            t0 = time.perf_counter()
            count = getattr(self.watcher, "expected_dice", None)  # free roll, roll-off: any count (None)
            self._count = getattr(self, "_count", None) or count
            self.watcher.expected_dice = None if getattr(self.app, "free_dice", False) else self._count
            events = self.watcher.update(frame)
            self.watch_s += time.perf_counter() - t0
            if first:  # a frame read and watched: the camera works (said before this frame's events)
                self.app.camera_update(status="watching", warning=("camera-lost", None))
                self._trouble(None)
                first = False
            self.frames += 1
            mono = time.monotonic()
            verdict = None
            for event in events:
                if str(event.kind.value) in ("settled", "unreadable"):
                    verdict = event
                    shot = self._audit_frame(frame)
                    if shot:  # the tray as the verdict saw it, for the fair-dice audit (table.audit.frames)
                        self.app.roll_event(event, mono, frame=shot)
                        continue
                self.app.roll_event(event, mono)
            if verdict is not None or mono - last_view >= self.view_every_s:
                if verdict is not None or frame.image is not still_image:
                    try:
                        self.app.camera_update(jpeg=self._view(frame, verdict))
                    except Exception as exc:  # noqa: BLE001 - the view is for people: dice are read without it
                        if not self._no_view:
                            log.warning("no camera view for the page: %s: %s", type(exc).__name__, exc)
                        self._no_view = True
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

    def _audit_frame(self, frame: Any) -> bytes:
        """A small JPEG of `frame` when the app keeps audit frames (``app.frames``), else b""."""
        if getattr(self.app, "frames", None) is None:
            return b""
        from table.audit.frames import tray_jpeg

        try:
            return tray_jpeg(frame.image)
        except cv2.error:
            return b""

    def _view(self, frame: Any, event: Any) -> bytes:
        from vision.liveview import annotate

        h, w = frame.image.shape[:2]
        # words drawn big enough to read once the frame is shrunk to VIEW_WIDTH and shown ~240 px wide at 800x480
        img = annotate(frame.image, self.watcher, event=event, text_scale=max(1.0, 1.6 * w / VIEW_WIDTH))
        small = cv2.resize(img, (VIEW_WIDTH, int(round(h * VIEW_WIDTH / w))), interpolation=cv2.INTER_AREA)
        ok, buf = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, 75])
        return buf.tobytes() if ok else b""
