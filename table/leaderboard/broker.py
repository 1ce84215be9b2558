"""Where the broker is and how to log in: ``--mqtt mqtt[s]://HOST[:PORT]``, a user, a password file, TLS.

:func:`parse_broker_url` checks the address; :func:`configure_client` applies the login and TLS
options to a paho client. ``mqtts://`` (port 8883) turns TLS on, verified against the system's
CAs unless ``--mqtt-ca`` names another; a client certificate goes with ``--mqtt-cert``/``--mqtt-key``.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from table.errors import UsageError

DEFAULT_PORTS = {"mqtt": 1883, "mqtts": 8883}


@dataclass(frozen=True, slots=True)
class BrokerOptions:
    """A broker's address and login.

    ``password_file``: its first line is the password (kept out of ``ps`` and shell history).
    ``ca``, ``cert``, ``key``: PEM files for TLS (``ca`` alone also turns TLS on for ``mqtt://``).
    """

    host: str
    port: int
    tls: bool = False
    user: str | None = None
    password_file: Path | None = None
    ca: Path | None = None
    cert: Path | None = None
    key: Path | None = None

    @property
    def where(self) -> str:
        """``host:port`` for messages."""
        return f"{self.host}:{self.port}"


def parse_broker_url(url: str) -> tuple[str, int, bool]:
    """``(host, port, tls)`` of ``mqtt://HOST[:PORT]`` or ``mqtts://HOST[:PORT]``.

    Raises
    ------
    UsageError
        If the scheme is another, the host is missing or the port is not 1-65535.
    """
    parsed = urllib.parse.urlsplit(url.strip())
    if parsed.scheme not in DEFAULT_PORTS or not parsed.hostname:
        raise UsageError(f"--mqtt {url!r} is not mqtt://HOST[:PORT] or mqtts://HOST[:PORT] (e.g. mqtt://192.168.1.10)")
    if parsed.username or parsed.password:
        raise UsageError("--mqtt carries no login; give --mqtt-user and --mqtt-password-file")
    try:
        port = parsed.port or DEFAULT_PORTS[parsed.scheme]
    except ValueError:
        port = 0
    if not 0 < port < 65536:
        raise UsageError(f"--mqtt {url!r}: the port must be 1-65535")
    return parsed.hostname, port, parsed.scheme == "mqtts"


def broker_options(args: Any) -> BrokerOptions:
    """:class:`BrokerOptions` from the parsed ``--mqtt*`` options (files checked to exist).

    Raises
    ------
    UsageError
        For a bad URL, a file that cannot be read, or a key without a certificate.
    """
    host, port, tls = parse_broker_url(args.mqtt)
    files = {}
    for name in ("mqtt_password_file", "mqtt_ca", "mqtt_cert", "mqtt_key"):
        value = getattr(args, name, None)
        if value is not None and not Path(value).expanduser().is_file():
            raise UsageError(f"--{name.replace('_', '-')} {value}: no such file")
        files[name] = Path(value).expanduser() if value else None
    if files["mqtt_key"] and not files["mqtt_cert"]:
        raise UsageError("--mqtt-key needs --mqtt-cert (the client certificate it belongs to)")
    if files["mqtt_password_file"] and not args.mqtt_user:
        raise UsageError("--mqtt-password-file needs --mqtt-user")
    return BrokerOptions(
        host=host,
        port=port,
        tls=tls or files["mqtt_ca"] is not None or files["mqtt_cert"] is not None,
        user=args.mqtt_user,
        password_file=files["mqtt_password_file"],
        ca=files["mqtt_ca"],
        cert=files["mqtt_cert"],
        key=files["mqtt_key"],
    )


def configure_client(client: Any, opts: BrokerOptions) -> None:
    """Apply the login and TLS of ``opts`` to a paho ``mqtt.Client``.

    Raises
    ------
    UsageError
        If the password file or a TLS file cannot be read.
    """
    if opts.user:
        password = None
        if opts.password_file:
            try:
                password = opts.password_file.read_text().splitlines()[0] if opts.password_file.stat().st_size else ""
            except OSError as exc:
                raise UsageError(f"cannot read --mqtt-password-file {opts.password_file}: {exc.strerror}") from None
        client.username_pw_set(opts.user, password)
    if opts.tls:
        try:
            client.tls_set(
                ca_certs=str(opts.ca) if opts.ca else None,
                certfile=str(opts.cert) if opts.cert else None,
                keyfile=str(opts.key) if opts.key else None,
            )
        except (OSError, ValueError) as exc:
            raise UsageError(f"TLS setup failed ({exc}); check --mqtt-ca, --mqtt-cert and --mqtt-key") from None
