"""``dicetable watch``: watch the tray live, print roll events, show the reading over the frame."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import cv2

from calibration.procedure import make_watcher
from calibration.profile import load_profile
from table.commands._live import add_profile_options, add_reader_option, check_port, event_line, make_reader
from table.display.listening import listen_error
from vision.liveview import MjpegServer, annotate, has_display
from vision.sources import open_source

VIEWS = ("auto", "window", "mjpeg", "none")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``watch`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "watch",
        help="watch the tray live and print roll events",
        description="Watch the dice tray: detect motion, wait for the dice to settle, read them (agreed over "
        "3 frames), flag held dice that changed and dice that did not move, and show the reading "
        "over the live frame (an OpenCV window where there is a display, else MJPEG on localhost).",
    )
    p.add_argument(
        "--camera",
        required=True,
        metavar="SOURCE",
        help="picamera2, opencv:0, opencv:FILE_OR_URL, images:DIR_OR_GLOB[@FPS] or synthetic[:SEED]",
    )
    add_profile_options(p)
    add_reader_option(p)
    p.add_argument("--frames", type=int, default=None, metavar="N", help="stop after N frames")
    p.add_argument("--duration", type=float, default=None, metavar="S", help="stop after S seconds")
    p.add_argument("--json", action="store_true", help="print events as JSON lines")
    p.add_argument(
        "--view",
        choices=VIEWS,
        default="auto",
        help="live view: window, mjpeg (http://127.0.0.1:PORT/), none; auto picks window with a display",
    )
    p.add_argument("--port", type=int, default=8765, help="MJPEG port on 127.0.0.1 (default 8765; 0: any free)")
    p.add_argument(
        "--save-view",
        type=Path,
        default=None,
        metavar="FILE",
        help="write the annotated frame of each verdict (settled/unreadable) to FILE (overwritten)",
    )
    p.add_argument(
        "--audit", type=Path, default=None, metavar="DIR", help="keep each verdict's rectified frame and JSON in DIR"
    )
    p.set_defaults(func=run)


def _check_bounds(args: argparse.Namespace) -> None:
    if args.frames is not None and args.frames < 1:
        raise ValueError(f"--frames must be at least 1, got {args.frames}")
    if args.duration is not None and args.duration <= 0:
        raise ValueError(f"--duration must be more than 0 seconds, got {args.duration}")
    check_port(args.port)


def _mjpeg_server(port: int) -> MjpegServer:
    """The live view on 127.0.0.1:`port`; OSError in one line with advice (as ``play`` gives) when it cannot listen."""
    try:
        return MjpegServer(port=port)
    except OSError as exc:
        raise listen_error(exc, "127.0.0.1", port) from None


def run(args: argparse.Namespace) -> int:
    """Watch until the source ends, the bounds are reached, or Ctrl-C; exit status 0."""
    _check_bounds(args)
    profile = load_profile(args.profile, args.profiles_dir)
    view = args.view
    if view == "auto":
        view = "window" if has_display() else "mjpeg"
    if view == "window" and not has_display():
        raise ValueError(
            "--view window needs a display and an OpenCV build with a GUI "
            "(opencv-python-headless has none); use --view mjpeg"
        )
    if args.audit is not None:
        args.audit.mkdir(parents=True, exist_ok=True)
    out = sys.stdout
    with open_source(args.camera, **profile.camera.source_options()) as source:
        reader, see = make_reader(args.reader, source, profile.geometry)
        watcher = make_watcher(profile, reader)
        server = _mjpeg_server(args.port) if view == "mjpeg" else None
        if server is not None:
            print(f"live view: {server.url}", file=sys.stderr)
        costs: list[float] = []
        verdicts = 0
        t0 = time.monotonic()
        fps = None
        last_t = None
        try:
            for n, frame in enumerate(source):
                if args.frames is not None and n >= args.frames:
                    break
                if args.duration is not None and time.monotonic() - t0 >= args.duration:
                    break
                see(frame)
                c0 = time.perf_counter()
                events = watcher.update(frame)
                costs.append(time.perf_counter() - c0)
                if last_t is not None and frame.timestamp_s > last_t:
                    inst = 1.0 / (frame.timestamp_s - last_t)
                    fps = inst if fps is None else 0.9 * fps + 0.1 * inst
                last_t = frame.timestamp_s
                for event in events:
                    if args.json:
                        print(json.dumps(event.to_json()), file=out, flush=True)
                    else:
                        print(event_line(event), file=out, flush=True)
                    if event.kind.value in ("settled", "unreadable"):
                        verdicts += 1
                        _keep(args, event, frame, watcher, fps, verdicts)
                if server is not None or view == "window":
                    shown = annotate(frame.image, watcher, fps=fps)
                    if server is not None:
                        server.publish(shown)
                    else:
                        cv2.imshow("dicetable watch", shown)
                        if cv2.waitKey(1) & 0xFF in (ord("q"), 27):
                            break
        finally:
            if server is not None:
                server.close()
            if view == "window":
                cv2.destroyAllWindows()
    if costs:
        ms = sorted(c * 1000 for c in costs)
        print(
            f"watched {len(costs)} frames: {verdicts} verdicts; per-frame watcher time median "
            f"{statistics.median(ms):.2f} ms, 95th percentile {ms[int(0.95 * (len(ms) - 1))]:.2f} ms",
            file=sys.stderr,
        )
    return 0


def _keep(args: argparse.Namespace, event, frame, watcher, fps, k: int) -> None:
    if args.save_view is not None:
        cv2.imwrite(str(args.save_view), annotate(frame.image, watcher, fps=fps, event=event))
    if args.audit is not None and event.frame is not None:
        stem = args.audit / f"roll{k:04d}_frame{event.frame_index:06d}"
        cv2.imwrite(str(stem) + ".png", event.frame)
        Path(str(stem) + ".json").write_text(json.dumps(event.to_json(), indent=1) + "\n")
