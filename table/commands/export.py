"""``dicetable export GAME_ID``: write one stored game as JSON (replay format) or CSV.

JSON is the whole-game format of the spec's vectors (``dicetable replay`` of
an export reproduces its totals); CSV is the scorecards: one row per box, one
column per player, then the bonuses and totals.  Output goes to stdout, or to
``--output FILE``.

With ``--history`` it is the game round by round instead: each throw's dice, the holds it was made with, the
dice re-rolled, the box scored, corrections of misread dice (who, old and new value) and turn-timer expiries
(JSON: ``{"turns": [...]}``; CSV: one row per throw).

With ``--analysis`` the export is the game's analysis instead: every hold and
box decision priced against optimal play (expected final score of the choice
made and of the best one, and the loss in points), then each player's total
loss.  ``--format text`` (the default with ``--analysis``) prints it as a
table; ``json`` and ``csv`` give it for programs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from table.commands.games import add_db_option, open_for_reading
from table.errors import UsageError
from table.game.export import game_to_csv, game_to_json, history_to_csv, history_to_json
from table.game.history import turns_of

FORMATS = ("json", "csv")
#: Formats of ``--analysis``.
ANALYSIS_FORMATS = ("text", "json", "csv")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``export`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "export",
        help="write a stored game as JSON (replay format) or CSV scorecards",
        description=__doc__.replace("``", ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "game_id",
        metavar="GAME_ID",
        help="the game's id (see 'dicetable games'): 3, or game-3 as the JSON export writes it",
    )
    parser.add_argument(
        "--format",
        default=None,
        metavar="FORMAT",
        help="json (default) or csv; with --analysis: text (default), json or csv",
    )
    parser.add_argument(
        "--analysis",
        action="store_true",
        help="write each decision's expected-score loss against optimal play and "
        "each player's total, instead of the game",
    )
    parser.add_argument(
        "--history",
        action="store_true",
        help="write the game round by round (throws, holds, re-rolled dice, boxes, corrections, timer)",
    )
    parser.add_argument("--output", "-o", metavar="FILE", default=None, help="write here instead of to stdout")
    add_db_option(parser)
    parser.set_defaults(func=run)


#: Largest game id: SQLite's largest integer (a larger one raised OverflowError from the store).
MAX_GAME_ID = 2**63 - 1

#: Prefix of the ``id`` the JSON export writes (``game-3``); accepted back as a GAME_ID.
ID_PREFIX = "game-"


def parse_game_id(text: str) -> int:
    """Read a game id: a whole number 1 to :data:`MAX_GAME_ID`, or the export's ``game-N``; raise
    :class:`UsageError` otherwise."""
    digits = text.strip()
    if digits.startswith(ID_PREFIX):
        digits = digits[len(ID_PREFIX) :]
    shown = repr(text) if len(text) <= 40 else repr(text[:40]) + "..."
    if digits.isascii() and digits.isdigit() and (len(digits) > 19 or int(digits) > MAX_GAME_ID):
        raise UsageError(
            f"game id {shown} is larger than any game number (at most {MAX_GAME_ID}); "
            "give the ID column of 'dicetable games', e.g. 3"
        )
    try:
        value = int(digits)
    except ValueError:
        value = 0
    if value < 1 or str(value) != digits:
        raise UsageError(
            f"game id {shown} is not a game number; give the ID column "
            f"of 'dicetable games' or the export's id, e.g. 3 or {ID_PREFIX}3"
        )
    return value


def check_output_path(text: str | None, example: str) -> Path | None:
    """The ``--output`` file, checked before anything is read; None for stdout.

    Parameters
    ----------
    text : str or None
        The ``--output`` value.
    example : str
        A file name to suggest when `text` is a folder (e.g. ``game-3.json``).

    Raises
    ------
    UsageError
        If the path is a folder, or its folder does not exist.
    """
    if not text:
        return None
    path = Path(text).expanduser()
    if path.is_dir():
        raise UsageError(f"--output {text!r} is a folder; give a file path, e.g. --output {str(path / example)!r}")
    if not path.parent.is_dir():
        raise UsageError(
            f"--output {text!r}: the folder {str(path.parent)!r} does not exist; "
            "make it first or give another file path"
        )
    return path


def run(args: argparse.Namespace) -> int:
    """Export the game (or its analysis); return 0."""
    analysis = bool(getattr(args, "analysis", False))
    allowed = ANALYSIS_FORMATS if analysis else FORMATS
    fmt = str(args.format or allowed[0]).lower()
    if fmt not in allowed:
        raise UsageError(
            f"unknown format {args.format!r}{' for --analysis' if analysis else ''}; choose {' or '.join(allowed)}"
        )
    game_id = parse_game_id(args.game_id)
    output = check_output_path(args.output, f"{ID_PREFIX}{game_id}.{'txt' if fmt == 'text' else fmt}")
    history = bool(getattr(args, "history", False))
    if analysis and history:
        raise UsageError("give --history or --analysis, not both")
    with open_for_reading(args) as store:
        state = store.load(game_id)
        events = store.events(game_id) if analysis or history else ()
    if history:
        turns = turns_of(events)
        text = json.dumps(history_to_json(turns), indent=1) + "\n" if fmt == "json" else history_to_csv(turns)
    elif analysis:
        text = analysis_text(events, fmt)
    elif fmt == "json":
        text = json.dumps(game_to_json(state, f"{ID_PREFIX}{game_id}"), indent=1) + "\n"
    else:
        text = game_to_csv(state)
    if output is not None:
        existed = output.exists()
        try:
            write_whole(output, text)
        except OSError as exc:
            kept = "the file there is left as it was" if existed else "nothing was written"
            raise UsageError(
                f"cannot write --output {str(output)!r}: {_why_not_written(exc, output)}; {kept}"
            ) from None
    else:
        print(text, end="")
    return 0


def _why_not_written(exc: OSError, path: Path) -> str:
    """What stopped a write to `path`, and what to do, by the error's errno (ENOSPC alone means a full disk)."""
    import errno

    folder = str(path.parent)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return "the disk is full; free some space or give a folder on another disk"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"the folder {folder!r} is not writable; give a folder you can write to"
    if exc.errno == errno.ENOENT:
        return f"the folder {folder!r} does not exist or cannot hold files; give a folder you can write to"
    return f"{exc.strerror or exc}; give a folder you can write to"


def write_whole(path: Path, text: str) -> None:
    """Write `text` (UTF-8) to `path` whole or not at all: into a temporary file beside it, flushed to
    disk, then renamed over it, so a kill or a full disk mid-write leaves the previous file as it was
    (writing in place left it at 0 bytes).

    Raises
    ------
    OSError
        If it cannot be written (the temporary file is removed).
    """
    import os
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if path.exists():  # keep the file's permissions (mkstemp makes it 0600)
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def analysis_text(events: tuple[Any, ...], fmt: str) -> str:
    """The analysis of a game log as ``text``, ``json`` or ``csv``.

    Raises
    ------
    ValueError
        If the game is a free-roll session.
    FileNotFoundError
        If no value table of the game's ruleset and variant exists (run ``dicetable strategy``).
    """
    from table.strategy.analysis import analyse_events

    a = analyse_events(events)
    if fmt == "json":
        return json.dumps(a.to_json(), indent=1) + "\n"
    if fmt == "csv":
        return a.to_csv()
    rows = [("turn", "player", "roll", "dice", "choice", "best choice", "loss")]
    for d in a.decisions:
        rows.append(
            (
                str(d.turn),
                d.name,
                str(d.roll),
                " ".join(map(str, d.dice)),
                a.describe(d),
                "" if d.optimal else a.describe(d, "best"),
                "" if d.optimal else f"{d.loss:.2f}",
            )
        )
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.append("")
    state = "finished" if a.finished else "not finished"
    lines.append(f"{a.ruleset} ({a.variant}), {state}: expected points lost against optimal play")
    for p in a.players:
        lines.append(
            f"  {p.name}: {p.loss:.2f} points lost over {p.decisions} decisions ({p.optimal} optimal); score {p.score}"
        )
    return "\n".join(lines) + "\n"
