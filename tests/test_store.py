"""The SQLite game store: rows, resume, summaries, schema, corrupt and truncated files."""

from __future__ import annotations

import os
import random
import select
import sqlite3
import subprocess
import sys

import pytest

from table.app.session import GameSession
from table.game import IllegalCommandError, InvalidCommandError, ReadDice, ScoreBox, StartGame, event_to_json
from table.game.autoplay import random_command
from table.store import (
    DB_ENV,
    SCHEMA_VERSION,
    SQLITE_HEADER,
    NotAStoreError,
    StoreConflictError,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
    UnknownGameError,
    default_db_path,
    lock_path,
    open_store,
)


def play_some(session: GameSession, n: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    t = session.state.last_at + 1
    for _ in range(n):
        if session.state.finished:
            return
        session.handle(random_command(session.state, rng, t))
        t += 1


def test_events_are_stored_one_row_each_and_resume_exactly(tmp_path):
    db = tmp_path / "games.sqlite3"
    with open_store(db) as store:
        session = GameSession.start(store, StartGame(at=5.0, ruleset="yahtzee", players=("Ann", "Bo"), timer_s=60))
        play_some(session, 60)
        live = session.state
        game_id = session.game_id
    with open_store(db) as store:
        rows = store.conn.execute(
            "SELECT seq, at, type, payload FROM events WHERE game_id=? ORDER BY seq", (game_id,)
        ).fetchall()
        events = store.events(game_id)
        resumed = GameSession.resume(store)
    assert [r[0] for r in rows] == list(range(live.events))
    assert [r[3] for r in rows] == [event_to_json(e) for e in events]
    assert [r[2] for r in rows] == [e.kind for e in events]
    assert resumed is not None and resumed.game_id == game_id
    assert resumed.state == live
    assert resumed.state.turn == live.turn  # current player, roll number, holds, dice


def test_store_uses_wal_full_sync_and_a_schema_version(tmp_path):
    with open_store(tmp_path / "g.sqlite3") as store:
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_games_list_and_latest_unfinished(tmp_path):
    with open_store(tmp_path / "g.sqlite3") as store:
        assert store.games() == () and store.latest_unfinished() is None
        a = GameSession.start(store, StartGame(at=1.0, ruleset="generala", players=("Ana", "Bea")))
        play_some(a, 10_000, seed=1)
        b = GameSession.start(store, StartGame(at=2.0, ruleset="yacht", players=("Cy",)))
        games = store.games()
        assert [g.id for g in games] == [a.game_id, b.game_id]
        assert games[0].status == "finished" and games[1].status == "playing"
        assert games[0].winners == tuple(a.state.players[i] for i in a.state.winners())
        assert games[0].winners and games[0].events == a.state.events
        assert games[1].players == ("Cy",) and games[1].ruleset == "yacht"
        assert store.latest_unfinished() == b.game_id


def test_unknown_game_says_which_ids_exist(tmp_path):
    with open_store(tmp_path / "g.sqlite3") as store:
        GameSession.start(store, StartGame(at=1.0, ruleset="yacht", players=("Cy",)))
        with pytest.raises(UnknownGameError, match="no game with id 9 .*known ids: 1"):
            store.load(9)


def test_refused_command_changes_neither_state_nor_store(tmp_path):
    with open_store(tmp_path / "g.sqlite3") as store:
        session = GameSession.start(store, StartGame(at=1.0, ruleset="yacht", players=("Cy",)))
        session.handle(ReadDice(2.0, (1, 2, 3, 4, 5)))
        before = session.state
        with pytest.raises(IllegalCommandError):
            session.handle(ReadDice(3.0, (1, 2, 3, 4, 5), roll=3))
        assert session.state is before
        assert store.summary(session.game_id).events == before.events
        assert store.load(session.game_id) == before


def test_append_out_of_sequence_is_refused_and_writes_nothing(tmp_path):
    with open_store(tmp_path / "g.sqlite3") as store:
        session = GameSession.start(store, StartGame(at=1.0, ruleset="yacht", players=("Cy",)))
        stale = GameSession(store, session.game_id, session.state)
        session.handle(ReadDice(2.0, (1, 2, 3, 4, 5)))
        with pytest.raises(StoreConflictError, match="does not have 1 stored events"):
            stale.handle(ReadDice(2.5, (6, 6, 6, 6, 6)))
        assert store.load(session.game_id) == session.state


def test_subscribers_hear_accepted_commands_only(tmp_path):
    heard = []
    with open_store(tmp_path / "g.sqlite3") as store:
        session = GameSession.start(store, StartGame(at=1.0, ruleset="yacht", players=("Cy",)))
        unsubscribe = session.subscribe(lambda state, events: heard.append((state, events)))
        session.subscribe(lambda state, events: 1 / 0)  # a broken display is ignored
        session.handle(ReadDice(2.0, (1, 2, 3, 4, 5)))
        with pytest.raises(InvalidCommandError):
            session.handle(ScoreBox(3.0, "generala"))
        session.handle(ScoreBox(3.0, "large_straight"))
        unsubscribe()
        session.handle(ReadDice(4.0, (1, 2, 3, 4, 5)))
        # Each call came after the commit: the store already held those events.
        assert [e[1][0].kind for e in heard] == ["dice_read", "box_scored"]
        assert heard[-1][0].cards[0].boxes == {"large_straight": 30}


def test_corrupt_file_is_set_aside_and_a_new_store_starts(tmp_path):
    db = tmp_path / "games.sqlite3"
    db.write_bytes(SQLITE_HEADER + b"this is not a database at all" * 100)  # an SQLite file, damaged
    with pytest.raises(StoreCorruptError, match="damaged or not a database"):
        open_store(db, on_corrupt="raise")
    assert db.exists()  # 'raise' leaves the file alone
    with open_store(db) as store:
        assert store.set_aside_path is not None and store.set_aside_path.exists()
        assert store.set_aside_path.name.startswith("games.sqlite3.corrupt-")
        assert "kept as" in store.note and "new store" in store.note
        assert store.games() == ()
    assert store.set_aside_path.read_bytes()[16:].startswith(b"this is not")


@pytest.mark.parametrize("on_corrupt", ["set_aside", "raise"])
@pytest.mark.parametrize("data", [b"\xff\xd8\xff\xe0 a photo given to --db by mistake", b"hello\n"])
def test_regression_a_file_that_is_not_sqlite_is_refused_and_left_alone(tmp_path, on_corrupt, data):
    photo = tmp_path / "text.jpg"
    photo.write_bytes(data)
    with pytest.raises(NotAStoreError, match="'.*text.jpg' is not a dicetable game store.*give another --db path"):
        open_store(photo, on_corrupt=on_corrupt)
    assert photo.read_bytes() == data
    assert list(tmp_path.iterdir()) == [photo]  # nothing set aside, no new store beside it


def test_the_tables_own_store_is_set_aside_even_when_its_header_is_lost(tmp_path, monkeypatch):
    """A torn first page of the table's own store must not stop an unattended table."""
    monkeypatch.delenv(DB_ENV, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    own = tmp_path / "data" / "dicetable" / "games.sqlite3"
    own.parent.mkdir(parents=True)
    own.write_bytes(b"\x00" * 4096)  # the first page zeroed, as a torn write can leave it
    with open_store() as store:  # the app's default: set aside, a new store started
        assert store.games() == () and store.set_aside_path is not None
        assert store.set_aside_path.read_bytes() == b"\x00" * 4096
    assert own.read_bytes().startswith(SQLITE_HEADER)
    own.write_bytes(b"\x00" * 4096)
    with pytest.raises(StoreCorruptError):  # the command line's choice: damaged, said, nothing moved
        open_store(on_corrupt="raise")
    with pytest.raises(StoreCorruptError):  # games and export read only
        open_store(on_corrupt="raise", create=False, readonly=True)
    assert own.read_bytes() == b"\x00" * 4096 and sorted(own.parent.iterdir()) == sorted(
        [own, store.set_aside_path, lock_path(own)]
    )  # the writer's lock file stays, unlocked


def test_a_store_named_by_hand_that_is_not_ours_is_left_alone(tmp_path, monkeypatch):
    """$DICETABLE_DB and --db name the user's own files: a text file or another program's database stays as it is."""
    text = tmp_path / "envdb.txt"
    text.write_bytes(b"notes\n")
    monkeypatch.setenv(DB_ENV, str(text))
    with pytest.raises(NotAStoreError, match="not a dicetable game store"):
        open_store()
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE photos (name TEXT)")
    conn.close()
    before = other.read_bytes()
    with pytest.raises(NotAStoreError, match=r"not a dicetable store \(tables: photos\).*left as it is"):
        open_store(other)
    assert text.read_bytes() == b"notes\n" and other.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["envdb.txt", "other.db"]


def test_a_relative_xdg_data_home_is_ignored(tmp_path, monkeypatch):
    monkeypatch.delenv(DB_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", "relative/dir")
    assert default_db_path() == tmp_path / ".local" / "share" / "dicetable" / "games.sqlite3"


def test_an_empty_file_becomes_a_store(tmp_path):
    db = tmp_path / "new.sqlite3"
    db.touch()
    with open_store(db) as store:
        assert store.games() == () and store.note is None
    assert db.read_bytes().startswith(SQLITE_HEADER)


def test_a_folder_is_not_a_store(tmp_path):
    with pytest.raises(StoreError, match="is a folder; give a file path"):
        open_store(tmp_path)


def test_readonly_open_makes_and_changes_nothing(tmp_path):
    empty = tmp_path / "empty.db"
    empty.touch()
    with pytest.raises(StoreError, match="is an empty file, not a dicetable game store"):
        open_store(empty, readonly=True)
    assert empty.stat().st_size == 0
    with pytest.raises(StoreError, match="no game store"):
        open_store(tmp_path / "none.db", readonly=True)
    assert not (tmp_path / "none.db").exists()
    db = tmp_path / "games.sqlite3"
    with open_store(db) as store:
        play_some(GameSession.start(store, StartGame(at=1.0, ruleset="yacht", players=("A", "B"))), 30)
    before = db.read_bytes()
    with open_store(db, readonly=True) as store:
        assert [g.ruleset for g in store.games()] == ["yacht"]
        with pytest.raises(StoreError, match="could not store the new game"):
            GameSession.start(store, StartGame(at=5.0, ruleset="yacht", players=("C",)))
    assert db.read_bytes() == before


def test_readonly_open_does_not_set_a_damaged_store_aside(tmp_path):
    db = tmp_path / "games.sqlite3"
    db.write_bytes(SQLITE_HEADER + b"damaged" * 100)
    with pytest.raises(StoreCorruptError, match="damaged or not a database"):
        open_store(db, readonly=True)  # on_corrupt="set_aside" (the default) is not applied
    assert list(tmp_path.iterdir()) == [db]


def test_truncated_file_is_detected(tmp_path):
    db = tmp_path / "games.sqlite3"
    with open_store(db) as store:
        for k in range(3):
            session = GameSession.start(store, StartGame(at=1.0, ruleset="yatzy", players=("A", "B", "C")))
            play_some(session, 400, seed=k)
    data = db.read_bytes()
    assert len(data) > 8192 and not (tmp_path / "games.sqlite3-wal").exists()
    db.write_bytes(data[: len(data) // 2])
    with pytest.raises(StoreCorruptError):
        open_store(db, on_corrupt="raise")
    with open_store(db) as store:
        assert store.set_aside_path is not None and store.games() == ()


def test_foreign_sqlite_file_is_not_taken_for_a_store(tmp_path):
    db = tmp_path / "other.sqlite3"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE recipes (name TEXT)")
    conn.commit()
    conn.close()
    before = db.read_bytes()
    for on_corrupt in ("raise", "set_aside"):  # another program's database is never moved aside
        with pytest.raises(NotAStoreError, match="not a dicetable store"):
            open_store(db, on_corrupt=on_corrupt)
    assert db.read_bytes() == before


def test_newer_schema_is_refused(tmp_path):
    db = tmp_path / "g.sqlite3"
    open_store(db).close()
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer than this dicetable"):
        open_store(db)
    # a store that fails to open releases its writer's lock: the same refusal again, not "in use by another dicetable"
    with pytest.raises(StoreError, match="newer than this dicetable"):
        open_store(db)


def test_missing_store_without_create(tmp_path):
    with pytest.raises(StoreError, match="no game store"):
        open_store(tmp_path / "none.sqlite3", create=False)
    assert not (tmp_path / "none.sqlite3").exists()


def test_closed_store_refuses_use(tmp_path):
    store = open_store(tmp_path / "g.sqlite3")
    store.close()
    assert "closed" in repr(store)
    with pytest.raises(StoreError, match="is closed"):
        store.games()


def test_default_path_from_env_and_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("DICETABLE_DB", str(tmp_path / "x.sqlite3"))
    assert default_db_path() == tmp_path / "x.sqlite3"
    monkeypatch.delenv("DICETABLE_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_db_path() == tmp_path / "data" / "dicetable" / "games.sqlite3"
    with open_store() as store:  # makes the folder
        assert store.path.parent.is_dir()


def test_second_writer_is_refused_while_a_game_has_the_store_open(tmp_path):
    """Regression: a second 'dicetable play' on the same store lost every roll to the first one's events."""
    db = tmp_path / "g.sqlite3"
    with open_store(db) as first:
        GameSession.start(first, StartGame(at=1.0, ruleset="yacht", players=("Cy",)))
        for kwargs in ({}, {"on_corrupt": "raise"}, {"create": False}):
            with pytest.raises(StoreLockedError) as info:
                open_store(db, **kwargs)
            assert str(info.value) == (
                f"the game store {str(db)!r} is in use by another dicetable (pid {os.getpid()}): stop it "
                "first ('sudo systemctl stop dicetable', or Ctrl-C where it runs) or give another --db"
            )
        with open_store(db, readonly=True) as reader:  # 'dicetable games' and 'export' still read it
            assert [g.status for g in reader.games()] == ["playing"]
        assert len(first.games()) == 1  # the refused writer changed nothing
    with open_store(db) as again:  # closed: the next writer gets it
        assert len(again.games()) == 1


_HOLD_STORE = """
import sys, time
from table.store import open_store
store = open_store(sys.argv[1])
print("open", flush=True)
time.sleep(60)
"""


def test_a_killed_writer_leaves_the_store_unlocked(tmp_path):
    """A pulled plug or SIGKILL must never leave the store locked: the OS drops the lock with the process."""
    db = tmp_path / "g.sqlite3"
    child = subprocess.Popen([sys.executable, "-c", _HOLD_STORE, str(db)], stdout=subprocess.PIPE)
    try:
        ready, _, _ = select.select([child.stdout], [], [], 30)
        assert ready and child.stdout.readline() == b"open\n"
        with pytest.raises(StoreLockedError, match=f"in use by another dicetable \\(pid {child.pid}\\)"):
            open_store(db)
    finally:
        child.kill()
        child.wait(timeout=30)
        child.stdout.close()
    assert lock_path(db).exists()  # the file stays; its lock went with the process
    with open_store(db) as store:
        assert store.games() == ()


def test_regression_a_second_writer_through_a_symlink_is_refused(tmp_path):
    """Two paths to one store (a symbolic link) must share one lock, or two writers write one file."""
    db = tmp_path / "g.sqlite3"
    (tmp_path / "alias").mkdir()
    link = tmp_path / "alias" / "link.sqlite3"
    with open_store(db):
        link.symlink_to(db)
        with pytest.raises(StoreLockedError):
            open_store(link)
    assert not (tmp_path / "alias" / "link.sqlite3.lock").exists()


def test_regression_a_moments_look_at_the_lock_does_not_refuse_a_writer(tmp_path):
    """play --wait's look at the store's lock (store_holder) holds it for an instant; a play opening the store
    at that instant was refused as 'in use by another dicetable', naming a pid that was not running it."""
    import fcntl
    import os
    import threading

    from table.store import lock_path, open_store

    db = tmp_path / "g.sqlite3"
    with open_store(db):
        pass
    fd = os.open(lock_path(db), os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # someone looking
    threading.Timer(0.03, os.close, (fd,)).start()
    with open_store(db) as store:
        assert store.games() == ()
