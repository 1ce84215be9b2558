"""``dicetable leaderboard``: the café's leaderboard, fed by every table on one MQTT broker.

Subscribes to ``dicetable/+/#`` (schema v1, docs/mqtt.md) with a persistent session, keeps every
game once in its own SQLite store (``--db``; default ``$DICETABLE_LEADERBOARD_DB``, else
~/.local/share/dicetable/leaderboard.sqlite3) and serves a read-only page for the café's TV at
http://ADDR:PORT/ with a JSON API (/api/tables, /api/leaderboard, /api/players). It runs until
Ctrl-C or SIGTERM; a broker that is down or drops the connection is retried, and the page says
"broker: <why>" meanwhile. How to run it on a Pi, a NAS or a laptop: docs/leaderboard.md.
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

from table.commands._running import run_until_stopped
from table.errors import UsageError
from table.leaderboard.broker import add_mqtt_options
from table.store.paths import own_db_path

DB_ENV = "DICETABLE_LEADERBOARD_DB"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``leaderboard`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "leaderboard",
        help="the café's leaderboard: every table's games from an MQTT broker, a page for the TV",
        description=__doc__.replace("``", ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_mqtt_options(p)
    p.add_argument(
        "--listen",
        default="127.0.0.1",
        metavar="ADDR[:PORT]",
        help="address to serve the page on (default 127.0.0.1; 0.0.0.0 for the TV and phones on the LAN);"
        " ADDR:PORT also sets the port",
    )
    p.add_argument("--port", type=int, default=8080, help="port of the page (default 8080; 0: any free port)")
    p.add_argument("--db", default=None, metavar="PATH", help=f"the leaderboard's store (default ${DB_ENV})")
    p.add_argument(
        "--client-id",
        default=None,
        metavar="ID",
        help="the MQTT session's name (default: from this machine's name and --db; keep it fixed)",
    )
    p.add_argument("--duration", type=float, default=None, metavar="S", help="stop after S seconds (tests)")
    p.set_defaults(func=run)


def db_path(args: argparse.Namespace) -> Path:
    """``--db``, else ``$DICETABLE_LEADERBOARD_DB``, else leaderboard.sqlite3 beside the table's own store."""
    chosen = args.db or os.environ.get(DB_ENV)
    return Path(chosen).expanduser() if chosen else own_db_path().with_name("leaderboard.sqlite3")


def listen_address(listen: str, port: int) -> tuple[str, int]:
    """``(host, port)`` from ``--listen ADDR`` or ``--listen ADDR:PORT`` (``[v6]:PORT`` too) and ``--port``.

    Raises
    ------
    UsageError
        If the port (of either option) is not 0-65535 or is not a number.
    """
    from table.commands._live import check_port  # here: _live imports numpy, which `dicetable --help` need not

    host = listen
    if listen.startswith("[") and "]" in listen:  # [::1] or [::1]:8080
        host, _, rest = listen[1:].partition("]")
        if rest:
            if not rest.startswith(":"):
                raise UsageError(f"--listen {listen!r} is not ADDR or ADDR:PORT")
            port = _port_number(listen, rest[1:])
    elif listen.count(":") == 1:  # one colon: ADDR:PORT (an IPv6 address has two or more)
        host, text = listen.split(":")
        port = _port_number(listen, text)
    check_port(port)
    return host, port


def _port_number(listen: str, text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise UsageError(f"--listen {listen!r}: {text!r} is not a port number (give ADDR or ADDR:PORT)") from None
    if not 0 <= port <= 65535:
        raise UsageError(f"--listen {listen!r}: the port must be 0-65535 (0: any free port)")
    return port


def run(args: argparse.Namespace) -> int:
    """Serve until stopped; return 0."""
    from table.leaderboard.broker import broker_options
    from table.leaderboard.service import Leaderboard

    args.listen, args.port = listen_address(args.listen, args.port)
    opts = broker_options(args)
    # the service's lines (connected, lost, dropped, missing events) on stderr with the time, INFO and up
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s leaderboard: %(message)s", "%H:%M:%S"))
    log = logging.getLogger("table.leaderboard")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        board = Leaderboard(db_path(args), opts, host=args.listen, port=args.port, client_id=args.client_id).start()
        print(f"leaderboard on {board.url} (store {board.store.path}); subscribing to {opts.where}", flush=True)
        try:
            run_until_stopped(args.duration)
        finally:
            board.close()
    finally:
        log.removeHandler(handler)
    return 0
