"""The leaderboard's MQTT client: one thread that keeps a persistent session on the broker.

It subscribes to ``dicetable/+/#`` at QoS 1 with ``clean_session=False`` and a fixed client id,
so the events tables publish while the leaderboard is away are queued by the broker (Mosquitto
keeps them across its own restart when ``persistence true``) and delivered when it returns. Each
QoS 1 message is acknowledged (PUBACK) only after it is in the store (:mod:`table.leaderboard.intake`
writes and acknowledges in batches), so a crash between receiving and storing gets it again;
duplicates are then dropped by event id (:mod:`table.leaderboard.store`).

Messages that do not fit schema v1 are logged (one line, at most one per 10 s with a count of those
left out) and dropped. When the broker cannot be reached,
refuses the login or drops the connection, :attr:`Subscriber.broker` says why and the thread tries
again after 1, 2, 4, 4 ... s. Each connection is logged once (``connected to HOST:PORT``).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import paho.mqtt.client as mqtt

from table.cafe.broker import NOT_TLS, tls_to_plain_port
from table.leaderboard.broker import BrokerOptions, configure_client
from table.leaderboard.intake import Intake
from table.leaderboard.messages import SUBSCRIPTION
from table.leaderboard.store import LeaderboardStore

log = logging.getLogger(__name__)

#: Back-off between connection attempts, in seconds: doubled after each failure up to the maximum.
#: The cap is 4 s, under the tables' 5 s (:mod:`table.cafe.publisher`): after a broker restart the
#: leaderboard is subscribed again before the tables re-send their outboxes, so a broker without
#: persistence (whose sessions die with it) still passes those events on. A try costs one TCP
#: connect, so 15 a minute to a broker that is down is nothing.
RETRY_MIN_S, RETRY_MAX_S = 1.0, 4.0

#: A connection that held this long (s) counts as good: the next try after it comes RETRY_MIN_S later.
HELD_S = 30.0

#: Keep-alive (s): the broker notices a vanished leaderboard after 1.5x this.
KEEPALIVE_S = 30


class Subscriber:
    """Feeds ``store`` from the broker in a background thread; a context manager.

    Parameters
    ----------
    store : LeaderboardStore
    broker : BrokerOptions
    client_id : str
        The persistent session's name on the broker: keep it the same across restarts (a second
        leaderboard with the same id would take the session over).
    on_stored : callable, optional
        Called on the client's thread after each message is stored (for a page push or a benchmark).
    """

    def __init__(
        self, store: LeaderboardStore, broker: BrokerOptions, *, client_id: str, on_stored: Any = None
    ) -> None:
        self.store, self.opts, self.client_id = store, broker, client_id
        self.intake = Intake(store, self._ack, self._store_failed, on_stored)
        self._generation = 0  # connections so far: an ack is sent only on the connection its message came by
        self.broker = f"broker: connecting to {broker.where}"
        self.connected = False
        self._stop = threading.Event()
        self._client = mqtt.Client(
            mqtt.CallbackAPIVersion.VERSION2,
            client_id=client_id,
            clean_session=False,
            reconnect_on_failure=False,  # the thread below retries, so it can say why each try failed
            manual_ack=True,
        )
        configure_client(self._client, broker)
        self._client.on_connect = self._on_connect
        self._client.on_disconnect = self._on_disconnect
        self._client.on_message = self._on_message
        self._thread = threading.Thread(target=self._run, name="leaderboard-mqtt", daemon=True)

    # -- the thread -----------------------------------------------------------------------------

    def start(self) -> Subscriber:
        """Start connecting (returns at once; the broker may still be down)."""
        self.intake.start()
        self._thread.start()
        return self

    def _run(self) -> None:
        delay = RETRY_MIN_S
        while not self._stop.is_set():
            try:
                self._client.connect(self.opts.host, self.opts.port, keepalive=KEEPALIVE_S)
            except (OSError, ValueError) as exc:
                if self.opts.tls and tls_to_plain_port(exc):
                    self._down(f"{NOT_TLS} ({self.opts.where}; check mqtts:// and the port); retrying in {delay:.0f} s")
                else:
                    self._down(f"cannot reach {self.opts.where} ({_reason(exc)}); retrying in {delay:.0f} s")
            else:
                if self._stop.is_set():  # closed while connecting
                    self._client.disconnect()
                    break
                started = time.monotonic()
                self._client.loop_forever()  # returns once the connection ends (reconnect_on_failure=False)
                if time.monotonic() - started > HELD_S:
                    delay = RETRY_MIN_S  # it held a while: the next try is soon
            if self._stop.wait(delay):
                break
            delay = min(delay * 2, RETRY_MAX_S)

    def _down(self, why: str) -> None:
        self.connected = False
        if self.broker != f"broker: {why}":
            log.warning("broker: %s", why)
        self.broker = f"broker: {why}"

    # -- paho callbacks (on the thread above) --------------------------------------------------

    def _on_connect(self, client: Any, _userdata: Any, flags: Any, reason: Any, _props: Any) -> None:
        if reason.is_failure:
            login = any(w in str(reason).lower() for w in ("authori", "password", "user name"))
            advice = "; check --mqtt-user and --mqtt-password-file" if login else ""
            self._down(f"{self.opts.where} refused the connection ({reason}){advice}")
            return
        self._generation += 1
        client.subscribe(SUBSCRIPTION, qos=1)
        self.connected = True
        self.broker = f"broker: connected to {self.opts.where}"
        session = "the broker kept this leaderboard's session" if flags.session_present else "a new session"
        log.info("connected to %s (%s)", self.opts.where, session)

    def _on_disconnect(self, _client: Any, _userdata: Any, _flags: Any, reason: Any, _props: Any) -> None:
        if not self._stop.is_set() and self.connected:
            why = "" if str(reason) == "Unspecified error" else f" ({reason})"  # paho's word for a closed socket
            self._down(f"connection to {self.opts.where} lost{why}; reconnecting")

    def _on_message(self, _client: Any, _userdata: Any, msg: Any) -> None:
        self.intake.put(msg.topic, msg.payload, (self._generation, msg.mid, msg.qos))

    def _ack(self, token: tuple[int, int, int]) -> None:
        generation, mid, qos = token
        if qos > 0 and generation == self._generation:  # after a reconnect the broker sends it again
            self._client.ack(mid, qos)

    def _store_failed(self, exc: Exception) -> None:
        # nothing of the batch was acknowledged: after a reconnect the broker sends it again
        self._down(f"the store could not write ({exc}); reconnecting to get the messages again")
        self._client.disconnect()

    @property
    def stored(self) -> int:
        """Events stored since the start."""
        return self.intake.stored

    @property
    def duplicates(self) -> int:
        """Events dropped as already stored."""
        return self.intake.duplicates

    @property
    def dropped(self) -> Any:
        """The messages dropped as not fitting schema v1 (``.count``)."""
        return self.intake.dropped

    # -- lifetime -------------------------------------------------------------------------------

    def close(self) -> None:
        """Disconnect (the session stays on the broker) and stop the thread."""
        self._stop.set()
        try:
            self._client.disconnect()
        except Exception:  # not connected: nothing to close
            pass
        self._thread.join(timeout=10)
        self.intake.close()

    def __enter__(self) -> Subscriber:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
