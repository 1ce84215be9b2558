"""``dicetable demo``: a whole game on synthetic tray pictures read by the pip reader."""

from __future__ import annotations

import argparse

from table.demo import MAX_PLAYERS, play_demo
from table.rules import RULESET_IDS


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``demo`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "demo",
        help="play a whole game on synthetic tray pictures read by the pip reader",
        description=(
            "Play a whole game without a camera: each throw of five dice is drawn as a "
            "tray picture, read by the real pip reader, and played by a simple built-in "
            "player (held dice stay put, re-rolled dice land anew). Unknown or missing "
            "dice are re-read with the tray nudged, then typed in from the truth. Ends "
            "with the score table and how well the reader did. For now the demo always "
            "prints to the terminal; a web display will become the default later, and "
            "--headless will keep the terminal-only output."
        ),
    )
    parser.add_argument("--headless", action="store_true",
                        help="terminal output only (currently the only display; accepted for scripts)")
    parser.add_argument("--rules", default="yahtzee", metavar="ID",
                        help=f"ruleset: {', '.join(RULESET_IDS)} (default yahtzee)")
    parser.add_argument("--players", type=int, default=2, metavar="N",
                        help=f"number of players, 1-{MAX_PLAYERS} (default 2)")
    parser.add_argument("--seed", type=int, default=0, metavar="S",
                        help="seed of dice, tray and pictures; same seed, same game (default 0)")
    parser.add_argument("--max-reads", type=int, default=3, metavar="N",
                        help="pictures of one throw before the true values are typed in (default 3)")
    parser.add_argument("--bots", default="", metavar="LEVELS",
                        help="computer players for the first seats, comma-separated levels "
                             "easy, medium, optimal (e.g. optimal,easy); other seats use the "
                             "built-in player")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Play the demo game; exit status 0."""
    bots = [b.strip() for b in args.bots.split(",") if b.strip()]
    play_demo(rules=args.rules, players=args.players, seed=args.seed, max_reads=args.max_reads,
              bots=bots)
    return 0
