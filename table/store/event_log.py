"""The open game store, :class:`Store`: the event log's writes and reads, and the games list.

One row per event (game id, sequence number, time, JSON payload) in a
write-ahead-logged database with ``synchronous=FULL``: an event counts as
accepted only once :meth:`Store.append` has returned (its transaction is
committed and on disk).  A game's state is the fold of its rows
(:func:`table.game.fold`), so resuming after a power cut is a read.  A write that
fails (a full disk, a read-only disk, an I/O error) writes nothing and raises
:class:`~table.store.errors.StoreWriteError`; the store stays usable, and the
same write succeeds once the fault clears (:meth:`Store.probe` tells when).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from table.game import Event, GameStarted, GameState, event_from_json, event_to_json, fold
from table.store.errors import StoreConflictError, StoreCorruptError, StoreError, UnknownGameError
from table.store.faults import diagnose, is_corruption, write_error
from table.store.lock import WriterLock, take_lock
from table.store.opening import check_file, connect, probe_write, set_aside
from table.store.summaries import COLUMNS, GameSummary, status_of, summary_from_row


class Store:
    """An open game store; use :func:`~table.store.open_store` (a context manager).

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
        (whatever `on_corrupt` says), and nothing is made, set aside or changed
        (no ``-wal``/``-shm`` files either: :func:`~table.store.opening.reader_uri`).

    A writable store holds the lock on :func:`~table.store.paths.lock_path` (``NAME.lock``, made
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
        table's own store (:func:`~table.store.paths.own_db_path`): that one is damaged, as above.
    StoreCorruptError
        With ``on_corrupt="raise"`` or `readonly`, if the file is a damaged store.
    StoreWriteError
        If the store is writable but cannot be written now (a full disk, a read-only
        folder or disk, no permission, an I/O error): the file is left as it is.
    StoreError
        If the file is from a newer schema, or cannot be made or opened.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        on_corrupt: str = "set_aside",
        create: bool = True,
        readonly: bool = False,
    ) -> None:
        if on_corrupt not in ("set_aside", "raise"):
            raise ValueError(f"on_corrupt must be 'set_aside' or 'raise', got {on_corrupt!r}")
        self.path = Path(path)
        self.readonly = bool(readonly)
        self.set_aside_path: Path | None = None
        self.note: str | None = None
        self.commits = 0  # writes committed by this Store (a caller sees a write go through)
        self._conn: sqlite3.Connection | None = None
        self._lock: WriterLock | None = None  # released by close() or, unclosed, by the GC
        check_file(self.path, must_exist=self.readonly or not create, readonly=self.readonly)
        if self.readonly:
            self._conn = connect(self.path, readonly=True)
            return
        if not self.path.exists():
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(
                    f"cannot make the folder for the game store {str(self.path)!r}: {exc.strerror}"
                ) from None
        self._lock = take_lock(self.path)  # before anything is made, set aside or written
        try:
            try:
                self._conn = connect(self.path, readonly=False)
            except StoreCorruptError as exc:
                if on_corrupt == "raise":
                    raise
                self.set_aside_path, self.note = set_aside(self.path, str(exc))
                self._conn = connect(self.path, readonly=False)
        except BaseException:
            self._unlock(remove=True)
            raise

    def _unlock(self, *, remove: bool = False) -> None:
        """Release the writer's lock, if held; with `remove`, delete a lock file it made (idempotent)."""
        if self._lock is not None:
            self._lock.release(remove=remove)
            self._lock = None

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
                (
                    started.at,
                    started.at,
                    state.mode.value,
                    state.ruleset,
                    json.dumps(list(state.players)),
                    status_of(state),
                ),
            )
            game_id = int(cur.lastrowid or 0)
            conn.execute(
                "INSERT INTO events (game_id, seq, at, type, payload) VALUES (?, 0, ?, ?, ?)",
                (game_id, started.at, started.kind, event_to_json(started)),
            )
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback()
            raise self._write_error(exc, f"could not store the new game in {str(self.path)!r}") from None
        self.commits += 1
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
        StoreWriteError
            If the store cannot be written now (full, read-only, I/O error); nothing is written.
        StoreError
            If the write fails otherwise (:class:`StoreCorruptError`: damaged); nothing is written.
        """
        conn = self.conn
        winners = [state.players[i] for i in state.winners()]
        rows = [(game_id, seq + k, e.at, e.kind, event_to_json(e)) for k, e in enumerate(events)]
        try:
            conn.execute("BEGIN IMMEDIATE")
            cur = conn.execute(
                "UPDATE games SET updated_at=?, status=?, winners=?, n_events=? WHERE id=? AND n_events=?",
                (state.last_at, status_of(state), json.dumps(winners), seq + len(rows), game_id, seq),
            )
            if cur.rowcount != 1:
                conn.execute("ROLLBACK")
                raise StoreConflictError(
                    f"game {game_id} does not have {seq} stored events (another writer, or a "
                    "stale session); reload the game with GameSession.resume"
                )
            conn.executemany("INSERT INTO events (game_id, seq, at, type, payload) VALUES (?, ?, ?, ?, ?)", rows)
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback()
            raise self._write_error(exc, f"could not store game {game_id}'s events in {str(self.path)!r}") from None
        self.commits += 1

    def probe(self) -> None:
        """Commit a write that changes nothing; raises :class:`StoreWriteError` while the store cannot be written.

        For a caller that waits for a fault to clear (a full disk freed, a disk made writable again).
        """
        probe_write(self.conn, self.path, f"cannot write the game store {str(self.path)!r}")
        self.commits += 1

    def _write_error(self, exc: sqlite3.Error, doing: str) -> StoreError:
        if is_corruption(exc):
            return StoreCorruptError(f"{doing}: the game store is damaged ({exc})")
        if self.readonly:
            return StoreError(f"{doing}: the store was opened read-only ({exc})")
        return write_error(self.path, exc, doing)

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
        rows = self._query("SELECT seq, payload FROM events WHERE game_id=? ORDER BY seq", (game_id,))
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
        rows = self._query(f"SELECT {COLUMNS} FROM games WHERE id=?", (game_id,))
        if not rows:
            ids = [str(r[0]) for r in self._query("SELECT id FROM games ORDER BY id DESC LIMIT 10")]
            known = f"known ids: {', '.join(ids)}" if ids else "the store has no games yet"
            raise UnknownGameError(
                f"no game with id {game_id} in {str(self.path)!r} ({known}); list them with 'dicetable games'"
            )
        return summary_from_row(rows[0])

    def games(self) -> tuple[GameSummary, ...]:
        """Every game, oldest first."""
        return tuple(summary_from_row(r) for r in self._query(f"SELECT {COLUMNS} FROM games ORDER BY id"))

    def latest_unfinished(self) -> int | None:
        """Id of the most recent game still being played, or None."""
        rows = self._query("SELECT id FROM games WHERE status='playing' ORDER BY id DESC LIMIT 1")
        return int(rows[0][0]) if rows else None

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        """All rows of `sql`.

        An SQLite error is :class:`StoreCorruptError` (damaged) or :class:`StoreError` (why, what to do).
        """
        try:
            return self.conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            where = f"the game store {str(self.path)!r}"
            if is_corruption(exc):
                raise StoreCorruptError(f"{where} is damaged ({exc})") from None
            why, todo = diagnose(self.path, exc)
            raise StoreError(f"cannot read {where}: {why}; {todo}") from None
