"""A table publishes to a real Mosquitto: status and last will, retained state, every event once, in order.

Real parts: Mosquitto (the ``mosquitto`` fixture), the table's app with bots on virtual dice,
SQLite, paho on both ends. The test subscriber keeps a persistent session (clean_session off,
QoS 1) on a broker that keeps it across a restart, as a leaderboard would, so an outage loses
nothing on the receiving side either.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from table.cafe.link import share
from table.cafe.publisher import Publisher
from table.cafe.settings import MqttSettings
from table.game import event_to_dict
from table.store import open_store
from tests._mqtt import LOGIN, Subscriber, wait_for


def first_arrivals(events):
    """The events by id, first arrival kept (QoS 1 may deliver one twice)."""
    seen, out = set(), []
    for e in events:
        if e["id"] not in seen:
            seen.add(e["id"])
            out.append(e)
    return out


def check_all_stored_events_published(db: Path, sub: Subscriber, table: str) -> None:
    """Every stored event was published, in order, ids consecutive, content equal to the store's.

    The broker acknowledges a QoS 1 message to the publisher before it delivers it to subscribers,
    so the subscriber is first given time to receive as many events as the store holds.
    """
    with open_store(db, readonly=True) as store:
        stored = [(g.id, store.events(g.id)) for g in store.games()]
    n_stored = sum(len(evs) for _, evs in stored)
    wait_for(lambda: len(first_arrivals(sub.events(table))) >= n_stored, what=f"{n_stored} events at the subscriber")
    events = sub.events(table)
    firsts = first_arrivals(events)
    expected = [(gid, k + 1, event_to_dict(e)) for gid, evs in stored for k, e in enumerate(evs)]
    assert [(e["game"].rsplit(":", 1)[1], e["seq"]) for e in firsts] == [(str(g), s) for g, s, _ in expected]
    assert [e["event"] for e in firsts] == [json.loads(json.dumps(d)) for _, _, d in expected]
    for e in firsts:
        assert e["id"] == f"{e['game']}:{e['seq']}" and e["table"] == table and e["v"] == 1
    dupes = [e for e in events if e not in firsts]
    for d in dupes:  # a duplicate is the same message again, never a different event under a reused id
        assert d == next(f for f in firsts if f["id"] == d["id"])


def make_app(db, players=("HAL:optimal", "Eve:easy"), rules="yacht", delay=0.0, seed=1):
    from table.app import TableApp
    from table.display.snapshot import Setup

    return TableApp(
        db,
        setup=Setup(rules, "forced", list(players)),
        autostart=True,
        bot_dice="virtual",
        bot_delay_s=delay,
        bot_seed=seed,
    ).start()


def test_status_retained_state_and_every_event_in_order(mosquitto, tmp_path):
    db = tmp_path / "g.sqlite3"
    sub = Subscriber(mosquitto)
    app = make_app(db)
    pub = share(app, MqttSettings("127.0.0.1", mosquitto.port, "t1"))
    try:
        assert app.finished.wait(60)
        wait_for(lambda: pub.acked == app.state.events, what="every event acknowledged")
        wait_for(lambda: (app.snapshot.get("sharing") or {}).get("ok"), what="the page says shared")
        assert "scores shared on" in app.snapshot["sharing"]["text"]
        check_all_stored_events_published(db, sub, "t1")
        last = sub.events("t1")[-1]
        assert last["finished"] and last["totals"] == list(app.state.totals()) and last["ruleset"] == "yacht"
        assert last["players"] == ["HAL", "Eve"] and last["round"] == 12
        # A late subscriber gets the retained status and state: the game as it ended.
        late = Subscriber(mosquitto, "late")
        wait_for(lambda: late.on("dicetable/t1/state") and late.on("dicetable/t1/status"), what="retained messages")
        assert late.on("dicetable/t1/status") == [(b"online", True)]
        state, retained = late.on("dicetable/t1/state")[-1]
        state = json.loads(state)
        assert retained and state["finished"] and state["game"] == last["game"]
        assert [p["total"] for p in state["players"]] == list(app.state.totals()) and state["rounds"] == 12
        # A finished game's chances are its result: 1 to the winner, split on a tie.
        totals = list(app.state.totals())
        winners = [i for i, t in enumerate(totals) if t == max(totals)]
        assert state["win_chances"] == [1 / len(winners) if i in winners else 0.0 for i in range(2)]
        assert state["leader"] == ("HAL" if state["players"][0]["total"] >= state["players"][1]["total"] else "Eve")
        late.close()
    finally:
        pub.stop()
        app.close()
    wait_for(lambda: sub.on("dicetable/t1/status")[-1:] == [(b"offline", False)], what="offline on a clean stop")
    late = Subscriber(mosquitto, "later")
    wait_for(lambda: late.on("dicetable/t1/status") == [(b"offline", True)], what="offline retained")
    late.close()
    with open_store(db) as store:  # the cursor: every event is marked sent
        assert store.conn.execute("SELECT sent FROM outbox").fetchall() == [(app.state.events,)]
    sub.close()


def test_broker_down_mid_game_play_goes_on_and_nothing_is_lost(persistent, tmp_path):
    mosquitto = persistent
    db = tmp_path / "g.sqlite3"
    sub = Subscriber(mosquitto, "board", clean=False)
    app = make_app(db, delay=0.02, seed=3)
    pub = share(app, MqttSettings("127.0.0.1", mosquitto.port, "t2"))
    try:
        wait_for(lambda: len(sub.events("t2")) >= 10, what="the first events")
        mosquitto.stop()
        wait_for(lambda: not (app.snapshot.get("sharing") or {"ok": True})["ok"], what="the page says not shared")
        text = app.snapshot["sharing"]["text"]
        assert text in ("scores not shared: connection dropped", "scores not shared: broker down"), text
        at_outage = app.state.events
        wait_for(lambda: app.state.events > at_outage + 10, what="play going on without the broker")
        mosquitto.start()
        assert app.finished.wait(60)
        wait_for(lambda: pub.acked >= app.state.events and pub.sharing[0], timeout=30, what="the outbox drained")
        wait_for(lambda: len(first_arrivals(sub.events("t2"))) == app.state.events, what="every event at the board")
        check_all_stored_events_published(db, sub, "t2")
    finally:
        pub.stop()
        app.close()
        sub.close()


def test_a_restarted_table_sends_what_its_outbox_kept(mosquitto, tmp_path):
    """A whole game played with the broker down, the table stopped; started again, it sends it all."""
    db = tmp_path / "g.sqlite3"
    settings = MqttSettings("127.0.0.1", mosquitto.port, "t3")
    mosquitto.stop()
    app = make_app(db, players=("HAL:easy",), seed=5)
    pub = share(app, settings)
    try:
        assert app.finished.wait(60)
        wait_for(lambda: app.snapshot["sharing"]["text"] == "scores not shared: broker down", what="broker down said")
        n = app.state.events
    finally:
        pub.stop()
        app.close()
    mosquitto.start()
    sub = Subscriber(mosquitto)
    app = make_app(db, players=("HAL:easy",), seed=5)  # a new game starts; the old one is still in the outbox
    pub = share(app, settings)
    try:
        wait_for(lambda: len(first_arrivals(sub.events("t3"))) >= n + 1, what="the kept game sent")
        games = [e["game"] for e in first_arrivals(sub.events("t3"))]
        assert games[:n] == [games[0]] * n and games[n] != games[0]
        assert app.finished.wait(60)
        wait_for(lambda: pub.acked == n + app.state.events, what="both games acknowledged")
        check_all_stored_events_published(db, sub, "t3")
    finally:
        pub.stop()
        app.close()
        sub.close()


def test_login_refused_is_said_play_goes_on_and_nothing_is_lost(locked_broker, tmp_path):
    db = tmp_path / "g.sqlite3"
    wrong = MqttSettings("127.0.0.1", locked_broker.port, "t4", user="t4", password="wrong")
    app = make_app(db, players=("HAL:easy",), seed=7)
    pub = share(app, wrong)
    try:
        wait_for(lambda: (app.snapshot.get("sharing") or {}).get("text") == "scores not shared: login refused")
        assert app.finished.wait(60)  # play went on
        assert pub.acked == 0
    finally:
        pub.stop()
    sub = Subscriber(locked_broker, login=LOGIN)
    right = MqttSettings("127.0.0.1", locked_broker.port, "t4", user="t4", password="right")
    with Publisher(right, db) as pub:  # the password fixed: what was kept is sent
        try:
            wait_for(lambda: pub.acked == app.state.events, what="the kept events acknowledged")
            check_all_stored_events_published(db, sub, "t4")
        finally:
            app.close()
            sub.close()


def test_bad_table_names_are_refused_with_one_line(capsys, tmp_path):
    from table.cli import main

    for name, why in [
        ("a/b", "topic character /"),
        ("t#", "topic character #"),
        ("+", "topic character +"),
        ("x" * 33, "1-32 letters"),
        ("café", "1-32 letters"),
    ]:
        status = main(
            [
                "play",
                "--camera",
                "synthetic",
                "--no-buttons",
                "--db",
                str(tmp_path / "g.sqlite3"),
                "--mqtt",
                "mqtt://127.0.0.1",
                "--table",
                name,
            ]
        )
        err = capsys.readouterr().err.strip()
        assert status == 2 and why in err and "\n" not in err and "--table" in err, err
    assert not (tmp_path / "g.sqlite3").exists()  # refused before anything started


def test_sigkilled_table_goes_offline_by_its_last_will_and_a_restart_sends_the_rest(mosquitto, tmp_path):
    """A real ``dicetable play`` process: SIGKILL (no clean stop) -> the broker says ``offline``; restarted,
    it resumes the game and sends every event the first process had not had acknowledged."""
    db = tmp_path / "g.sqlite3"
    argv = [
        sys.executable,
        "-m",
        "table",
        "play",
        "--camera",
        "synthetic",
        "--reader",
        "truth",
        "--rules",
        "yacht",
        "--players",
        "HAL:optimal",
        "--bot-dice",
        "virtual",
        "--bot-delay",
        "0.05",
        "--bot-seed",
        "2",
        "--port",
        "0",
        "--no-buttons",
        "--db",
        str(db),
        "--mqtt",
        mosquitto.url,
        "--table",
        "t5",
    ]
    env = {**__import__("os").environ, "XDG_CONFIG_HOME": str(tmp_path / "conf")}
    sub = Subscriber(mosquitto)
    status = lambda: [p for p, _ in sub.on("dicetable/t5/status")]  # noqa: E731
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: status() == [b"online"] and len(sub.events("t5")) >= 5, timeout=30, what="online and events")
        proc.kill()
        proc.wait(10)
        wait_for(lambda: status() == [b"online", b"offline"], what="the last will")
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_for(lambda: any(e["finished"] for e in sub.events("t5")), timeout=30, what="the resumed game's end")
        proc.terminate()  # SIGTERM: the clean stop says offline itself
        code, err = proc.wait(15), proc.stderr.read().decode()
        assert code == 0, err[-2000:]
        assert f"dicetable: scores shared on mqtt://127.0.0.1:{mosquitto.port} as table t5\n" in err
        assert err.count("scores shared on") == 1  # a line when it changed, not one per event
        assert status() == [b"online", b"offline", b"online", b"offline"]
        check_all_stored_events_published(db, sub, "t5")
    finally:
        if proc.poll() is None:
            proc.kill()
        sub.close()


def test_home_assistant_discovery_configs_and_their_resend(mosquitto, tmp_path):
    from table.cafe import ha_discovery

    sub = Subscriber(mosquitto, topics_=("dicetable/#", "homeassistant/sensor/#"))
    app = make_app(tmp_path / "g.sqlite3", players=("Ann", "HAL:easy"))  # waits for Ann: a game in progress
    pub = share(app, MqttSettings("127.0.0.1", mosquitto.port, "t6", ha_discovery=True))
    names = ["current_player", "last_roll", "leader", "leader_score"]
    config_topics = [f"homeassistant/sensor/dicetable_t6/{n}/config" for n in names]
    try:
        wait_for(lambda: all(sub.on(t) for t in config_topics) and sub.on("dicetable/t6/state"), what="configs")
        state = json.loads(sub.on("dicetable/t6/state")[-1][0])
        for topic in config_topics:
            config = json.loads(sub.on(topic)[0][0])
            assert (
                config["availability_topic"] == "dicetable/t6/status" and config["state_topic"] == "dicetable/t6/state"
            )
            assert config["device"]["identifiers"] == ["dicetable_t6"] and config["unique_id"].startswith(
                "dicetable_t6_"
            )
            fields = set(re.findall(r"value_json\.(\w+)", config["value_template"]))
            assert fields and fields <= set(state), (topic, fields - set(state))  # templates read real fields
        assert state["players"][state["current"]]["name"] == "Ann" and state["leader"] == "Ann"
        before = len(sub.got)
        sub.client.publish(ha_discovery.HA_STATUS_TOPIC, "online", qos=1)  # Home Assistant (re)started
        wait_for(lambda: all(len(sub.on(t)) == 2 for t in config_topics), what="configs sent again")
        assert all(t.startswith("homeassistant/") for t, _, _ in sub.got[before:])
        late = Subscriber(mosquitto, "late", topics_=("homeassistant/#",))
        wait_for(lambda: len(late.got) == 4, what="retained configs")
        assert all(r for _, _, r in late.got)
        late.close()
    finally:
        pub.stop()
        app.close()
        sub.close()
