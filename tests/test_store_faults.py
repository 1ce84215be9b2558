"""The store's faults, made for real: a full disk, a read-only disk or folder, a damaged file; at open and during play.

Only a damaged file is set aside; a store that cannot be written is left as it is, says why and what to do,
and can still be listed; a write that fails during play is not applied, is said on the page and in the log,
and play goes on where it stopped once the fault clears, with no accepted event lost.

How the faults are made: ``PRAGMA max_page_count`` makes SQLite's own "database or disk is full"
(``SQLITE_FULL``) anywhere; ``RLIMIT_FSIZE`` in a child process stops a file growing (the ``-shm`` file
at open), as a full disk does; a read-only SQLite connection gives ``SQLITE_READONLY``. A real full or
read-only disk is a small tmpfs, which needs root (these tests run as root here and in CI); as a user,
``chmod`` makes the folder read-only instead (root ignores it). Tests that need what the machine does not
allow are skipped, saying why.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
import random
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from table.app.session import GameSession
from table.cli import main
from table.game import StartGame, fold
from table.game.autoplay import random_command
from table.store import NotAStoreError, StoreCorruptError, StoreWriteError, open_store

IS_ROOT = getattr(os, "geteuid", lambda: -1)() == 0
BIG = 1073741823  # SQLite's default max_page_count


# -- making faults -------------------------------------------------------------------------------


@contextlib.contextmanager
def small_disk(where: Path, size: str = "1m"):
    """A tmpfs of `size` mounted at `where`: a disk that fills up or goes read-only for real (root on Linux)."""
    if not IS_ROOT or not sys.platform.startswith("linux"):
        pytest.skip("a small disk of its own (a tmpfs) needs root on Linux")
    where.mkdir()
    got = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True, text=True
    )
    if got.returncode:
        pytest.skip(f"cannot mount a tmpfs here ({got.stderr.strip()})")
    try:
        yield where
    finally:
        gc.collect()  # SQLite connections left by a failed assertion
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(disk: Path) -> Path:
    """Fill `disk` to the last byte with one file; return it (delete it to free the space)."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for size in (1 << 16, 1 << 12, 1 << 9, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)
    return filler


@contextlib.contextmanager
def read_only(folder: Path):
    """Make `folder` read-only: a read-only remount of its tmpfs as root (root ignores chmod), chmod as a user."""
    if IS_ROOT:
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True, capture_output=True)
    else:
        folder.chmod(0o555)
    try:
        yield
    finally:
        if IS_ROOT:
            subprocess.run(["mount", "-o", "remount,rw", str(folder)], check=True, capture_output=True)
        else:
            folder.chmod(0o755)


@contextlib.contextmanager
def store_folder(tmp_path: Path):
    """A folder for a store that :func:`read_only` can make read-only: a tmpfs as root, a plain folder otherwise."""
    if IS_ROOT:
        with small_disk(tmp_path / "disk", "4m") as disk:
            yield disk
    else:
        folder = tmp_path / "store"
        folder.mkdir()
        yield folder


def make_game(db: Path, n: int = 40, seed: int = 0) -> tuple[int, tuple]:
    """A store at `db` with one unfinished game of `n` commands; its id and stored events."""
    with open_store(db) as store:
        session = GameSession.start(store, StartGame(at=1.0, ruleset="yacht", players=("Ann", "Bo")))
        rng = random.Random(seed)
        for k in range(n):
            session.handle(random_command(session.state, rng, 2.0 + k))
        assert not session.state.finished
        return session.game_id, store.events(session.game_id)


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def run_cli(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


# -- at open -----------------------------------------------------------------------------------

_OPEN_UNDER_A_SIZE_LIMIT = r"""
import json, resource, signal, sys
from table.cli import main
from table.store import StoreError, open_store
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails (EFBIG) instead of killing us
resource.setrlimit(resource.RLIMIT_FSIZE, (8192, resource.RLIM_INFINITY))  # the 32 KiB -shm file cannot be made
try:
    open_store(sys.argv[1]).close()
    print(json.dumps({"opened": True}))
except StoreError as exc:
    print(json.dumps({"error": type(exc).__name__, "text": str(exc)}))
sys.stdout.flush()
print(json.dumps({"games": main(["games", "--db", sys.argv[1], "--json"])}))
"""


@pytest.mark.skipif(not hasattr(__import__("signal"), "SIGXFSZ"), reason="no RLIMIT_FSIZE on this platform")
def test_regression_a_disk_that_cannot_grow_a_file_at_open_does_not_set_the_store_aside(tmp_path):
    """Any user: files cannot grow (RLIMIT_FSIZE), as on a full disk: the healthy store was called damaged and moved."""
    db = tmp_path / "games.sqlite3"
    game_id, events = make_game(db)
    before = files(tmp_path)
    got = subprocess.run(
        [sys.executable, "-c", _OPEN_UNDER_A_SIZE_LIMIT, str(db)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[1],
    )
    lines = [json.loads(line) for line in got.stdout.splitlines() if line.startswith("{")]
    assert got.returncode == 0 and lines[0]["error"] == "StoreWriteError", (got.stdout, got.stderr)
    assert str(db) in lines[0]["text"] and "left as it is" in lines[0]["text"]
    assert "damaged" not in lines[0]["text"]
    listed = json.loads(next(line for line in got.stdout.splitlines() if line.startswith("[")))
    assert [g["id"] for g in listed] == [game_id] and lines[-1] == {"games": 0}  # listed, under the limit
    assert db.read_bytes() == before[db.name] and files(tmp_path).keys() == before.keys()  # nothing set aside or left
    with open_store(db) as store:  # "space freed": the unfinished game is there
        resumed = GameSession.resume(store)
        assert resumed is not None and resumed.game_id == game_id and store.events(game_id) == events


def test_regression_a_full_disk_at_open_is_said_and_the_store_kept(tmp_path, capsys):
    """Root: a real full disk. The store was moved aside as "damaged" and `games` said "no games stored yet"."""
    from table.app import TableApp

    with small_disk(tmp_path / "disk", "2m") as disk:
        db = disk / "games.sqlite3"
        game_id, events = make_game(db)
        filler = fill(disk)
        before = files(disk)
        with pytest.raises(StoreWriteError) as caught:
            open_store(db)
        text = str(caught.value)
        assert str(db) in text and "the disk is full" in text and "free some space" in text
        with pytest.raises(StoreWriteError, match="the disk is full"):  # what `play` starts with
            TableApp(db).start()
        status, out, err = run_cli(capsys, "games", "--db", str(db))
        assert status == 0 and err == "" and "Ann, Bo" in out and "playing" in out
        status, out, err = run_cli(capsys, "export", str(game_id), "--db", str(db))
        assert status == 0 and [p["name"] for p in json.loads(out)["players"]] == ["Ann", "Bo"]
        assert db.read_bytes() == before[db.name] and files(disk).keys() == before.keys()  # nothing set aside or left
        filler.unlink()  # space freed: the game goes on
        with open_store(db) as store:
            assert store.set_aside_path is None and store.events(game_id) == events
            assert GameSession.resume(store).game_id == game_id


def test_regression_a_read_only_store_is_said_kept_and_still_listed(tmp_path, capsys):
    """A healthy store on a read-only disk (root) or in a read-only folder (a user) was called "damaged"."""
    with store_folder(tmp_path) as folder:
        db = folder / "games.sqlite3"
        game_id, events = make_game(db)
        before = files(folder)
        with read_only(folder):
            with pytest.raises(StoreWriteError, match="read-only") as caught:
                open_store(db)
            assert str(db) in str(caught.value) and "damaged" not in str(caught.value)
            status, out, err = run_cli(capsys, "games", "--db", str(db))
            assert status == 0 and err == "" and "Ann, Bo" in out
            status, out, err = run_cli(capsys, "export", str(game_id), "--db", str(db), "--format", "csv")
            assert status == 0 and err == "" and out.startswith("box,Ann,Bo")
            assert files(folder) == before
        with open_store(db) as store:  # writable again: the game is there
            assert store.set_aside_path is None and store.events(game_id) == events


def test_a_store_with_a_read_only_file_is_said_at_open(tmp_path):
    """SQLite opens a file it may not write read-only without a word: the open's test write finds it."""
    if IS_ROOT:
        pytest.skip("root may write a read-only file (chmod does not stop it); the read-only disk test covers root")
    db = tmp_path / "games.sqlite3"
    make_game(db)
    db.chmod(0o444)
    with pytest.raises(StoreWriteError, match="is read-only for this user"):
        open_store(db)
    assert not list(tmp_path.glob("*.corrupt-*"))


def test_regression_listing_makes_no_files_beside_a_healthy_or_damaged_store(tmp_path, capsys):
    """`games` on a store with no log beside it made -wal/-shm files and left them (a reader cannot delete them)."""
    db = tmp_path / "games.sqlite3"
    game_id, _ = make_game(db)
    before = files(tmp_path)
    assert run_cli(capsys, "games", "--db", str(db))[0] == 0
    assert run_cli(capsys, "export", str(game_id), "--db", str(db))[0] == 0
    assert files(tmp_path) == before
    data = bytearray(db.read_bytes())
    assert len(data) >= 3 * 4096 and data[18:20] == b"\x02\x02"  # a write-ahead-logged store
    data[4096:] = b"\x07" * (len(data) - 4096)  # every page but the first overwritten
    db.write_bytes(bytes(data))
    before = files(tmp_path)
    status, out, err = run_cli(capsys, "games", "--db", str(db))
    assert status == 2 and err.count("\n") == 1 and "damaged" in err and out == ""
    assert files(tmp_path) == before


def test_only_a_damaged_store_is_set_aside(tmp_path):
    """Damaged: set aside (the app) or said (the command line). Not a database: left alone. Neither is a write fault."""
    db = tmp_path / "games.sqlite3"
    make_game(db)
    data = bytearray(db.read_bytes())
    data[4096:] = b"\x07" * (len(data) - 4096)
    db.write_bytes(bytes(data))
    with pytest.raises(StoreCorruptError, match="damaged"):
        open_store(db, on_corrupt="raise")
    with open_store(db) as store:
        assert store.set_aside_path is not None and store.set_aside_path.read_bytes() == bytes(data)
        assert store.games() == ()
    photo = tmp_path / "photo.jpg"
    photo.write_bytes(b"\xff\xd8\xff\xe0 a photo")
    with pytest.raises(NotAStoreError) as caught:
        open_store(photo)
    assert not isinstance(caught.value, StoreWriteError) and photo.read_bytes() == b"\xff\xd8\xff\xe0 a photo"


# -- during play -------------------------------------------------------------------------------


def _fill_up(store) -> None:
    """Let the store grow no more: SQLite's own SQLITE_FULL at the next write that needs a page."""
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    store.conn.execute(f"PRAGMA max_page_count={pages}")


def test_a_write_that_fails_is_not_applied_and_the_same_command_goes_through_later(tmp_path):
    db = tmp_path / "games.sqlite3"
    with open_store(db) as store:
        session = GameSession.start(store, StartGame(at=1.0, ruleset="yahtzee", players=("Ann", "Bo")))
        heard = []
        session.subscribe(lambda state, events: heard.append(events))
        rng = random.Random(3)
        _fill_up(store)
        for k in range(2000):  # play until a write needs a new page
            command = random_command(session.state, rng, 10.0 + k)
            state, n_heard = session.state, len(heard)
            try:
                session.handle(command)
            except StoreWriteError as exc:
                fault = exc
                break
        else:
            pytest.fail("the store never filled up")
        assert "the disk is full" in fault.why and fault.todo == "free some space on it"
        assert session.state is state and len(heard) == n_heard  # not folded, nobody told
        assert fold(store.events(session.game_id)) == state  # nothing of it stored
        with pytest.raises(StoreWriteError):  # still full: refused again, still nothing stored
            session.handle(command)
        store.conn.execute(f"PRAGMA max_page_count={BIG}")  # space freed
        session.handle(command)
        assert session.state.events > state.events and len(heard) == n_heard + 1
        # made read-only during play: a read-only connection to the same file
        writer = store._conn
        store._conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
        state = session.state
        with pytest.raises(StoreWriteError, match="read-only"):
            session.handle(random_command(state, rng, 5000.0))
        assert session.state is state and fold(store.events(session.game_id)) == state
        store._conn.close()
        store._conn = writer  # writable again
        while not session.state.finished:
            session.handle(random_command(session.state, rng, session.state.last_at + 1))
        final = session.state
    with open_store(db) as store:
        assert store.load(session.game_id) == final


def _wait(cond, timeout=30.0, what="the condition"):
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.01)


def _on_worker(app, fn):
    """Run `fn()` on the app's worker thread (SQLite connections belong to the thread that made them)."""
    return app.submit(fn).result(timeout=10)


@pytest.fixture
def quick_retry(monkeypatch):
    monkeypatch.setattr("table.app.store_faults.RETRY_S", 0.1)


def _stored(app):
    return _on_worker(app, lambda: app._store.events(app.session.game_id))


def test_regression_bots_stop_on_a_full_store_and_go_on_once_freed(tmp_path, quick_retry, caplog):
    """Bots stayed on "HAL to roll." for ever after a failed write, with nothing on the page or in the log."""
    from table.app import TableApp
    from table.display.snapshot import Setup

    caplog.set_level(logging.WARNING, logger="table.app.store_faults")
    with TableApp(
        tmp_path / "g.sqlite3",
        setup=Setup("yahtzee", "forced", ["HAL:easy", "Eve:easy"]),
        autostart=True,
        bot_dice="virtual",
        bot_delay_s=0.001,
        bot_seed=4,
    ) as app:
        _on_worker(app, lambda: _fill_up(app._store))
        _wait(lambda: any(w["kind"] == "store" for w in app.snapshot["warnings"]), what="the store warning")
        warning = next(w["text"] for w in app.snapshot["warnings"] if w["kind"] == "store")
        assert warning.startswith("Not saved: the disk is full.") and "Free some space" in warning
        assert any("cannot be written" in r.getMessage() for r in caplog.records)
        stuck = app.state
        time.sleep(0.3)  # bots try, the worker tries: nothing gets through while it is full
        accepted = _stored(app)
        assert app.state.events == stuck.events and fold(accepted) == app.state and not app.state.finished
        _on_worker(app, lambda: app._store.conn.execute(f"PRAGMA max_page_count={BIG}"))  # space freed
        assert app.finished.wait(60), app.snapshot["message"]
        final = _stored(app)
        assert final[: len(accepted)] == accepted and fold(final) == app.state  # 0 accepted events lost
        assert not any(w["kind"] == "store" for w in app.snapshot["warnings"])
        assert any("can be written again" in r.getMessage() for r in caplog.records)


def test_a_reading_that_cannot_be_saved_leaves_the_turn_as_it_was(tmp_path, quick_retry):
    """A person's throw and SCORE on a full store: not applied, the page says so; the same throw goes in once freed."""
    from table.app import TableApp
    from table.display.snapshot import Setup
    from table.inputs import Command
    from tests.test_display import settled

    with TableApp(tmp_path / "g.sqlite3", setup=Setup("yacht", "forced", ["Ann", "Bo"]), autostart=True) as app:
        _on_worker(app, lambda: _fill_up(app._store))
        rng = random.Random(1)
        for _ in range(400):
            values = tuple(rng.randint(1, 6) for _ in range(5))
            state, selected = app.state, app.selected
            try:
                if state.turn.roll == 0:
                    app.roll_event(settled(values)).result(timeout=5)
                else:
                    app.press(Command.SCORE).result(timeout=5)
            except StoreWriteError:  # the caller hears it too
                pass
            if app.state is state and "store" in app.warnings:
                break
        else:
            pytest.fail("the store never filled up")
        assert app.selected == selected and app.pending is None
        assert app.snapshot["message"].startswith("Not saved: the disk is full")
        assert fold(_stored(app)) == state
        _on_worker(app, lambda: app._store.conn.execute(f"PRAGMA max_page_count={BIG}"))
        _wait(lambda: "store" not in app.warnings, what="the warning to go")
        assert "can be written again" in app.snapshot["message"]
        if state.turn.roll == 0:
            app.roll_event(settled(values)).result(timeout=5)  # thrown again
            assert app.state.turn.roll == 1
        else:
            app.press(Command.SCORE).result(timeout=5)
            assert app.state.turn.player != state.turn.player or app.state.finished
        assert fold(_stored(app)) == app.state


def test_a_real_full_disk_during_play_is_said_and_play_goes_on_once_freed(tmp_path, quick_retry):
    """Root: the disk fills up under a game of bots, then space is freed."""
    from table.app import TableApp
    from table.display.snapshot import Setup

    with small_disk(tmp_path / "disk", "2m") as disk:
        with TableApp(
            disk / "g.sqlite3",
            setup=Setup("yacht", "forced", ["HAL:easy", "Eve:easy"]),
            autostart=True,
            bot_dice="virtual",
            bot_delay_s=0.001,
            bot_seed=2,
        ) as app:
            filler = fill(disk)
            _wait(lambda: "store" in app.warnings, what="the store warning")
            assert "the disk is full" in app.warnings["store"]
            accepted = _stored(app)
            time.sleep(0.3)
            assert fold(_stored(app)) == app.state and len(_stored(app)) == len(accepted)
            assert "store" in app.warnings  # the worker's test writes fail too
            filler.unlink()
            assert app.finished.wait(60), app.snapshot["message"]
            final = _stored(app)
            assert final[: len(accepted)] == accepted and fold(final) == app.state


def test_regression_the_demo_player_waits_out_a_full_store(tmp_path, quick_retry, monkeypatch):
    """The demo's player thread died with StoreWriteError on the first press the store could not keep."""
    from table.app import TableApp
    from table.demo.presser import DemoPlayer
    from table.display.snapshot import Setup
    from table.inputs import Command
    from tests.test_display import settled

    with TableApp(tmp_path / "g.sqlite3", setup=Setup("yacht", "forced", ["Ann", "Bo"]), autostart=True) as app:
        player = DemoPlayer(app)  # not started: its presses are made here, one by one
        app.roll_event(settled((2, 3, 4, 5, 6))).result(timeout=5)
        state, writer = app.state, app._store._conn
        ro = f"{(tmp_path / 'g.sqlite3').resolve().as_uri()}?mode=ro"

        def read_only():  # made read-only during play: a read-only connection to the same file
            app._store._conn = sqlite3.connect(ro, uri=True, isolation_level=None, check_same_thread=False)

        _on_worker(app, read_only)
        assert not player._press(Command.SCORE)  # refused, not raised: the player's thread lives on
        assert app.state is state and "store" in app.warnings

        def writable():
            app._store._conn.close()
            app._store._conn = writer

        _on_worker(app, writable)
        _wait(lambda: "store" not in app.warnings, what="the warning to go")
        assert player._press(Command.SCORE) and app.state.turn.player != state.turn.player
        assert fold(_stored(app)) == app.state


def test_regression_a_busy_worker_still_tries_the_store_again(tmp_path, quick_retry):
    """The worker tried the store only after RETRY_S s with no call: camera views every 0.5 s kept it from ever
    trying, and a fault cleared only when a command went through."""
    from table.app import TableApp
    from table.display.snapshot import Setup
    from tests.test_display import settled

    with TableApp(tmp_path / "g.sqlite3", setup=Setup("yacht", "forced", ["Ann"]), autostart=True) as app:
        writer = app._store._conn
        ro = f"{(tmp_path / 'g.sqlite3').resolve().as_uri()}?mode=ro"

        def read_only():
            app._store._conn = sqlite3.connect(ro, uri=True, isolation_level=None, check_same_thread=False)

        def writable():
            app._store._conn.close()
            app._store._conn = writer

        _on_worker(app, read_only)
        with pytest.raises(StoreWriteError):
            app.roll_event(settled((1, 2, 3, 4, 5))).result(timeout=5)
        assert "store" in app.warnings
        stop = threading.Event()

        def views():  # a camera's stream of views: never RETRY_S s without a call
            while not stop.is_set():
                app.camera_update(jpeg=b"x")
                time.sleep(0.01)

        feeder = threading.Thread(target=views, daemon=True)
        feeder.start()
        try:
            _on_worker(app, writable)
            _wait(lambda: "store" not in app.warnings, timeout=20, what="the worker to try the store again")
        finally:
            stop.set()
            feeder.join()
        assert app.snapshot["message"] == "The game store can be written again: play on."


def test_a_folder_that_takes_no_files_is_not_called_a_full_disk_nor_a_read_only_mount_a_chown():
    """A newcomer's `--db /proc/x.sqlite` was told "the disk is full (0 KiB free)" (/proc has no blocks), and a
    read-only mount got 'sudo chown' as its fix."""
    import errno as errno_

    from table.doctor.store import store_problem
    from table.store.faults import diagnose

    why, todo = diagnose(Path("/proc/x.sqlite"), FileNotFoundError(errno_.ENOENT, "No such file or directory"))
    assert "full" not in why and "'/proc' takes no new files" in why and "--db" in todo
    check = store_problem("/m/g.sqlite3", "cannot open it: the disk holding '/m' is mounted read-only; remount it")
    assert "remount" in check.fix and "chown" not in check.fix
