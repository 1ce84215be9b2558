"""The table's MQTT publisher: status, retained state and the outbox's events, on a thread of its own.

:class:`Publisher` owns one paho-mqtt 2.x client and one thread that does all of its work
(connecting, paho's reads and writes, reading the outbox), so the table's worker never waits
on the network or on paho: :meth:`Publisher.notify` only stores the latest state and wakes the
thread. The thread

- connects, with ``offline`` as the retained last will, and says ``online`` (retained) once
  the broker accepts the login; retries after 0.5 s, doubling to :data:`RETRY_MAX_S`;
- publishes the retained state (docs/mqtt.md) when it changed, and again after each connect;
- sends the outbox's events (:mod:`table.store.outbox`) at QoS 1 in store order, at most
  :data:`WINDOW` unacknowledged at a time, and moves a game's cursor forward only over events
  the broker acknowledged (PUBACK). paho keeps unacknowledged messages across a reconnect and
  sends them again first (flagged DUP); after a restart the cursor says where to go on;
- says why it cannot publish (``on_sharing(ok, text)``, and one log line per change).
"""

from __future__ import annotations

import logging
import select
import socket
import sqlite3
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as mqtt

from table.cafe import ha_discovery, topics
from table.cafe.broker import NOT_TLS, configure_client, tls_to_plain_port
from table.cafe.sending import WINDOW, EventSender
from table.cafe.settings import MqttSettings
from table.game import GameState
from table.store.outbox import Outbox

log = logging.getLogger(__name__)

#: Seconds between connection attempts: the first wait, and the most it doubles to.
RETRY_MIN_S, RETRY_MAX_S = 0.5, 5.0
#: MQTT keepalive, seconds: a connection gone silent (Wi-Fi lost) is noticed after 1.5x this.
KEEPALIVE_S = 10
#: Seconds the clean stop waits for the outbox to drain and ``offline`` to be acknowledged.
STOP_GRACE_S = 2.0
#: Seconds between cursor writes while events flow (one short write transaction each; fewer
#: writes beside the worker's commits; a cursor behind only means events sent again after a crash).
CURSOR_S = 0.25
#: Seconds between looks at the outbox when nothing woke the thread (a missed wake is caught here).
POLL_S = 1.0

#: ``on_sharing(ok, text)``: ``text`` is "scores shared on ..." or "scores not shared: <why>".
SharingListener = Callable[[bool, str], None]


class Publisher:
    """Publish a table to the café's broker (see the module docstring).

    Parameters
    ----------
    settings : MqttSettings
        Broker, table name, login, TLS.
    db_path : str or Path
        The table's game store (opened and migrated by its :class:`~table.store.Store` first).
    on_sharing : callable, optional
        Called on the publisher's thread when sharing starts or stops working: ``(ok, text)``.
    clock : callable, optional
        Wall-clock seconds for the state's ``updated``.

    Raises
    ------
    UsageError
        If the CA file is not a PEM certificate.
    """

    def __init__(
        self,
        settings: MqttSettings,
        db_path: Any,
        *,
        on_sharing: SharingListener | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self.db_path = db_path
        self.on_sharing = on_sharing
        self.clock = clock
        self.table = settings.table
        self.sharing: tuple[bool, str] = (False, "scores not shared: connecting to the broker")
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._latest: tuple[int | None, GameState | None, float] | None = None
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._thread: threading.Thread | None = None
        self._client = self._make_client()
        # thread-only state
        self._connected = False
        self._refused = ""  # why the broker refused the last CONNECT ("" if it did not)
        self._accepted = False  # whether the broker accepted the last CONNECT
        self._store_id = ""
        self._offline_mid: int | None = None
        self._events = EventSender(self.table, "", self._publish_event)
        self._state_sent: bytes | None = None
        self._ha_due = False
        self._outbox_due = True
        self._store_error = ""
        self._flushed = 0.0  # time.monotonic() of the last cursor write

    def _make_client(self) -> mqtt.Client:
        s = self.settings
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"dicetable-{s.table}")
        c.max_inflight_messages_set(WINDOW)
        c.will_set(topics.status_topic(s.table), topics.OFFLINE, qos=1, retain=True)
        configure_client(c, user=s.user, password=s.password, tls=s.tls, ca=s.ca)
        c.on_connect = self._on_connect
        c.on_publish = self._on_publish
        c.on_message = self._on_message
        return c

    # -- any thread --------------------------------------------------------------------

    def start(self) -> Publisher:
        """Start the thread; return self."""
        self._thread = threading.Thread(target=self._run, name="dicetable-mqtt", daemon=True)
        self._thread.start()
        return self

    def notify(self, game: int | None, state: GameState | None) -> None:
        """The table changed: `game` (store id, None on the setup screen) is now `state`. Never blocks."""
        with self._lock:
            self._latest = (game, state, self.clock())
        self._wake()

    def stop(self, timeout: float = 10.0) -> None:
        """Send what the grace period allows, say ``offline`` (retained), disconnect; idempotent."""
        self._stop.set()
        self._wake()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    close = stop

    def __enter__(self) -> Publisher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"\0")
        except (BlockingIOError, OSError):
            pass  # already woken (buffer full) or closed

    # -- the thread ----------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._run_connections()
        except Exception:  # a bug must not pass in silence: the page and the log say so
            log.exception("café sharing stopped")
            self._say(False, "scores not shared: the publisher failed (see the table's log)")

    def _run_connections(self) -> None:
        try:
            outbox = Outbox(self.db_path)
            self._store_id = self._events.store_id = outbox.store_id()
        except Exception as exc:
            log.error("café sharing is off: cannot read the game store's outbox: %s", exc)
            self._say(False, "scores not shared: the game store has no outbox")
            return
        delay = RETRY_MIN_S
        try:
            while not self._stop.is_set():
                why = self._connect()
                if why:
                    self._say(False, f"scores not shared: {why}")
                    self._sleep(delay)
                    delay = min(delay * 2, RETRY_MAX_S)
                    continue
                self._serve(outbox)
                if self._accepted:
                    delay = RETRY_MIN_S
                if not self._stop.is_set():
                    self._say(False, f"scores not shared: {self._refused or 'connection dropped'}")
                    self._sleep(delay)
                    delay = min(delay * 2, RETRY_MAX_S)
        finally:
            try:
                self._events.flush(outbox)
            except Exception as exc:
                log.warning("could not record the events sent: %s (they are sent again next time)", exc)
            outbox.close()
            self._wake_r.close()
            self._wake_w.close()

    def _connect(self) -> str:
        """Open the connection (CONNECT sent); return "" or why it failed, in a few words."""
        self._refused, self._accepted = "", False
        try:
            self._client.connect(self.settings.host, self.settings.port, keepalive=KEEPALIVE_S)
        except ConnectionRefusedError:
            return "broker down"
        except OSError as exc:
            if not (self.settings.tls and tls_to_plain_port(exc)):
                return _connect_failure(exc, self.settings.host)
            return NOT_TLS
        return ""

    def _serve(self, outbox: Outbox) -> None:
        """Run one connection until it ends (or a clean stop ends it)."""
        stopping_since: float | None = None
        while True:
            sock = self._client.socket()
            if sock is None:
                self._connected = False
                return
            if self._stop.is_set() and stopping_since is None:
                stopping_since = time.monotonic()
            if stopping_since is not None and self._stopping(outbox, stopping_since):
                self._connected = False
                return
            if self._connected:
                try:
                    self._pump(outbox)
                except sqlite3.Error as exc:  # a busy or failing store: the same reads are tried again
                    self._store_trouble(exc)
            want = [sock] if self._client.want_write() else []
            try:
                readable, writable, _ = select.select([sock, self._wake_r], want, [], POLL_S)
            except (OSError, ValueError):
                readable, writable = [sock], []
            if getattr(sock, "pending", lambda: 0)():  # TLS: bytes decrypted already, unseen by select
                readable = [*readable, sock]
            if self._wake_r in readable:
                self._drain_wake()
                self._outbox_due = True
            rc = mqtt.MQTT_ERR_SUCCESS
            if sock in readable:
                rc = self._client.loop_read()
            if rc == mqtt.MQTT_ERR_SUCCESS and (sock in writable or self._client.want_write()):
                rc = self._client.loop_write()
            if rc == mqtt.MQTT_ERR_SUCCESS:
                rc = self._client.loop_misc()
            if rc != mqtt.MQTT_ERR_SUCCESS or self._client.socket() is None:
                self._connected = False
                return

    def _stopping(self, outbox: Outbox, since: float) -> bool:
        """During a clean stop: once drained (or after the grace period) say ``offline``; True when done."""
        elapsed = time.monotonic() - since
        if not self._connected:
            return True
        if self._offline_mid is None and (self._events.idle(outbox) or elapsed > STOP_GRACE_S):
            self._events.flush(outbox)
            info = self._client.publish(topics.status_topic(self.table), topics.OFFLINE, qos=1, retain=True)
            self._offline_mid = info.mid
        if self._offline_mid == -1 or elapsed > 2 * STOP_GRACE_S:
            self._client.disconnect()
            self._client.loop_write()
            return True
        return False

    def _on_connect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        if reason.is_failure:
            login = reason.value in (134, 135) or str(reason) in ("Bad user name or password", "Not authorized")
            self._refused = "login refused" if login else f"broker refused the connection ({reason})"
            return
        self._connected = self._accepted = True
        self._state_sent = None
        self._outbox_due = True
        client.publish(topics.status_topic(self.table), topics.ONLINE, qos=1, retain=True)
        if self.settings.ha_discovery:
            client.subscribe(ha_discovery.HA_STATUS_TOPIC, qos=1)
            self._ha_due = True
        self._say(True, f"scores shared on {self.settings.url} as table {self.table}")

    def _on_publish(self, client: mqtt.Client, userdata: Any, mid: int, reason: Any, props: Any) -> None:
        if mid == self._offline_mid:
            self._offline_mid = -1
        if self._events.acknowledged(mid):
            self._outbox_due = True

    def _on_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        if message.topic == ha_discovery.HA_STATUS_TOPIC and message.payload.strip() == b"online":
            self._ha_due = True

    def _pump(self, outbox: Outbox) -> None:
        """Publish what is due: HA configs, the state if it changed, events up to the window; record acks."""
        if self._ha_due:
            self._ha_due = False
            for topic, payload in ha_discovery.configs(self.settings):
                self._client.publish(topic, payload, qos=1, retain=True)
        with self._lock:
            latest = self._latest
        if latest is not None:
            game, state, at = latest
            payload = topics.state_payload(self.table, self._store_id, game, state, at)
            key = topics.state_payload(self.table, self._store_id, game, state, 0.0)
            if key != self._state_sent:
                self._client.publish(topics.state_topic(self.table), payload, qos=1, retain=True)
                self._state_sent = key
        if time.monotonic() - self._flushed >= CURSOR_S or not self._events.inflight:
            self._events.flush(outbox)
            self._flushed = time.monotonic()
        if self._outbox_due and self._events.inflight < WINDOW:
            self._outbox_due = self._events.send(outbox)

    @property
    def acked(self) -> int:
        """Events the broker acknowledged since :meth:`start`."""
        return self._events.acked

    def _publish_event(self, topic: str, payload: bytes) -> int:
        return int(self._client.publish(topic, payload, qos=1).mid)

    def _store_trouble(self, exc: sqlite3.Error) -> None:
        """Log a store error once per kind; the outbox is looked at again after :data:`POLL_S`."""
        if str(exc) != self._store_error:
            self._store_error = str(exc)
            log.warning("café sharing cannot read or mark the outbox now: %s; tried again", exc)
        self._outbox_due = True
        self._sleep(POLL_S)

    def _say(self, ok: bool, text: str) -> None:
        if (ok, text) == self.sharing:
            return
        self.sharing = (ok, text)
        log.info("%s", text)  # `dicetable play` prints the line (table.cafe.link); a library user has the log
        if self.on_sharing is not None:
            try:
                self.on_sharing(ok, text)
            except Exception:
                log.exception("sharing listener failed")

    def _sleep(self, seconds: float) -> None:
        """Wait `seconds`, or less when stopped."""
        end = time.monotonic() + seconds
        while not self._stop.is_set():
            left = end - time.monotonic()
            if left <= 0:
                return
            select.select([self._wake_r], [], [], left)
            self._drain_wake()

    def _drain_wake(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except (BlockingIOError, OSError):
            pass


def _connect_failure(exc: OSError, host: str) -> str:
    """Why a connect failed, in a few words (TLS, name, timeout or network)."""
    if isinstance(exc, ssl.SSLError):
        return f"TLS error ({exc.reason or exc})"
    if isinstance(exc, ssl.CertificateError):
        return f"TLS error ({exc})"
    if isinstance(exc, socket.gaierror):
        return f"broker {host} not found"
    if isinstance(exc, TimeoutError):
        return "broker does not answer"
    return f"network error ({exc.strerror or exc})"
