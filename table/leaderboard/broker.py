"""The leaderboard's broker options: :class:`BrokerOptions` from ``--mqtt`` and the login and TLS options.

The address, password file and CA checks and the paho calls are the café's (:mod:`table.cafe.broker`,
shared with the tables). Here: ``mqtts://`` (port 8883) turns TLS on, verified against the
system's CAs unless ``--mqtt-ca`` names another (which also turns TLS on for ``mqtt://``); a
client certificate goes with ``--mqtt-cert``/``--mqtt-key``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from table.cafe import broker
from table.errors import UsageError


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


def add_mqtt_options(p: argparse.ArgumentParser) -> None:
    """Add ``--mqtt`` (required), the login and the TLS options (with a client certificate)."""
    broker.add_broker_options(
        p, required=True, purpose="the broker", ca_help="CA certificate(s) to verify the broker (turns TLS on)"
    )
    p.add_argument("--mqtt-cert", default=None, type=Path, metavar="PEM", help="client certificate for TLS")
    p.add_argument("--mqtt-key", default=None, type=Path, metavar="PEM", help="the client certificate's key")


def broker_options(args: Any) -> BrokerOptions:
    """:class:`BrokerOptions` from the parsed ``--mqtt*`` options (the files checked before anything starts).

    Raises
    ------
    UsageError
        For a bad URL, a file that cannot be read, a key without a certificate or a password without a user.
    """
    host, port, tls = broker.parse_broker_url(args.mqtt)
    password_file = getattr(args, "mqtt_password_file", None)
    if password_file is not None:
        if not args.mqtt_user:
            raise UsageError("--mqtt-password-file needs --mqtt-user (the broker's login name)")
        broker.read_password(password_file)  # told now, not when the subscriber connects
    ca = broker.check_ca(args.mqtt_ca) if getattr(args, "mqtt_ca", None) is not None else None
    cert, key = (getattr(args, name, None) for name in ("mqtt_cert", "mqtt_key"))
    if key is not None and cert is None:
        raise UsageError("--mqtt-key needs --mqtt-cert (the client certificate it belongs to)")
    return BrokerOptions(
        host=host,
        port=port,
        tls=tls or ca is not None or cert is not None,
        user=args.mqtt_user,
        password_file=Path(password_file).expanduser() if password_file is not None else None,
        ca=ca,
        cert=broker.existing_file("--mqtt-cert", cert, "the client certificate (PEM)") if cert else None,
        key=broker.existing_file("--mqtt-key", key, "the client certificate's key (PEM)") if key else None,
    )


def configure_client(client: Any, opts: BrokerOptions) -> None:
    """Apply the login and TLS of ``opts`` to a paho ``mqtt.Client`` (:func:`table.cafe.broker.configure_client`).

    Raises
    ------
    UsageError
        If the password file or a TLS file cannot be read.
    """
    password = broker.read_password(opts.password_file) if opts.user and opts.password_file else None
    broker.configure_client(
        client, user=opts.user, password=password, tls=opts.tls, ca=opts.ca, cert=opts.cert, key=opts.key
    )
