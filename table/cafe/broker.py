"""Where a café broker is and how to log in to it, for both sides: a table (``play``) and the leaderboard.

``--mqtt mqtt://HOST[:PORT]`` (port 1883) or ``mqtts://HOST[:PORT]`` (TLS, port 8883),
``--mqtt-user`` with ``--mqtt-password-file`` (its first line is the password: kept out of ``ps``
and shell history), ``--mqtt-ca`` (PEM; default: the system's CAs). Every bad value is one
:class:`~table.errors.UsageError` line that says what to write instead (docs/mqtt.md, "Settings");
:func:`configure_client` applies the login and TLS to a paho client. Imports no paho: the
leaderboard and ``play`` load it only when they connect.
"""

from __future__ import annotations

import argparse
import ssl
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from table.errors import UsageError

__all__ = [
    "PORTS",
    "add_broker_options",
    "check_ca",
    "configure_client",
    "existing_file",
    "parse_broker_url",
    "read_password",
    "tls_to_plain_port",
]

#: Default ports: MQTT over TCP, MQTT over TLS (IANA).
PORTS = {"mqtt": 1883, "mqtts": 8883}
#: What an example ``--mqtt`` looks like, for the error lines.
EXAMPLE = "e.g. --mqtt mqtt://cafe-pi.local or mqtts://cafe-pi.local:8883"


def parse_broker_url(url: str) -> tuple[str, int, bool]:
    """``mqtt://HOST[:PORT]`` or ``mqtts://HOST[:PORT]`` -> ``(host, port, tls)``.

    Raises
    ------
    UsageError
        For another scheme, no host, a port outside 1-65535, a login, a path or a query in the address.
    """
    try:
        parts = urlsplit(url.strip())
    except ValueError as exc:  # e.g. an unclosed [ of an IPv6 address
        raise UsageError(f"--mqtt {url!r} cannot be read ({exc}); {EXAMPLE}") from None
    if parts.scheme not in PORTS or not parts.hostname:
        raise UsageError(f"--mqtt {url!r} is not mqtt://HOST[:PORT] or mqtts://HOST[:PORT] (TLS); {EXAMPLE}")
    if parts.username or parts.password:
        raise UsageError(
            f"--mqtt {parts.scheme}://...@{parts.hostname}: the address carries no login; give it with "
            "--mqtt-user and --mqtt-password-file (a command line is visible to every user)"
        )
    try:
        port = parts.port or PORTS[parts.scheme]
    except ValueError:  # not a number, or over 65535
        port = 0
    if not 0 < port < 65536:
        raise UsageError(f"--mqtt {url!r} cannot be read: the port must be 1-65535; {EXAMPLE}")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise UsageError(f"--mqtt {url!r} must be only a broker address (no path or query); {EXAMPLE}")
    return parts.hostname, port, parts.scheme == "mqtts"


def existing_file(option: str, path: str | Path, what: str) -> Path:
    """`path` (``~`` expanded) if it is a file; else :class:`UsageError` ``OPTION 'PATH': no such file; give WHAT``.

    The error names the absolute path looked at (a config file's relative path is relative to the
    config file, not to where the command runs), and says so when it is a directory.
    """
    found = Path(path).expanduser()
    if not found.is_file():
        shown = str(found.absolute())
        why = "is a directory, not a file" if found.is_dir() else "no such file"
        raise UsageError(f"{option} {shown!r}: {why}; give {what}")
    return found


def read_password(path: str | Path) -> str:
    """The first line of `path` (the broker password).

    Raises
    ------
    UsageError
        If the file is missing, unreadable or its first line empty.
    """
    path = existing_file("--mqtt-password-file", path, "the file whose first line is the broker password")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or str(exc)
        raise UsageError(f"--mqtt-password-file {str(path)!r} cannot be read: {why}") from None
    if not lines or not lines[0]:
        raise UsageError(f"--mqtt-password-file {str(path)!r} is empty: write the password on its first line")
    return lines[0]


def check_ca(path: str | Path) -> Path:
    """`path` if it is a CA certificate file (PEM) that TLS can load; else :class:`UsageError`."""
    ca = existing_file("--mqtt-ca", path, "the café's CA certificate (PEM)")
    try:
        ssl.create_default_context(cafile=str(ca))
    except (ssl.SSLError, OSError, ValueError) as exc:
        raise UsageError(f"--mqtt-ca {str(ca)!r} is not a CA certificate (PEM): {exc}") from None
    return ca


#: What a TLS handshake with a plain MQTT listener ends in: it reads the ClientHello as a bad MQTT
#: packet and closes the connection (a reset, or an EOF in the middle of the handshake).
NOT_TLS = "TLS error: the broker does not speak TLS on this port?"


def tls_to_plain_port(exc: BaseException) -> bool:
    """Whether `exc`, raised by a TLS connect, looks like a plain (non-TLS) listener hanging up on it."""
    return isinstance(exc, ConnectionResetError | BrokenPipeError | ssl.SSLEOFError | ssl.SSLZeroReturnError) or (
        isinstance(exc, ssl.SSLError) and "WRONG_VERSION_NUMBER" in str(exc)
    )


def add_broker_options(
    g: argparse.ArgumentParser | argparse._ArgumentGroup, *, required: bool, purpose: str, ca_help: str
) -> None:
    """Add ``--mqtt URL``, ``--mqtt-user``, ``--mqtt-password-file`` and ``--mqtt-ca`` to `g`.

    ``required``: whether ``--mqtt`` must be given (the leaderboard) or may come from elsewhere
    (``play``'s config file). ``purpose``: what the broker is for, ``ca_help``: what ``--mqtt-ca``
    does, on this side.
    """
    g.add_argument(
        "--mqtt",
        required=required,
        default=None,
        metavar="URL",
        help=f"{purpose}: mqtt://HOST[:PORT] (default port 1883) or mqtts://HOST[:PORT] (TLS, 8883)",
    )
    g.add_argument("--mqtt-user", default=None, metavar="USER", help="the broker login name")
    g.add_argument(
        "--mqtt-password-file",
        default=None,
        type=Path,
        metavar="PATH",
        help="file whose first line is the broker password (needs --mqtt-user)",
    )
    g.add_argument("--mqtt-ca", default=None, type=Path, metavar="PEM", help=ca_help)


def configure_client(
    client: Any,
    *,
    user: str | None,
    password: str | None,
    tls: bool,
    ca: Path | None = None,
    cert: Path | None = None,
    key: Path | None = None,
) -> None:
    """Apply a login and TLS to a paho ``mqtt.Client`` (``ca`` None: the system's CAs).

    Raises
    ------
    UsageError
        If the CA, the client certificate or its key cannot be loaded.
    """
    if user:
        client.username_pw_set(user, password)
    if not tls:
        return
    try:
        client.tls_set(
            ca_certs=str(ca) if ca else None,
            certfile=str(cert) if cert else None,
            keyfile=str(key) if key else None,
        )
    except (ssl.SSLError, OSError, ValueError) as exc:
        if cert is None and ca is not None:
            raise UsageError(f"--mqtt-ca {str(ca)!r} is not a CA certificate (PEM): {exc}") from None
        raise UsageError(f"TLS setup failed ({exc}); check --mqtt-ca, --mqtt-cert and --mqtt-key") from None
