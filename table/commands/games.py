"""``dicetable games``: list the stored games (id, ruleset, players, state, started, winner).

The store is ``--db PATH``, else ``$DICETABLE_DB``, else
``~/.local/share/dicetable/games.sqlite3``.  A store that cannot be read
(corrupt, truncated, not a dicetable store) is reported in one line (exit
status 2) and left as it is; the app sets a damaged store aside when it starts.
The store is opened read-only: listing never makes or changes a file (not even
the -wal/-shm files SQLite keeps beside a store), and a store on a full or
read-only disk, or in a folder this user cannot write, is listed all the same.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from table.store import DB_ENV, Store, default_db_path, open_store


def add_db_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--db PATH`` (the game store) to ``parser``."""
    parser.add_argument(
        "--db",
        metavar="PATH",
        default=None,
        help=f"the game store (SQLite); default ${DB_ENV}, else ~/.local/share/dicetable/games.sqlite3",
    )


def db_path(args: argparse.Namespace) -> Path:
    """The store path chosen by ``--db`` or the defaults."""
    return Path(args.db).expanduser() if args.db else default_db_path()


def open_for_reading(args: argparse.Namespace) -> Store:
    """Open the chosen store read-only: never made, changed or moved aside.

    Raises
    ------
    StoreError
        If there is no store at the path (or an empty file), or it cannot be
        read (one clear line).
    """
    return open_store(db_path(args), on_corrupt="raise", create=False, readonly=True)


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds))


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``games`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "games",
        help="list the stored games (id, ruleset, players, state, started, winner)",
        description=__doc__.replace("``", ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_db_option(parser)
    parser.add_argument(
        "--json",
        action="store_true",
        help="print a JSON list of {id, mode, ruleset, players, status, "
        "started_at, updated_at, winners, events} instead of a table",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the games list; return 0."""
    path = db_path(args)
    if not path.exists() or (path.is_file() and path.stat().st_size == 0):
        why = "is an empty file" if path.exists() else "does not exist"
        print("[]" if args.json else f"no games stored yet ({path} {why})")
        return 0
    with open_for_reading(args) as store:
        games = store.games()
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "id": g.id,
                        "mode": g.mode,
                        "ruleset": g.ruleset,
                        "players": list(g.players),
                        "status": g.status,
                        "started_at": g.started_at,
                        "updated_at": g.updated_at,
                        "winners": list(g.winners),
                        "events": g.events,
                    }
                    for g in games
                ]
            )
        )
        return 0
    if not games:
        print(f"no games stored yet in {path}")
        return 0
    rows = [("ID", "RULESET", "PLAYERS", "STATE", "STARTED", "WINNER")]
    for g in games:
        rows.append(
            (
                str(g.id),
                g.ruleset or g.mode,
                ", ".join(g.players) or "-",
                g.status,
                _when(g.started_at),
                " & ".join(g.winners) or "-",
            )
        )
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    for r in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
    return 0
