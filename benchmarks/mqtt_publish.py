"""What publishing to the café's broker costs the table, and how fast the outbox drains.

Starts a local Mosquitto (``/usr/sbin/mosquitto``) on a free loopback port and prints:

1. The round trip of a hold tap (``TableApp.set_hold(...).result()``: decide, apply, one
   SQLite commit with ``synchronous=FULL``, the snapshot) on the table's worker, without a
   broker and with ``--mqtt`` (the publisher reads the store, publishes and marks events sent
   on its own thread meanwhile): median, p99 and max milliseconds.
2. Events per second the publisher sustains: a store filled with random games
   (``table.game.autoplay``), a new publisher sending the whole outbox at QoS 1, timed from
   start to the last PUBACK, with a subscriber counting what arrived.

Run: ``python benchmarks/mqtt_publish.py [--taps N] [--events N]``. Numbers, not a test.
"""

from __future__ import annotations

import random
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import _args  # (imports _checkout: this checkout's vision/ and table/ first on sys.path)
import paho.mqtt.client as mqtt

from table.app import TableApp
from table.app.session import GameSession
from table.cafe.link import share
from table.cafe.publisher import Publisher
from table.cafe.settings import MqttSettings
from table.display.snapshot import Setup
from table.game import ReadDice, StartGame
from table.game.autoplay import random_command
from table.store import open_store


def _pct(ms: list[float], q: float) -> float:
    ordered = sorted(ms)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _report(label: str, ms: list[float]) -> None:
    print(
        f"{label}: n={len(ms)}  median {statistics.median(ms):.2f} ms  "
        f"p99 {_pct(ms, 0.99):.2f} ms  max {max(ms):.2f} ms"
    )


def start_broker(folder: Path) -> tuple[subprocess.Popen[bytes], int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    conf = folder / "mosquitto.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
    proc = subprocess.Popen(["/usr/sbin/mosquitto", "-c", str(conf)], stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    raise SystemExit("mosquitto did not start")


def tap_round_trips(db: Path, taps: int, port: int | None) -> list[float]:
    """Milliseconds of `taps` hold taps on a running table, publishing to `port` (None: no broker)."""
    app = TableApp(db, setup=Setup("yahtzee", "forced", ["Ann", "Bo"]), autostart=True).start()
    pub = share(app, MqttSettings("127.0.0.1", port, "bench")) if port else None
    try:
        app.submit(lambda: app.session.handle(ReadDice(at=time.time(), values=(1, 2, 3, 4, 5)))).result(10)
        if pub is not None:
            while not pub.sharing[0]:
                time.sleep(0.01)
            state, n = app.state, 20000  # what the worker pays per change: the listener's hand-off
            t0 = time.perf_counter()
            for _ in range(n):
                pub.notify(1, state)
            print(f"Publisher.notify (the worker's part of a publish): {(time.perf_counter() - t0) / n * 1e6:.1f} us")
        out = []
        for k in range(taps):
            t0 = time.perf_counter()
            app.set_hold(k % 5, bool((k // 5) % 2 == 0)).result(10)
            out.append((time.perf_counter() - t0) * 1000)
        assert app.state.events >= taps  # each tap stored an event
        if pub is not None:  # ... and each reached the broker
            while pub.acked < app.state.events:
                time.sleep(0.01)
        return out
    finally:
        if pub is not None:
            pub.stop()
        app.close()


def fill_store(db: Path, n_events: int, seed: int = 0) -> int:
    """Random four-player Yahtzee games, `n_events` events or a few more; return the count."""
    rng = random.Random(seed)
    total = 0
    with open_store(db) as store:
        while total < n_events:
            s = GameSession.start(store, StartGame(at=time.time(), ruleset="yahtzee", players=("A", "B", "C", "D")))
            total += 1
            while not s.state.finished and total < n_events:
                total += len(s.handle(random_command(s.state, rng, time.time())))
    return total


def drain_rate(db: Path, port: int, n_events: int) -> None:
    got = threading.Semaphore(0)
    sub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-sub")
    sub.on_message = lambda c, u, m: got.release()
    sub.connect("127.0.0.1", port)
    sub.subscribe("dicetable/bench/events", qos=1)
    sub.loop_start()
    time.sleep(0.3)
    total = fill_store(db, n_events)
    t0 = time.perf_counter()
    with Publisher(MqttSettings("127.0.0.1", port, "bench"), db) as pub:
        while pub.acked < total:
            time.sleep(0.005)
        t1 = time.perf_counter()
    received = 0
    while got.acquire(timeout=2):
        received += 1
    sub.loop_stop()
    print(
        f"outbox drain: {total} events acknowledged in {t1 - t0:.2f} s = {total / (t1 - t0):.0f} events/s "
        f"(QoS 1, window 100); the subscriber got {received}"
    )


def main() -> None:
    parser = _args.parser(__file__, description=__doc__.splitlines()[0])
    parser.add_argument(
        "--taps", type=_args.positive(), default=300, help="hold taps to time in each setting (default 300)"
    )
    parser.add_argument(
        "--events", type=_args.positive(), default=5000, help="events in the outbox to drain (default 5000)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        broker, port = start_broker(folder)
        try:
            _report("hold tap round trip, no broker  ", tap_round_trips(folder / "a.sqlite3", args.taps, None))
            _report("hold tap round trip, --mqtt     ", tap_round_trips(folder / "b.sqlite3", args.taps, port))
            drain_rate(folder / "c.sqlite3", port, args.events)
        finally:
            broker.terminate()
            broker.wait(5)


if __name__ == "__main__":
    _args.run(main)
