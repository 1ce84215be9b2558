"""The café's settings (``--mqtt`` and the config file) and the store's outbox migration: no broker needed."""

from __future__ import annotations

import argparse
import re
import sqlite3

import pytest

from table.cafe.broker import parse_broker_url
from table.cafe.settings import MqttSettings, add_mqtt_options, check_table_name, settings_from
from table.errors import UsageError
from table.game import ReadDice, StartGame, execute
from table.store import SCHEMA_VERSION, open_store
from table.store.outbox import Outbox


def parse(argv):
    p = argparse.ArgumentParser()
    add_mqtt_options(p)
    return settings_from(p.parse_args(argv))


@pytest.fixture(autouse=True)
def no_user_config(tmp_path, monkeypatch):
    monkeypatch.delenv("DICETABLE_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def test_urls_ports_and_tls():
    assert parse_broker_url("mqtt://cafe-pi.local") == ("cafe-pi.local", 1883, False)
    assert parse_broker_url("mqtts://10.0.0.2") == ("10.0.0.2", 8883, True)
    assert parse_broker_url("mqtt://[::1]:1999") == ("::1", 1999, False)
    for bad, said in [
        ("http://x", "is not mqtt://HOST[:PORT] or mqtts://HOST[:PORT] (TLS); e.g. --mqtt mqtt://"),
        ("mqtt://", "is not mqtt://HOST[:PORT]"),
        ("mqtt://u:pw@x", "carries no login; give it with --mqtt-user and --mqtt-password-file"),
        ("mqtt://x:99999", "cannot be read: the port must be 1-65535"),
        ("mqtt://x:port", "cannot be read: the port must be 1-65535"),
        ("mqtt://[::1", "cannot be read (Invalid IPv6 URL)"),
        ("mqtt://x/topic", "only a broker address"),
    ]:
        with pytest.raises(UsageError, match=re.escape(said)):
            parse_broker_url(bad)


def test_table_names():
    assert check_table_name("window-2_B") == "window-2_B"
    for bad in ["", "a/b", "#", "t+", "x" * 33, "café", "a b"]:
        with pytest.raises(UsageError, match="1-32 letters, digits"):
            check_table_name(bad)


def test_command_line_and_config_file(tmp_path):
    assert parse([]) is None
    with pytest.raises(UsageError, match="need a broker"):
        parse(["--table", "t1"])
    with pytest.raises(UsageError, match="needs the table's name"):
        parse(["--mqtt", "mqtt://x"])
    with pytest.raises(UsageError, match="--mqtt-ca is for TLS"):
        parse(["--mqtt", "mqtt://x", "--table", "t", "--mqtt-ca", str(tmp_path)])
    not_pem = tmp_path / "ca.pem"
    not_pem.write_text("not a certificate\n")
    with pytest.raises(UsageError, match="is not a CA certificate"):  # told before the table starts
        parse(["--mqtt", "mqtts://x", "--table", "t", "--mqtt-ca", str(not_pem)])
    secret = tmp_path / "pw"
    secret.write_text("s3cret\n")
    s = parse(["--mqtt", "mqtt://x:1884", "--table", "t1", "--mqtt-user", "u", "--mqtt-password-file", str(secret)])
    assert s == MqttSettings("x", 1884, "t1", user="u", password="s3cret")
    assert "s3cret" not in repr(s)
    conf = tmp_path / "table.toml"
    conf.write_text(
        '[mqtt]\nurl = "mqtts://cafe"\ntable = "bar-1"\nuser = "u"\npassword_file = "pw"\nha_discovery = true\n'
    )
    s = parse(["--config", str(conf)])
    assert (s.host, s.port, s.tls, s.table, s.password, s.ha_discovery) == ("cafe", 8883, True, "bar-1", "s3cret", True)
    assert parse(["--config", str(conf), "--table", "bar-2"]).table == "bar-2"  # the command line wins
    conf.write_text('[mqtt]\nurl = "mqtt://cafe"\ntabel = "x"\n')
    with pytest.raises(UsageError, match="unknown key 'tabel'"):
        parse(["--config", str(conf)])
    with pytest.raises(UsageError, match="no config file"):
        parse(["--config", str(tmp_path / "missing.toml")])
    secret.write_text("")
    with pytest.raises(UsageError, match="is empty"):
        parse(["--mqtt", "mqtt://x", "--table", "t1", "--mqtt-user", "u", "--mqtt-password-file", str(secret)])


def test_a_version_1_store_gets_the_outbox_without_losing_a_game(tmp_path):
    db = tmp_path / "g.sqlite3"
    state, events = execute(None, StartGame(at=1.0, ruleset="yacht", players=("Ann",)))
    with open_store(db) as store:
        gid = store.create_game(events[0], state)
        new, more = execute(state, ReadDice(at=2.0, values=(1, 2, 3, 4, 5)))
        store.append(gid, 1, more, new)
    conn = sqlite3.connect(db)  # as dicetable before the outbox left it
    conn.executescript("DROP TABLE meta; DROP TABLE outbox; PRAGMA user_version=1;")
    conn.close()
    with open_store(db, readonly=True) as store:  # a reader changes nothing
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == 1 and store.load(gid) == new
    with open_store(db) as store:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
        assert store.load(gid) == new
    outbox = Outbox(db)
    try:
        assert len(outbox.store_id()) == 8 and outbox.cursors() == {gid: (0, 2)}  # the old game is to be sent
        outbox.mark_sent({gid: 1})
        outbox.mark_sent({gid: 0})  # a cursor never moves back
        assert outbox.cursors() == {gid: (1, 2)} and [e.seq for e in outbox.events(gid, 1, 10)] == [1]
        outbox.mark_sent({gid: 2})
        assert outbox.cursors() == {} and outbox.backlog() == 0
    finally:
        outbox.close()
    with open_store(tmp_path / "other.sqlite3") as a, open_store(tmp_path / "third.sqlite3") as b:
        ids = [s.conn.execute("SELECT value FROM meta WHERE key='store_id'").fetchone()[0] for s in (a, b)]
        assert ids[0] != ids[1]


def test_a_password_file_error_names_the_resolved_path_and_a_directory(tmp_path, monkeypatch):
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "table.toml").write_text(
        '[mqtt]\nurl = "mqtt://cafe"\ntable = "bar-1"\nuser = "u"\npassword_file = "missing-pw"\n'
    )
    monkeypatch.chdir(tmp_path)  # a relative --config: the password file is relative to it, said as resolved
    with pytest.raises(UsageError, match="no such file") as err:
        parse(["--config", "conf/table.toml"])
    assert repr(str(tmp_path / "conf" / "missing-pw")) in str(err.value), err.value
    with pytest.raises(UsageError, match="is a directory, not a file"):
        parse(["--mqtt", "mqtt://x", "--table", "t1", "--mqtt-user", "u", "--mqtt-password-file", str(tmp_path)])
