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
``GET /export/history.csv``   the game throw by throw (``dicetable export --history --format csv``)
                              (downloads: made once per game state, one at a time, :mod:`table.display.served_exports`)
``WS  /ws``                   snapshots out, the page's commands in (:mod:`table.display.page_socket`)
``GET /overlay``, ``WS /overlay/ws``  the read-only stream overlay (:mod:`table.display.overlay`)

Clients on the table itself (loopback, or the addresses in ``local_hosts``) may
send commands; any other client is read-only unless its message carries the
table's PIN (shown on the table's screen). After 5 wrong PINs in a row an address
is locked out for 30 s, twice as long after each further wrong PIN; after 20 wrong PINs
within an hour from all addresses together, every address is (:class:`PinGuard`,
:mod:`table.display.pin_guard`). Requests for a ``Host`` that is not the table, and
WebSockets from another site's page, are refused (:mod:`table.display.request_checks`).
:class:`DisplayServer` caps the connections of each client address, gives each request a deadline and
reads no WebSocket message over 16 KiB (:mod:`table.display.connections`).

The pieces are re-exported here: :func:`parse_message` and :data:`FIELDS`
(:mod:`table.display.messages`), :class:`PinGuard`, :class:`HostCheck`,
:func:`host_allowed`, :func:`same_origin`, :func:`plain_address`, :class:`Hub`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi import FastAPI, WebSocket
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles

from table.display.listening import bind_listener, table_host_names
from table.display.messages import FIELDS, parse_message
from table.display.overlay import add_overlay_routes
from table.display.page_socket import Hub, serve_page_socket
from table.display.pin_guard import PinGuard
from table.display.request_checks import HostCheck, host_allowed, plain_address, same_origin
from table.display.served_exports import ServedExports
from table.display.serving import ThreadedServer

__all__ = [
    "FIELDS",
    "LOCAL_HOSTS",
    "STATIC",
    "DisplayServer",
    "HostCheck",
    "Hub",
    "PinGuard",
    "bind_listener",
    "create_app",
    "host_allowed",
    "parse_message",
    "plain_address",
    "same_origin",
    "table_host_names",
]

STATIC = Path(__file__).with_name("static")

#: Addresses treated as the table itself.
LOCAL_HOSTS = frozenset({"127.0.0.1", "::1", "localhost", "testclient"})


def create_app(
    table: Any,
    *,
    local_hosts: frozenset[str] | set[str] = LOCAL_HOSTS,
    pin_guard: PinGuard | None = None,
    host_names: frozenset[str] | set[str] | None = None,
) -> Any:
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

    @app.get("/")
    async def index() -> Any:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    # The quick routes are async (no thread of the pool): the downloads' threads never hold them up.
    @app.get("/health")
    async def health() -> Any:
        return {"ok": True, "seq": table.seq, "screen": table.screen}

    @app.get("/api/state")
    async def state() -> Any:
        # json.dumps escapes what is not ASCII: text UTF-8 cannot carry (a lone surrogate) never makes a 500
        return Response(json.dumps(table.snapshot, separators=(",", ":")), media_type="application/json")

    @app.get("/camera.jpg")
    async def camera() -> Any:
        data = table.camera_jpeg
        if not data:
            return Response(status_code=404, content=b"no camera view yet")
        return Response(content=data, media_type="image/jpeg", headers={"Cache-Control": "no-store"})

    exports = app.state.exports = ServedExports(table)

    @app.get("/export/scorecards.csv")
    def export_csv() -> Any:
        return exports.answer("scorecards.csv")

    @app.get("/export/scorecards.png")
    def export_png() -> Any:
        return exports.answer("scorecards.png")

    @app.get("/export/analysis.csv")
    def export_analysis() -> Any:
        return exports.answer("analysis.csv")

    @app.get("/export/history.csv")
    def export_history() -> Any:
        return exports.answer("history.csv")

    @app.websocket("/ws")
    async def ws(socket: WebSocket) -> None:
        await serve_page_socket(socket, table, hub, guard, local)

    add_overlay_routes(app, table, hub, STATIC)
    return app


class DisplayServer(ThreadedServer):
    """uvicorn serving :func:`create_app` in a thread (:class:`~table.display.serving.ThreadedServer`).

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

    Raises
    ------
    OSError
        An address that cannot be listened on (:func:`bind_listener`).
    """

    def __init__(
        self,
        table: Any,
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        local_hosts: frozenset[str] | set[str] = LOCAL_HOSTS,
        pin_guard: PinGuard | None = None,
    ) -> None:
        app = create_app(table, local_hosts=local_hosts, pin_guard=pin_guard)
        super().__init__(app, bind_listener(host, port), host, "dicetable-display")
