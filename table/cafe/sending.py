"""The outbox's events on their way to the broker: the send window, the PUBACKs and the cursor.

:class:`EventSender` runs on the publisher's thread only. It hands paho the stored events in
store order (game by game, ``seq`` by ``seq``), at most :data:`WINDOW` unacknowledged at a time,
each as the events payload of docs/mqtt.md (the game's state after the event comes from folding
its events, kept between calls). A game's cursor moves forward only over events the broker
acknowledged without a gap (:meth:`EventSender.acknowledged`); :meth:`EventSender.flush` writes
the cursors in one short transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from table.cafe import topics
from table.game import GameState, apply, event_from_json, fold
from table.store.outbox import Outbox

log = logging.getLogger(__name__)

#: Most events sent and not yet acknowledged (paho's in-flight limit is the same).
WINDOW = 100

#: ``publish(topic, payload) -> mid``: a QoS 1 publish through paho.
Publish = Callable[[str, bytes], int]


class EventSender:
    """Send the outbox of table `table` through `publish` (see the module docstring)."""

    def __init__(self, table: str, store_id: str, publish: Publish) -> None:
        self.table = table
        self.store_id = store_id
        self.publish = publish
        self.acked = 0  # events acknowledged since start (benchmarks, tests)
        self._inflight: dict[int, tuple[int, int]] = {}  # paho mid -> (game, seq)
        self._sent: dict[int, int] = {}  # game -> events acknowledged (the cursor)
        self._acked: dict[int, set[int]] = {}  # game -> acknowledged seqs beyond the cursor
        self._next: dict[int, int] = {}  # game -> next seq to hand to paho
        self._dirty: dict[int, int] = {}  # cursors not yet written
        self._folded: dict[int, tuple[GameState | None, int]] = {}  # game -> (state after n events, n)
        self._broken: set[int] = set()  # games with an event that cannot be read: not sent (logged once)

    @property
    def inflight(self) -> int:
        """Events handed to paho and not yet acknowledged."""
        return len(self._inflight)

    def acknowledged(self, mid: int) -> bool:
        """The broker acknowledged message `mid` (PUBACK); True if it was one of the events."""
        where = self._inflight.pop(mid, None)
        if where is None:
            return False
        game, seq = where
        self.acked += 1
        done = self._acked.setdefault(game, set())
        done.add(seq)
        n = self._sent.get(game, 0)
        while n in done:
            done.discard(n)
            n += 1
        if n != self._sent.get(game, 0):
            self._sent[game] = self._dirty[game] = n
        return True

    def send(self, outbox: Outbox) -> bool:
        """Hand paho the next stored events, up to the window; return True if more are waiting.

        Raises :class:`sqlite3.Error` when the store cannot be read (nothing is lost: tried again later).
        """
        room = WINDOW - len(self._inflight)
        for game, (sent, _stored) in outbox.cursors().items():
            if game in self._broken:
                continue
            if room <= 0:
                return True
            self._sent[game] = max(self._sent.get(game, 0), sent)
            start = max(self._sent[game], self._next.get(game, 0))
            rows = outbox.events(game, start, room)
            if not rows:
                continue
            try:
                state = self._state_before(outbox, game, start)
                for row in rows:
                    state = apply(state, event_from_json(row.payload))
                    payload = topics.event_payload(self.table, self.store_id, game, row.seq, row.payload, state)
                    self._inflight[self.publish(topics.events_topic(self.table), payload)] = (game, row.seq)
                    self._next[game] = row.seq + 1
                    room -= 1
            except ValueError as exc:  # a damaged row: the store's doctor says so; the other games go on
                log.error("game %s has an event that cannot be read (%s); its later events are not shared", game, exc)
                self._broken.add(game)
                continue
            self._folded = {game: (state, self._next[game])}
        return False

    def _state_before(self, outbox: Outbox, game: int, start: int) -> GameState | None:
        """Game `game` after its first `start` stored events (None when `start` is 0)."""
        cached = self._folded.get(game)
        if cached is not None and cached[1] == start:
            return cached[0]
        if start == 0:
            return None
        return fold([event_from_json(r.payload) for r in outbox.events(game, 0, start)])

    def flush(self, outbox: Outbox) -> None:
        """Write the cursors that moved (raises :class:`sqlite3.Error`; they stay due then)."""
        if self._dirty:
            outbox.mark_sent(self._dirty)
            self._dirty = {}

    def idle(self, outbox: Outbox) -> bool:
        """Nothing in flight and nothing waiting in the outbox (broken games aside)."""
        return not self._inflight and not (set(outbox.cursors()) - self._broken)
