"""The leaderboard's own SQLite store: tables (status and state), games, their events and seats.

Tables
------
``tables``          one row per table: ``online`` (1, 0 or NULL before any status), its last state (JSON)
``status_changes``  each change of a table's status, with the time it was seen
``games``           one row per game id: ruleset, players, first and last event time (the table's
                    clock), ``seen_at`` (this machine's clock when the latest event came: the periods
                    count by it, as a Pi without a clock source may be days off), ``last_seq``,
                    ``finished`` (the cards are full), ``abandoned`` (closed by hand before that),
                    ``from_state`` (1: finished and totalled from the table's retained state, as some
                    events never came: :meth:`LeaderboardStore.reconcile`)
``events``          every event once: ``id`` is the PRIMARY KEY, so a duplicate (QoS 1 redelivery, a
                    table re-sending its outbox) is dropped by the INSERT
``seats``           each game's players with their total (the latest event's ``totals``) and their
                    five-alike boxes (:mod:`table.leaderboard.fives`)

One connection, shared by the intake's thread (writes, a batch per transaction) and the web server's (reads) under a
lock; WAL journal so a reader never waits for a commit to reach the disk.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from table.errors import DicetableError
from table.leaderboard.fives import FIVE_ALIKE_BOXES, five_alike_counts
from table.leaderboard.messages import GameEvent, Message, Status, TableState

SCHEMA = """
CREATE TABLE IF NOT EXISTS tables (
    name TEXT PRIMARY KEY, online INTEGER, status_at REAL, state TEXT, state_at REAL);
CREATE TABLE IF NOT EXISTS status_changes (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, online INTEGER NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY, tbl TEXT NOT NULL, ruleset TEXT NOT NULL, players TEXT NOT NULL,
    started_at REAL NOT NULL, updated_at REAL NOT NULL, seen_at REAL NOT NULL, last_seq INTEGER NOT NULL,
    events INTEGER NOT NULL, finished INTEGER NOT NULL, abandoned INTEGER NOT NULL,
    from_state INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS events (
    id TEXT PRIMARY KEY, game TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, at REAL NOT NULL,
    player INTEGER NOT NULL, box TEXT NOT NULL, points INTEGER NOT NULL, received_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS events_game ON events (game, seq);
CREATE TABLE IF NOT EXISTS seats (
    game TEXT NOT NULL, seat INTEGER NOT NULL, player TEXT NOT NULL, total INTEGER NOT NULL,
    fives INTEGER NOT NULL, PRIMARY KEY (game, seat));
CREATE INDEX IF NOT EXISTS games_ruleset ON games (ruleset, finished, seen_at);
"""


#: Seconds a write waits for another program holding the file's lock (a backup, an sqlite3 shell) before
#: the batch fails and is fetched again from the broker.
BUSY_TIMEOUT_S = 5.0


class LeaderboardStoreError(DicetableError, OSError):
    """Raised when the leaderboard's store cannot be opened or is not a leaderboard store."""


class LeaderboardStore:
    """The leaderboard's SQLite file (``:memory:`` for a throw-away one); a context manager.

    Parameters
    ----------
    path : str or Path
        The file; its folder is made if missing.

    Raises
    ------
    LeaderboardStoreError
        If the file cannot be opened or created, or holds something else (one line naming it).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        try:
            if self.path != ":memory:":
                Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                str(Path(self.path).expanduser()) if self.path != ":memory:" else self.path,
                check_same_thread=False,
                isolation_level=None,
                timeout=BUSY_TIMEOUT_S,
            )
            names = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if names and "seats" not in names:
                self._db.close()
                raise LeaderboardStoreError(
                    f"{self.path} is another program's SQLite file (tables {', '.join(sorted(names)[:4])}), not the "
                    "leaderboard's; give --db a new file"
                )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
            columns = {r[1] for r in self._db.execute("PRAGMA table_info(games)")}
            if "from_state" not in columns:  # a store made before from_state
                self._db.execute("ALTER TABLE games ADD COLUMN from_state INTEGER NOT NULL DEFAULT 0")
        except LeaderboardStoreError:
            raise
        except (sqlite3.Error, OSError) as exc:
            raise LeaderboardStoreError(
                f"cannot use {self.path} as the leaderboard's store ({exc}); give --db another file"
            ) from None
        self._lock = threading.Lock()
        self._notes: list[str] = []  # lines about missing events, for the intake to log

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def read(self, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of one SELECT (for :mod:`table.leaderboard.queries`)."""
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    # -- writes (the intake's thread) -------------------------------------------------------------

    def write(self, messages: list[Message], received_at: float | None = None) -> list[bool]:
        """Store ``messages`` in one transaction; for each, whether it changed anything.

        An event whose id is already stored is dropped (False); statuses and states always count.
        """
        now = time.time() if received_at is None else received_at
        with self._write() as db:
            out = []
            for m in messages:
                if isinstance(m, GameEvent):
                    out.append(self._add_event(db, m, now))
                elif isinstance(m, Status):
                    self._set_status(db, m.table, m.online, now)
                    out.append(True)
                else:
                    self._set_state(db, m, now)
                    out.append(True)
            return out

    def add_event(self, ev: GameEvent, received_at: float | None = None) -> bool:
        """Store one event; return False (and change nothing) if its id is already stored."""
        return self.write([ev], received_at)[0]

    def set_status(self, table: str, online: bool, at: float | None = None) -> None:
        """Record ``table``'s status (a change also goes into ``status_changes``)."""
        self.write([Status(table, online)], at)

    def set_state(self, table: str, state: dict[str, Any], at: float | None = None) -> None:
        """Keep ``table``'s latest state snapshot (``{}``: the table cleared it)."""
        self.write([TableState(table, state)], at)

    def _add_event(self, db: sqlite3.Connection, ev: GameEvent, now: float) -> bool:
        cur = db.execute(
            "INSERT OR IGNORE INTO events VALUES (?,?,?,?,?,?,?,?,?)",
            (ev.id, ev.game, ev.seq, ev.type, ev.at, ev.player, ev.box, ev.points, now),
        )
        if cur.rowcount == 0:
            return False
        row = db.execute("SELECT last_seq, from_state FROM games WHERE id=?", (ev.game,)).fetchone()
        # a game totalled from the table's state keeps those totals until its finishing event comes
        latest = row is None or (ev.seq > row[0] and (ev.finished or not row[1]))
        # a scorecard game closed by hand (game_ended) is abandoned, whatever its `finished` says
        abandoned = ev.type == "game_ended" and ev.ruleset != ""
        fields = (
            ev.ruleset,
            json.dumps(ev.players),
            ev.at,
            now,
            ev.seq,
            int(ev.finished and not abandoned),
            int(abandoned),
        )
        if row is None:
            db.execute(
                "INSERT INTO games (id, tbl, started_at, events, ruleset, players, updated_at, seen_at, last_seq,"
                " finished, abandoned) VALUES (?,?,?,1,?,?,?,?,?,?,?)",
                (ev.game, ev.table, ev.at, *fields),
            )
        elif latest:
            db.execute(
                "UPDATE games SET ruleset=?, players=?, updated_at=?, seen_at=?, last_seq=?, finished=?, abandoned=?,"
                " events=events+1, started_at=MIN(started_at, ?), from_state=0 WHERE id=?",
                (*fields, ev.at, ev.game),
            )
        else:
            db.execute(
                "UPDATE games SET events=events+1, started_at=MIN(started_at, ?), last_seq=MAX(last_seq, ?) WHERE id=?",
                (ev.at, ev.seq, ev.game),
            )
        if latest:
            db.executemany(
                "INSERT INTO seats VALUES (?,?,?,?,0) ON CONFLICT(game, seat) DO UPDATE"
                " SET player=excluded.player, total=excluded.total",
                [(ev.game, k, name, ev.totals[k] if ev.totals else 0) for k, name in enumerate(ev.players)],
            )
        # counts change only by a five-alike box, an undo, or an event that arrived after later ones
        if not latest or ev.type == "undone" or ev.box in FIVE_ALIKE_BOXES:
            self._count_fives(db, ev.game)
        if latest and ev.finished:
            missing = missing_seqs(db, ev.game)
            if missing:
                self._notes.append(
                    f"game {ev.game} finished with {len(missing)} of its {ev.seq} events missing (seq"
                    f" {seq_ranges(missing)}); it is ranked with the totals of its finishing event"
                )
        return True

    def reconcile(self, table: str, data: dict[str, Any], seen_at: float | None = None) -> str | None:
        """Finish ``table``'s game from its retained state ``data`` when its events are incomplete; say so.

        When the state says game G is finished (a scorecard game, every total known) but G's
        events have no finishing event, G is recorded finished with the state's totals and
        ``from_state=1`` (its five-alike counts are those of the events that came). A later
        finishing event replaces them (:meth:`_add_event`). Returns the line to log, or None when
        nothing was missing or the state is not of a finished scorecard game.
        """
        now = time.time() if seen_at is None else seen_at
        with self._write() as db:
            game, players = data.get("game"), data.get("players") or []
            totals = [p.get("total") for p in players]
            if not (game and data.get("finished") and data.get("ruleset") and totals):
                return None
            if not all(isinstance(t, int) and not isinstance(t, bool) for t in totals):
                return None
            g = db.execute("SELECT finished, abandoned, last_seq, events FROM games WHERE id=?", (game,)).fetchone()
            if g is not None and (g[0] or g[1]):  # its finishing event came, or it was closed by hand
                return None
            names = json.dumps([p.get("name", "") for p in players])
            at = float(data.get("updated") or now)
            if g is None:
                db.execute(
                    "INSERT INTO games (id, tbl, ruleset, players, started_at, updated_at, seen_at, last_seq, events,"
                    " finished, abandoned, from_state) VALUES (?,?,?,?,?,?,?,0,0,1,0,1)",
                    (game, table, data["ruleset"], names, at, at, now),
                )
            else:
                db.execute(
                    "UPDATE games SET ruleset=?, players=?, updated_at=?, seen_at=?, finished=1, from_state=1"
                    " WHERE id=?",
                    (data["ruleset"], names, at, now, game),
                )
            db.executemany(
                "INSERT INTO seats VALUES (?,?,?,?,0) ON CONFLICT(game, seat) DO UPDATE"
                " SET player=excluded.player, total=excluded.total",
                [(game, k, p.get("name", ""), t) for k, (p, t) in enumerate(zip(players, totals))],
            )
        have = "no events" if g is None else f"{g[3]} events up to seq {g[2]}, no finishing event"
        return (
            f"events missing for game {game} ({have}); its table's retained state says it is finished:"
            f" ranked with the totals from the table's state {totals}"
        )

    def take_notes(self) -> list[str]:
        """The lines about missing events written since the last call (for the intake to log)."""
        with self._lock:
            notes, self._notes = self._notes, []
        return notes

    @staticmethod
    def _count_fives(db: sqlite3.Connection, game: str) -> None:
        rows = db.execute("SELECT type, player, box, points FROM events WHERE game=? ORDER BY seq", (game,)).fetchall()
        n = db.execute("SELECT COUNT(*) FROM seats WHERE game=?", (game,)).fetchone()[0]
        counts = five_alike_counts(rows, n)
        db.executemany("UPDATE seats SET fives=? WHERE game=? AND seat=?", [(c, game, k) for k, c in enumerate(counts)])

    @staticmethod
    def _set_status(db: sqlite3.Connection, table: str, online: bool, at: float) -> None:
        row = db.execute("SELECT online FROM tables WHERE name=?", (table,)).fetchone()
        if row is None:
            db.execute("INSERT INTO tables VALUES (?,?,?,NULL,NULL)", (table, int(online), at))
        else:
            db.execute("UPDATE tables SET online=?, status_at=? WHERE name=?", (int(online), at, table))
        if row is None or row[0] != int(online):
            db.execute("INSERT INTO status_changes (name, online, at) VALUES (?,?,?)", (table, int(online), at))

    @staticmethod
    def _set_state(db: sqlite3.Connection, m: TableState, at: float) -> None:
        table = m.table
        text = (m.raw or json.dumps(m.data, separators=(",", ":"))) if m.data else None
        db.execute(
            "INSERT INTO tables VALUES (?,NULL,NULL,?,?) ON CONFLICT(name) DO UPDATE SET state=?, state_at=?",
            (table, text, at, text, at),
        )

    # -- small reads used by tests and the benchmark ----------------------------------------------

    def status_changes(self, table: str) -> list[bool]:
        """``table``'s statuses in the order they were seen (True: online)."""
        return [bool(r[0]) for r in self.read("SELECT online FROM status_changes WHERE name=? ORDER BY id", (table,))]

    def game_totals(self) -> dict[str, list[int]]:
        """Each stored game's totals by seat."""
        out: dict[str, list[int]] = {}
        for game, total in self.read("SELECT game, total FROM seats ORDER BY game, seat"):
            out.setdefault(game, []).append(total)
        return out

    def close(self) -> None:
        """Close the file (WAL checkpointed by SQLite on the last close)."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> LeaderboardStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def missing_seqs(db: sqlite3.Connection, game: str) -> list[int]:
    """The seqs below ``game``'s highest stored one that are not stored (a gap in its events)."""
    seqs = [r[0] for r in db.execute("SELECT seq FROM events WHERE game=? ORDER BY seq", (game,))]
    have = set(seqs)
    return [n for n in range(1, (seqs[-1] if seqs else 0) + 1) if n not in have]


def seq_ranges(seqs: list[int]) -> str:
    """``[3, 4, 5, 9]`` -> ``"3-5, 9"`` (at most 5 ranges, then ``...``)."""
    ranges: list[list[int]] = []
    for n in seqs:
        if ranges and n == ranges[-1][1] + 1:
            ranges[-1][1] = n
        else:
            ranges.append([n, n])
    text = [f"{a}-{b}" if a != b else str(a) for a, b in ranges[:5]]
    return ", ".join(text) + (", ..." if len(ranges) > 5 else "")
