"""The leaderboard service against a real Mosquitto: delivery, duplicates, bad messages, outages, presence.

Each test starts the service (store, subscriber, web server) and publishes schema v1 messages with a
plain paho client, as a table would; the games are real engine games
(:mod:`table.leaderboard.simulated_table`). Waits poll a condition with a deadline; nothing is timed.
"""

from __future__ import annotations

import json
import logging
import random
import sqlite3
import subprocess
import sys
import time

import pytest

from table.leaderboard.broker import BrokerOptions
from table.leaderboard.service import Leaderboard
from table.leaderboard.simulated_table import game_payloads, play_game, state_payload
from tests._mqtt import LOGIN, Publisher, get, wait_for


def real_game(table: str, number: int, ruleset: str = "yahtzee", seed: int = 0, **kw):
    """``(game id, payloads, final totals)`` of one bot game at ``table``."""
    pairs = list(play_game(ruleset, ("Ann", "Bo"), random.Random(seed), **kw))
    gid = f"{table}:5eed{seed}:{number}"
    return gid, game_payloads(table, f"5eed{seed}", number, iter(pairs)), list(pairs[-1][0].totals())


def board(tmp_path, broker, **kw) -> Leaderboard:
    return Leaderboard(
        tmp_path / "board.sqlite3", BrokerOptions("127.0.0.1", broker.port), port=0, client_id="lb-test", **kw
    )


def test_games_arrive_once_with_the_tables_totals(tmp_path, mosquitto):
    games = {"t1": real_game("t1", 1, "yahtzee", 1), "t2": real_game("t2", 1, "yacht", 2, autoplay=True)}
    with board(tmp_path, mosquitto) as lb:
        wait_for(lambda: lb.subscriber.connected, "the subscription")
        pub = Publisher(mosquitto.port)
        for table, (gid, payloads, _) in games.items():
            pub.send(f"dicetable/{table}/status", b"online", retain=True)
            # a redelivery after a lost PUBACK, and a table re-sending its outbox after a restart
            for p in payloads[:10] + payloads[5:12] + payloads[10:] + payloads[-3:]:
                pub.send(f"dicetable/{table}/events", p)
        pub.send("dicetable/t1/state", state_payload("t1", "5eed", None, None, time.time()), retain=True)
        n_events = sum(len(g[1]) for g in games.values())
        wait_for(lambda: lb.subscriber.stored + lb.subscriber.duplicates == n_events + 2 * 10, "every message")
        assert lb.subscriber.duplicates == 2 * 10
        pub.close()
        _, health = get(lb.url + "health")
        assert (health["stored"], health["finished"], health["events"]) == (n_events, 2, n_events)
        assert lb.store.game_totals() == {gid: totals for gid, _, totals in games.values()}
        for table, ruleset in (("t1", "yahtzee"), ("t2", "yacht")):
            status, body = get(lb.url + f"api/leaderboard?ruleset={ruleset}&period=all")
            assert status == 200
            assert [r["total"] for r in body["scores"]] == sorted(games[table][2], reverse=True)
            assert {r["table"] for r in body["scores"]} == {table}
        _, tables = get(lb.url + "api/tables")
        assert [(t["table"], t["online"]) for t in tables["tables"]] == [("t1", True), ("t2", True)]
        assert tables["tables"][0]["state"]["game"] is None and tables["connected"] is True
        _, recent = get(lb.url + "api/games?table=t2")
        assert [(g["game"], g["totals"], g["events"], g["finished"]) for g in recent["games"]] == [
            (games["t2"][0], games["t2"][2], len(games["t2"][1]), True)
        ]
        _, players = get(lb.url + "api/players?ruleset=yacht")
        assert sorted(p["best"] for p in players["players"]) == sorted(games["t2"][2])


def test_bad_messages_are_dropped_and_logged_once(tmp_path, mosquitto, caplog):
    gid, payloads, _ = real_game("t1", 1)
    good = json.loads(payloads[0])
    bad = [
        ("dicetable/t1/events", b"\xff\xfe not json"),
        ("dicetable/t1/events", json.dumps({**good, "v": 2}).encode()),
        ("dicetable/t1/events", json.dumps({k: v for k, v in good.items() if k != "totals"}).encode()),
        ("dicetable/t1/events", b"[" * 200_000),
        ("dicetable/t1/events", json.dumps({**good, "table": "t9"}).encode()),
        ("dicetable/t1/unknown", b"{}"),
        ("dicetable/t1/state", b'{"v": 1}'),
        ("dicetable/t1/status", b"busy"),
    ]
    with caplog.at_level(logging.WARNING, logger="table.leaderboard"), board(tmp_path, mosquitto) as lb:
        wait_for(lambda: lb.subscriber.connected, "the subscription")
        pub = Publisher(mosquitto.port)
        for topic, payload in bad:
            pub.send(topic, payload)
        pub.send("dicetable/t1/events", payloads[0])
        wait_for(lambda: lb.subscriber.stored == 1 and lb.subscriber.dropped.count == len(bad), "the messages")
        pub.close()
        assert lb.subscriber._thread.is_alive()
        assert get(lb.url + "health")[1]["dropped"] == len(bad)
        assert list(lb.store.game_totals()) == [gid]
    lines = [r.getMessage() for r in caplog.records if "dropped a message" in r.getMessage()]
    assert len(lines) == 1 and "not JSON" in lines[0]  # one line per 10 s, not one per message


def test_events_sent_while_the_leaderboard_was_away_are_delivered(tmp_path, mosquitto):
    gid, payloads, totals = real_game("t1", 4, "yatzy", 4)
    with board(tmp_path, mosquitto) as lb:
        wait_for(lambda: lb.subscriber.connected, "the subscription")
    pub = Publisher(mosquitto.port)  # the broker queues these for the persistent session (QoS 1)
    for p in payloads:
        pub.send("dicetable/t1/events", p)
    pub.close()
    with board(tmp_path, mosquitto) as lb:
        wait_for(lambda: lb.subscriber.stored == len(payloads), "the queued events")
        assert lb.store.game_totals() == {gid: totals}


def test_broker_down_at_start_and_dropping_then_back(tmp_path, mosquitto, caplog):
    _, payloads, _ = real_game("t1", 1)
    mosquitto.stop()
    with caplog.at_level(logging.INFO, logger="table.leaderboard"), board(tmp_path, mosquitto) as lb:
        wait_for(lambda: lb.subscriber.broker.startswith("broker: cannot reach 127.0.0.1"), "the broker line")
        status, tables = get(lb.url + "api/tables")  # it serves meanwhile, saying why
        assert status == 200 and tables["connected"] is False and "Connection refused" in tables["broker"]
        mosquitto.start()
        wait_for(lambda: lb.subscriber.connected, "the reconnection")
        pub = Publisher(mosquitto.port)
        pub.send("dicetable/t1/events", payloads[0])
        wait_for(lambda: lb.subscriber.stored == 1, "the first event")
        pub.close()
        mosquitto.stop()
        wait_for(lambda: not lb.subscriber.connected, "the lost connection")
        assert "lost" in lb.subscriber.broker or "cannot reach" in lb.subscriber.broker
        assert get(lb.url + "health")[1]["connected"] is False
        mosquitto.start()
        pub = Publisher(mosquitto.port)
        wait_for(lambda: lb.subscriber.connected, "the second reconnection")
        pub.send("dicetable/t1/events", payloads[1])
        wait_for(lambda: lb.subscriber.stored == 2, "the second event")
        pub.close()
    connected = [r.getMessage() for r in caplog.records if r.getMessage().startswith("connected to ")]
    assert len(connected) == 2 and all(f"connected to 127.0.0.1:{mosquitto.port} (" in c for c in connected), connected


TABLE_PROCESS = """
import sys, time, paho.mqtt.client as mqtt
c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="table-t7")
c.will_set("dicetable/t7/status", "offline", qos=1, retain=True)
c.connect("127.0.0.1", int(sys.argv[1]), keepalive=60)
c.loop_start()
c.publish("dicetable/t7/status", "online", qos=1, retain=True).wait_for_publish(10)
print("online", flush=True)
time.sleep(60)
"""


def test_a_killed_table_goes_offline_by_its_last_will(tmp_path, mosquitto):
    with board(tmp_path, mosquitto) as lb:
        seen: list[bool] = []
        for _ in range(2):
            proc = subprocess.Popen([sys.executable, "-c", TABLE_PROCESS, str(mosquitto.port)], stdout=subprocess.PIPE)
            try:
                assert proc.stdout.readline().strip() == b"online"
                seen.append(True)
                wait_for(lambda: lb.store.status_changes("t7") == seen, f"statuses {seen}")
            finally:
                proc.kill()  # no DISCONNECT: the broker sends the last will
                proc.wait()
            seen.append(False)
            wait_for(lambda: lb.store.status_changes("t7") == seen, f"statuses {seen}")
        assert lb.store.status_changes("t7") == [True, False, True, False]
        _, tables = get(lb.url + "api/tables")
        assert tables["tables"][0]["online"] is False


def test_the_api_is_read_only_and_says_what_is_wrong(tmp_path, mosquitto):
    with board(tmp_path, mosquitto) as lb:
        for path in ("", "api/tables", "api/leaderboard", "api/players", "api/games", "api/board", "health"):
            for method in ("POST", "PUT", "DELETE", "PATCH"):
                assert get(lb.url + path, method)[0] == 405, (path, method)
        assert get(lb.url + "api/leaderboard?period=month") == (
            400,
            {"error": "period 'month' is not one of day, week, all"},
        )
        for path in ("api/players", "api/board"):
            status, body = get(lb.url + path + "?ruleset=poker")
            assert status == 400 and body["error"].startswith("ruleset 'poker' is not one of yahtzee"), path
        for query, words in (("limit=abc", "limit 'abc': "), ("limit=0", "limit 0 is not 1-1000")):
            status, body = get(lb.url + "api/games?" + query)
            assert status == 400 and list(body) == ["error"] and body["error"].startswith(words), body
            assert "\n" not in body["error"]
        status, page = get(lb.url)
        assert status == 200 and "board.js" in page


def test_a_refused_login_is_said_on_the_page(tmp_path, locked_broker):
    user, password = LOGIN
    wrong, right = tmp_path / "wrong", tmp_path / "right"
    wrong.write_text("guess\n")
    right.write_text(password + "\n")
    opts = BrokerOptions("127.0.0.1", locked_broker.port, user=user, password_file=wrong)
    with Leaderboard(tmp_path / "a.sqlite3", opts, port=0, client_id="lb-a") as lb:
        wait_for(lambda: "refused" in lb.subscriber.broker, "the refusal")
        line = get(lb.url + "api/tables")[1]["broker"]
        assert "(Not authorized); check --mqtt-user and --mqtt-password-file" in line, line
    opts = BrokerOptions("127.0.0.1", locked_broker.port, user=user, password_file=right)
    with Leaderboard(tmp_path / "b.sqlite3", opts, port=0, client_id="lb-b") as lb:
        wait_for(lambda: lb.subscriber.connected, "the login")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--mqtt", "http://cafe-pi.local"], "is not mqtt://HOST[:PORT] or mqtts://HOST[:PORT]"),
        (["--mqtt", "mqtt://cafe-pi.local:99999"], "the port must be 1-65535"),
        (["--mqtt", "mqtt://ann:pw@cafe-pi.local"], "the address carries no login; give it with --mqtt-user"),
        (["--mqtt", "mqtt://h", "--mqtt-user", "lb", "--mqtt-password-file", "/nonexistent"], "no such file"),
        (["--mqtt", "mqtt://h", "--mqtt-password-file", __file__], "--mqtt-password-file needs --mqtt-user"),
        (["--mqtt", "mqtt://h/dicetable"], "must be only a broker address"),
        (["--mqtt", "mqtts://h", "--mqtt-ca", __file__], "is not a CA certificate (PEM)"),
        (["--mqtt", "mqtts://h", "--mqtt-key", __file__], "--mqtt-key needs --mqtt-cert"),
        (["--mqtt", "mqtt://h", "--listen", "203.0.113.9"], "is not an address of this machine"),
        (["--mqtt", "mqtt://h", "--port", "70000"], "--port must be 0-65535 (0: any free port), got 70000"),
        (["--mqtt", "mqtt://h", "--port", "-1"], "--port must be 0-65535 (0: any free port), got -1"),
        (["--mqtt", "mqtt://h", "--listen", "127.0.0.1:70000"], "'127.0.0.1:70000': the port must be 0-65535"),
        (["--mqtt", "mqtt://h", "--listen", "127.0.0.1:web"], "'web' is not a port number"),
        (["--mqtt", "mqtt://h", "--mqtt-user", "lb", "--mqtt-password-file", "/tmp"], "is a directory"),
    ],
)
def test_cli_bad_input_is_one_line(args, words, tmp_path, capsys):
    from table.cli import main

    port = [] if "--port" in args else ["--port", "0"]
    assert main(["leaderboard", *args, "--db", str(tmp_path / "b.sqlite3"), *port]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dicetable leaderboard: error: ") and words in err and "\n" not in err, err
    assert not (tmp_path / "b.sqlite3").exists()  # refused before anything was made


def test_cli_refuses_the_tables_own_store_and_runs_on_its_own(tmp_path, mosquitto, capsys):
    from table.cli import main
    from table.store import open_store

    with open_store(tmp_path / "games.sqlite3"):
        pass
    args = ["leaderboard", "--mqtt", mosquitto.url, "--port", "0", "--duration", "0.5"]
    assert main([*args, "--db", str(tmp_path / "games.sqlite3")]) == 2
    assert "is another program's SQLite file" in capsys.readouterr().err
    assert main([*args, "--db", str(tmp_path / "board.sqlite3")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("leaderboard on http://127.0.0.1:") and f"subscribing to 127.0.0.1:{mosquitto.port}" in out


def test_cli_listen_takes_host_and_port(tmp_path, mosquitto, capsys):
    from conftest import _free_port

    from table.cli import main

    port = _free_port()
    args = ["leaderboard", "--mqtt", mosquitto.url, "--listen", f"127.0.0.1:{port}", "--duration", "2"]
    assert main([*args, "--db", str(tmp_path / "board.sqlite3")]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"leaderboard on http://127.0.0.1:{port}/")
    assert f"leaderboard: connected to 127.0.0.1:{mosquitto.port} (a new session)" in err, err


def test_tls_with_the_cafes_ca_and_a_wrong_one(tmp_path, tls_broker):
    broker, certs = tls_broker
    other = certs / "other-ca.pem"
    for ca, client_id in ((other, "lb-wrong"), (certs / "ca.pem", "lb-right")):
        opts = BrokerOptions("127.0.0.1", broker.port, tls=True, ca=ca)
        with Leaderboard(tmp_path / f"{client_id}.sqlite3", opts, port=0, client_id=client_id) as lb:
            if ca == other:
                wait_for(lambda: "certificate verify failed" in lb.subscriber.broker, "the refusal")
                assert lb.subscriber.broker.startswith("broker: cannot reach 127.0.0.1:")
            else:
                wait_for(lambda: lb.subscriber.connected, "the TLS connection")


def test_an_event_the_store_could_not_write_comes_again(tmp_path, mosquitto, monkeypatch):
    """Another program holds the store's lock: no PUBACK, so after the reconnect the broker redelivers it."""
    from table.leaderboard import store

    monkeypatch.setattr(store, "BUSY_TIMEOUT_S", 0.2)  # fail soon rather than after 5 s
    _, payloads, _ = real_game("t1", 1)
    with board(tmp_path, mosquitto) as lb:
        wait_for(lambda: lb.subscriber.connected, "the subscription")
        other = sqlite3.connect(tmp_path / "board.sqlite3", isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")
        pub = Publisher(mosquitto.port)
        pub.send("dicetable/t1/events", payloads[0])
        wait_for(lambda: "the store could not write (database is locked)" in lb.subscriber.broker, "the failure")
        other.execute("ROLLBACK")
        other.close()
        wait_for(lambda: lb.subscriber.stored == 1 and lb.subscriber.connected, "the redelivered event")
        pub.close()
        assert lb.store.read("SELECT COUNT(*) FROM events") == [(1,)]


def test_a_broker_restart_without_persistence_is_reconciled_from_the_tables_state(
    tmp_path, mosquitto, monkeypatch, caplog
):
    """Events lost with a broker's sessions: the retained state finishes the game, said in one line."""
    from table.leaderboard import intake

    monkeypatch.setattr(intake, "RECONCILE_AFTER_S", 0.2)
    pairs = list(play_game("yahtzee", ("Ann", "Bo"), random.Random(3)))
    gid = "t1:5eed3:1"
    payloads = game_payloads("t1", "5eed3", 1, iter(pairs))
    final, totals = pairs[-1][0], list(pairs[-1][0].totals())
    half = len(payloads) // 2
    with caplog.at_level(logging.INFO, logger="table.leaderboard"):
        with board(tmp_path, mosquitto) as lb:
            wait_for(lambda: lb.subscriber.connected, "the subscription")
            pub = Publisher(mosquitto.port)
            for p in payloads[:half]:
                pub.send("dicetable/t1/events", p)
            wait_for(lambda: lb.subscriber.stored == half, "the first half")
            pub.close()
        mosquitto.stop()  # no persistence: the leaderboard's session and its queue die with the broker
        mosquitto.start()
        pub = Publisher(mosquitto.port)  # the table, back first: the rest, while no session waits for them
        for p in payloads[half:-1]:
            if p is not payloads[half + 3]:  # and one event lost for good: a gap
                pub.send("dicetable/t1/events", p)
        pub.send("dicetable/t1/state", state_payload("t1", "5eed3", 1, final, time.time()), retain=True)
        with board(tmp_path, mosquitto) as lb:
            wait_for(lambda: lb.subscriber.connected, "the subscription")
            pub.send("dicetable/t1/events", payloads[half + 5])  # comes after the restart: a gap behind it
            wait_for(lambda: get(lb.url + "api/games")[1]["games"][0]["finished"], "the reconciled game")
            (game,) = get(lb.url + "api/games")[1]["games"]
            assert (game["game"], game["totals"], game["totals_from"]) == (gid, totals, "state")
            assert game["missing_events"] == 5  # seq half+1 .. half+5, below the highest stored one
            _, scores = get(lb.url + "api/leaderboard?ruleset=yahtzee")
            assert sorted(r["total"] for r in scores["scores"]) == sorted(totals)
            assert all(r["from_state"] for r in scores["scores"])
            assert get(lb.url + "health")[1]["from_state"] == 1
            pub.send("dicetable/t1/events", payloads[-1])  # the finishing event, re-sent later after all
            wait_for(lambda: get(lb.url + "api/games")[1]["games"][0]["totals_from"] == "events", "the event")
            (game,) = get(lb.url + "api/games")[1]["games"]
            assert game["totals"] == totals and game["finished"] and game["missing_events"] > 0
            pub.close()
    lines = [r.getMessage() for r in caplog.records if gid in r.getMessage()]
    assert len(lines) == 2, lines
    assert lines[0].startswith(f"events missing for game {gid} (") and "totals from the table's state" in lines[0]
    assert "finished with" in lines[1] and "events missing" in lines[1]
