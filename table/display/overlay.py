"""The stream overlay: a read-only page for OBS's browser source, and its read-only WebSocket.

Routes (added to the display's app by :func:`add_overlay_routes`)
------------------------------------------------------------------
``GET /overlay?layout=1280x720|lower-third|1920x1080``  the page (``static/overlay.html``)
``WS  /overlay/ws``  snapshots out, nothing in

The page loads the whole state from ``GET /api/state`` each time it is opened
(OBS reloads hidden sources), then follows this socket.  The socket takes no
command: any message from the overlay closes it (code 1008, "read-only"), so
no command, PIN or token can reach the table through it, and what it sends
carries no PIN (``can_command`` is false).  See ``docs/overlay.md``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from fastapi import FastAPI, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse, PlainTextResponse

from table.display.page_socket import Hub
from table.display.request_checks import same_origin

log = logging.getLogger(__name__)

#: The page's layouts (``static/overlay.js`` and ``overlay.css`` size each one).
LAYOUTS = ("1280x720", "1920x1080", "lower-third")

#: What the overlay is told when it sends anything.
READ_ONLY = "read-only: the overlay takes no commands"


def overlay_view(snap: dict[str, Any]) -> str:
    """The snapshot as the overlay gets it: no PIN (the table never puts one in ``snapshot``), no commands."""
    out = dict(snap)
    out.pop("pin", None)
    out["local"] = False
    out["can_command"] = False
    return json.dumps(out, separators=(",", ":"))


async def serve_overlay_socket(socket: WebSocket, table: Any, hub: Hub) -> None:
    """Send ``table``'s snapshots until the overlay goes; close on any message it sends (code 1008)."""
    if not same_origin(socket.headers.get("origin"), socket.headers.get("host")):
        await socket.close(code=1008)  # another site's page: refused before accept (HTTP 403)
        return
    hub.loop = asyncio.get_running_loop()
    await socket.accept()
    dirty = asyncio.Event()
    hub.clients.add(dirty)
    dirty.set()

    async def sender() -> None:
        sent = -1
        while True:
            await dirty.wait()
            dirty.clear()
            snap = table.snapshot
            if snap.get("seq", 0) != sent:
                sent = snap.get("seq", 0)
                await socket.send_text(overlay_view(snap))

    task = asyncio.create_task(sender())
    try:
        received = await socket.receive()
        if received["type"] != "websocket.disconnect":
            log.info("closed an overlay socket that sent a message: the overlay is read-only")
            await socket.close(code=1008, reason=READ_ONLY)
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        task.cancel()
        hub.clients.discard(dirty)


def add_overlay_routes(app: FastAPI, table: Any, hub: Hub, static: Any) -> None:
    """Add ``/overlay`` and ``/overlay/ws`` to ``app`` (``static``: the folder of ``overlay.html``)."""

    @app.get("/overlay")
    async def overlay(layout: str | None = None) -> Any:
        if layout is not None and layout not in LAYOUTS:  # OBS shows this line in the source
            return PlainTextResponse(
                f"layout {layout[:40]!r} is not one of {', '.join(LAYOUTS)}; e.g. /overlay?layout=1280x720\n",
                status_code=400,
                headers={"Cache-Control": "no-store"},
            )
        return FileResponse(static / "overlay.html", headers={"Cache-Control": "no-store"})

    @app.websocket("/overlay/ws")
    async def overlay_ws(socket: WebSocket) -> None:
        await serve_overlay_socket(socket, table, hub)
