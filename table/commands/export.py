"""``dicetable export GAME_ID``: write one stored game as JSON (replay format) or CSV.

JSON is the whole-game format of the spec's vectors (``dicetable replay`` of
an export reproduces its totals); CSV is the scorecards: one row per box, one
column per player, then the bonuses and totals.  Output goes to stdout, or to
``--output FILE``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from table.commands.games import add_db_option, open_for_reading
from table.errors import UsageError
from table.game.export import game_to_csv, game_to_json

FORMATS = ("json", "csv")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``export`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "export", help="write a stored game as JSON (replay format) or CSV scorecards",
        description=__doc__.replace('``', ''), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("game_id", metavar="GAME_ID", help="the game's id (see 'dicetable games')")
    parser.add_argument("--format", default="json", metavar="FORMAT",
                        help="json (default) or csv")
    parser.add_argument("--output", "-o", metavar="FILE", default=None,
                        help="write here instead of to stdout")
    add_db_option(parser)
    parser.set_defaults(func=run)


def parse_game_id(text: str) -> int:
    """Read a game id (a whole number >= 1); raise :class:`UsageError` otherwise."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1 or str(value) != text.strip():
        raise UsageError(f"game id {text!r} is not a game number; give the ID column "
                         "of 'dicetable games', e.g. 3")
    return value


def run(args: argparse.Namespace) -> int:
    """Export the game; return 0."""
    fmt = str(args.format).lower()
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {args.format!r}; choose json or csv")
    game_id = parse_game_id(args.game_id)
    with open_for_reading(args) as store:
        state = store.load(game_id)
    if fmt == "json":
        text = json.dumps(game_to_json(state, f"game-{game_id}"), indent=1) + "\n"
    else:
        text = game_to_csv(state)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        print(text, end="")
    return 0
