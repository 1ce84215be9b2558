"""The outbox: which stored events the café's broker has acknowledged, and the store's own id.

The events table is the outbox's content: nothing is copied. ``outbox`` keeps, per game, how
many of its events (``seq`` 0 .. ``sent - 1``) the broker has acknowledged (PUBACK, QoS 1);
a game with no row has sent none, so every game ever stored is shared once a broker is
named (games of a store older than the outbox too: they are sent, oldest first, on the first
connection). ``meta`` holds ``store_id``, 8 random hex digits made with the store, so game ids
on the broker (``<table>:<store_id>:<game>``, docs/mqtt.md) never repeat when a table
starts a new store.

:class:`Outbox` is the publisher's own connection to the store (its own thread; the table's
worker keeps the store's writer connection). It writes only its ``outbox`` rows, in short
transactions with ``synchronous=NORMAL``: a cursor lost to a pulled plug only sends those
events again (QoS 1 allows duplicates; receivers drop them by id), and the worker's commits
never wait on an fsync of ours.
"""

from __future__ import annotations

import secrets
import sqlite3
from dataclasses import dataclass
from pathlib import Path

#: The outbox's tables (schema version 2); a new store gets them with the rest of the schema.
OUTBOX_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE outbox (game_id INTEGER PRIMARY KEY REFERENCES games(id), sent INTEGER NOT NULL);
"""


def outbox_schema() -> str:
    """:data:`OUTBOX_SCHEMA` and the insert of a new random ``store_id`` (SQL for a new store or a migration)."""
    return f"{OUTBOX_SCHEMA}INSERT INTO meta (key, value) VALUES ('store_id', '{secrets.token_hex(4)}');"


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One stored event waiting to be sent: its game, ``seq`` (from 0, as stored) and JSON text."""

    game_id: int
    seq: int
    payload: str


class Outbox:
    """The publisher's connection to the store at `path` (made by the table's :class:`~table.store.Store`).

    Use from one thread. Raises :class:`sqlite3.Error` on a store it cannot read; the caller
    (:mod:`table.cafe.publisher`) logs it and tries again later.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._conn = sqlite3.connect(self.path, isolation_level=None, timeout=5.0)
        self._conn.execute("PRAGMA synchronous=NORMAL")

    def close(self) -> None:
        """Close the connection (idempotent)."""
        self._conn.close()

    def store_id(self) -> str:
        """The store's random id (8 hex digits)."""
        row = self._conn.execute("SELECT value FROM meta WHERE key='store_id'").fetchone()
        if row is None:
            raise sqlite3.DatabaseError(f"the game store {str(self.path)!r} has no store id (schema older than 2)")
        return str(row[0])

    def cursors(self) -> dict[int, tuple[int, int]]:
        """``{game id: (events sent, events stored)}`` of each game with events not yet acknowledged."""
        rows = self._conn.execute(
            "SELECT g.id, COALESCE(o.sent, 0), g.n_events FROM games g LEFT JOIN outbox o ON o.game_id = g.id "
            "WHERE g.n_events > COALESCE(o.sent, 0) ORDER BY g.id"
        ).fetchall()
        return {int(g): (int(sent), int(n)) for g, sent, n in rows}

    def events(self, game_id: int, start: int, limit: int) -> list[StoredEvent]:
        """Up to `limit` stored events of `game_id` from ``seq`` `start` on, in order."""
        rows = self._conn.execute(
            "SELECT seq, payload FROM events WHERE game_id=? AND seq>=? ORDER BY seq LIMIT ?",
            (game_id, start, limit),
        ).fetchall()
        return [StoredEvent(game_id, int(seq), str(p)) for seq, p in rows]

    def mark_sent(self, sent: dict[int, int]) -> None:
        """Record ``{game id: events acknowledged}`` in one short transaction (a cursor only moves forward)."""
        if not sent:
            return
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            self._conn.executemany(
                "INSERT INTO outbox (game_id, sent) VALUES (?, ?) "
                "ON CONFLICT(game_id) DO UPDATE SET sent=max(sent, excluded.sent)",
                list(sent.items()),
            )
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise

    def backlog(self) -> int:
        """How many stored events are not yet acknowledged."""
        return sum(n - sent for sent, n in self.cursors().values())
