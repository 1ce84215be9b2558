"""Live view of the watcher: the reading drawn over the camera frame, and an MJPEG server.

:func:`annotate` draws the tray outline, the hold area, every die of the last
reading (value, or ``?`` with the reason), the watcher's state, motion, frame
rate and problems.  :class:`MjpegServer` serves the latest annotated frame on
``http://127.0.0.1:PORT/`` (a page), ``/stream`` (``multipart/x-mixed-replace``
MJPEG) and ``/frame.jpg``, with the standard library only, for machines without
a display.
"""

from __future__ import annotations

import http.server
import socketserver
import threading
import time

import cv2
import numpy as np

from vision.watch import EventKind, RollEvent, RollWatcher, WatchState

_COLOURS = {
    WatchState.MOVING: (0, 165, 255),
    WatchState.SETTLING: (0, 255, 255),
    WatchState.SETTLED: (0, 200, 0),
}


def has_display() -> bool:
    """True when an OpenCV window can be shown (a GUI backend and a display)."""
    import os

    info = cv2.getBuildInformation()
    gui = info.split("GUI:", 1)[1].split("\n", 1)[0].strip() if "GUI:" in info else "NONE"
    return gui.upper() not in ("NONE", "") and bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def annotate(
    image: np.ndarray,
    watcher: RollWatcher,
    *,
    fps: float | None = None,
    event: RollEvent | None = None,
    text_scale: float = 1.0,
) -> np.ndarray:
    """Draw the watcher's view over a camera frame.

    Dice read are boxed green, flagged dice (held die turned, die not moved)
    orange, unread dice red with the reason; ``H`` marks held dice.

    Parameters
    ----------
    image : ndarray of shape (H, W, 3), dtype uint8
        The camera frame (not modified).
    watcher : RollWatcher
        Gives the geometry, state and last reading.
    fps : float, optional
        Frame rate to print.
    event : RollEvent, optional
        The verdict to draw (default: the watcher's last settled/unreadable event
        while it is still settled).
    text_scale : float, optional
        Size of the words relative to the default (about 10 px capitals); give the factor the
        picture is shrunk by before it is shown, so that a thumbnail stays readable.

    Returns
    -------
    ndarray of shape (H, W, 3), dtype uint8
    """
    out = image.copy()
    geo = watcher.geometry
    state_colour = _COLOURS.get(watcher.state, (255, 255, 255))
    quad = np.round(geo.corners_px).astype(np.int32)
    cv2.polylines(out, [quad], True, state_colour, 2, cv2.LINE_AA)
    if watcher.hold_area_mm is not None:
        x, y, w, h = watcher.hold_area_mm
        hold = np.round(geo.tray_to_image([(x, y), (x + w, y), (x + w, y + h), (x, y + h)])).astype(np.int32)
        cv2.polylines(out, [hold], True, (255, 200, 0), 1, cv2.LINE_AA)
    last = watcher.last_event if event is None else event
    verdict = last if last is not None and last.kind in (EventKind.SETTLED, EventKind.UNREADABLE) else None
    if verdict is not None and watcher.state == WatchState.SETTLED:
        ppm = geo.px_per_mm
        flagged = {f.die for f in verdict.flags}
        for k, d in enumerate(verdict.dice):
            bx, by, bw, bh = d.box_px
            pts = geo.tray_to_image(np.array([(bx, by), (bx + bw, by), (bx + bw, by + bh), (bx, by + bh)]) / ppm)
            colour = (0, 0, 255) if d.value is None else (0, 140, 255) if k in flagged else (0, 220, 0)
            cv2.polylines(out, [np.round(pts).astype(np.int32)], True, colour, 2, cv2.LINE_AA)
            label = str(d.value) if d.value is not None else f"? {d.reason or ''}".strip()
            if d.held:
                label += " H"
            org = tuple(int(v) for v in pts[0] + (0, -6))
            k = max(1.0, 0.6 * text_scale)  # a die's label: smaller than the lines, it sits over the tray
            cv2.putText(out, label, org, cv2.FONT_HERSHEY_SIMPLEX, 0.7 * k, (0, 0, 0), round(4 * k), cv2.LINE_AA)
            cv2.putText(out, label, org, cv2.FONT_HERSHEY_SIMPLEX, 0.7 * k, colour, round(2 * k), cv2.LINE_AA)
    head = f"{watcher.state.value}  motion {watcher.motion * 100:.2f}%"
    if watcher.hand:
        head += "  hand"
    if fps is not None:
        head += f"  {fps:.1f} fps"
    lines = [head]
    if verdict is not None and watcher.state == WatchState.SETTLED:
        vals = " ".join("?" if v is None else str(v) for v in verdict.values)
        lines.append(f"{verdict.kind.value}: {vals}")
        lines.extend(p[:100] for p in verdict.problems[:2])
        lines.extend(f.message[:100] for f in verdict.flags[:2])
    elif watcher.notice:
        lines.append(watcher.notice)
    if watcher.camera_problem:
        lines.append(watcher.camera_problem[:90])
    step = round(20 * text_scale)
    band = min(out.shape[0], step // 2 + step * len(lines))
    out[:band] = (out[:band].astype(np.float32) * 0.35).astype(np.uint8)
    for k, text in enumerate(lines):
        org = (round(8 * text_scale), step + step * k)
        colour = state_colour if k == 0 else (255, 255, 255)
        while (
            len(text) > 8
            and cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.5 * text_scale, 1)[0][0] > out.shape[1] - 2 * org[0]
        ):
            text = (
                text[: len(text) - 4].rstrip() + "..."
            )  # the page says the whole problem; the picture shows its start
        cv2.putText(
            out, text, org, cv2.FONT_HERSHEY_SIMPLEX, 0.5 * text_scale, colour, max(1, round(text_scale)), cv2.LINE_AA
        )
    return out


_PAGE = (
    b"<!doctype html><html><head><title>dicetable watch</title></head>"
    b"<body style='margin:0;background:#111'><img src='/stream' style='max-width:100%'></body></html>"
)


class MjpegServer:
    """Serve the latest frame as MJPEG on localhost (standard library only).

    Parameters
    ----------
    port : int, optional
        TCP port; 0 picks a free one (see :attr:`port`).
    host : str, optional
        Address to bind; ``127.0.0.1`` keeps it on this machine.
    max_clients : int, optional
        Streams served at once; more get HTTP 503.
    quality : int, optional
        JPEG quality 1-100.

    Examples
    --------
    >>> with MjpegServer(port=0) as server:          # doctest: +SKIP
    ...     server.publish(frame)
    ...     print(server.url)
    """

    def __init__(self, *, port: int = 8765, host: str = "127.0.0.1", max_clients: int = 4, quality: int = 80) -> None:
        self._jpeg: bytes | None = None
        self._seq = 0
        self._cond = threading.Condition()
        self._quality = int(quality)
        self._slots = threading.BoundedSemaphore(max_clients)
        self._closed = False
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                if self.path == "/":
                    self._send(200, "text/html", _PAGE)
                elif self.path == "/frame.jpg":
                    jpeg = server.wait_frame(0, 2.0)[1]
                    if jpeg is None:
                        self._send(503, "text/plain", b"no frame yet")
                    else:
                        self._send(200, "image/jpeg", jpeg)
                elif self.path == "/stream":
                    self._stream()
                else:
                    self._send(404, "text/plain", b"not found: try / or /stream or /frame.jpg")

            def _send(self, code: int, ctype: str, body: bytes) -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _stream(self) -> None:
                if not server._slots.acquire(blocking=False):
                    self._send(503, "text/plain", b"too many viewers")
                    return
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "multipart/x-mixed-replace; boundary=frame")
                    self.end_headers()
                    seq = 0
                    while not server._closed:
                        seq, jpeg = server.wait_frame(seq, 1.0)
                        if jpeg is None:
                            continue
                        self.wfile.write(
                            b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: "
                            + str(len(jpeg)).encode()
                            + b"\r\n\r\n"
                            + jpeg
                            + b"\r\n"
                        )
                except (BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    server._slots.release()

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._httpd = Server((host, port), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        """The port served."""
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The page address."""
        return f"http://{self._httpd.server_address[0]}:{self.port}/"

    def publish(self, image: np.ndarray) -> None:
        """Make `image` (BGR uint8) the frame served."""
        ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, self._quality])
        if not ok:
            return
        with self._cond:
            self._jpeg = buf.tobytes()
            self._seq += 1
            self._cond.notify_all()

    def wait_frame(self, after: int, timeout: float) -> tuple[int, bytes | None]:
        """Wait up to `timeout` s for a frame newer than sequence number `after`."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._seq <= after and not self._closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            return self._seq, self._jpeg

    def close(self) -> None:
        """Stop serving; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        with self._cond:
            self._cond.notify_all()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> MjpegServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
