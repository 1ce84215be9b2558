"""Soak: a table plays games on the synthetic camera for --minutes while a schedule injects field faults.

Run: ``python benchmarks/soak.py [--minutes 30] [--repeat 3]`` (as root for a real full disk: the store lives
on a small tmpfs of its own, as in tests/test_store_faults.py; without root the disk-full fault is left out).

The table is a child process (``benchmarks/soak_table.py``): the app, the display server, the camera loop with
the real pip reader on a :class:`LiveTray` wrapped in a fault switch, and the demo's player pressing the
buttons for two seats (table/demo/presser.py); a finished game is followed by a new one. It is SIGKILLed and
started again for real. Faults, each ``--repeat`` times:

- ``disk-full``: a file fills the store's tmpfs to the last byte, then is deleted.
- ``read-only``: the store's SQLite connection is swapped for a ``mode=ro`` one, then back (a running process
  keeps its open write handles: a real read-only remount is refused as busy, so this is how a running table
  sees a disk gone read-only; tests/test_store_faults.py does the same).
- ``camera-raise`` / ``camera-hang`` / ``camera-none`` / ``camera-size``: the frame source raises, blocks in
  ``read()``, returns None, or gives half-size frames (the soak writes the mode to a control file).
- ``model-missing``: face_reader.onnx is taken out of the models folder the table loads from (a copy), the
  table restarted, then the file put back.
- ``sigkill``: SIGKILL, then started again.
- ``idle-sockets``: 500 idle TCP connections to the page (from the host's LAN address where it has one).

Measured per fault kind: times injected; noticed (seconds from injection until ``/api/state`` shows the
fault: a store warning, the camera's or reader's trouble line); recovered (seconds from clearing until the
trouble is gone and the game moved on); events lost (scored boxes the page showed before the fault that the
store does not hold after it); phantom rolls (camera ``dice_read`` events with no throw of the synthetic tray
before them: every throw is logged by the child before it happens); tracebacks in the child's log; RSS of
the first child after warm-up and before it is first killed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import _args  # (imports _checkout: this checkout's vision/ and table/ first on sys.path)
from _checkout import ROOT
from soak_table import rss_mb  # noqa: E402  (the table process's RSS reader)

KINDS = (
    "disk-full",
    "read-only",
    "camera-raise",
    "camera-hang",
    "camera-none",
    "camera-size",
    "idle-sockets",
    "sigkill",
    "model-missing",
)
CAMERA_MODES = {"camera-raise": "raise", "camera-hang": "hang", "camera-none": "none", "camera-size": "size"}
#: The table process (benchmarks/soak_table.py).
TABLE = Path(__file__).with_name("soak_table.py")


def get(url: str, timeout: float = 5.0) -> dict | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return json.loads(r.read())
    except (OSError, ValueError):
        return None


def lan_address() -> str:
    """The host's own non-loopback address (the idle sockets come from it, as from a phone), else loopback."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))
            return s.getsockname()[0]
    except OSError:
        return "127.0.0.1"


class Soak:
    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args = args
        self.work = work
        self.disk = work / "disk"
        self.db = self.disk / "games.sqlite3"
        self.models = work / "models"
        self.ctl = work / "ctl"
        self.throws = work / "throws.log"
        self.log = work / "child.log"
        self.memlog = work / "memory.log"
        self.host = lan_address()
        self.port = args.port or self._free_port()
        self.proc: subprocess.Popen | None = None
        self.snap: dict | None = None
        self.progress = 0  # times the page's game changed
        self._last_game = None
        self.rows: dict[str, dict[str, list]] = {
            k: {"noticed": [], "recovered": [], "lost": [], "missed": []} for k in KINDS
        }
        self.page_boxes: list[tuple[tuple[str, ...], dict]] = []  # (players, {player: boxes}) the page showed
        self.rss: list[float] = []
        self.health_ms: list[float] = []
        self.mounted = False

    def _free_port(self) -> int:
        with socket.socket() as s:
            s.bind(("0.0.0.0", 0))
            return s.getsockname()[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def setup(self) -> None:
        self.disk.mkdir()
        if os.geteuid() == 0:
            got = subprocess.run(
                ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(self.disk)], capture_output=True
            )
            self.mounted = got.returncode == 0
        shutil.copytree(ROOT / "vision" / "models", self.models)
        self.ctl.write_text("")

    def start(self) -> None:
        env = dict(os.environ, DICETABLE_THREADS="1", PYTHONUNBUFFERED="1")
        cmd = [sys.executable, str(TABLE), "--db", str(self.db), "--models", str(self.models)]
        cmd += ["--ctl", str(self.ctl), "--throws", str(self.throws), "--port", str(self.port)]
        cmd += ["--listen", "0.0.0.0", "--seed", str(self.args.seed), "--speed", str(self.args.speed)]
        if self.proc is None:  # the first table process: the one whose memory is measured
            cmd += ["--memlog", str(self.memlog)]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
        end = time.monotonic() + 120
        while get(self.url + "/health", 1) is None:
            if time.monotonic() > end or self.proc.poll() is not None:
                raise SystemExit(f"the table did not start: see {self.log}")
            time.sleep(0.2)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    # -- watching the page

    def poll(self) -> dict | None:
        snap = get(self.url + "/api/state", 5)
        if snap is not None:
            self.snap = snap
            game = snap.get("game")
            key = json.dumps(game, sort_keys=True) if game else None
            if key != self._last_game:
                self.progress += 1
                self._last_game = key
            if game:
                players = tuple(p["name"] for p in game["players"])
                boxes = {p["name"]: {b: v for b, v in p["boxes"].items() if v is not None} for p in game["players"]}
                self.page_boxes.append((players, boxes))
                del self.page_boxes[:-1]
        return snap

    def shows(self, kind: str, snap: dict | None) -> bool:
        if snap is None:
            return False
        troubles = {t["part"]: t["text"] for t in snap.get("troubles", [])}
        warnings = {w["kind"] for w in snap.get("warnings", [])}
        if kind in ("disk-full", "read-only"):
            return "store" in troubles or "store" in warnings
        if kind == "model-missing":  # the camera's line names the reader
            return "dice reader" in troubles.get("camera", "").lower()
        if kind.startswith("camera"):
            return "camera" in troubles or snap.get("camera", {}).get("status") == "lost"
        return False

    def wait(self, cond, timeout: float) -> float | None:
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            snap = self.poll()
            if cond(snap):
                return time.monotonic() - t0
            time.sleep(0.1)
        return None

    # -- the checks

    def lost_boxes(self) -> int:
        """Scored boxes the page showed last that no stored game of the same players holds."""
        from table.store import open_store

        if not self.page_boxes:
            return 0
        players, boxes = self.page_boxes[-1]
        with open_store(self.db, readonly=True) as store:
            best = None
            for g in store.games()[-5:]:
                st = store.load(g.id)
                if tuple(st.players) != players:
                    continue
                missing = sum(
                    1 for i, name in enumerate(players) for b, v in boxes[name].items() if st.cards[i].boxes.get(b) != v
                )
                best = missing if best is None else min(best, missing)
        return sum(len(b) for b in boxes.values()) if best is None else best

    def phantoms(self) -> tuple[int, int, int]:
        """(phantom rolls, camera dice_read events, throws): a camera reading with no unmatched throw before it."""
        from table.game.events import DiceRead, DiceSource
        from table.store import open_store

        reads = []
        with open_store(self.db, readonly=True) as store:
            for g in store.games():
                reads += [e.at for e in store.events(g.id) if isinstance(e, DiceRead) and e.source is DiceSource.CAMERA]
        throws = [float(x) for x in self.throws.read_text().split()] if self.throws.exists() else []
        merged = sorted([(t, 0) for t in throws] + [(t, 1) for t in reads])
        free = phantom = 0
        for _, is_read in merged:
            if not is_read:
                free += 1
            elif free:
                free -= 1
            else:
                phantom += 1
        return phantom, len(reads), len(throws)

    # -- the faults

    def inject(self, kind: str) -> None:
        row = self.rows[kind]
        self.poll()
        hold = self.args.hold
        if kind == "sigkill":
            self.kill()
            t0 = time.monotonic()
            self.start()
            before = self.progress
            took = self.wait(lambda s: self.progress > before + 1, 180)
            row["noticed"].append(None)
            row["recovered"].append(None if took is None else time.monotonic() - t0)
        elif kind == "idle-sockets":
            socks = []
            for _ in range(500):
                s = socket.socket()
                s.settimeout(2)
                try:
                    s.connect((self.host, self.port))
                except OSError:
                    s.close()
                    continue
                socks.append(s)
            before = self.progress
            t0 = time.monotonic()
            while time.monotonic() - t0 < hold:
                h0 = time.perf_counter()
                ok = get(self.url + "/health", 5) is not None
                self.health_ms.append((time.perf_counter() - h0) * 1000 if ok else float("inf"))
                self.poll()
                time.sleep(0.2)
            for s in socks:
                s.close()
            row["noticed"].append(None)
            moved = self.progress > before
            took = 0.0 if moved else self.wait(lambda s: self.progress > before, 120)
            row["recovered"].append(took)
            row.setdefault("sockets", []).append(len(socks))
        else:
            filler = self.disk / "filler"
            if kind == "model-missing":
                self.kill()
                (self.models / "face_reader.onnx").rename(self.models / "face_reader.onnx.gone")
                self.start()
            elif kind == "disk-full":
                fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
                try:
                    for size in (1 << 20, 1 << 16, 1 << 12, 1 << 9, 1):
                        try:
                            while True:
                                os.write(fd, b"\0" * size)
                        except OSError:
                            pass
                finally:
                    os.close(fd)
            elif kind == "read-only":
                self.ctl.write_text("read-only")
            else:
                self.ctl.write_text(CAMERA_MODES[kind])
            t0 = time.monotonic()
            # A full disk is noticed at the first write that needs new space: SQLite reuses its WAL file's
            # pages, so writes went on for up to a minute after the disk filled up (seen in a soak).
            window = 240.0 if kind == "disk-full" else max(60.0, hold)
            row["noticed"].append(self.wait(lambda s: self.shows(kind, s), window))
            time.sleep(max(0.0, hold - (time.monotonic() - t0)))
            if kind == "model-missing":
                (self.models / "face_reader.onnx.gone").rename(self.models / "face_reader.onnx")
            elif kind == "disk-full":
                filler.unlink()
            else:
                self.ctl.write_text("")
            before = self.progress
            row["recovered"].append(self.wait(lambda s: not self.shows(kind, s) and self.progress > before + 1, 180))
        row["lost"].append(self.lost_boxes())

    def run(self) -> None:
        a = self.args
        kinds = [k for k in KINDS if k != "disk-full" or self.mounted]
        # Faults that restart the table go last: the first child lives through most of the run (its memory).
        schedule = [k for _ in range(a.repeat) for k in kinds if k not in ("sigkill", "model-missing")]
        schedule += [k for _ in range(a.repeat) for k in ("sigkill", "model-missing")]
        self.start()
        t_start = time.monotonic()
        end = t_start + a.minutes * 60
        self.wait(lambda s: False, a.warmup)
        self.rss.append(rss_mb(self.proc.pid))
        print(f"soak: table up, RSS after {a.warmup:g} s warm-up {self.rss[0]:.0f} MB; {len(schedule)} faults")
        for i, kind in enumerate(schedule):
            left = len(schedule) - i
            gap = max(5.0, (end - time.monotonic()) / left - a.hold - 20)
            self.wait(lambda s: False, gap)
            if kind == "sigkill" and len(self.rss) == 1:
                self.rss.append(rss_mb(self.proc.pid))
            if kind == "model-missing" and len(self.rss) == 1:
                self.rss.append(rss_mb(self.proc.pid))
            t = time.monotonic() - t_start
            self.inject(kind)
            r = self.rows[kind]
            n, rec = r["noticed"][-1], r["recovered"][-1]
            print(
                f"soak {t / 60:5.1f} min: {kind}: noticed {'-' if n is None else f'{n:.1f} s'}, recovered "
                f"{'never' if rec is None else f'{rec:.1f} s'}, boxes lost {r['lost'][-1]}",
                flush=True,
            )
        self.wait(lambda s: False, max(0.0, end - time.monotonic()))
        self.minutes = (time.monotonic() - t_start) / 60

    def report(self) -> None:
        def fmt(xs: list) -> str:
            got = [x for x in xs if x is not None]
            if not xs or all(x is None for x in xs):
                return "-"
            return f"{statistics.median(got):.1f} / {max(got):.1f}" + (
                f" ({len(xs) - len(got)} never)" if len(got) < len(xs) else ""
            )

        phantom, reads, throws = self.phantoms()
        text = self.log.read_text(errors="replace")
        tracebacks = text.count("Traceback (most recent call last)")
        print()
        print(
            f"Soak: {self.minutes:.1f} min, {reads} camera readings from {throws} throws, games in the store:", end=" "
        )
        from table.store import open_store

        with open_store(self.db, readonly=True) as store:
            games = store.games()
            print(f"{len(games)} ({sum(g.status == 'finished' for g in games)} finished)")
        print(f"{'fault':14} {'injected':>8} {'noticed s p50 / max':>22} {'recovered s p50 / max':>24} {'lost':>5}")
        for kind in KINDS:
            r = self.rows[kind]
            if not r["recovered"]:
                print(f"{kind:14} {0:8}   (not run: {'needs root for a tmpfs' if kind == 'disk-full' else '-'})")
                continue
            n = "page down" if kind == "sigkill" else "-" if kind == "idle-sockets" else fmt(r["noticed"])
            print(f"{kind:14} {len(r['recovered']):8} {n:>22} {fmt(r['recovered']):>24} {sum(r['lost']):5}")
        if self.health_ms:
            h = sorted(self.health_ms)
            print(
                f"/health with {max(self.rows['idle-sockets'].get('sockets', [0]))} idle sockets open: "
                f"p50 {statistics.median(h):.1f} ms, max {h[-1]:.1f} ms ({sum(x == float('inf') for x in h)} failed)"
            )
        print(f"phantom rolls: {phantom}; tracebacks in the table's log: {tracebacks}")
        if len(self.rss) >= 2:
            print(
                f"memory (RSS of the first table process): {self.rss[0]:.0f} MB after warm-up, {self.rss[1]:.0f} MB "
                f"before its kill ({(self.rss[1] / self.rss[0] - 1) * 100:+.1f} %)"
            )
        self.report_memory()
        print(f"now (last table process): {rss_mb(self.proc.pid):.0f} MB; log: {self.log}")

    def report_memory(self) -> None:
        """The first table process's memory probe (see :func:`soak_table.memory_probe`): first, second and last line."""
        try:
            lines = [json.loads(x) for x in self.memlog.read_text().splitlines() if x.strip()]
        except (OSError, ValueError):
            return
        print(f"{'memory probe':>14} {'RSS MB':>7} {'in use':>7} {'free':>6} {'mmap':>6} {'objects':>8}")
        for x in lines[:2] + lines[2:][-1:]:
            print(
                f"{x['t_s'] / 60:10.1f} min {x['rss_mb']:7.1f} {x['in_use_mb']:7.1f} {x['free_mb']:6.1f} "
                f"{x['mmap_mb']:6.1f} {x['objects']:8}"
            )

    def cleanup(self) -> None:
        self.kill()
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.disk)], capture_output=True)


def main() -> None:
    p = _args.parser(__file__, description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=_args.positive(float), default=30.0, help="minutes of play (default 30)")
    p.add_argument("--repeat", type=_args.positive(), default=3, help="times each fault is injected (default 3)")
    p.add_argument("--hold", type=float, default=10.0, help="seconds each fault lasts at least (default 10)")
    p.add_argument("--warmup", type=float, default=60.0, help="seconds of play before the first RSS (default 60)")
    p.add_argument("--speed", type=_args.positive(float), default=3.0, help="pace of play (default 3)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--keep", action="store_true", help="keep the work folder (store, logs)")
    args = p.parse_args()
    work = Path(tempfile.mkdtemp(prefix="dicetable-soak-"))
    soak = Soak(args, work)
    try:
        soak.setup()
        soak.run()
        soak.report()
    finally:
        soak.cleanup()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"work folder kept: {work}")


if __name__ == "__main__":
    _args.run(main)
