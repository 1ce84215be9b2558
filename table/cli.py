"""The ``dicetable`` command line.

Each subcommand lives in its own module under :mod:`table.commands` and exposes
``register(subparsers)``, which adds its parser and sets ``func`` (a callable
taking the parsed :class:`argparse.Namespace` and returning an exit status).

Exit status: 0 on success, 2 on bad input (one clear line on stderr, never a
traceback or argparse's usage block: :class:`table.cli_parser.OneLineParser`), 1 when a
command ran but found a failure it reports (e.g. a benchmark target missed, where a command
says so), 141 (128 + SIGPIPE, as a shell reports) when the reader of stdout went away,
e.g. ``dicetable advise ... | head``: then nothing more is written, not even an error.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from table.cli_parser import OneLineParser
from table.errors import DicetableError
from vision.errors import VisionError

#: Subcommand modules, in the order ``dicetable --help`` lists them.
COMMAND_MODULES = (
    "demo",
    "read",
    "eval",
    "options",
    "replay",
    "games",
    "export",
    "audit",
    "strategy",
    "advise",
    "calibrate",
    "watch",
    "play",
    "bench",
    "doctor",
    "leaderboard",
)


def build_parser() -> argparse.ArgumentParser:
    """Return the top-level parser with every subcommand registered."""
    parser = OneLineParser(
        prog="dicetable",
        description=(
            "Dice-reading table: read the pips on d6 dice in photos or from a camera, "
            "and keep Yahtzee, Yacht, Chaser, Yatzy and Generala scorecards."
        ),
        epilog="Run 'dicetable COMMAND --help' for the options of one command.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"table.commands.{name}")
        module.register(subparsers)
    return parser


#: Exit status when stdout's reader closed the pipe (128 + SIGPIPE).
EXIT_BROKEN_PIPE = 141


def _quiet_stdout() -> None:
    """Point stdout at /dev/null after a broken pipe, so that Python's flush at exit cannot fail again.

    As the Python docs advise (signal module, "Note on SIGPIPE").
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout is not a file (e.g. replaced in tests): nothing to silence
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (also used as the script's)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status = args.func(args)
        sys.stdout.flush()  # a closed pipe is found here, not at exit
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except (DicetableError, VisionError, ValueError, OSError) as exc:
        print(f"dicetable {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"dicetable {args.command}: interrupted", file=sys.stderr)
        return 130
    return int(status or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
