"""The page server's connections: a cap per client address, a deadline for each request, uvicorn's settings.

Phones on a café's Wi-Fi share the table with whatever else is on it. Without limits, 1,100 idle
sockets from one LAN host used up the Pi's 1,024 open files: no new page could load, and refused
accepts wrote 42 MB of log in 40 s. So (:class:`ConnectionLimits`):

- a client address (an IPv6 client by its /64 network, as :class:`~table.display.pin_guard.PinGuard`
  counts it) may hold at most ``max_per_address`` connections (HTTP and WebSocket together); more are
  closed at once, and the refusals are logged once a minute per address, not one line each;
- all addresses but loopback together may hold ``max_total`` (the table's own browser is never shut out);
- a request's head (and any body) must arrive within ``request_timeout_s`` of the connection opening
  or of the previous response, so a client that sends nothing, or a byte at a time, is closed;
  uvicorn closes a keep-alive connection idle for ``keep_alive_s`` after a response;
- a WebSocket message over ``ws_max_bytes`` closes the socket (code 1009) before it is read whole.

:func:`server_config` builds the ``uvicorn.Config`` with these protocols and limits.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from typing import Any

from table.display.request_checks import address_block

log = logging.getLogger(__name__)

#: Open connections one client address may hold: a browser opens at most 6 HTTP/1.1 connections to a
#: host plus its WebSocket, so 32 leaves room for several tabs or phones behind one address (a NAT).
MAX_PER_ADDRESS = 32
#: Open connections of all non-loopback clients together (kept well under the Pi's 1,024 open files).
MAX_TOTAL = 512
#: Seconds a connection may take to send a request's head (and body) once it is open or idle.
REQUEST_TIMEOUT_S = 10.0
#: Seconds uvicorn keeps an idle keep-alive connection after a response.
KEEP_ALIVE_S = 5
#: Largest WebSocket message read, bytes: the page's largest, a setup of 8 names, is under 2 KiB.
WS_MAX_BYTES = 16 * 1024
#: Largest request head, bytes (h11's own default; a browser's is under 2 KiB).
MAX_HEAD_BYTES = 16 * 1024
#: Connections waiting to be accepted, and accepted at most in one go: asyncio accepts up to this many
#: before any is closed, so uvicorn's 2,048 let a flood of 1,100 use up the open files before the cap
#: could close one (then every accept failed, logged with a traceback).
BACKLOG = 64
#: Seconds between two log lines about one address's refused connections.
REFUSAL_LOG_S = 60.0

LOOPBACK = frozenset({"127.0.0.1", "::1"})


class ConnectionLimits:
    """Counts open connections per client address and says which to refuse (see the module's docstring).

    Parameters
    ----------
    max_per_address : int, optional
        :data:`MAX_PER_ADDRESS`.
    max_total : int, optional
        :data:`MAX_TOTAL`, lowered to half the process's open-file limit when that is smaller.
    request_timeout_s : float, optional
        :data:`REQUEST_TIMEOUT_S`.
    clock : callable, optional
        Monotonic seconds, for the refusals' log lines.
    """

    def __init__(
        self,
        *,
        max_per_address: int = MAX_PER_ADDRESS,
        max_total: int = MAX_TOTAL,
        request_timeout_s: float = REQUEST_TIMEOUT_S,
        clock: Any = time.monotonic,
    ) -> None:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        self.max_per_address = max_per_address
        self.max_total = max_total if soft == resource.RLIM_INFINITY else min(max_total, soft // 2)
        self.request_timeout_s = request_timeout_s
        self.clock = clock
        self.open: dict[str | None, int] = {}  # address block -> open connections
        self._owner: dict[int, str | None] = {}  # id(transport) -> its address block
        self._refused: dict[str | None, int] = {}  # refusals not logged yet, per block
        self._logged_at: dict[str | None, float] = {}

    @property
    def total(self) -> int:
        """Open connections of non-loopback clients."""
        return sum(n for key, n in self.open.items() if key not in LOOPBACK)

    def admit(self, transport: Any) -> bool:
        """Count a new connection; False (and the caller closes it) when its address or the table is full."""
        peer = transport.get_extra_info("peername")
        key = address_block(peer[0] if isinstance(peer, tuple) and peer else None)
        full = self.open.get(key, 0) >= self.max_per_address or (key not in LOOPBACK and self.total >= self.max_total)
        if full:
            self._refusal(key)
            return False
        self.open[key] = self.open.get(key, 0) + 1
        self._owner[id(transport)] = key
        return True

    def release(self, transport: Any) -> None:
        """Uncount a closed connection (safe to call twice, or for one never admitted)."""
        if id(transport) not in self._owner:
            return
        key = self._owner.pop(id(transport))
        left = self.open.get(key, 1) - 1
        if left > 0:
            self.open[key] = left
        else:
            self.open.pop(key, None)

    def _refusal(self, key: str | None) -> None:
        """Log refused connections: the first at once, then at most one line per :data:`REFUSAL_LOG_S` per address."""
        self._refused[key] = self._refused.get(key, 0) + 1
        now = self.clock()
        if now - self._logged_at.get(key, -REFUSAL_LOG_S) < REFUSAL_LOG_S:
            return
        n = self._refused.pop(key)
        self._logged_at[key] = now
        log.warning(
            "refused %d connection%s from %s: it holds %d already (at most %d per address, %d in all); "
            "the next refusals from it are logged once a minute",
            n,
            "" if n == 1 else "s",
            key,
            self.open.get(key, 0),
            self.max_per_address,
            self.max_total,
        )


def protocol_classes(limits: ConnectionLimits, ws: str) -> tuple[type, type]:
    """uvicorn's h11 HTTP protocol and its WebSocket protocol `ws` (a name of ``uvicorn.config.WS_PROTOCOLS``),
    subclassed to keep `limits` and the request deadline."""
    import h11
    from uvicorn.config import WS_PROTOCOLS
    from uvicorn.importer import import_from_string
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class LimitedHTTP(H11Protocol):  # type: ignore[misc]
        """h11 with the per-address cap and a deadline for each request's head and body."""

        _deadline: asyncio.TimerHandle | None = None
        _admitted = False

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            if not limits.admit(transport):
                transport.abort()  # at once, no response and no log line of its own
                return
            self._admitted = True
            super().connection_made(transport)
            self._await_request()

        def connection_lost(self, exc: Exception | None) -> None:
            if not self._admitted:
                return
            self._cancel_deadline()
            limits.release(self.transport)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.transport.get_protocol() is not self or self.conn.their_state in (
                h11.DONE,
                h11.MUST_CLOSE,
                h11.CLOSED,
                h11.ERROR,
            ):
                self._cancel_deadline()  # the whole request is in (or it became a WebSocket)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._await_request()

        def _await_request(self) -> None:
            self._cancel_deadline()
            self._deadline = self.loop.call_later(limits.request_timeout_s, self._too_slow)

        def _cancel_deadline(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if self.transport.get_protocol() is self and not self.transport.is_closing():
                self.transport.close()

    base = import_from_string(WS_PROTOCOLS[ws])

    class LimitedWebSocket(base):  # type: ignore[misc, valid-type]
        """uvicorn's WebSocket protocol, uncounting its connection when it closes."""

        def connection_made(self, transport: Any) -> None:
            self._counted = transport
            super().connection_made(transport)

        def connection_lost(self, exc: Exception | None) -> None:
            limits.release(getattr(self, "_counted", None))
            super().connection_lost(exc)

    return LimitedHTTP, LimitedWebSocket


def websocket_protocol() -> str:
    """The name of uvicorn's WebSocket protocol to use: ``websockets-sansio`` where there is one (uvicorn
    >= 0.35 deprecates the legacy ``websockets`` one), else ``websockets``."""
    try:
        import uvicorn.protocols.websockets.websockets_sansio_impl  # noqa: F401
    except ImportError:
        return "websockets"
    return "websockets-sansio"


def server_config(app: Any, limits: ConnectionLimits) -> Any:
    """The ``uvicorn.Config`` of the page's server: `app` behind `limits`, with the module's timeouts and sizes."""
    import uvicorn

    http, ws = protocol_classes(limits, websocket_protocol())
    return uvicorn.Config(
        app,
        log_level="warning",
        lifespan="off",
        http=http,
        ws=ws,
        ws_max_size=WS_MAX_BYTES,
        timeout_keep_alive=KEEP_ALIVE_S,
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
        backlog=BACKLOG,
    )
