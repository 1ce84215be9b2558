"""The game store: an SQLite event log that survives a pulled plug.

One row per event (game id, sequence number, time, JSON payload) in a
write-ahead-logged database with ``synchronous=FULL``: an event counts as
accepted only once :meth:`Store.append` has returned (its transaction is
committed and on disk).  A game's state is the fold of its rows
(:func:`table.game.fold`), so resuming after a power cut is a read.

A damaged store (an SQLite file that is truncated, overwritten in part or
fails its integrity check) is moved aside as ``NAME.corrupt-YYYYmmdd-HHMMSS``
and a new store is started (``on_corrupt="set_aside"``, the app's choice), or
reported with :class:`StoreCorruptError` (``on_corrupt="raise"``, the command
line's).  A file that is not an SQLite database at all (a photo given to
``--db`` by mistake) is never touched: :class:`NotAStoreError`; only the
table's own store (:func:`own_db_path`) counts as damaged even then, so a
torn first page does not stop an unattended table.  The same holds for another
program's SQLite database.  Commands that
only read open the store with ``readonly=True``: nothing is made or changed.

One process at a time writes a store: a writable store holds an exclusive
advisory lock (``fcntl.flock``) on ``NAME.lock`` beside it for as long as it
is open, and a second writer is refused with :class:`StoreLockedError` (a
second ``dicetable play`` on the same store would otherwise lose every roll
to the first one's events).  The operating system drops the lock when the
process ends, however it ends: a crash or a pulled plug never leaves the
store locked.  Readers (``readonly=True``) take no lock.

Example
-------
>>> with open_store(tmp / "games.sqlite3") as store:      # doctest: +SKIP
...     game_id = store.create_game(started_event)
...     store.append(game_id, 1, events, new_state)
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from table.errors import DicetableError
from table.game import Event, GameStarted, GameState, event_from_json, event_to_json, fold

#: Schema version, kept in ``PRAGMA user_version``.
SCHEMA_VERSION = 1
#: Environment variable naming the store file.
DB_ENV = "DICETABLE_DB"
#: The first 16 bytes of every SQLite database file.
SQLITE_HEADER = b"SQLite format 3\x00"

_SCHEMA = """
CREATE TABLE games (
    id INTEGER PRIMARY KEY,
    started_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    mode TEXT NOT NULL,
    ruleset TEXT NOT NULL,
    players TEXT NOT NULL,
    status TEXT NOT NULL,
    winners TEXT NOT NULL,
    n_events INTEGER NOT NULL
);
CREATE TABLE events (
    game_id INTEGER NOT NULL REFERENCES games(id),
    seq INTEGER NOT NULL,
    at REAL NOT NULL,
    type TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (game_id, seq)
) WITHOUT ROWID;
CREATE INDEX games_status ON games(status, id);
"""


class StoreError(DicetableError, OSError):
    """Raised when the store cannot be opened, read or written."""


class StoreCorruptError(StoreError):
    """Raised when the store file (or a stored event) is not readable as a dicetable store."""


class NotAStoreError(StoreError):
    """Raised when the file is not an SQLite database at all; it is left as it is."""


class UnknownGameError(StoreError, LookupError):
    """Raised when no game has the given id."""


class StoreLockedError(StoreError):
    """Raised when another running dicetable has the store open for writing (its lock is held)."""


class StoreConflictError(StoreError):
    """Raised when an append does not follow the game's last stored event (two writers)."""


def lock_path(path: str | os.PathLike[str]) -> Path:
    """The lock file of the store at ``path``: ``NAME.lock`` beside it (see :class:`Store`).

    Symbolic links are followed first, so that every path to one store shares one lock.
    """
    path = Path(path).resolve()
    return path.with_name(path.name + ".lock")


def store_holder(path: str | os.PathLike[str]) -> str | None:
    """Who holds the writer's lock of the store at `path` (``"another dicetable (pid N)"``), or None.

    None also where there is no lock file yet or no ``flock``. Takes no lock that
    outlives the call; :class:`Store` still raises :class:`StoreLockedError` if a
    writer takes the lock between this look and its own open.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return None
    try:
        fd = os.open(lock_path(path), os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return None
    except BlockingIOError:
        return _holder_text(fd)
    except OSError:
        return None
    finally:
        os.close(fd)  # drops the lock if it was taken


def _holder_text(fd: int) -> str:
    """The writer named by the pid in the lock file open as `fd`."""
    pid = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    return f"another dicetable (pid {pid})" if pid.isdigit() else "another dicetable"


def own_db_path() -> Path:
    """The table's own store: ``$XDG_DATA_HOME/dicetable/games.sqlite3``.

    The default is ``~/.local/share/dicetable/games.sqlite3``; a relative
    ``$XDG_DATA_HOME`` is ignored, as the XDG Base Directory Specification
    says. This is where the table keeps its games when no path is named.
    """
    base = os.environ.get("XDG_DATA_HOME", "")
    return (Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share") / "dicetable" / "games.sqlite3"


def default_db_path() -> Path:
    """Where the store lives: ``$DICETABLE_DB``, else :func:`own_db_path`; the folder is made on open."""
    env = os.environ.get(DB_ENV)
    if env:
        return Path(env).expanduser()
    return own_db_path()


@dataclass(frozen=True, slots=True)
class GameSummary:
    """One line of the games list.

    ``status`` is ``playing``, ``finished`` or ``abandoned``; ``winners`` names
    the players sharing the top total once finished (empty otherwise); times
    are seconds since the Unix epoch.
    """

    id: int
    mode: str
    ruleset: str
    players: tuple[str, ...]
    status: str
    started_at: float
    updated_at: float
    winners: tuple[str, ...]
    events: int


def status_of(state: GameState) -> str:
    """``playing``, ``finished`` or ``abandoned`` for ``state``."""
    return "playing" if state.ended is None else state.ended.value


class Store:
    """An open game store; use :func:`open_store` (a context manager).

    Parameters
    ----------
    path : str or Path
        The SQLite file; made (with its folder) when missing if ``create``.
    on_corrupt : {"set_aside", "raise"}
        What to do with a file that is not a readable store: move it aside and
        start a new one (``set_aside_path`` and ``note`` then say where), or raise.
    create : bool
        If False, a missing file raises :class:`StoreError` instead of being made.
    readonly : bool
        Open for reading only (``games``, ``export``): a missing or empty file
        raises :class:`StoreError`, a damaged one :class:`StoreCorruptError`
        (whatever `on_corrupt` says), and nothing is made, set aside or changed.

    A writable store holds the lock on :func:`lock_path` (``NAME.lock``, made
    beside it) until :meth:`close` or the process's end; a read-only one takes
    no lock and can be opened while a game runs.

    Raises
    ------
    StoreLockedError
        If the store is writable and another process (or another open
        :class:`Store` in this one) has it open for writing; nothing is touched.
    NotAStoreError
        If the file is not empty and not an SQLite database (it is left as it
        is) or is another program's SQLite database, unless it is the
        table's own store (:func:`own_db_path`): that one is damaged, as above.
    StoreCorruptError
        With ``on_corrupt="raise"`` or `readonly`, if the file is a damaged store.
    StoreError
        If the file is from a newer schema, or cannot be made or opened.
    """

    def __init__(self, path: str | os.PathLike[str], *, on_corrupt: str = "set_aside",
                 create: bool = True, readonly: bool = False) -> None:
        if on_corrupt not in ("set_aside", "raise"):
            raise ValueError(f"on_corrupt must be 'set_aside' or 'raise', got {on_corrupt!r}")
        self.path = Path(path)
        self.readonly = bool(readonly)
        self.set_aside_path: Path | None = None
        self.note: str | None = None
        self._conn: sqlite3.Connection | None = None
        self._lock_file: BinaryIO | None = None  # closed (with its lock) by close() or, unclosed, by the GC
        self._lock_made = False
        self._check_file(must_exist=self.readonly or not create)
        if self.readonly:
            self._conn = self._open()
            return
        if not self.path.exists():
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot make the folder for the game store "
                                 f"{str(self.path)!r}: {exc.strerror}") from None
        self._lock()  # before anything is made, set aside or written
        try:
            try:
                self._conn = self._open()
            except StoreCorruptError as exc:
                if on_corrupt == "raise":
                    raise
                self._set_aside(str(exc))
                self._conn = self._open()
        except BaseException:
            self._unlock(remove=True)
            raise

    # -- opening --------------------------------------------------------------

    def _check_file(self, *, must_exist: bool) -> None:
        """Refuse a folder, a file that is not SQLite, a missing file when it `must_exist`, an empty one (read-only)."""
        where = str(self.path)
        if self.path.is_dir():
            raise StoreError(f"the game store {where!r} is a folder; give a file path, "
                             f"e.g. --db {str(self.path / 'games.sqlite3')!r}")
        if not self.path.exists():
            if must_exist:
                raise StoreError(f"no game store at {where!r}; no games have been "
                                 f"played there (give --db PATH or set ${DB_ENV})")
            return
        try:
            with open(self.path, "rb") as f:
                head = f.read(len(SQLITE_HEADER))
        except OSError as exc:
            raise StoreError(f"cannot read the game store {where!r}: {exc.strerror}") from None
        if not head:
            if self.readonly:
                raise StoreError(f"{where!r} is an empty file, not a dicetable game store: no games "
                                 "have been played there; give another --db path")
            return  # an empty file: the store is made in it
        if head != SQLITE_HEADER:
            if self._owns_file():
                return  # the table's own store, its first page lost (a torn write): damaged, as any other damage
            raise NotAStoreError(f"{where!r} is not a dicetable game store (not an SQLite database); "
                                 "it was left as it is: give another --db path")

    def _owns_file(self) -> bool:
        """Whether the file is the table's own store (:func:`own_db_path`), not one named by hand.

        Only its own store is set aside when it is not a dicetable store at all: a torn
        write of the first page on an unattended table must not stop the game. A file
        named with ``--db`` or ``$DICETABLE_DB`` that is not one is more likely a slip (a
        photo, another program's database) and is left alone.
        """
        try:
            return self.path.resolve() == own_db_path().resolve()
        except (OSError, RuntimeError):
            return False

    def _open(self) -> sqlite3.Connection:
        try:
            if self.readonly:
                conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True,
                                       isolation_level=None, timeout=5.0)
            else:
                conn = sqlite3.connect(self.path, isolation_level=None, timeout=5.0)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open game store {str(self.path)!r}: {exc}") from None
        try:
            self._prepare(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _prepare(self, conn: sqlite3.Connection) -> None:
        where = f"game store {str(self.path)!r}"
        try:
            check = conn.execute("PRAGMA quick_check").fetchall()
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = {r[0] for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table'")}
        except sqlite3.DatabaseError as exc:
            raise StoreCorruptError(f"{where} is damaged or not a database ({exc})") from None
        if check != [("ok",)]:
            raise StoreCorruptError(f"{where} failed its integrity check: {check[0][0]}")
        if version > SCHEMA_VERSION:
            raise StoreError(f"{where} has schema version {version}, newer than this dicetable "
                             f"({SCHEMA_VERSION}); upgrade dicetable or give another --db")
        if version == 0 and tables and not self._owns_file():  # another program's database: not even its
            raise NotAStoreError(f"{where} is an SQLite file but not a dicetable store (tables: "  # journal mode
                                 f"{', '.join(sorted(tables))}); it was left as it is: give another --db path")
        mode = "wal"
        if not self.readonly:  # a reader changes nothing, the journal mode included
            try:
                mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                conn.execute("PRAGMA synchronous=FULL")
                conn.execute("PRAGMA foreign_keys=ON")
            except sqlite3.DatabaseError as exc:
                raise StoreCorruptError(f"{where} is damaged or not a database ({exc})") from None
        if mode.lower() != "wal":
            raise StoreError(f"{where}: cannot switch to write-ahead logging (got {mode!r})")
        if version == 0:
            if tables:
                raise StoreCorruptError(f"{where} is an SQLite file but not a dicetable store "
                                        f"(tables: {', '.join(sorted(tables))})")
            if self.readonly:
                raise StoreCorruptError(f"{where} is an SQLite file without the dicetable tables: "
                                        "no games have been played there; give another --db path")
            try:
                conn.executescript(f"BEGIN IMMEDIATE;{_SCHEMA}"
                                   f"PRAGMA user_version={SCHEMA_VERSION}; COMMIT;")
            except sqlite3.Error as exc:
                raise StoreError(f"cannot make the tables of {where}: {exc}") from None
        elif not {"games", "events"} <= tables:
            raise StoreCorruptError(f"{where} lacks the games/events tables")

    def _lock(self) -> None:
        """Take the writer's lock on :func:`lock_path` and write our pid in it.

        Raises :class:`StoreLockedError` when another writer holds it. Where the
        platform or file system has no ``flock`` (not POSIX, some network shares),
        the store is used unlocked, as before the lock existed.
        """
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX; the table runs on Linux
            return
        where = lock_path(self.path)
        made = not where.exists()
        try:
            fd = os.open(where, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(f"cannot make the lock file {str(where)!r} of the game store: "
                             f"{exc.strerror}; give a --db path in a folder you can write") from None
        try:
            for wait_s in (0.02, 0.05, 0.1, None):  # a moment's hold (store_holder looking) is not a writer
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if wait_s is None:
                        raise
                    time.sleep(wait_s)
            if os.fstat(fd).st_ino != os.stat(where).st_ino:  # removed by a writer that failed to open
                os.close(fd)
                return self._lock()
        except BlockingIOError:
            who = _holder_text(fd)
            os.close(fd)
            raise StoreLockedError(
                f"the game store {str(self.path)!r} is in use by {who}: stop it first "
                "('sudo systemctl stop dicetable', or Ctrl-C where it runs) or give another --db"
            ) from None
        except FileNotFoundError:  # removed by a writer that failed to open: take a new one
            os.close(fd)
            return self._lock()
        except OSError:  # no locks on this file system: go on unlocked
            os.close(fd)
            return
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        except OSError:
            pass  # the pid is only for the message; the lock is what counts
        self._lock_file, self._lock_made = os.fdopen(fd, "r+b", buffering=0), made

    def _unlock(self, *, remove: bool = False) -> None:
        """Release the writer's lock (closing the file drops it); idempotent.

        With `remove`, a lock file this store made is deleted first (a failed
        open leaves nothing beside a file that is not ours).
        """
        if self._lock_file is not None:
            if remove and self._lock_made:
                lock_path(self.path).unlink(missing_ok=True)
            self._lock_file.close()
            self._lock_file = None

    def _set_aside(self, reason: str) -> None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        n = 1
        while target.exists():
            n += 1
            target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-{n}")
        try:
            os.replace(self.path, target)
            for suffix in ("-wal", "-shm"):
                side = Path(str(self.path) + suffix)
                if side.exists():
                    os.replace(side, Path(str(target) + suffix))
        except OSError as exc:
            raise StoreError(f"{reason}; could not move it aside ({exc.strerror}); "
                             "move or delete the file by hand") from None
        self.set_aside_path = target
        self.note = f"{reason}; it was kept as {str(target)!r} and a new store was started"

    # -- lifetime -------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has run."""
        return self._conn is None

    def close(self) -> None:
        """Close the database and release its lock (idempotent)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._unlock()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Store {str(self.path)!r}{' closed' if self.closed else ''}>"

    @property
    def conn(self) -> sqlite3.Connection:
        """The open connection; raises :class:`StoreError` after :meth:`close`."""
        if self._conn is None:
            raise StoreError(f"the game store {str(self.path)!r} is closed")
        return self._conn

    # -- writing --------------------------------------------------------------

    def create_game(self, started: GameStarted, state: GameState) -> int:
        """Store a new game's first event; return its id (accepted once this returns)."""
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            cur = conn.execute(
                "INSERT INTO games (started_at, updated_at, mode, ruleset, players, status, "
                "winners, n_events) VALUES (?, ?, ?, ?, ?, ?, '[]', 1)",
                (started.at, started.at, state.mode.value, state.ruleset,
                 json.dumps(list(state.players)), status_of(state)))
            game_id = int(cur.lastrowid or 0)
            conn.execute("INSERT INTO events (game_id, seq, at, type, payload) VALUES "
                         "(?, 0, ?, ?, ?)", (game_id, started.at, started.kind,
                                             event_to_json(started)))
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback()
            raise StoreError(f"could not store the new game in {str(self.path)!r}: {exc}") from None
        return game_id

    def append(self, game_id: int, seq: int, events: Sequence[Event], state: GameState) -> None:
        """Store ``events`` as rows ``seq, seq+1, ...`` of game ``game_id`` in one commit.

        Parameters
        ----------
        game_id : int
        seq : int
            Sequence number of the first event: the number of events already
            stored for the game.
        events : sequence of Event
            The events of one command, in order.
        state : GameState
            The state after them (for the games list: status, winners).

        Raises
        ------
        StoreConflictError
            If the game does not have exactly ``seq`` stored events; nothing is written.
        StoreError
            If the write fails; nothing is written.
        """
        conn = self.conn
        winners = [state.players[i] for i in state.winners()]
        rows = [(game_id, seq + k, e.at, e.kind, event_to_json(e)) for k, e in enumerate(events)]
        try:
            conn.execute("BEGIN IMMEDIATE")
            cur = conn.execute(
                "UPDATE games SET updated_at=?, status=?, winners=?, n_events=? "
                "WHERE id=? AND n_events=?",
                (state.last_at, status_of(state), json.dumps(winners), seq + len(rows),
                 game_id, seq))
            if cur.rowcount != 1:
                conn.execute("ROLLBACK")
                raise StoreConflictError(
                    f"game {game_id} does not have {seq} stored events (another writer, or a "
                    "stale session); reload the game with GameSession.resume")
            conn.executemany("INSERT INTO events (game_id, seq, at, type, payload) "
                             "VALUES (?, ?, ?, ?, ?)", rows)
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback()
            raise StoreError(f"could not store game {game_id}'s events: {exc}") from None

    def _rollback(self) -> None:
        try:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    # -- reading --------------------------------------------------------------

    def events(self, game_id: int) -> tuple[Event, ...]:
        """All stored events of game ``game_id``, in order.

        Raises
        ------
        UnknownGameError
            If there is no such game.
        StoreCorruptError
            If a row cannot be decoded or the sequence has a gap.
        """
        self.summary(game_id)
        rows = self.conn.execute("SELECT seq, payload FROM events WHERE game_id=? ORDER BY seq",
                                 (game_id,)).fetchall()
        out = []
        for expected, (seq, payload) in enumerate(rows):
            if seq != expected:
                raise StoreCorruptError(f"game {game_id} misses event {expected} in the store")
            try:
                out.append(event_from_json(payload))
            except ValueError as exc:
                raise StoreCorruptError(f"game {game_id}, event {seq}: {exc}") from None
        return tuple(out)

    def load(self, game_id: int) -> GameState:
        """The state of game ``game_id``: the fold of its stored events."""
        events = self.events(game_id)
        try:
            state = fold(events)
        except ValueError as exc:
            raise StoreCorruptError(f"game {game_id}'s stored events do not replay: {exc}") from None
        if state is None:
            raise StoreCorruptError(f"game {game_id} has no events in the store")
        return state

    def summary(self, game_id: int) -> GameSummary:
        """The games-list line of ``game_id``; raises :class:`UnknownGameError` if absent."""
        row = self.conn.execute(f"SELECT {_COLUMNS} FROM games WHERE id=?",
                                (game_id,)).fetchone()
        if row is None:
            ids = [str(r[0]) for r in self.conn.execute(
                "SELECT id FROM games ORDER BY id DESC LIMIT 10")]
            known = f"known ids: {', '.join(ids)}" if ids else "the store has no games yet"
            raise UnknownGameError(f"no game with id {game_id} in {str(self.path)!r} ({known}); "
                                   "list them with 'dicetable games'")
        return _summary(row)

    def games(self) -> tuple[GameSummary, ...]:
        """Every game, oldest first."""
        return tuple(_summary(r) for r in self.conn.execute(
            f"SELECT {_COLUMNS} FROM games ORDER BY id"))

    def latest_unfinished(self) -> int | None:
        """Id of the most recent game still being played, or None."""
        row = self.conn.execute(
            "SELECT id FROM games WHERE status='playing' ORDER BY id DESC LIMIT 1").fetchone()
        return None if row is None else int(row[0])


_COLUMNS = "id, mode, ruleset, players, status, started_at, updated_at, winners, n_events"


def _summary(row: tuple) -> GameSummary:  # type: ignore[type-arg]
    gid, mode, ruleset, players, status, started, updated, winners, n = row
    return GameSummary(id=gid, mode=mode, ruleset=ruleset, players=tuple(json.loads(players)),
                       status=status, started_at=started, updated_at=updated,
                       winners=tuple(json.loads(winners)), events=n)


def open_store(path: str | os.PathLike[str] | None = None, *, on_corrupt: str = "set_aside",
               create: bool = True, readonly: bool = False) -> Store:
    """Open (or make) the store at ``path`` (default :func:`default_db_path`); see :class:`Store`."""
    return Store(default_db_path() if path is None else path, on_corrupt=on_corrupt,
                 create=create, readonly=readonly)
