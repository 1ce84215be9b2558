"""Listening addresses of the page's server (``play``, ``watch``'s view, the leaderboard): the
socket bound to one, the error when one cannot be used, and the addresses phones can open.

Shared by :mod:`table.display.server`, the live commands and :mod:`table.leaderboard.service`, so
it lives in none of them and imports only the standard library (no FastAPI, numpy or OpenCV).
"""

from __future__ import annotations

import errno
import ipaddress
import socket
from pathlib import Path

__all__ = ["bind_listener", "listen_error", "mdns_answers", "phone_urls", "table_host_names"]

#: The socket of Avahi, the mDNS responder Raspberry Pi OS runs (package ``avahi-daemon``): while it
#: answers, phones on the LAN can find this machine as ``HOSTNAME.local`` (:func:`mdns_answers`).
AVAHI_SOCKET = Path("/run/avahi-daemon/socket")


def mdns_answers() -> bool:
    """Whether an mDNS responder (Avahi) runs here, so that ``HOSTNAME.local`` reaches this machine.

    Avahi answers on its socket (a socket file left by a crashed Avahi refuses the connection).
    """
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(0.5)
            s.connect(str(AVAHI_SOCKET))
        return True
    except OSError:  # none, refused, not allowed
        return False


def listen_error(exc: OSError, host: str, port: int) -> OSError:
    """The error to raise when listening on ``host:port`` failed with `exc` (``play``'s page, ``watch``'s view).

    Returns
    -------
    OSError
        One line naming the address and the reason, with advice that fits the cause: an
        address that is not this machine's (give another ``--listen``), a port in use
        (give another ``--port`` or stop the program using it), a port below 1024 without root.
    """
    reason = exc.strerror or str(exc)
    if isinstance(exc, socket.gaierror) or exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
        advice = (
            f"{host!r} is not an address of this machine; give --listen an address of this machine, "
            "such as 127.0.0.1 (this machine only) or 0.0.0.0 (phones on the LAN too)"
        )
    elif exc.errno == errno.EACCES and 0 < port < 1024:
        advice = "ports below 1024 need root; give a --port of 1024 or more"
    elif exc.errno == errno.EADDRINUSE:
        advice = "the port is in use; give another --port, or stop the program using it"
    else:
        advice = "check --listen and --port"
    error = OSError(f"cannot listen on {host}:{port} ({reason}): {advice}")
    error.errno = exc.errno  # the cause, for callers that act on it (play --wait waits for a port in use)
    return error


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
    # IPPROTO_TCP named, so that asyncio sets TCP_NODELAY on each accepted socket (it checks the protocol
    # number, which a socket made with the default 0 lacks); set on the listener too, which Linux passes
    # on. Without it each keep-alive response waited for the client's delayed ACK: /health p50 44 ms, 1.3 ms with.
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise listen_error(exc, host, port) from None
    return sock


def table_host_names() -> frozenset[str]:
    """The names this table answers to besides its IP addresses: ``localhost``, the machine's
    host name and that name under ``.local`` (mDNS, how a Raspberry Pi is usually reached).

    The display refuses other names (:class:`table.display.server.HostCheck`), and
    :func:`phone_urls` tells phones the ``.local`` one.
    """
    name = socket.gethostname().strip().lower().rstrip(".")
    names = {"localhost"}
    if name:
        names |= {name, name.split(".")[0], name.split(".")[0] + ".local"}
    return frozenset(names)


def _addresses_of(name: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The addresses `name` (a host name or an address) resolves to, zone ids dropped; [] when it does not."""
    try:
        return [
            ipaddress.ip_address(info[4][0].split("%")[0])
            for info in socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)
        ]
    except (OSError, ValueError):
        return []


def _reachable(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether a phone on the LAN can reach this machine at `ip` (not loopback, link-local or unspecified)."""
    return not (ip.is_loopback or ip.is_link_local or ip.is_unspecified)


def phone_urls(host: str, port: int) -> list[str]:
    """Addresses a phone on the LAN can open the page at, when the server listens on `host`.

    Parameters
    ----------
    host : str
        The listening address: ``0.0.0.0`` or ``::`` (every address) gives this machine's
        LAN addresses (those of its host name, and the one its default route leaves from;
        finding that sends no packet) and ``http://HOSTNAME.local:PORT/`` (mDNS, how a
        Raspberry Pi is usually reached) when Avahi answers for it (:func:`mdns_answers`;
        a name nothing answers to only misleads); a loopback address gives none (phones cannot
        reach it, nor a name that stands for one, such as ``localhost``); another
        address gives itself, a name its addresses; ``0`` is ``0.0.0.0``.
    port : int
        The port.

    Returns
    -------
    list of str
        URLs, the addresses first; empty when phones cannot reach the page.
    """

    def url(address: str) -> str:
        return f"http://[{address}]:{port}/" if ":" in address else f"http://{address}:{port}/"

    if host not in ("0.0.0.0", "::", ""):
        given = set(_addresses_of(host))  # a name or a short form ("localhost", the host name, "0")
        if any(ip.is_unspecified for ip in given):  # "0" is 0.0.0.0: every address
            host = "::" if any(ip.is_unspecified and ip.version == 6 for ip in given) else "0.0.0.0"
        else:  # phones cannot reach loopback; a name is given as its address (the page answers to those)
            return [url(str(ip)) for ip in sorted(given, key=lambda ip: (ip.version, int(ip))) if _reachable(ip)]
    found = _addresses_of(socket.gethostname())
    for family, probe in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
        if host == "0.0.0.0" and family == socket.AF_INET6:
            continue
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as s:
                s.connect((probe, 9))  # UDP: picks the route's source address, sends nothing
                found.append(ipaddress.ip_address(s.getsockname()[0].split("%")[0]))
        except (OSError, ValueError):
            pass
    addresses = []
    for ip in found:
        if _reachable(ip) and (host == "::" or ip.version == 4) and str(ip) not in addresses:
            addresses.append(str(ip))
    mdns = [n for n in sorted(table_host_names()) if n.endswith(".local") and n != "localhost.local"]
    if not mdns_answers():
        mdns = []
    return [url(a) for a in addresses] + [f"http://{n}:{port}/" for n in mdns]
