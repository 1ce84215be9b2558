"""``dicetable games``: not built yet (placeholder while the game engine lands)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``games`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser("games", help="(not built yet)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Say that the command is not built yet; exit status 2."""
    raise NotImplementedError("'dicetable games' is not built yet")
