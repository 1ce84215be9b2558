"""``dicetable audit``: are the table's dice fair? Counts per face of the camera-read dice, Pearson's
chi-square test against a fair d6 with its p-value, and how likely the test is to notice a biased die.

Counted: every die the camera read after a throw (re-rolled dice too; a held die is not counted
again). Dice corrected by hand, throws the camera could not read, and typed or on-screen dice are
counted apart, not tested. GAME_ID audits one game; ``--since DATE`` the games started on or after
DATE; neither, every stored game. The method and how to read it: docs/audit.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sqlite3
import sys

from table.audit import Tally, add_game, panel
from table.audit.fairness import fair_dice_test
from table.audit.frames import frames_dir, read_index
from table.commands.games import add_db_option, db_path, open_for_reading
from table.errors import UsageError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``audit`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "audit",
        help="fair-dice audit: counts per face, chi-square test and its power, a plot",
        description=__doc__.replace("``", ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "game", nargs="?", type=int, default=None, metavar="GAME_ID", help="one game (see 'dicetable games')"
    )
    p.add_argument("--since", default=None, metavar="DATE", help="games started on or after DATE (YYYY-MM-DD)")
    p.add_argument("--plot", default=None, metavar="FILE.png", help="draw the counts, expected line and 95 %% bands")
    p.add_argument("--json", action="store_true", help="print the counts and the test as JSON")
    add_db_option(p)
    p.set_defaults(func=run)


def _since(text: str) -> float:
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise UsageError(f"--since {text!r} is not a date; give it as YYYY-MM-DD, e.g. --since 2026-12-01") from None
    return dt.datetime.combine(day, dt.time()).timestamp()


def run(args: argparse.Namespace) -> int:
    """Print the audit; return 0, or 2 when there is nothing to audit (said in one line)."""
    if args.game is not None and args.since is not None:
        raise UsageError("give GAME_ID or --since DATE, not both")
    since = None if args.since is None else _since(args.since)
    path = db_path(args)
    if not path.is_file():
        raise UsageError(f"no game store at {path}; play a game first, or name the store with --db")
    with open_for_reading(args) as store:
        if args.game is not None:
            games = [store.summary(args.game)]
        else:
            games = [g for g in store.games() if since is None or g.started_at >= since]
        folder = frames_dir(path)
        try:
            frames = read_index(folder, [g.id for g in games])
        except sqlite3.Error as exc:
            print(
                f"dicetable audit: the frames index in {folder} cannot be read ({exc}); counting without it",
                file=sys.stderr,
            )
            frames = []
        tally = Tally()
        for g in games:
            unreadable = sum(1 for f in frames if f["game_id"] == g.id and f["kind"] == "unreadable")
            add_game(tally, g.id, store.events(g.id), unreadable)
    what = f"game {args.game}" if args.game is not None else (f"games since {args.since}" if since else "all games")
    if tally.n == 0:
        if not games:
            reason = f"no games since {args.since}" if since is not None else "no games in the store"
        else:
            frames_said = f"{len(frames)} frames" if frames else "no frames"
            reason = f"{what}: no camera-read rolls ({frames_said} kept)"
        hint = "play with the camera ('dicetable play') to audit the dice"
        if args.json:  # still JSON, so a script reading stdout gets the reason
            print(json.dumps({"what": what, "dice": 0, "reason": f"{reason}: nothing to test", "hint": hint}))
        else:
            print(f"dicetable audit: {reason}: nothing to test; {hint}", file=sys.stderr)
        return 2
    result = fair_dice_test(tally.counts)
    if args.plot:
        from table.audit.plot import save

        save(result, args.plot, title=f"Fair-dice audit, {what}")
    if args.json:
        print(json.dumps({"what": what, **panel(tally, frames)}))
        return 0
    print(f"Fair-dice audit of {what}: {tally.n} dice from {tally.reads} camera-read throws")
    print("face      " + "".join(f"{k:>7}" for k in range(1, 7)))
    print("count     " + "".join(f"{c:>7}" for c in tally.counts))
    print(f"expected  {tally.n / 6:>7.1f} each")
    p = "not computed" if result.p is None else f"{result.p:.3g}"
    print(f"Pearson chi-square {result.chi2:.2f} (df 5), p = {p}")
    print(result.verdict)
    print(result.power_line + " (test at 5 %; exact noncentral chi-square)")
    print(
        f"Counted apart: {tally.corrected} corrected dice, {tally.unreadable} unreadable throws, "
        f"{tally.other} typed or on-screen dice."
    )
    print(f"Frames: {len(frames)} kept in {folder}" if frames else "Frames: none kept for these games.")
    if args.plot:
        print(f"Plot: {args.plot}")
    return 0
