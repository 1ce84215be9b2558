"""``dicetable options``: not built yet (placeholder while the first slice lands)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``options`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser("options", help="(not built yet)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Say that the command is not built yet; exit status 2."""
    raise NotImplementedError("'dicetable options' is not built yet")
