"""From received MQTT messages to the store: checked, written in batches, then acknowledged.

The MQTT client's thread only queues what arrives (:meth:`Intake.put`). This thread takes what is
queued (up to :data:`MAX_BATCH` at a time), checks each message against schema v1, writes the good
ones in one transaction and only then acknowledges them all (PUBACK), so an event is never
acknowledged before it is on disk. One transaction per batch instead of per message: about 0.5 ms
per event alone, a fraction of that in a batch (benchmarks/cafe.py).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from table.leaderboard.messages import BadMessage, GameEvent, Message, TableState, parse_message
from table.leaderboard.store import LeaderboardStore

log = logging.getLogger(__name__)

#: Messages written in one transaction at most (Mosquitto sends 20 unacknowledged QoS 1 messages
#: per client by default, ``max_inflight_messages``; states and statuses at QoS 0 are not limited).
MAX_BATCH = 500

#: Seconds between two "dropped a message" lines.
LOG_EVERY_S = 10.0

#: Seconds after a table's state says its game is finished before its events are checked for the
#: finishing one (:meth:`LeaderboardStore.reconcile`): the state and the events travel apart, and a
#: table re-sends its outbox within its 5 s reconnect back-off, so 10 s leaves room for both.
RECONCILE_AFTER_S = 10.0


class RateLimitedLog:
    """Log at most one line per ``every`` seconds; the next line says how many were left out."""

    def __init__(self, logger: logging.Logger, every: float = LOG_EVERY_S) -> None:
        self._log, self._every, self._last, self.left_out, self.count = logger, every, -1e9, 0, 0

    def warning(self, text: str) -> None:
        """Log ``text`` now, or count it if a line went out less than ``every`` s ago."""
        self.count += 1
        now = time.monotonic()
        if now - self._last < self._every:
            self.left_out += 1
            return
        more = f" ({self.left_out} more since the last line)" if self.left_out else ""
        self._log.warning("%s%s", text, more)
        self._last, self.left_out = now, 0


#: What the MQTT client hands over: topic, payload, and the token :meth:`Intake` gives back to ``ack``.
Received = tuple[str, bytes, Any]


class Intake:
    """The writer thread between the MQTT client and the store.

    Parameters
    ----------
    store : LeaderboardStore
    ack : callable
        ``ack(token)``: acknowledge one message once it is stored (or dropped as bad).
    on_failure : callable
        Called with the error when the store cannot write a batch (nothing of it is acknowledged).
    on_stored : callable, optional
        ``on_stored(message)`` after each stored message, on this thread.
    """

    def __init__(
        self,
        store: LeaderboardStore,
        ack: Callable[[Any], None],
        on_failure: Callable[[Exception], None],
        on_stored: Callable[[Message], None] | None = None,
    ) -> None:
        self.store, self._ack, self._on_failure, self.on_stored = store, ack, on_failure, on_stored
        self.dropped = RateLimitedLog(log)
        self.stored = self.duplicates = 0
        self._queue: queue.SimpleQueue[Received | None] = queue.SimpleQueue()
        # (table, game) -> (when to check its events, monotonic s; the table's state saying it is finished)
        self._due: dict[tuple[str, str], tuple[float, dict[str, Any]]] = {}
        self._thread = threading.Thread(target=self._run, name="leaderboard-intake", daemon=True)

    def start(self) -> Intake:
        """Start the thread."""
        self._thread.start()
        return self

    @property
    def queued(self) -> int:
        """Messages received but not yet written (a backlog means the store cannot keep up)."""
        return self._queue.qsize()

    def put(self, topic: str, payload: bytes, token: Any) -> None:
        """Queue one received message (any thread; returns at once)."""
        self._queue.put((topic, payload, token))

    def _take(self) -> list[Received] | None:
        wait = max(0.0, min(d for d, _ in self._due.values()) - time.monotonic()) if self._due else None
        try:
            first = self._queue.get(timeout=wait)
        except queue.Empty:
            return []  # a reconcile is due
        if first is None:
            return None
        batch = [first]
        while len(batch) < MAX_BATCH:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is None:
                self._queue.put(None)  # stop after this batch
                break
            batch.append(item)
        return batch

    def _run(self) -> None:
        while (batch := self._take()) is not None:
            good: list[Message] = []
            for topic, payload, _ in batch:
                try:
                    good.append(parse_message(topic, payload))
                except BadMessage as exc:
                    self.dropped.warning(f"dropped a message: {exc}")
            # a table's state is a snapshot: of several in one batch only the last is worth writing
            last = {m.table: k for k, m in enumerate(good) if isinstance(m, TableState)}
            good = [m for k, m in enumerate(good) if not isinstance(m, TableState) or last[m.table] == k]
            try:
                changed = self.store.write(good)
            except Exception as exc:  # disk full, file gone: no PUBACK, so the broker sends them again
                self._on_failure(exc)
                continue
            for message, new in zip(good, changed):
                if isinstance(message, GameEvent):
                    self.stored += new
                    self.duplicates += not new
                if self.on_stored is not None:
                    self.on_stored(message)
            for _, _, token in batch:
                self._ack(token)
            for message in good:
                if isinstance(message, TableState) and message.data.get("finished") and message.data.get("game"):
                    key = (message.table, str(message.data["game"]))
                    self._due.setdefault(key, (time.monotonic() + RECONCILE_AFTER_S, message.data))
            self._reconcile_due()
            for line in self.store.take_notes():
                log.warning("%s", line)

    def _reconcile_due(self) -> None:
        now = time.monotonic()
        for key in [k for k, (due, _) in self._due.items() if due <= now]:
            table, data = key[0], self._due.pop(key)[1]
            try:
                line = self.store.reconcile(table, data)
            except Exception as exc:  # the store cannot write: said, and tried again with the next state
                log.warning("could not check table %s's finished game against its events: %s", table, exc)
                continue
            if line:
                log.warning("%s", line)

    def close(self) -> None:
        """Write what is queued, then stop the thread."""
        self._queue.put(None)
        self._thread.join(timeout=10)
