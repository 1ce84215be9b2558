"""Opening a store file: the checks before it is touched, the schema, and setting a damaged one aside.

A damaged store (an SQLite file that is truncated, overwritten in part or fails
its integrity check) raises :class:`StoreCorruptError` here; the caller sets it
aside (:func:`set_aside`) or passes the error on. A store that cannot be written
now (a full disk, a read-only folder or disk, no permission, an I/O error) raises
:class:`StoreWriteError` and is never set aside (:mod:`table.store.faults` tells
the two apart). A reader makes no file beside the store (:func:`reader_uri`). A file that is not an SQLite
database at all, or another program's SQLite database, raises
:class:`NotAStoreError` and is never touched, unless it is the table's own store
(:func:`~table.store.paths.own_db_path`): a torn first page must not stop an
unattended table, so that one counts as damaged.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from table.store.errors import NotAStoreError, StoreCorruptError, StoreError
from table.store.faults import is_corruption, open_error, write_error
from table.store.outbox import outbox_schema
from table.store.paths import DB_ENV, own_db_path

#: Schema version, kept in ``PRAGMA user_version``: 1 games and events, 2 adds the outbox and the
#: store's id (:mod:`table.store.outbox`; a writer migrates a version 1 store when it opens it).
SCHEMA_VERSION = 2
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


def check_file(path: Path, *, must_exist: bool, readonly: bool) -> None:
    """Refuse a folder, a file that is not SQLite, a missing file when it `must_exist`, an empty one (`readonly`).

    Raises :class:`StoreError` or :class:`NotAStoreError`; reads at most the file's first 16 bytes.
    """
    where = str(path)
    if path.is_dir():
        raise StoreError(
            f"the game store {where!r} is a folder; give a file path, e.g. --db {str(path / 'games.sqlite3')!r}"
        )
    if not path.exists():
        if must_exist:
            raise StoreError(
                f"no game store at {where!r}; no games have been played there (give --db PATH or set ${DB_ENV})"
            )
        return
    try:
        with open(path, "rb") as f:
            head = f.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise StoreError(
            f"cannot read the game store {where!r}: {exc.strerror}; fix its permissions or give another --db path"
        ) from None
    if not head:
        if readonly:
            raise StoreError(
                f"{where!r} is an empty file, not a dicetable game store: no games "
                "have been played there; give another --db path"
            )
        return  # an empty file: the store is made in it
    if head != SQLITE_HEADER:
        if owns_file(path):
            return  # the table's own store, its first page lost (a torn write): damaged, as any other damage
        raise NotAStoreError(
            f"{where!r} is not a dicetable game store (not an SQLite database); "
            "it was left as it is: give another --db path"
        )


def owns_file(path: Path) -> bool:
    """Whether `path` is the table's own store (:func:`own_db_path`), not one named by hand.

    Only its own store is set aside when it is not a dicetable store at all: a torn
    write of the first page on an unattended table must not stop the game. A file
    named with ``--db`` or ``$DICETABLE_DB`` that is not one is more likely a slip (a
    photo, another program's database) and is left alone.
    """
    try:
        return path.resolve() == own_db_path().resolve()
    except (OSError, RuntimeError):
        return False


def connect(path: Path, *, readonly: bool) -> sqlite3.Connection:
    """An open, checked connection to the store at `path`; a new file gets the schema (unless `readonly`).

    A writer's connection has made a test write (:func:`probe_write`).

    Raises :class:`StoreCorruptError` for a damaged store, :class:`NotAStoreError` for
    another program's database, :class:`StoreWriteError` for a writer that cannot write
    (a full disk, no permission: the file is left as it is), :class:`StoreError` for a
    newer schema or a reader's open that fails.
    """
    sides = [Path(f"{path}{side}") for side in ("-wal", "-shm")]
    new_sides = [side for side in sides if not side.exists()]
    try:
        if readonly:
            conn = sqlite3.connect(reader_uri(path), uri=True, isolation_level=None, timeout=5.0)
        else:
            conn = sqlite3.connect(path, isolation_level=None, timeout=5.0)
    except sqlite3.Error as exc:
        raise open_error(path, exc, readonly=readonly) from None
    try:
        _prepare(conn, path, readonly=readonly)
        if not readonly:
            probe_write(
                conn, path, f"cannot open the game store {str(path)!r} for writing", "; the store was left as it is"
            )
    except BaseException:
        conn.close()
        if not readonly and not _size(sides[0]):  # an empty log: nothing in it, and nobody else writes (the lock)
            for side in new_sides:  # what the failed open made (an -shm made read-only with a read-only file,
                try:  # say, would keep the store read-only once the file is writable again)
                    side.unlink(missing_ok=True)
                except OSError:
                    pass
        raise
    return conn


def reader_uri(path: Path) -> str:
    """The URI a reader opens `path` with: ``mode=ro``, and ``immutable=1`` while no log lies beside it.

    Without a ``-wal`` (or ``-journal``) file, or with an empty one (a writer that could not start
    on a full disk leaves one), the database file holds every committed event (a writer's clean
    close checkpoints its log into the file and deletes it), so it is read as
    immutable: SQLite then makes no ``-wal``/``-shm`` files (a read-only connection could not
    delete them again) and reads from a read-only or full disk too. With a log beside it (a game
    running, or a crash) it is read through the log. A writer that starts during an immutable read
    writes its log, not the file, until its first checkpoint (1000 pages or its close).
    """
    uri = f"{path.resolve().as_uri()}?mode=ro"
    if not any(_size(Path(f"{path}{side}")) for side in ("-wal", "-journal")):
        uri += "&immutable=1"
    return uri


def _size(path: Path) -> int:
    """The size of `path` in bytes; 0 if there is no such file."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def probe_write(conn: sqlite3.Connection, path: Path, doing: str, after: str = "") -> None:
    """Commit a write that changes nothing: ``PRAGMA user_version`` set to itself (one 4 KiB WAL frame).

    Tells whether the store can be written now (SQLite opens a file it may not write read-only,
    without a word). Raises :class:`StoreWriteError` (message: `doing`, why, what to do, `after`)
    or :class:`StoreCorruptError`.
    """
    try:
        conn.execute("BEGIN IMMEDIATE")
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        conn.execute(f"PRAGMA user_version={version}")
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        raise _failed_write(conn, path, exc, doing, after) from None


def _prepare(conn: sqlite3.Connection, path: Path, *, readonly: bool) -> None:
    where = f"game store {str(path)!r}"
    try:
        check = conn.execute("PRAGMA quick_check").fetchall()
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.Error as exc:
        raise open_error(path, exc, readonly=readonly) from None
    if check != [("ok",)]:
        raise StoreCorruptError(f"{where} failed its integrity check: {check[0][0]}")
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{where} has schema version {version}, newer than this dicetable "
            f"({SCHEMA_VERSION}); upgrade dicetable or give another --db"
        )
    if version == 0 and tables and not owns_file(path):  # another program's database: not even its
        raise NotAStoreError(
            f"{where} is an SQLite file but not a dicetable store (tables: "  # journal mode
            f"{', '.join(sorted(tables))}); it was left as it is: give another --db path"
        )
    mode = "wal"
    if not readonly:  # a reader changes nothing, the journal mode included
        try:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as exc:
            raise open_error(path, exc, readonly=False) from None
    if mode.lower() != "wal":
        raise StoreError(f"{where}: cannot switch to write-ahead logging (got {mode!r})")
    if version == 0:
        if tables:
            raise StoreCorruptError(
                f"{where} is an SQLite file but not a dicetable store (tables: {', '.join(sorted(tables))})"
            )
        if readonly:
            raise StoreCorruptError(
                f"{where} is an SQLite file without the dicetable tables: "
                "no games have been played there; give another --db path"
            )
        try:
            conn.executescript(
                f"BEGIN IMMEDIATE;{_SCHEMA}{outbox_schema()}PRAGMA user_version={SCHEMA_VERSION}; COMMIT;"
            )
        except sqlite3.Error as exc:
            if is_corruption(exc):
                raise StoreCorruptError(f"{where} is damaged or not a database ({exc})") from None
            raise write_error(path, exc, f"cannot make the tables of {where}") from None
    elif not {"games", "events"} <= tables:
        raise StoreCorruptError(f"{where} lacks the games/events tables")
    elif version == 1 and not readonly:
        _migrate_1_to_2(conn, path)


def _migrate_1_to_2(conn: sqlite3.Connection, path: Path) -> None:
    """Add the outbox and the store's id to a version 1 store, in one transaction (no row is touched)."""
    try:
        conn.executescript(f"BEGIN IMMEDIATE;{outbox_schema()}PRAGMA user_version=2; COMMIT;")
    except sqlite3.Error as exc:
        raise _failed_write(conn, path, exc, f"cannot add the outbox to the game store {str(path)!r}") from None


def _failed_write(conn: sqlite3.Connection, path: Path, exc: sqlite3.Error, doing: str, after: str = "") -> StoreError:
    """The error to raise for a write of `conn` that failed with `exc`, its transaction rolled back:
    :class:`StoreCorruptError` for a damaged file, else :func:`write_error`'s :class:`StoreWriteError`."""
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass
    if is_corruption(exc):
        return StoreCorruptError(f"game store {str(path)!r} is damaged ({exc})")
    return write_error(path, exc, doing, after)


def set_aside(path: Path, reason: str) -> tuple[Path, str]:
    """Move the damaged store at `path` (with its ``-wal``/``-shm`` files) to ``NAME.corrupt-YYYYmmdd-HHMMSS``.

    Returns the new path and the note that says so (`reason` first). Raises
    :class:`StoreError` when the file cannot be moved.
    """
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    try:
        os.replace(path, target)
        for suffix in ("-wal", "-shm"):
            side = Path(str(path) + suffix)
            if side.exists():
                os.replace(side, Path(str(target) + suffix))
    except OSError as exc:
        raise StoreError(
            f"{reason}; could not move it aside ({exc.strerror}); move or delete the file by hand"
        ) from None
    return target, f"{reason}; it was kept as {str(target)!r} and a new store was started"
