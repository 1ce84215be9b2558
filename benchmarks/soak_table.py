"""The table a soak plays on (benchmarks/soak.py starts it as its own process, SIGKILLs and restarts it).

The app, the display server, the camera loop with the real pip reader on a :class:`LiveTray` behind a
fault switch (the mode is read from ``--ctl``, a control file the soak writes), the demo's player pressing the
buttons for two seats, and a new game after each one ends. ``--memlog`` (the first process only) writes a
memory probe line per minute. Run: ``python benchmarks/soak_table.py --db ... --models ... --ctl ... ...``
(only the soak does).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

import _args  # (imports _checkout: this checkout's vision/ and table/ first on sys.path)

PLAYERS = "Ann,Bo"

# -- the table (child process) ------------------------------------------------------------------


def child(args: argparse.Namespace) -> None:
    import logging

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    import vision.detect
    import vision.face
    import vision.pips

    models = Path(args.models)
    vision.face.DEFAULT_MODEL_PATH = models / "face_reader.onnx"
    vision.detect.DEFAULT_MODEL_PATH = models / "die_detector.onnx"
    vision.pips.DEFAULT_MODEL_PATH = models / "pip_finder.onnx"

    from calibration.procedure import make_watcher
    from calibration.profile import PACKAGED_PROFILES_DIR, load_profile
    from table.app import TableApp
    from table.app.camera import CameraLoop
    from table.commands._live import make_reader
    from table.demo.livetray import LiveTray
    from table.demo.presser import DemoPlayer
    from table.display.server import DisplayServer
    from table.display.snapshot import Setup
    from table.store import StoreError
    from vision.sources.base import Frame

    ctl = Path(args.ctl)
    throws = os.open(args.throws, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def mode() -> str:
        try:
            return ctl.read_text().strip()
        except OSError:
            return ""

    class FaultyTray(LiveTray):
        """The live tray behind a switch the soak sets: raise, hang, None or half-size frames."""

        def throw(self, keep, values=None):  # type: ignore[no-untyped-def]
            os.write(throws, f"{time.time():.6f}\n".encode())  # logged before: a kill cannot hide a throw
            super().throw(keep, values)

        def read(self):  # type: ignore[no-untyped-def]
            m = mode()
            if m == "raise":
                raise RuntimeError("soak: the camera library raised")
            if m == "hang":
                while mode() == "hang" and not self.closed:
                    time.sleep(0.05)
            if m == "none":
                time.sleep(1 / 30)
                return None
            frame = super().read()
            if m == "size":
                return Frame(frame.image[::2, ::2].copy(), frame.timestamp_s, frame.index, frame.truth)
            return frame

    profile = load_profile("default", PACKAGED_PROFILES_DIR)

    def make(source):  # type: ignore[no-untyped-def]
        read, see = make_reader("model", source, profile.geometry)
        return make_watcher(profile, read), see

    tray = FaultyTray(seed=args.seed)
    if args.memlog:
        threading.Thread(target=memory_probe, args=(Path(args.memlog),), daemon=True).start()

    app = TableApp(
        args.db, setup=Setup("yahtzee", "forced", PLAYERS.split(",")), autostart=True, tray=tray, camera_name="soak"
    ).start()
    server = DisplayServer(app, host=args.listen, port=args.port).start()
    camera = CameraLoop(app, tray.reopen, make, speed=args.speed).start()
    print(f"soak child: page at {server.url}", file=sys.stderr, flush=True)

    ro_conn = None

    def store_mode() -> None:
        nonlocal ro_conn
        import sqlite3

        store = app._store
        if mode() == "read-only" and ro_conn is None:
            ro_conn = store._conn
            uri = f"{Path(args.db).resolve().as_uri()}?mode=ro"
            store._conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        elif mode() != "read-only" and ro_conn is not None:
            store._conn.close()
            store._conn, ro_conn = ro_conn, None

    player = None
    while True:
        if (mode() == "read-only") != (ro_conn is not None):
            app.submit(store_mode).result(timeout=30)
        if app.screen == "game" and (player is None or not player._thread.is_alive()):
            player = DemoPlayer(app, delay_s=0.45 / args.speed).start()
        elif app.screen != "game":
            time.sleep(1.0)
            try:
                app.submit(app._start_game).result(timeout=30)
            except StoreError as exc:
                print(f"soak child: no new game yet: {exc}", file=sys.stderr, flush=True)
        time.sleep(0.2)
    camera.close()  # pragma: no cover - SIGKILLed


def memory_probe(path: Path, every_s: float = 60.0) -> None:
    """Every `every_s` seconds, one JSON line in `path`: RSS, glibc's heap (mallinfo2: bytes in use, free
    bytes kept in the heap, mmapped blocks; MB), live Python objects and the 12 commonest types.
    RSS well above "in use" + "mmap" is heap fragmentation, not a leak; growing "in use" or objects is one."""
    import collections
    import ctypes
    import gc

    class MallInfo2(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in "arena ordblks smblks hblks hblkhd usm fsm uord ford keep".split()]

    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = MallInfo2
    trace = os.environ.get("SOAK_TRACEMALLOC") == "1"  # investigation only: slows the table down
    if trace:
        import tracemalloc

        tracemalloc.start()
        first = tracemalloc.take_snapshot()
    t0 = time.monotonic()
    while True:
        m = libc.mallinfo2()
        objs = gc.get_objects()
        types = collections.Counter(type(o).__name__ for o in objs)
        line = {
            "t_s": round(time.monotonic() - t0),
            "rss_mb": round(rss_mb(os.getpid()), 1),
            "in_use_mb": round(m.uord / 2**20, 1),
            "free_mb": round(m.ford / 2**20, 1),
            "mmap_mb": round(m.hblkhd / 2**20, 1),
            "objects": len(objs),
            "threads": threading.active_count(),
            "top": types.most_common(12),
        }
        if trace:
            now = tracemalloc.take_snapshot()
            line["traced_mb"] = round(tracemalloc.get_traced_memory()[0] / 2**20, 1)
            line["growth"] = [str(d) for d in now.compare_to(first, "lineno")[:15]]
            del now
        del objs
        with open(path, "a") as f:
            f.write(json.dumps(line) + "\n")
        time.sleep(every_s)


# -- the soak (parent) ----------------------------------------------------------------------------


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def main() -> None:
    p = _args.parser(__file__, description=__doc__.splitlines()[0])
    for name in ("--db", "--models", "--ctl", "--throws", "--listen", "--memlog"):
        p.add_argument(name)
    p.add_argument("--speed", type=float, default=3.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--port", type=int, default=0)
    child(p.parse_args())


if __name__ == "__main__":
    _args.run(main)
