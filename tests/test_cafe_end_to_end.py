"""The café end to end: two real tables and a leaderboard through a real Mosquitto, with faults.

Two ``dicetable play`` processes (bots, synthetic camera, ``--mqtt``) play a Yahtzee game each while a
leaderboard service listens. Mid-game the broker is stopped and started again (the tables keep
playing into their outboxes), then one table is SIGKILLed (the broker sends its last will) and
started again on the same store (it resumes the game and sends what its outbox kept). At the end
the leaderboard must hold every game of both tables exactly once, each with every one of the
table's events and the totals ``dicetable export`` gives, and the killed table's status must have
gone offline and online. Waits poll conditions with deadlines; nothing is timed.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from table.leaderboard.broker import BrokerOptions
from table.leaderboard.service import Leaderboard
from tests._mqtt import get, wait_for

pytestmark = pytest.mark.slow


def table_argv(db: Path, url: str, name: str, players: str, seed: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "table",
        "play",
        "--camera",
        "synthetic",
        "--reader",
        "truth",
        "--rules",
        "yahtzee",
        "--players",
        players,
        "--bot-dice",
        "virtual",
        "--bot-delay",
        "0.05",
        "--bot-seed",
        str(seed),
        "--port",
        "0",
        "--no-buttons",
        "--db",
        str(db),
        "--mqtt",
        url,
        "--table",
        name,
    ]


def stored_events(db: Path) -> int:
    """Events in a table's store (read-only, while the table runs)."""
    if not db.exists():
        return 0
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        try:
            return int(con.execute("SELECT COUNT(*) FROM events").fetchone()[0])
        except sqlite3.OperationalError:  # the schema is not there yet
            return 0


def cli_json(*args: str) -> object:
    out = subprocess.run([sys.executable, "-m", "table", *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def board_events(lb: Leaderboard, table: str) -> int:
    return int(
        lb.store.read("SELECT COUNT(*) FROM events e JOIN games g ON g.id = e.game WHERE g.tbl = ?", (table,))[0][0]
    )


def test_two_tables_a_broker_outage_and_a_killed_table(tmp_path, persistent):
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "conf")}
    dbs = {"cafe-a": tmp_path / "a.sqlite3", "cafe-b": tmp_path / "b.sqlite3"}
    argv = {
        "cafe-a": table_argv(dbs["cafe-a"], persistent.url, "cafe-a", "Ann:easy,Bo:medium", 3),
        "cafe-b": table_argv(dbs["cafe-b"], persistent.url, "cafe-b", "Cy:easy,Di:easy,Ed:medium", 4),
    }
    procs: dict[str, subprocess.Popen[bytes]] = {}
    opts = BrokerOptions("127.0.0.1", persistent.port)
    with Leaderboard(tmp_path / "board.sqlite3", opts, port=0, client_id="cafe-board") as lb:
        try:
            wait_for(lambda: lb.subscriber.connected, "the leaderboard's subscription")
            for name, cmd in argv.items():
                procs[name] = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            wait_for(lambda: all(board_events(lb, t) >= 10 for t in argv), "both games under way", 60)

            # the broker goes away mid-game; the tables play on into their outboxes
            persistent.stop()
            before = {t: stored_events(db) for t, db in dbs.items()}
            wait_for(lambda: all(stored_events(db) >= before[t] + 10 for t, db in dbs.items()), "play in the outage")
            health = get(lb.url + "health")[1]
            assert health["connected"] is False and ("lost" in health["broker"] or "cannot reach" in health["broker"])
            persistent.start()
            wait_for(lambda: lb.subscriber.connected, "the leaderboard back on the broker", 60)
            wait_for(lambda: board_events(lb, "cafe-b") >= before["cafe-b"] + 10, "the outbox's events")

            # table B is killed mid-game (its last will says offline), then started again on its store
            assert procs["cafe-b"].poll() is None, "cafe-b finished before it could be killed; slow the bots"
            procs["cafe-b"].kill()
            procs["cafe-b"].wait(10)
            wait_for(lambda: lb.store.status_changes("cafe-b")[-1:] == [False], "cafe-b's last will")
            procs["cafe-b"] = subprocess.Popen(
                argv["cafe-b"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
            )
            wait_for(lambda: lb.store.status_changes("cafe-b")[-1:] == [True], "cafe-b online again")

            def finished() -> int:
                return int(lb.store.read("SELECT COUNT(*) FROM games WHERE finished = 1")[0][0])

            wait_for(lambda: finished() == 2, "both games finished on the leaderboard", 120)
            for name, proc in procs.items():
                proc.terminate()  # the clean stop says offline itself
                assert proc.wait(20) == 0, proc.stderr.read().decode()[-2000:] if proc.stderr else name
            wait_for(lambda: all(lb.store.status_changes(t)[-1:] == [False] for t in argv), "both tables offline")
        finally:
            for proc in procs.values():
                if proc.poll() is None:
                    proc.kill()
                    proc.wait(10)

        # online first, offline last; cafe-b back online after the kill. (Here the broker's stop also sent
        # each table's will, and the table said online again after: 4 changes for cafe-a, 6 for cafe-b.)
        for name in argv:
            changes = lb.store.status_changes(name)
            assert changes[0] is True and changes[-1] is False, (name, changes)
        assert lb.store.status_changes("cafe-b").count(True) >= 2
        board = {g["game"]: g for g in get(lb.url + "api/games?limit=1000")[1]["games"]}
        assert len(board) == 2
        for name, db in dbs.items():
            games = cli_json("games", "--json", "--db", str(db))
            assert len(games) == 1 and games[0]["status"] == "finished"
            (mine,) = [g for g in board.values() if g["table"] == name]
            assert mine["game"].endswith(f":{games[0]['id']}")
            assert (mine["events"], mine["last_seq"]) == (games[0]["events"], games[0]["events"])  # all, once
            export = cli_json("export", str(games[0]["id"]), "--db", str(db))
            assert mine["totals"] == [p["expected_final_total"] for p in export["players"]]
            assert mine["finished"] is True
        scores = get(lb.url + "api/leaderboard?ruleset=yahtzee&period=all")[1]["scores"]
        assert sorted(s["total"] for s in scores) == sorted(t for g in board.values() for t in g["totals"])
