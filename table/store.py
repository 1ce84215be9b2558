"""The game store: an SQLite event log that survives a pulled plug.

One row per event (game id, sequence number, time, JSON payload) in a
write-ahead-logged database with ``synchronous=FULL``: an event counts as
accepted only once :meth:`Store.append` has returned (its transaction is
committed and on disk).  A game's state is the fold of its rows
(:func:`table.game.fold`), so resuming after a power cut is a read.

A file that is not a readable store (truncated, overwritten, corrupt) is
moved aside as ``NAME.corrupt-YYYYmmdd-HHMMSS`` and a new store is started
(``on_corrupt="set_aside"``, the app's choice), or reported with
:class:`StoreCorruptError` (``on_corrupt="raise"``, the command line's).

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

from table.errors import DicetableError
from table.game import Event, GameStarted, GameState, event_from_json, event_to_json, fold

#: Schema version, kept in ``PRAGMA user_version``.
SCHEMA_VERSION = 1
#: Environment variable naming the store file.
DB_ENV = "DICETABLE_DB"

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


class UnknownGameError(StoreError, LookupError):
    """Raised when no game has the given id."""


class StoreConflictError(StoreError):
    """Raised when an append does not follow the game's last stored event (two writers)."""


def default_db_path() -> Path:
    """Where the store lives: ``$DICETABLE_DB``, else the user data dir.

    Returns ``$XDG_DATA_HOME/dicetable/games.sqlite3`` (default
    ``~/.local/share/dicetable/games.sqlite3``); the folder is made on open.
    """
    env = os.environ.get(DB_ENV)
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "dicetable" / "games.sqlite3"


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

    Raises
    ------
    StoreCorruptError
        With ``on_corrupt="raise"``, if the file is not a readable store.
    StoreError
        If the file is from a newer schema, or cannot be made or opened.
    """

    def __init__(self, path: str | os.PathLike[str], *, on_corrupt: str = "set_aside",
                 create: bool = True) -> None:
        if on_corrupt not in ("set_aside", "raise"):
            raise ValueError(f"on_corrupt must be 'set_aside' or 'raise', got {on_corrupt!r}")
        self.path = Path(path)
        self.set_aside_path: Path | None = None
        self.note: str | None = None
        self._conn: sqlite3.Connection | None = None
        if not self.path.exists():
            if not create:
                raise StoreError(f"no game store at {str(self.path)!r}; no games have been "
                                 f"played there (give --db PATH or set ${DB_ENV})")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot make the folder for the game store "
                                 f"{str(self.path)!r}: {exc.strerror}") from None
        try:
            self._conn = self._open()
        except StoreCorruptError as exc:
            if on_corrupt == "raise":
                raise
            self._set_aside(str(exc))
            self._conn = self._open()

    # -- opening --------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        try:
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
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
            check = conn.execute("PRAGMA quick_check").fetchall()
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = {r[0] for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table'")}
        except sqlite3.DatabaseError as exc:
            raise StoreCorruptError(f"{where} is damaged or not a database ({exc})") from None
        if check != [("ok",)]:
            raise StoreCorruptError(f"{where} failed its integrity check: {check[0][0]}")
        if mode.lower() != "wal":
            raise StoreError(f"{where}: cannot switch to write-ahead logging (got {mode!r})")
        if version > SCHEMA_VERSION:
            raise StoreError(f"{where} has schema version {version}, newer than this dicetable "
                             f"({SCHEMA_VERSION}); upgrade dicetable or give another --db")
        if version == 0:
            if tables:
                raise StoreCorruptError(f"{where} is an SQLite file but not a dicetable store "
                                        f"(tables: {', '.join(sorted(tables))})")
            try:
                conn.executescript(f"BEGIN IMMEDIATE;{_SCHEMA}"
                                   f"PRAGMA user_version={SCHEMA_VERSION}; COMMIT;")
            except sqlite3.Error as exc:
                raise StoreError(f"cannot make the tables of {where}: {exc}") from None
        elif not {"games", "events"} <= tables:
            raise StoreCorruptError(f"{where} lacks the games/events tables")

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
        """Close the database (idempotent)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

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
               create: bool = True) -> Store:
    """Open (or make) the store at ``path`` (default :func:`default_db_path`); see :class:`Store`."""
    return Store(default_db_path() if path is None else path, on_corrupt=on_corrupt,
                 create=create)
