"""The display's web app: the page, its static files, state pushed over a WebSocket.

Routes
------
``GET /``                     the page (``static/index.html``)
``GET /static/...``           its CSS, JS and fonts (all local; no CDN)
``GET /health``               ``{"ok": true, "seq": N}`` (the kiosk waits for it)
``GET /api/state``            the current snapshot (JSON)
``GET /camera.jpg``           the small camera view with the reading drawn on it
``GET /export/scorecards.csv`` and ``/export/scorecards.png``: the scorecards
``GET /export/analysis.csv``  each decision's loss against optimal play (``dicetable export --analysis``)
``WS  /ws``                   snapshots out; ``{"type": "command", "command": "hold_1", "seen": N, "pin": ...}``,
                              ``{"type": "menu", "item": "new", "seen": N}`` (a tap on a menu item:
                              :meth:`TableApp.choose`), ``{"type": "box", "box": "chance", "seen": N}``
                              (a tap on a box: :meth:`TableApp.tap_box`), ``{"type": "hold", "die": 0,
                              "held": true, "seen": N}`` (a tap on a die: :meth:`TableApp.set_hold`);
                              ``seen``: the ``seq`` of the
                              snapshot the page showed (acting commands without it are not taken),
                              ``{"type": "setup", ...}`` and ``{"type": "rendered", "seq": N}`` in

Clients on the table itself (loopback, or the addresses in ``local_hosts``) may
send commands; any other client is read-only unless its message carries the
table's PIN (shown on the table's screen). After 5 wrong PINs in a row an address
is locked out for 30 s, twice as long after each further wrong PIN; after 20 wrong PINs
within an hour from all addresses together, every address is (:class:`PinGuard`). An
``unlock`` refused during a lock-out says when to offer the PIN again (``wait_s``).
An ``unlock`` the PIN opens answers with a token; the page offers it on reconnecting
(``{"type": "unlock", "token": ...}``), and a token is never locked out, so strangers'
wrong PINs cannot take control from the phones already playing.
A WebSocket whose ``Origin`` is not the page's own host is refused (a page of another
site, open in the table's browser, cannot drive the table or read the PIN); a message
that is not a JSON object with fields of the right types closes the socket (code 1003).
A request whose ``Host`` is not an IP address or one of this machine's names
(:func:`table_host_names`) is refused (HTTP 400; a WebSocket is closed before accept),
which stops DNS rebinding: a site whose name is made to resolve to the table would
otherwise pass the ``Origin`` check as the page's own host (:class:`HostCheck`).
"""

from __future__ import annotations

import asyncio
import collections
import ipaddress
import json
import logging
import math
import secrets
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from table.display.listening import listen_error, table_host_names
from table.display.export import scorecards_csv, scorecards_png
from table.inputs.commands import Command

log = logging.getLogger(__name__)

STATIC = Path(__file__).with_name("static")

#: Addresses treated as the table itself.
LOCAL_HOSTS = frozenset({"127.0.0.1", "::1", "localhost", "testclient"})


#: Types of the fields a client message may carry (others are ignored; the setup's are checked by the app).
FIELDS: dict[str, type] = {"type": str, "pin": str, "token": str, "command": str, "seq": int, "item": str,
                           "box": str, "seen": int, "die": int}


def _json_kind(value: Any) -> str:
    """What a JSON value is, in the words of a message (``a list``, ``a number``, ``null``...)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    return {dict: "an object", list: "a list", str: "a string"}.get(type(value), "a number")


def parse_message(text: str | None) -> dict[str, Any]:
    """One message from a page: a JSON object whose fields in :data:`FIELDS` have the right types.

    Raises
    ------
    ValueError
        Saying what is wrong (in at most 120 characters, to fit a WebSocket close reason): not
        text, not JSON, not an object, or a field of the wrong type.
    """
    if text is None:
        raise ValueError('send text frames of JSON, e.g. {"type": "command", "command": "roll"}')
    try:
        msg = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested thousands deep
        raise ValueError('not JSON; send an object, e.g. {"type": "command", "command": "roll"}') from None
    if not isinstance(msg, dict):
        raise ValueError(f'got {_json_kind(msg)}; send an object, e.g. {{"type": "command", "command": "roll"}}')
    for key, kind in FIELDS.items():
        value = msg.get(key)
        if key in msg and (not isinstance(value, kind) or isinstance(value, bool)):
            raise ValueError(f"field {key!r} must be {'a whole number' if kind is int else 'a string'}, "
                             f"got {_json_kind(value)}")
    return msg


def plain_address(host: str | None) -> str | None:
    """A client's address as people write it: an IPv4-mapped IPv6 address (``::ffff:127.0.0.1``, how a
    server listening on ``::`` sees IPv4 clients) becomes the IPv4 address; anything else is returned as is."""
    if host and host.lower().startswith("::ffff:"):
        try:
            mapped = ipaddress.IPv6Address(host).ipv4_mapped
        except ValueError:
            return host
        return str(mapped) if mapped is not None else host
    return host


def host_allowed(host: str | None, names: frozenset[str] | set[str]) -> bool:
    """Whether a request's ``Host`` header (``name``, ``name:port``, ``[v6]:port``) names the table.

    An IP address (v4 or v6) always does: the page is opened by address on the LAN, and a
    rebinding attack needs a name. A name does when it is in `names` (case and a final dot
    ignored). A missing or empty ``Host`` (HTTP/1.0, no browser sends it) passes.
    """
    if host is None or not host.strip():
        return True
    host = host.strip().lower()
    if host.startswith("["):
        name = host[1:host.find("]")] if "]" in host else host[1:]
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        pass
    return name.rstrip(".") in names


class HostCheck:
    """ASGI middleware: refuses HTTP requests and WebSockets whose ``Host`` is not the table (:func:`host_allowed`).

    Starlette's ``TrustedHostMiddleware`` takes names and wildcards only, while a
    table is reached by whatever address the LAN gave it; so IP addresses pass here.

    Parameters
    ----------
    app : ASGI app
        The app to guard.
    names : set of str
        Names allowed besides IP addresses (:func:`table_host_names`).
    """

    def __init__(self, app: Any, names: frozenset[str] | set[str]) -> None:
        self.app = app
        self.names = frozenset(n.lower().rstrip(".") for n in names)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = next((v.decode("latin-1") for k, v in scope.get("headers", ()) if k == b"host"), None)
        if host_allowed(host, self.names):
            await self.app(scope, receive, send)
            return
        log.warning("refused a request for host %r (this table answers to its IP address or %s)",
                    host, ", ".join(sorted(self.names)))
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # before accept: HTTP 403
            return
        names = " or ".join(f"http://{n}:PORT/" for n in sorted(self.names))
        text = (f"This dicetable does not answer to the name {host!r}. Open it by its IP address "
                f"(http://ADDRESS:PORT/, as 'dicetable play' prints) or as {names}.\n")
        await Response(text, status_code=400, media_type="text/plain")(scope, receive, send)


def same_origin(origin: str | None, host: str | None) -> bool:
    """Whether a WebSocket's ``Origin`` header names the host (``host:port``) its page was served from.

    A request without ``Origin`` (not from a browser) passes; ``Origin: null`` does not.
    """
    if origin is None:
        return True
    netloc = urlsplit(origin.strip()).netloc
    return bool(netloc) and netloc.lower() == (host or "").strip().lower()


class PinGuard:
    """Counts wrong PINs per client address and locks an address out after too many.

    After `max_wrong` wrong PINs in a row an address may not try again for `lockout_s`
    seconds; each further wrong PIN locks it out for twice as long as the last time (at
    most `max_lockout_s`). The right PIN clears the address's count.

    IPv6 addresses are counted by their /64 network, the block one phone or one home
    network is given (RFC 4291's interface identifier is the last 64 bits): a phone can
    take any number of addresses in it, but not of other networks.

    The table as a whole is counted too: after `max_table_wrong` wrong PINs from any
    addresses within `table_window_s`, every address is locked out the same way (a
    device on a cafe's network can take one IPv4 address after another, 5 tries each).
    A right PIN does not clear this count: the phone pages offer their PIN again on
    every reconnect, which would give an attacker fresh tries. The table's own
    buttons and screen are never locked out.

    A device that gave the right PIN is given a token (:meth:`remember`, 128 random
    bits) that its page offers when it reconnects (:meth:`recognises`). A token is
    never locked out, so strangers' wrong PINs cannot take control away from the
    phones already playing; it lasts as long as this guard (the table's run), and the
    least recently used is forgotten past `max_tokens`.

    Parameters
    ----------
    max_wrong : int, optional
        Wrong PINs in a row before the first lock-out (5).
    max_table_wrong : int, optional
        Wrong PINs from all addresses together before every address is locked out (20).
    table_window_s : float, optional
        How long a wrong PIN counts for the table as a whole, in seconds (3600).
    lockout_s : float, optional
        The first lock-out, in seconds (30).
    max_lockout_s : float, optional
        The longest lock-out, in seconds (3600).
    clock : callable, optional
        Monotonic time in seconds (``time.monotonic``; tests give their own).
    max_tokens : int, optional
        Devices remembered at once (64).
    """

    #: The key of the table-wide count (no address is written this way).
    TABLE = "<every address>"

    def __init__(self, *, max_wrong: int = 5, max_table_wrong: int = 20, table_window_s: float = 3600.0,
                 lockout_s: float = 30.0, max_lockout_s: float = 3600.0,
                 clock: Callable[[], float] = time.monotonic, max_tokens: int = 64) -> None:
        self.max_wrong = max_wrong
        self.max_table_wrong = max_table_wrong
        self.table_window_s = table_window_s
        self._table_wrong_at: collections.deque[float] = collections.deque()  # times of the table's wrong PINs
        self.lockout_s = lockout_s
        self.max_lockout_s = max_lockout_s
        self.clock = clock
        self._wrong: dict[str | None, int] = {}
        self._until: dict[str | None, float] = {}
        self.max_tokens = max_tokens
        self._tokens: collections.OrderedDict[str, None] = collections.OrderedDict()

    def remember(self) -> str:
        """A new token for a device that has just given the right PIN (URL-safe text)."""
        token = secrets.token_urlsafe(16)
        self._tokens[token] = None
        while len(self._tokens) > self.max_tokens:
            self._tokens.popitem(last=False)
        return token

    def recognises(self, token: str) -> bool:
        """Whether `token` is one :meth:`remember` gave (and has not forgotten); never counted or locked out.

        A recognised token becomes the last to be forgotten (the phones in use keep theirs).
        """
        if len(token) > 64:  # ours are 22 characters: a long one is not compared, at any cost
            return False
        for known in self._tokens:
            if secrets.compare_digest(token.encode(), known.encode()):
                self._tokens.move_to_end(known)
                return True
        return False

    @staticmethod
    def _key(host: str | None) -> str | None:
        """Whose count `host` adds to: the address itself, or for IPv6 its /64 network."""
        host = plain_address(host)
        try:
            address = ipaddress.ip_address(host or "")
        except ValueError:
            return host
        if isinstance(address, ipaddress.IPv6Address):
            return str(ipaddress.IPv6Network((address, 64), strict=False))
        return host

    def _wait_s(self, key: str | None) -> float:
        return max(0.0, self._until.get(key, 0.0) - self.clock())

    def wait_s(self, host: str | None) -> float:
        """Seconds until `host` may try a PIN again (0: now)."""
        return max(self._wait_s(self._key(host)), self._wait_s(self.TABLE))

    def refusal(self, host: str | None) -> str | None:
        """The message for `host` while it is locked out, else None."""
        own, table = self._wait_s(self._key(host)), self._wait_s(self.TABLE)
        if own >= table and own:
            return f"Too many wrong PINs; try again in {math.ceil(own)} s."
        if table:
            return f"Too many wrong PINs at this table from several devices; try again in {math.ceil(table)} s."
        return None

    def check(self, host: str | None, given: str, pin: str) -> bool:
        """Whether `given` is `pin`, counting a wrong one against `host` (a right one clears its count).

        An empty `given` (Control pressed with no PIN typed) is wrong but not counted. The
        caller asks :meth:`refusal` first: while `host` is locked out no PIN is checked.
        """
        if not given:
            return False
        key = self._key(host)
        if secrets.compare_digest(given.encode(), pin.encode()):
            self._wrong.pop(key, None)
            self._until.pop(key, None)
            return True
        now = self.clock()
        self._table_wrong_at.append(now)
        while self._table_wrong_at[0] <= now - self.table_window_s:
            self._table_wrong_at.popleft()
        self._wrong[key] = self._wrong.get(key, 0) + 1
        for k, n, most in ((key, self._wrong[key], self.max_wrong),
                           (self.TABLE, len(self._table_wrong_at), self.max_table_wrong)):
            if n >= most:
                lockout_s = self.lockout_s * 2 ** min(n - most, 30)  # 30 s, 60 s, 120 s...
                self._until[k] = now + min(self.max_lockout_s, lockout_s)
        return False


class Hub:
    """Pushes the app's latest snapshot to every connected page (coalescing bursts)."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.clients: set[asyncio.Event] = set()

    def notify(self, seq: int, snap: dict[str, Any]) -> None:
        """Called by the app (worker thread) after each change."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        for ev in tuple(self.clients):
            loop.call_soon_threadsafe(ev.set)


def create_app(table: Any, *, local_hosts: frozenset[str] | set[str] = LOCAL_HOSTS,
               pin_guard: PinGuard | None = None, host_names: frozenset[str] | set[str] | None = None) -> Any:
    """Build the FastAPI app for a running :class:`~table.app.TableApp`.

    Parameters
    ----------
    table : TableApp
        The running table (started).
    local_hosts : set of str, optional
        Client addresses that count as the table itself (may send commands without the PIN).
    pin_guard : PinGuard, optional
        Counts other clients' wrong PINs (default: ``PinGuard()``; also ``app.state.pin_guard``).
    host_names : set of str, optional
        Names the page may be opened by besides IP addresses (default :func:`table_host_names`);
        requests for other names are refused (:class:`HostCheck`).

    Returns
    -------
    fastapi.FastAPI
    """
    hub = Hub()
    table.subscribe(hub.notify)
    app = FastAPI(title="dicetable", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.hub = hub
    guard = app.state.pin_guard = pin_guard or PinGuard()
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_middleware(HostCheck, names=table_host_names() if host_names is None else host_names)
    local = frozenset(local_hosts)

    def is_local(host: str | None) -> bool:
        return host in local

    def view(snap: dict[str, Any], here: bool, unlocked: bool) -> str:
        out = dict(snap)
        out["local"] = here
        out["can_command"] = here or unlocked
        if here:
            out["pin"] = table.pin
        return json.dumps(out, separators=(",", ":"))

    @app.get("/")
    def index() -> Any:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    @app.get("/health")
    def health() -> Any:
        return {"ok": True, "seq": table.seq, "screen": table.screen}

    @app.get("/api/state")
    def state() -> Any:
        return JSONResponse(table.snapshot)

    @app.get("/camera.jpg")
    def camera() -> Any:
        data = table.camera_jpeg
        if not data:
            return Response(status_code=404, content=b"no camera view yet")
        return Response(content=data, media_type="image/jpeg", headers={"Cache-Control": "no-store"})

    @app.get("/export/scorecards.csv")
    def export_csv() -> Any:
        st = table.state
        if st is None:
            return Response(status_code=404, content=b"no game yet")
        return Response(content=scorecards_csv(st), media_type="text/csv",
                        headers={"Content-Disposition": 'attachment; filename="scorecards.csv"'})

    @app.get("/export/scorecards.png")
    def export_png() -> Any:
        st = table.state
        if st is None:
            return Response(status_code=404, content=b"no game yet")
        return Response(content=scorecards_png(st), media_type="image/png",
                        headers={"Content-Disposition": 'inline; filename="scorecards.png"'})

    @app.get("/export/analysis.csv")
    def export_analysis() -> Any:
        if table.state is None:
            return Response(status_code=404, content=b"no game yet")
        try:
            analysis = table.analysis_now()
        except (OSError, ValueError) as exc:  # no value table for this variant, a free-roll session
            return Response(status_code=404, content=f"no analysis: {exc}".encode())
        if analysis is None:
            return Response(status_code=404, content=b"no game yet")
        return Response(content=analysis.to_csv().encode("utf-8"), media_type="text/csv",
                        headers={"Content-Disposition": 'attachment; filename="analysis.csv"'})

    @app.websocket("/ws")
    async def ws(socket: WebSocket) -> None:
        origin, served_as = socket.headers.get("origin"), socket.headers.get("host")
        if not same_origin(origin, served_as):
            log.warning("refused a WebSocket from a page of %r (this page is %r)", origin, served_as)
            await socket.close(code=1008)  # before accept: the browser gets HTTP 403
            return
        hub.loop = asyncio.get_running_loop()
        await socket.accept()
        host = plain_address(socket.client.host) if socket.client else None
        here = is_local(host)
        origin = "table" if here else f"phone {host}"  # who pressed, as the game's events record it
        unlocked = False
        dirty = asyncio.Event()
        hub.clients.add(dirty)
        dirty.set()

        async def sender() -> None:
            sent: tuple[int, bool] = (-1, False)
            while True:
                await dirty.wait()
                dirty.clear()
                snap = table.snapshot
                key = (snap.get("seq", 0), unlocked)
                if key != sent:
                    sent = key
                    await socket.send_text(view(snap, here, unlocked))

        task = asyncio.create_task(sender())
        try:
            while True:
                received = await socket.receive()
                if received["type"] == "websocket.disconnect":
                    break
                try:
                    msg = parse_message(received.get("text"))
                except ValueError as exc:
                    log.info("closed the WebSocket of %s: %s", host, exc)
                    await socket.close(code=1003, reason=str(exc))
                    break
                kind = msg.get("type")
                if kind == "rendered":
                    if here:
                        table.rendered(msg.get("seq", -1))
                    continue
                if kind == "unlock" and "token" in msg:  # a device that gave the PIN before, reconnecting
                    known = guard.recognises(msg["token"])
                    if known or "pin" not in msg:  # (an unknown token beside a PIN: the PIN decides, below)
                        unlocked = here or unlocked or known
                        await socket.send_text(json.dumps({"type": "unlock", "ok": unlocked, "by": "token"}))
                        dirty.set()
                        continue
                if kind == "unlock":
                    locked = None if here else guard.refusal(host)
                    checked = locked is None
                    if checked:
                        unlocked = here or guard.check(host, msg.get("pin", ""), table.pin)
                        locked = None if unlocked else guard.refusal(host)
                    reply: dict[str, Any] = {"type": "unlock", "ok": unlocked}
                    if unlocked and not here:
                        reply["token"] = guard.remember()
                    if locked:
                        reply["message"] = locked
                    if not checked:  # locked out: the PIN was not looked at; the page may offer it then
                        reply["wait_s"] = math.ceil(guard.wait_s(host))
                    await socket.send_text(json.dumps(reply))
                    dirty.set()
                    continue
                allowed = here or unlocked
                if not allowed and "pin" in msg:
                    locked = guard.refusal(host)
                    if locked:
                        await socket.send_text(json.dumps({"type": "refused", "message": locked}))
                        continue
                    allowed = guard.check(host, msg["pin"], table.pin)
                if not allowed:
                    await socket.send_text(json.dumps({
                        "type": "refused",
                        "message": guard.refusal(host) or
                        "Read-only: enter the table's PIN (shown on the table's screen) to send commands."}))
                    continue
                if kind == "command":
                    try:
                        command = Command(str(msg.get("command")))
                    except ValueError:
                        await socket.send_text(json.dumps({"type": "refused", "message":
                                                           f"unknown command {msg.get('command')!r}"}))
                        continue
                    # a page that does not say what it showed (an old page) is taken to have seen nothing
                    table.press(command, origin, seen=msg.get("seen", -1))
                elif kind == "menu" and "item" in msg:
                    table.choose(msg["item"], msg.get("seen", -1))
                elif kind == "hold" and "die" in msg and isinstance(msg.get("held"), bool):
                    table.set_hold(msg["die"], msg["held"], msg.get("seen", -1), origin)
                elif kind == "box" and "box" in msg:
                    table.tap_box(msg["box"], msg.get("seen", -1), origin)
                elif kind == "setup":
                    table.apply_setup(msg)
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            task.cancel()
            hub.clients.discard(dirty)

    return app


def bind_listener(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` (not listening yet), for the page's server.

    Parameters
    ----------
    host : str
        An address of this machine (``127.0.0.1``, ``0.0.0.0``, ``::``, a LAN address or a name).
    port : int
        TCP port, 0-65535 (0: any free port).

    Raises
    ------
    OSError
        In one line, with advice that fits the cause: an address that is not
        this machine's (give another ``--listen``), a port in use (give another
        ``--port`` or stop the program using it), a port below 1024 without root.
    """
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise listen_error(exc, host, port) from None
    return sock


class DisplayServer:
    """uvicorn serving :func:`create_app` in a thread.

    Parameters
    ----------
    table : TableApp
    host : str, optional
        Address to listen on (``127.0.0.1``; ``0.0.0.0`` lets phones on the LAN watch).
    port : int, optional
        TCP port (0: any free port; :attr:`port` tells which).
    local_hosts : set of str, optional
        See :func:`create_app`.
    pin_guard : PinGuard, optional
        See :func:`create_app` (a server started again with the same guard keeps its counts).
    """

    def __init__(self, table: Any, *, host: str = "127.0.0.1", port: int = 8000,
                 local_hosts: frozenset[str] | set[str] = LOCAL_HOSTS, pin_guard: PinGuard | None = None) -> None:
        import threading

        import uvicorn

        self.app = create_app(table, local_hosts=local_hosts, pin_guard=pin_guard)
        self.host = host
        self._sock = bind_listener(host, port)
        self.port = self._sock.getsockname()[1]
        try:  # uvicorn >= 0.35 deprecates its legacy websockets protocol in favour of this one
            import uvicorn.protocols.websockets.websockets_sansio_impl  # noqa: F401
            ws = "websockets-sansio"
        except ImportError:
            ws = "websockets"
        config = uvicorn.Config(self.app, log_level="warning", lifespan="off", ws=ws)
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self._sock]},
                                        name="dicetable-display", daemon=True)

    @property
    def url(self) -> str:
        """The page's address (``http://127.0.0.1:PORT/`` when listening on every address)."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host
        return f"http://{host}:{self.port}/"

    def start(self) -> DisplayServer:
        """Serve in a thread; return once it accepts connections."""
        import time

        self._thread.start()
        for _ in range(500):
            if self.server.started:
                break
            time.sleep(0.01)
        return self

    def close(self) -> None:
        """Stop serving."""
        self.server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self._sock.close()

    def __enter__(self) -> DisplayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
