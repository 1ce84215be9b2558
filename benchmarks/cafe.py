"""The café at scale: N tables publish real games into one Mosquitto and one leaderboard (issue 36, target:
50 tables, event-to-API p99 under 1 s).

Starts Mosquitto on a free loopback port (as tests/conftest.py does) and ``dicetable leaderboard`` as a
subprocess (so its memory is its own). Each of ``--tables`` table threads has its own MQTT client
(retained ``online`` status, last will ``offline``) and plays ``--games`` games with easy bots (the
engine, :mod:`table.strategy.bots`) for ``--seconds``, publishing every event at QoS 1 and the retained
state after it, one event every ``--pace`` seconds (0.8 s, as the table's bots act; 0: no wait, a stress
test of what one machine's CPU can take).
A poller reads ``/api/games`` every ``--poll-ms`` and notes when each event (game, seq) first shows
there. Prints events per second, the publish-to-API latency (p50, p99, max; it includes up to one
poll interval), the leaderboard's RSS (end and peak), and checks every game arrived once with the
table's totals. Run: ``python benchmarks/cafe.py [--tables 50] [--seconds 30] [--pace 0.8]``.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import _args  # (imports _checkout: this checkout's vision/ and table/ first on sys.path)
import paho.mqtt.client as mqtt

from table.leaderboard.simulated_table import event_payload, play_game, state_payload

MOSQUITTO = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin:/usr/local/sbin")
RULESETS = ("yahtzee", "yacht", "yatzy", "generala", "chaser")
#: The table's bots act every 0.8 s (``table.app.bots``, ``delay_s``): as fast as bots play at a table.
BOT_DELAY_S = 0.8
NAMES = ("Ann", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_broker(folder: Path) -> tuple[subprocess.Popen[bytes], int]:
    """Mosquitto on a free loopback port; queues deep enough for a burst of 50 tables."""
    if MOSQUITTO is None:
        raise SystemExit("mosquitto is not installed: sudo apt install mosquitto")
    port = free_port()
    conf = folder / "mosquitto.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nmax_queued_messages 0\n")
    proc = subprocess.Popen([MOSQUITTO, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    raise SystemExit("mosquitto did not start")


def start_leaderboard(folder: Path, broker_port: int) -> tuple[subprocess.Popen[str], str]:
    cmd = [
        sys.executable,
        "-m",
        "table",
        "leaderboard",
        "--mqtt",
        f"mqtt://127.0.0.1:{broker_port}",
        "--port",
        "0",
        "--db",
        str(folder / "board.sqlite3"),
        "--client-id",
        "bench-board",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("leaderboard on "):
        raise SystemExit(f"the leaderboard did not start: {line!r}")
    url = line.split()[2]
    for _ in range(200):
        if get_json(url + "health").get("connected"):
            return proc, url
        time.sleep(0.05)
    raise SystemExit("the leaderboard did not connect to the broker")


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def rss_mb(pid: int) -> tuple[float, float]:
    """``(VmRSS, VmHWM)`` of ``pid`` in MiB (now, and the peak)."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


class Table(threading.Thread):
    """One simulated table: its own MQTT client, bot games for ``seconds``, each event published at QoS 1."""

    def __init__(self, k: int, port: int, seconds: float, pace: float, sent: dict, finals: dict, sent_wall: dict):
        super().__init__(name=f"table-{k}", daemon=True)
        self.name_, self.seconds, self.pace, self.sent, self.finals = f"t{k:02d}", seconds, pace, sent, finals
        self.sent_wall = sent_wall
        self.rng = random.Random(k)
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"bench-{self.name_}")
        self.client.max_queued_messages_set(0)
        self.client.will_set(f"dicetable/{self.name_}/status", "offline", qos=1, retain=True)
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()

    def run(self) -> None:
        c, t = self.client, self.name_
        c.publish(f"dicetable/{t}/status", "online", qos=1, retain=True)
        deadline = time.monotonic() + self.seconds
        next_at = time.monotonic() + self.rng.uniform(0, self.pace)  # tables do not start in step
        g = 0
        while time.monotonic() < deadline:
            g += 1
            game = f"{t}:bench:{g}"  # the id topics.game_id gives
            players = tuple(self.rng.sample(NAMES, self.rng.randint(1, 4)))
            played = play_game(self.rng.choice(RULESETS), players, self.rng, start=time.time())
            for seq, (state, event) in enumerate(played, 1):
                if self.pace:
                    time.sleep(max(0.0, next_at - time.monotonic()))
                    next_at += self.pace
                if time.monotonic() >= deadline:
                    break
                payload = event_payload(t, "bench", g, seq, state, event)
                self.sent[(game, seq)] = time.monotonic()
                self.sent_wall[f"{game}:{seq}"] = time.time()
                c.publish(f"dicetable/{t}/events", payload, qos=1)
                c.publish(f"dicetable/{t}/state", state_payload(t, "bench", g, state, time.time()), qos=1, retain=True)
                self.finals[game] = list(state.totals())

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def poll(url: str, sent: dict, seen: dict, stop: threading.Event, every: float, limit: int) -> None:
    """Note when each (game, seq) first shows in ``/api/games`` (events of a game arrive in order)."""
    shown: dict[str, int] = {}
    rounds = 0
    while not stop.is_set():
        t0 = time.monotonic()
        rounds += 1
        if rounds % 10 == 0:
            seen["max queued"] = max(seen.get("max queued", 0), get_json(url + "health")["queued"])
        for g in get_json(f"{url}api/games?limit={limit}")["games"]:
            now = time.monotonic()
            for seq in range(shown.get(g["game"], 0) + 1, g["last_seq"] + 1):
                seen[(g["game"], seq)] = now
            shown[g["game"]] = max(shown.get(g["game"], 0), g["last_seq"])
        stop.wait(max(0.0, every - (time.monotonic() - t0)))


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = _args.parser(__file__, description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=_args.positive(), default=50, help="simulated tables (50)")
    parser.add_argument("--seconds", type=_args.positive(float), default=30.0, help="how long the tables play (30)")
    parser.add_argument(
        "--pace",
        type=float,
        default=BOT_DELAY_S,
        help=f"seconds between a table's events ({BOT_DELAY_S}, the table's bots; 0: no wait at all)",
    )
    parser.add_argument(
        "--poll-ms", type=_args.positive(float), default=50.0, help="how often the poller reads /api/games (50)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        broker, port = start_broker(Path(tmp))
        board, url = start_leaderboard(Path(tmp), port)
        sent: dict = {}
        seen: dict = {}
        finals: dict = {}
        stop = threading.Event()
        sent_wall: dict = {}
        tables = [Table(k, port, args.seconds, args.pace, sent, finals, sent_wall) for k in range(1, args.tables + 1)]
        poller = threading.Thread(
            target=poll,
            args=(url, sent, seen, stop, args.poll_ms / 1000, 1000),
            daemon=True,
        )
        poller.start()
        t0 = time.monotonic()
        for t in tables:
            t.start()
        for t in tables:
            t.join()
        published = time.monotonic() - t0
        deadline = time.monotonic() + 120
        while len(seen) < len(sent) and time.monotonic() < deadline:
            time.sleep(0.1)
        wall = max(seen.values(), default=t0) - t0
        stop.set()
        poller.join()
        rss, peak = rss_mb(board.pid)
        health = get_json(url + "health")
        stored = {g["game"]: g["totals"] for g in get_json(f"{url}api/games?limit=1000")["games"]}
        for t in tables:
            t.close()
        board.terminate()
        board.wait(10)
        broker.terminate()
        broker.wait(10)
        with sqlite3.connect(Path(tmp) / "board.sqlite3") as db:  # when the leaderboard stored each event
            stored_at = dict(db.execute("SELECT id, received_at FROM events"))
    backlog = seen.pop("max queued", 0)
    lat = [(seen[k] - sent[k]) * 1000 for k in sent if k in seen]
    to_store = [(stored_at[k] - sent_wall[k]) * 1000 for k in sent_wall if k in stored_at]
    wrong = sum(1 for g, tot in finals.items() if stored.get(g) != tot)
    print(
        f"{args.tables} tables, easy bots, an event every {args.pace} s per table: {len(sent)} events "
        f"(+ as many retained states) published in {published:.1f} s; {os.cpu_count()} CPUs, shared"
    )
    print(
        f"leaderboard: {len(seen)}/{len(sent)} events shown in {wall:.1f} s = {len(seen) / max(wall, 1e-9):.0f} "
        f"events/s; stored {health['stored']}, duplicates {health['duplicates']}, dropped {health['dropped']}"
    )
    if lat:
        print(
            f"event -> /api/games latency (ms, poll every {args.poll_ms:.0f}): p50 {pct(lat, 0.5):.0f}  "
            f"p99 {pct(lat, 0.99):.0f}  max {max(lat):.0f}  (target p99 < 1000)"
        )
    if to_store:
        print(
            f"  of which publish -> stored (ms): p50 {pct(to_store, 0.5):.0f}  p99 {pct(to_store, 0.99):.0f}; "
            f"the leaderboard's own queue held at most {backlog} messages"
        )
    print(f"leaderboard RSS: {rss:.0f} MiB at the end, {peak:.0f} MiB peak")
    print(
        f"games: {len(finals)} played (the last cut short), {len(stored)} stored, {wrong} with totals unlike the table"
    )
    return 0 if len(seen) == len(sent) and wrong == 0 else 1


if __name__ == "__main__":
    _args.run(main)
