"""The one-line error, with advice, for a server that cannot listen on an address (the page of ``play``, ``watch``'s view).

Shared by :mod:`table.display.server` and the live commands, so it lives in
neither: the display does not import the commands.
"""

from __future__ import annotations

import errno
import socket

__all__ = ["listen_error"]


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
        advice = (f"{host!r} is not an address of this machine; give --listen an address of this machine, "
                  "such as 127.0.0.1 (this machine only) or 0.0.0.0 (phones on the LAN too)")
    elif exc.errno == errno.EACCES and 0 < port < 1024:
        advice = "ports below 1024 need root; give a --port of 1024 or more"
    elif exc.errno == errno.EADDRINUSE:
        advice = "the port is in use; give another --port, or stop the program using it"
    else:
        advice = "check --listen and --port"
    return OSError(f"cannot listen on {host}:{port} ({reason}): {advice}")
