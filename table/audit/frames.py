"""The audit's frames: a small JPEG of the tray for every settled (or unreadable) throw in ``play``.

Kept in a folder beside the game store (:func:`frames_dir`: ``games.sqlite3`` ->
``games-frames/``) as ``GAME-SEQ-N.jpg`` with an SQLite index (``index.sqlite3``: game id, event
seq, time, verdict kind, the reading as JSON, file name, bytes). The event id ``(game, seq)`` names
the :class:`~table.game.DiceRead` the frame became; an unreadable throw has no event and keeps the
seq of the game's last event. Past the disk budget (:data:`BUDGET_MB`) the oldest frames go first.

:class:`FrameKeeper` writes on its own thread: :meth:`~FrameKeeper.keep` only puts the frame in a
short queue (the game's worker never waits on a disk), a full queue drops the frame. A full disk or
any write error is logged once; the keeper then drops frames until a write goes through again, and
play goes on either way (the frames are evidence for the audit, not part of the game).
"""

from __future__ import annotations

import json
import logging
import os
import queue
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

log = logging.getLogger(__name__)

#: Default disk budget of the frames folder, in MB (about 20,000 frames of ~10 kB).
BUDGET_MB = 200.0
#: Long side of a kept frame, in pixels (pips stay ~6 px wide on a 1280 px wide tray view at 320).
LONG_SIDE = 320
#: JPEG quality of a kept frame (a 320x240 tray is about 10 kB at 70).
QUALITY = 70
#: Frames waiting for the writer at most; more are dropped (the disk is too slow or stuck).
QUEUE = 64
#: Index file inside the frames folder.
INDEX = "index.sqlite3"

_SCHEMA = """CREATE TABLE IF NOT EXISTS frames (
    id INTEGER PRIMARY KEY, game_id INTEGER NOT NULL, seq INTEGER NOT NULL, at REAL NOT NULL,
    kind TEXT NOT NULL, reading TEXT NOT NULL, file TEXT NOT NULL, bytes INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS frames_game ON frames (game_id, seq);"""


def frames_dir(db_path: str | os.PathLike[str]) -> Path:
    """The frames folder of the store at `db_path`: ``NAME-frames`` beside it (suffix dropped)."""
    db = Path(db_path)
    return db.with_name(db.stem + "-frames")


def tray_jpeg(image: np.ndarray, *, long_side: int = LONG_SIDE, quality: int = QUALITY) -> bytes:
    """`image` (H, W, 3) uint8 BGR shrunk to `long_side` px on its long side, as JPEG bytes (b"" if it fails)."""
    h, w = image.shape[:2]
    scale = min(1.0, long_side / max(h, w))
    if scale < 1.0:
        image = cv2.resize(image, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA)
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    return buf.tobytes() if ok else b""


class FrameKeeper:
    """Keeps the audit's frames in `folder` on a writer thread, within `budget_mb` MB.

    Parameters
    ----------
    folder : path
        The frames folder (made on the first write).
    budget_mb : float, optional
        Disk budget of the kept JPEGs, in MB; the oldest frames are removed past it.

    Example
    -------
    >>> with FrameKeeper(frames_dir(db)) as keeper:          # doctest: +SKIP
    ...     keeper.keep(jpeg, game_id=3, seq=12, at=now, kind="settled", values=(6, 6, 2, 1, 4))
    """

    def __init__(self, folder: str | os.PathLike[str], *, budget_mb: float = BUDGET_MB) -> None:
        self.folder = Path(folder)
        self.budget = int(budget_mb * 1e6)
        self.kept = 0
        self.dropped = 0
        self.removed = 0
        self.fault: str | None = None  # the write error while it lasts (logged once)
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=QUEUE)
        self._conn: sqlite3.Connection | None = None
        self._thread: threading.Thread | None = None
        self._n = 0

    def start(self) -> FrameKeeper:
        """Start the writer thread; return self."""
        self._thread = threading.Thread(target=self._run, name="dicetable-frames", daemon=True)
        self._thread.start()
        return self

    def close(self, wait_s: float = 5.0) -> None:
        """Write what is queued (for up to `wait_s` s), then stop the writer."""
        if self._thread is not None:
            try:
                self._queue.put(None, timeout=wait_s)
            except queue.Full:
                pass
            self._thread.join(wait_s)
        self._thread = None

    def __enter__(self) -> FrameKeeper:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def keep(self, jpeg: bytes, *, game_id: int, seq: int, at: float, kind: str, values: Sequence[int | None]) -> bool:
        """Queue one frame; False when it was dropped (queue full or no JPEG). Never blocks."""
        if not jpeg:
            return False
        try:
            self._queue.put_nowait((jpeg, int(game_id), int(seq), float(at), str(kind), list(values)))
        except queue.Full:
            self.dropped += 1
            return False
        return True

    def _run(self) -> None:
        try:
            while (item := self._queue.get()) is not None:
                try:
                    self._write(*item)
                except (OSError, sqlite3.Error) as exc:
                    self.dropped += 1
                    if self.fault is None:
                        log.warning(
                            "audit frames cannot be kept in %s (%s); play goes on, frames are dropped until "
                            "a write goes through (free some disk space or check the folder's permissions)",
                            self.folder,
                            exc,
                        )
                    self.fault = str(exc)
                    self._close_index()
                else:
                    if self.fault is not None:
                        log.warning("audit frames are kept in %s again", self.folder)
                    self.fault = None
        finally:
            self._close_index()

    def _index(self) -> sqlite3.Connection:
        if self._conn is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.folder / INDEX, isolation_level=None)
            conn.executescript(_SCHEMA)
            self._n = int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM frames").fetchone()[0])
            self._conn = conn
        return self._conn

    def _close_index(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
        self._conn = None

    def _write(self, jpeg: bytes, game_id: int, seq: int, at: float, kind: str, values: list[int | None]) -> None:
        conn = self._index()
        self._n += 1
        name = f"{game_id:06d}-{seq:06d}-{self._n}.jpg"
        path = self.folder / name
        path.write_bytes(jpeg)
        try:
            conn.execute(
                "INSERT INTO frames (game_id, seq, at, kind, reading, file, bytes) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (game_id, seq, at, kind, json.dumps(values), name, len(jpeg)),
            )
        except sqlite3.Error:
            path.unlink(missing_ok=True)
            raise
        self.kept += 1
        self._prune(conn)

    def _prune(self, conn: sqlite3.Connection) -> None:
        """Remove the oldest frames while the kept JPEGs exceed the budget."""
        total = int(conn.execute("SELECT COALESCE(SUM(bytes), 0) FROM frames").fetchone()[0])
        while total > self.budget:
            row = conn.execute("SELECT id, file, bytes FROM frames ORDER BY id LIMIT 1").fetchone()
            if row is None:
                break
            (self.folder / row[1]).unlink(missing_ok=True)
            conn.execute("DELETE FROM frames WHERE id=?", (row[0],))
            total -= int(row[2])
            self.removed += 1


def read_index(folder: str | os.PathLike[str], game_ids: Sequence[int] | None = None) -> list[dict[str, Any]]:
    """The index rows of `folder` (of `game_ids` only when given), oldest first; [] when there is no index.

    Each row: ``game_id``, ``seq``, ``at``, ``kind`` (``settled`` or ``unreadable``), ``values`` (list, None
    for a die not read) and ``file`` (path of the JPEG). Opened read-only: nothing is made.

    Raises
    ------
    sqlite3.Error
        If the index cannot be read (damaged).
    """
    path = Path(folder) / INDEX
    if not path.is_file():
        return []
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        sql = "SELECT game_id, seq, at, kind, reading, file FROM frames"
        params: tuple[int, ...] = ()
        if game_ids is not None:
            params = tuple(int(g) for g in game_ids)
            sql += f" WHERE game_id IN ({','.join('?' * len(params))})" if params else " WHERE 0"
        rows = conn.execute(sql + " ORDER BY id", params).fetchall()
    finally:
        conn.close()
    return [
        {"game_id": g, "seq": s, "at": a, "kind": k, "values": json.loads(r), "file": str(Path(folder) / f)}
        for g, s, a, k, r, f in rows
    ]
