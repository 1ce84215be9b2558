"""``play``'s options for the turn timer and free roll, the hold LEDs' state for a snapshot, and the line
``play`` prints when a game finishes."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from table.errors import UsageError
from table.game import TIMER_CHOICES

#: ``--rules`` names of free-roll mode.
FREE_NAMES = ("free", "free_roll")


def add_turn_options(p: argparse.ArgumentParser) -> None:
    """Add ``--timer`` and ``--dice``."""
    p.add_argument(
        "--timer",
        default=None,
        metavar="SECONDS",
        help=f"turn timer of a new game: {', '.join(map(str, TIMER_CHOICES))} (when it runs out the open box "
        "worth the most is scored; before a roll it only warns); default none",
    )
    p.add_argument(
        "--dice",
        type=int,
        default=None,
        metavar="N",
        help="free roll: most dice in one throw (default and limit: the calibration profile's dice_count)",
    )


def parse_timer(text: str | None, free: bool = False) -> int | None:
    """``--timer``: one of :data:`TIMER_CHOICES` seconds, or None when not given.

    Raises
    ------
    UsageError
        If it is not offered, or given for a free roll (one line saying what is allowed).
    """
    if text is None:
        return None
    if free:
        raise UsageError("a free roll has no turn timer: leave out --timer")
    value = text.strip()
    if not (value.isdigit() and int(value) in TIMER_CHOICES):
        raise UsageError(
            f"--timer {text!r} is not offered: give {', '.join(map(str, TIMER_CHOICES))} seconds, or leave it out"
        )
    return int(value)


def check_dice(n: int | None, limit: int) -> int:
    """``--dice``: most dice in a free roll, 1 to the tray's `limit` (default `limit`); else one line."""
    if n is None:
        return limit
    if not 1 <= n <= limit:
        raise UsageError(
            f"--dice {n}: this tray takes 1 to {limit} dice (the calibration profile's dice_count; "
            "'dicetable calibrate' sets it)"
        )
    return n


def led_state(snap: dict[str, Any]) -> tuple[tuple[bool, ...], bool]:
    """The hold LEDs for a snapshot: the holds, and whether they blink (the turn timer's last seconds)."""
    holds = tuple((snap.get("game") or {}).get("holds") or ())
    return holds, bool((snap.get("timer") or {}).get("warn"))


def game_over_line(snap: dict[str, Any], game_id: int) -> str:
    """The terminal's line for a finished game's snapshot: winner, scores, the game id, and what comes next."""
    game = snap.get("game") or {}
    winners = game.get("winners") or []
    scores = ", ".join(f"{p['name']} {p['total']}" for p in game.get("players") or [])
    won = f"{' and '.join(winners)} {'tie' if len(winners) > 1 else 'wins'}" if winners else "no winner"
    return (
        f"dicetable: game {game_id} finished: {won} ({scores}); 'dicetable export {game_id}' and "
        f"'dicetable audit {game_id}' read it. The table shows the scores; ROLL goes to its setup screen "
        "for the next game; Ctrl-C stops dicetable"
    )


def announce_games(app: Any, say: Callable[[str], None] | None = None) -> Any:
    """Print :func:`game_over_line` once per finished game (from the app's snapshot listener); return `app`.

    Call it before ``app.start()``: a bots-only game can finish before the next line runs.
    """
    told: set[int] = set()
    out = say or (lambda line: print(line, file=sys.stderr, flush=True))

    def listen(seq: int, snap: dict[str, Any]) -> None:
        game_id = getattr(app.session, "game_id", None)
        if snap.get("screen") == "end" and game_id is not None and game_id not in told:
            told.add(game_id)
            out(game_over_line(snap, game_id))

    app.subscribe(listen)
    return app
