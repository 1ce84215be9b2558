"""The page's WebSocket: snapshots out, the page's taps and keys in, gated by the PIN.

Messages in
-----------
``{"type": "command", "command": "hold_1", "seen": N, "pin": ...}``, ``{"type": "menu", "item": "new",
"seen": N}`` (a tap on a menu item: :meth:`TableApp.choose`), ``{"type": "box", "box": "chance", "seen": N}``
(a tap on a box: :meth:`TableApp.tap_box`), ``{"type": "hold", "die": 0, "held": true, "seen": N}`` (a tap
on a die: :meth:`TableApp.set_hold`), ``{"type": "fix", "die": 0, "value": 5, "confirm": true, "seen": N}`` (the
fix view: :meth:`TableApp.fix`), ``{"type": "rolloff", "face": 4}`` (a roll-off throw typed in); ``seen``:
the ``seq`` of the snapshot the page showed (acting commands
without it are not taken), ``{"type": "setup", ...}`` and ``{"type": "rendered", "seq": N}``. A message that
is not a JSON object with fields of the right types closes the socket (code 1003; :func:`parse_message`), one
over :data:`~table.display.messages.MAX_MESSAGE_CHARS` before it is parsed (code 1009; the server reads none
over :data:`~table.display.connections.WS_MAX_BYTES`).

Clients on the table itself (loopback, or the addresses in ``local``) may send
commands; any other client is read-only unless its message carries the table's
PIN (shown on the table's screen), counted by :class:`PinGuard`. An ``unlock``
refused during a lock-out says when to offer the PIN again (``wait_s``). An
``unlock`` the PIN opens answers with a token; the page offers it on reconnecting
(``{"type": "unlock", "token": ...}``), and a token is never locked out, so
strangers' wrong PINs cannot take control from the phones already playing.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from typing import Any

from fastapi import WebSocket, WebSocketDisconnect

from table.display.messages import MessageTooLong, parse_message
from table.display.pin_guard import PinGuard
from table.display.request_checks import plain_address, same_origin
from table.inputs.commands import Command

log = logging.getLogger(__name__)


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


def view(table: Any, snap: dict[str, Any], here: bool, unlocked: bool) -> str:
    """The snapshot as sent to one page, as JSON text.

    Adds ``local`` (the table's own page) and ``can_command``; the PIN goes to the table's own page only.
    """
    out = dict(snap)
    out["local"] = here
    out["can_command"] = here or unlocked
    if here:
        out["pin"] = table.pin
    return json.dumps(out, separators=(",", ":"))


async def serve_page_socket(socket: WebSocket, table: Any, hub: Hub, guard: PinGuard, local: frozenset[str]) -> None:
    """Serve one page's WebSocket until it closes (see the module's docstring).

    Parameters
    ----------
    socket : WebSocket
        Not accepted yet; refused (code 1008, before accept) unless :func:`same_origin`.
    table : TableApp
        The running table.
    hub : Hub
        Wakes this socket's sender when the table changes.
    guard : PinGuard
        Counts wrong PINs of clients not in `local`.
    local : frozenset of str
        Client addresses that count as the table itself.
    """
    origin, served_as = socket.headers.get("origin"), socket.headers.get("host")
    if not same_origin(origin, served_as):
        log.warning("refused a WebSocket from a page of %r (this page is %r)", origin, served_as)
        await socket.close(code=1008)  # before accept: the browser gets HTTP 403
        return
    hub.loop = asyncio.get_running_loop()
    await socket.accept()
    host = plain_address(socket.client.host) if socket.client else None
    here = host in local
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
                await socket.send_text(view(table, snap, here, unlocked))

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
                await socket.close(code=1009 if isinstance(exc, MessageTooLong) else 1003, reason=str(exc))
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
                await socket.send_text(
                    json.dumps(
                        {
                            "type": "refused",
                            "message": guard.refusal(host)
                            or "Read-only: enter the table's PIN (shown on the table's screen) to send commands.",
                        }
                    )
                )
                continue
            if kind == "command":
                try:
                    command = Command(str(msg.get("command")))
                except ValueError:
                    await socket.send_text(
                        json.dumps({"type": "refused", "message": f"unknown command {msg.get('command')!r}"})
                    )
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
            elif kind == "fix":  # the fix view: open, pick a die, set its value, confirm or cancel
                table.fix(
                    {k: msg[k] for k in ("die", "value", "confirm", "cancel") if k in msg}, msg.get("seen", -1), origin
                )
            elif kind == "rolloff" and "face" in msg:  # a face typed for the roll-off's next player
                table.rolloff_face(msg["face"])
            elif kind == "rolloff" and msg.get("start") is True:  # the setup's Roll-off button
                table.start_rolloff()
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        task.cancel()
        hub.clients.discard(dirty)
