"""Checks on who asks: the ``Host`` of every request and the ``Origin`` of a WebSocket.

A request whose ``Host`` is not an IP address or one of this machine's names
(:func:`~table.display.listening.table_host_names`) is refused (HTTP 400; a WebSocket is
closed before accept), which stops DNS rebinding: a site whose name is made to
resolve to the table would otherwise pass the ``Origin`` check as the page's own
host (:class:`HostCheck`). A WebSocket whose ``Origin`` is not the page's own host
is refused (:func:`same_origin`): a page of another site, open in the table's
browser, cannot drive the table or read the PIN.
"""

from __future__ import annotations

import ipaddress
import logging
from typing import Any
from urllib.parse import urlsplit

from fastapi.responses import Response

log = logging.getLogger(__name__)


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


def address_block(host: str | None) -> str | None:
    """Whose count a client address adds to (wrong PINs, open connections): an IPv4 address itself, an
    IPv6 one its /64 network, the block one phone or one home network is given (RFC 4291's interface
    identifier is the last 64 bits); anything else (no address, a test client's name) as given."""
    host = plain_address(host)
    try:
        address = ipaddress.ip_address(host or "")
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address) and not address.is_loopback:
        return str(ipaddress.IPv6Network((address, 64), strict=False))
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
        name = host[1 : host.find("]")] if "]" in host else host[1:]
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
        Names allowed besides IP addresses (:func:`~table.display.listening.table_host_names`).
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
        log.warning(
            "refused a request for host %r (this table answers to its IP address or %s)",
            host,
            ", ".join(sorted(self.names)),
        )
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # before accept: HTTP 403
            return
        names = " or ".join(f"http://{n}:PORT/" for n in sorted(self.names))
        text = (
            f"This dicetable does not answer to the name {host!r}. Open it by its IP address "
            f"(http://ADDRESS:PORT/, as 'dicetable play' prints) or as {names}.\n"
        )
        await Response(text, status_code=400, media_type="text/plain")(scope, receive, send)


def same_origin(origin: str | None, host: str | None) -> bool:
    """Whether a WebSocket's ``Origin`` header names the host (``host:port``) its page was served from.

    A request without ``Origin`` (not from a browser) passes; ``Origin: null`` does not.
    """
    if origin is None:
        return True
    netloc = urlsplit(origin.strip()).netloc
    return bool(netloc) and netloc.lower() == (host or "").strip().lower()
