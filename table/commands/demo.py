"""``dicetable demo``: a whole game on synthetic tray pictures read by the pip reader."""

from __future__ import annotations

import argparse

from table.demo.headless import MAX_PLAYERS, play_demo
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
            "with the score table and how well the reader did (--headless). Without "
            "--headless the demo runs the table app itself: the synthetic camera, the roll "
            "watcher with the real pip reader, the game and the display page (open the "
            "printed address), played by the built-in player pressing the table's buttons; "
            "it ends --linger seconds (default 5) after the game. At the default --speed 6 the "
            "game took 50-60 s on a 2-core x86 machine, most of it drawing and reading the "
            "trays, so a slower computer takes longer."
        ),
    )
    parser.add_argument(
        "--headless",
        action="store_true",
        help="terminal output only: rendered trays read one by one, no page, no camera stream",
    )
    parser.add_argument(
        "--speed",
        type=float,
        default=6.0,
        metavar="X",
        help="pace of the served demo: 1 is a person's pace, 2 twice as fast (default 6: "
        "about a minute's game on a 2-core machine, longer where drawing and reading "
        "the trays is slower)",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=8000,
        help="port of the page (default 8000, or any free one when taken; 0: any free port)",
    )
    parser.add_argument(
        "--linger", type=float, default=5.0, metavar="S", help="seconds the page stays up after the game (default 5)"
    )
    parser.add_argument(
        "--rules", default="yahtzee", metavar="ID", help=f"ruleset: {', '.join(RULESET_IDS)} (default yahtzee)"
    )
    parser.add_argument(
        "--players", type=int, default=2, metavar="N", help=f"number of players, 1-{MAX_PLAYERS} (default 2)"
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="S",
        help="seed of dice, tray and pictures; same seed, same game (default 0)",
    )
    parser.add_argument(
        "--max-reads",
        type=int,
        default=3,
        metavar="N",
        help="pictures of one throw before the true values are typed in (default 3)",
    )
    parser.add_argument(
        "--bots",
        default="",
        metavar="LEVELS",
        help="computer players for the first seats, comma-separated levels "
        "easy, medium, optimal (e.g. optimal,easy); other seats use the "
        "built-in player",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Play the demo game; exit status 0."""
    from vision import chosen_backend

    chosen_backend()  # a bad DICETABLE_ONNX_BACKEND is said now, not at the first throw
    bots = [b.strip().lower() for b in args.bots.split(",") if b.strip()]  # levels as in --players NAME:LEVEL
    if not args.headless:
        from table.commands._live import check_port
        from table.demo.served import serve_demo
        from table.errors import UsageError

        check_port(args.port)
        if not 1 <= args.max_reads <= 10:
            raise UsageError(f"max_reads must be 1 to 10, got {args.max_reads!r}")

        serve_demo(
            rules=args.rules,
            players=args.players,
            seed=args.seed,
            bots=bots,
            speed=args.speed,
            port=args.port,
            linger_s=args.linger,
        )
        return 0
    play_demo(rules=args.rules, players=args.players, seed=args.seed, max_reads=args.max_reads, bots=bots)
    return 0
