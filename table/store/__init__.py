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
only read open the store with ``readonly=True``: nothing is made or changed,
not even the ``-wal``/``-shm`` files beside it.

Only a damaged file is set aside.  A store that cannot be written now (a full
disk, a read-only disk or folder, no permission, an I/O error) is left as it
is: opening it for writing raises :class:`StoreWriteError`, saying why and what
to do, and so does a write that fails during play (nothing of it is written;
the same write succeeds once the fault clears).

One process at a time writes a store: a writable store holds an exclusive
advisory lock (``fcntl.flock``) on ``NAME.lock`` beside it for as long as it
is open, and a second writer is refused with :class:`StoreLockedError` (a
second ``dicetable play`` on the same store would otherwise lose every roll
to the first one's events).  The operating system drops the lock when the
process ends, however it ends: a crash or a pulled plug never leaves the
store locked.  Readers (``readonly=True``) take no lock.

Modules: :mod:`~table.store.event_log` (:class:`Store`: writes and reads),
:mod:`~table.store.opening` (file checks, schema, setting aside),
:mod:`~table.store.lock` (the writer's lock), :mod:`~table.store.paths`
(where stores live), :mod:`~table.store.summaries` (the games list),
:mod:`~table.store.faults` (damaged or only unwritable: which, and what to do),
:mod:`~table.store.errors`.

Example
-------
>>> with open_store(tmp / "games.sqlite3") as store:      # doctest: +SKIP
...     game_id = store.create_game(started_event)
...     store.append(game_id, 1, events, new_state)
"""

from __future__ import annotations

import os

from table.store.errors import (
    NotAStoreError,
    StoreConflictError,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
    StoreWriteError,
    UnknownGameError,
)
from table.store.event_log import Store
from table.store.lock import store_holder
from table.store.opening import SCHEMA_VERSION, SQLITE_HEADER
from table.store.paths import DB_ENV, default_db_path, lock_path, own_db_path
from table.store.summaries import GameSummary, status_of

__all__ = [
    "DB_ENV",
    "SCHEMA_VERSION",
    "SQLITE_HEADER",
    "GameSummary",
    "NotAStoreError",
    "Store",
    "StoreConflictError",
    "StoreCorruptError",
    "StoreError",
    "StoreLockedError",
    "StoreWriteError",
    "UnknownGameError",
    "default_db_path",
    "lock_path",
    "open_store",
    "own_db_path",
    "status_of",
    "store_holder",
]


def open_store(
    path: str | os.PathLike[str] | None = None,
    *,
    on_corrupt: str = "set_aside",
    create: bool = True,
    readonly: bool = False,
) -> Store:
    """Open (or make) the store at ``path`` (default :func:`default_db_path`); see :class:`Store`."""
    return Store(default_db_path() if path is None else path, on_corrupt=on_corrupt, create=create, readonly=readonly)
