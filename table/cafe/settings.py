"""The café broker's settings: ``--mqtt URL``, ``--table NAME``, login, TLS, from the command line or the config file.

``dicetable play`` reads them from its options and from the ``[mqtt]`` section of the table's
config file (``--config PATH``, else ``$DICETABLE_CONFIG``, else
``$XDG_CONFIG_HOME/dicetable/table.toml`` when it exists); an option given on the command
line wins over the file. Every bad value is one :class:`~table.errors.UsageError` line that
says what to write instead (docs/mqtt.md, "Settings").

Example config file::

    [mqtt]
    url = "mqtts://cafe-pi.local"   # mqtt:// port 1883, mqtts:// (TLS) port 8883 by default
    table = "window-2"
    user = "window-2"
    password_file = "/home/pi/.config/dicetable/mqtt-password"
    ca = "/home/pi/.config/dicetable/cafe-ca.pem"   # TLS only; default: the system's CAs
    ha_discovery = true
"""

from __future__ import annotations

import argparse
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from table.cafe.broker import add_broker_options, check_ca, parse_broker_url, read_password
from table.errors import UsageError

#: Environment variable naming the table's config file.
CONFIG_ENV = "DICETABLE_CONFIG"
#: A table name: 1-32 letters, digits, ``-`` and ``_`` (docs/mqtt.md); no topic characters ``# + /``.
TABLE_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")
#: Keys of the config file's ``[mqtt]`` section.
CONFIG_KEYS = ("url", "table", "user", "password_file", "ca", "ha_discovery")


@dataclass(frozen=True, slots=True)
class MqttSettings:
    """Where and as whom a table publishes; see the module docstring."""

    host: str
    port: int
    table: str
    tls: bool = False
    ca: Path | None = None
    user: str | None = None
    password: str | None = None
    ha_discovery: bool = False

    @property
    def url(self) -> str:
        """``mqtt://HOST:PORT`` or ``mqtts://HOST:PORT`` (no login: safe to print)."""
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.host}:{self.port}"

    def __repr__(self) -> str:  # the password never reaches a log
        return f"MqttSettings({self.url!r}, table={self.table!r}, user={self.user!r})"


def check_table_name(name: str) -> str:
    """Return `name` if it is a table name (:data:`TABLE_NAME`); else raise :class:`UsageError`."""
    if not TABLE_NAME.fullmatch(name or ""):
        bad = sorted({c for c in name if c in "#+/"})
        why = f"it holds the MQTT topic character{'s' if len(bad) > 1 else ''} {' '.join(bad)}; " if bad else ""
        raise UsageError(
            f"table name {name!r} cannot be used: {why}a table name is 1-32 letters, digits, '-' or '_', "
            "e.g. --table window-2"
        )
    return name


def add_mqtt_options(p: argparse.ArgumentParser) -> None:
    """Add the broker options: ``--mqtt``, ``--table``, login, TLS, ``--ha-discovery`` and ``--config``."""
    g = p.add_argument_group("café sharing (MQTT, docs/mqtt.md)")
    add_broker_options(
        g,
        required=False,
        purpose="publish the table's status, state and game events to this broker",
        ca_help="CA certificate (PEM) for mqtts:// (default: the system's CAs)",
    )
    g.add_argument(
        "--table", default=None, metavar="NAME", help="the table's name on the broker: 1-32 of A-Z a-z 0-9 - _"
    )
    g.add_argument(
        "--ha-discovery",
        action="store_true",
        default=None,
        help="publish Home Assistant MQTT discovery configs (current player, last roll, leader, score)",
    )
    g.add_argument(
        "--config",
        default=None,
        type=Path,
        metavar="PATH",
        help=f"config file with an [mqtt] section (default ${CONFIG_ENV}, else ~/.config/dicetable/table.toml)",
    )


def default_config_path() -> Path:
    """``$DICETABLE_CONFIG``, else ``$XDG_CONFIG_HOME/dicetable/table.toml`` (default ``~/.config``)."""
    env = os.environ.get(CONFIG_ENV)
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME", "")
    return (Path(base) if os.path.isabs(base) else Path.home() / ".config") / "dicetable" / "table.toml"


def read_config(path: Path | None) -> dict[str, Any]:
    """The ``[mqtt]`` section of the config file (``{}`` when the default file is absent).

    Raises :class:`UsageError` for a named file that is missing, unreadable TOML or an unknown key.
    """
    named = path is not None or bool(os.environ.get(CONFIG_ENV))
    path = path if path is not None else default_config_path()
    if not path.is_file():
        if named:
            raise UsageError(f"no config file at {str(path)!r}; give an existing --config PATH")
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"config file {str(path)!r} cannot be read: {exc}; fix it (TOML, docs/mqtt.md)") from None
    section = data.get("mqtt", {})
    if not isinstance(section, dict):
        raise UsageError(f"config file {str(path)!r}: 'mqtt' must be a [mqtt] section")
    unknown = sorted(set(section) - set(CONFIG_KEYS))
    if unknown:
        raise UsageError(
            f"config file {str(path)!r}: unknown key {unknown[0]!r} in [mqtt]; known: {', '.join(CONFIG_KEYS)}"
        )
    base = path.parent
    out = dict(section)
    for key in ("password_file", "ca"):  # relative paths are relative to the config file
        if isinstance(out.get(key), str):
            out[key] = base / Path(out[key]).expanduser()
    return out


def settings_from(args: argparse.Namespace) -> MqttSettings | None:
    """The broker settings of ``play``'s options and config file; None when no broker is named.

    Raises
    ------
    UsageError
        For a bad URL, table name, password file or CA file, or ``--table`` without a broker.
    """
    conf = read_config(getattr(args, "config", None))

    def pick(option: str, key: str) -> Any:
        value = getattr(args, option, None)
        return value if value is not None else conf.get(key)

    url, table = pick("mqtt", "url"), pick("table", "table")
    if not url:
        if table or pick("mqtt_user", "user") or pick("ha_discovery", "ha_discovery"):
            raise UsageError("--table, --mqtt-user and --ha-discovery need a broker: add --mqtt mqtt://HOST[:PORT]")
        return None
    host, port, tls = parse_broker_url(str(url))
    if not table:
        raise UsageError(f"--mqtt {url} needs the table's name on the broker: add --table NAME, e.g. --table window-2")
    ca = pick("mqtt_ca", "ca")
    if ca is not None:
        if not tls:
            raise UsageError(f"--mqtt-ca is for TLS: write the broker as mqtts://{host}:{port}")
        ca = check_ca(ca)
    user = pick("mqtt_user", "user")
    password_file = pick("mqtt_password_file", "password_file")
    password = None
    if password_file is not None:
        if not user:
            raise UsageError("--mqtt-password-file needs --mqtt-user (the broker's login name)")
        password = read_password(password_file)
    return MqttSettings(
        host=host,
        port=port,
        table=check_table_name(str(table)),
        tls=tls,
        ca=ca,
        user=str(user) if user else None,
        password=password,
        ha_discovery=bool(pick("ha_discovery", "ha_discovery")),
    )
