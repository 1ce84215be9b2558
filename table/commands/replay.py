"""``dicetable replay``: play a recorded game and print cards, bonuses, totals, winners.

The game file uses the whole-game format of ``shared/specs/vectors_dev.json``::

    {"ruleset": "yahtzee", "joker": "forced",
     "players": [{"name": "Ann", "turns": [{"dice": [6,6,6,6,6], "box": "yahtzee", "roll": 3}, ...]},
                 {"name": "Bo",  "turns": [...]}]}

Turns are taken round by round: every player's first turn, then every
player's second, and so on.  ``roll`` (1-3, default 3) matters only for
Generala; ``joker`` (default ``forced``) only for Yahtzee.  Fields such as
``expected_points`` are ignored.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from table.errors import UsageError
from table.rules import (
    DEFAULT_JOKER,
    RULESET_IDS,
    Card,
    RulesError,
    Ruleset,
    card_total,
    check_dice,
    check_joker,
    check_roll,
    find_ruleset,
    open_boxes,
    parse_dice,
    place,
    upper_bonus,
    upper_sum,
    winners,
    yahtzee_bonus_points,
)

DESCRIPTION = """\
Play a recorded game and print each player's card, bonuses and total, and the winners.

GAME.json holds one game object in the whole-game format of the spec's vectors file:
{"ruleset": ID, "joker": VARIANT (Yahtzee only, default forced),
 "players": [{"name": NAME, "turns": [{"dice": [1,2,3,4,5], "box": BOX, "roll": 1-3}, ...]}, ...]}
Turns are taken round by round (every player's first turn, then every player's second...).
A file holding {"games": [...]} (like vectors_dev.json) also works: pick one with --game ID.
"""

EPILOG = f"""\
rulesets: {", ".join(RULESET_IDS)}

--json prints {{"players": [{{"name", "boxes": {{...}}, "upper_bonus", "yahtzee_bonus", "total"}}],
"winners": [indexes]}}; yahtzee_bonus is in points (100 per bonus Yahtzee).
An unreadable file or an illegal turn (named by player and turn number) exits with status 2.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``replay`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "replay",
        help="play a recorded game (JSON) and print the cards, totals and winners",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("game", metavar="GAME.json", help="the recorded game (JSON file)")
    parser.add_argument(
        "--game",
        dest="game_id",
        metavar="ID",
        default=None,
        help='pick the game with this "id" from a file holding {"games": [...]}',
    )
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object instead of text")
    parser.set_defaults(func=run)


@dataclass(frozen=True, slots=True)
class PlayerResult:
    """One player's final state after a replay.

    Attributes
    ----------
    name : str
    card : Card
    upper_sum, upper_bonus, yahtzee_bonus, total : int
        Points; ``yahtzee_bonus`` is 100 per bonus Yahtzee.
    """

    name: str
    card: Card
    upper_sum: int
    upper_bonus: int
    yahtzee_bonus: int
    total: int


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """Outcome of :func:`replay_game`.

    Attributes
    ----------
    ruleset : Ruleset
    joker : str
    players : tuple of PlayerResult
        In seating order.
    winners : tuple of int
        Indexes of every player tied on the highest total.
    finished : bool
        True when every player's card is full.
    """

    ruleset: Ruleset
    joker: str
    players: tuple[PlayerResult, ...]
    winners: tuple[int, ...]
    finished: bool

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` object: players (name, boxes, bonuses, total) and winners."""
        return {
            "players": [
                {
                    "name": p.name,
                    "boxes": dict(p.card.boxes),
                    "upper_bonus": p.upper_bonus,
                    "yahtzee_bonus": p.yahtzee_bonus,
                    "total": p.total,
                }
                for p in self.players
            ],
            "winners": list(self.winners),
        }


def load_game(path: str | Path, game_id: str | None = None) -> Mapping[str, Any]:
    """Read one game object from a JSON file.

    Parameters
    ----------
    path : str or Path
        A file holding one game object, or ``{"games": [...]}``.
    game_id : str, optional
        The ``id`` of the game to take from a ``{"games": [...]}`` file
        (needed when it holds more than one).

    Raises
    ------
    UsageError
        If the file is not a regular file, cannot be read, is not JSON (or is nested too deeply to
        parse), or the game cannot be picked.
    """
    if Path(path).exists() and not Path(path).is_file() and not Path(path).is_dir():  # a named pipe would never end
        raise UsageError(
            f"game file {str(path)!r} is not a regular file (a named pipe, device or socket); "
            "give the path of a recorded game JSON file"
        )
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(
            f"cannot read game file {str(path)!r}: {reason}; give the path of a recorded game JSON file"
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"game file {str(path)!r} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:  # lists or objects nested deeper than Python's recursion limit (about 1,000)
        raise UsageError(
            f"game file {str(path)!r} is nested too deeply to be a game; give a recorded game "
            "JSON file (as 'dicetable export' writes)"
        ) from None
    if isinstance(data, dict) and "games" in data and "players" not in data:
        games = data["games"]
        if not isinstance(games, list) or not games:
            raise UsageError(f'game file {str(path)!r}: "games" must be a non-empty list')
        ids = [g.get("id") if isinstance(g, dict) else None for g in games]
        if game_id is None:
            if len(games) == 1:
                return games[0]
            raise UsageError(
                f"game file {str(path)!r} holds {len(games)} games; pick one with "
                f"--game ID, one of: {', '.join(str(i) for i in ids)}"
            )
        for game, gid in zip(games, ids):
            if gid == game_id:
                return game
        raise UsageError(f"no game with id {game_id!r} in {str(path)!r}; the ids are: {', '.join(str(i) for i in ids)}")
    if game_id is not None and isinstance(data, dict) and data.get("id") != game_id:
        if data.get("id") is None:
            raise UsageError(
                f'game file {str(path)!r} holds one game, which has no "id", so --game '
                f"{game_id!r} cannot pick it; leave out --game to replay it"
            )
        raise UsageError(
            f"game file {str(path)!r} holds one game with id {data.get('id')!r}, not "
            f"{game_id!r}; give --game {data.get('id')!r} or leave out --game"
        )
    if not isinstance(data, dict):
        raise UsageError(
            f'game file {str(path)!r} must hold a JSON object with "ruleset" and "players", got {type(data).__name__}'
        )
    return data


def _turn_dice(raw: Any) -> tuple[int, ...]:
    return parse_dice(raw) if isinstance(raw, str) else check_dice(raw)


def _player_name(raw: Any, index: int) -> str:
    """The name to show for player `index` (0-based): a hand-written game file may give none,
    ``null``, ``""`` or spaces (the table itself refuses such names), shown as ``Player N``."""
    name = "" if raw is None else str(raw).strip()
    return name or f"Player {index + 1}"


def replay_game(game: Mapping[str, Any]) -> ReplayResult:
    """Play a game object round by round and return every player's result.

    Parameters
    ----------
    game : Mapping
        ``{"ruleset", "joker" (optional), "players": [{"name", "turns": [{"dice", "box",
        "roll" (optional, default 3)}]}]}``.  Dice may be a list of five ints
        or text such as ``"66666"``. A player with no name, or an empty one,
        is called ``Player N`` (N counting from 1).

    Returns
    -------
    result : ReplayResult

    Raises
    ------
    UsageError
        If the game is malformed or a turn is illegal; the message names the
        player and the turn number (1-based) and gives the reason.
    """
    if not isinstance(game, Mapping):
        raise UsageError('a game must be a JSON object with "ruleset" and "players"')
    if "ruleset" not in game:
        raise UsageError(f'the game has no "ruleset"; give one of: {", ".join(RULESET_IDS)}')
    ruleset = find_ruleset(game["ruleset"])
    joker = check_joker(game.get("joker") or DEFAULT_JOKER)
    players = game.get("players")
    if not isinstance(players, list) or not players:
        raise UsageError('the game needs "players": a non-empty list of {"name": ..., "turns": [...]}')
    names: list[str] = []
    turn_lists: list[list[Any]] = []
    for i, player in enumerate(players):
        if not isinstance(player, Mapping) or not isinstance(player.get("turns"), list):
            raise UsageError(f'player {i + 1} must be an object with "name" and a "turns" list')
        names.append(_player_name(player.get("name"), i))
        turn_lists.append(player["turns"])
    counts = [len(t) for t in turn_lists]
    first = counts[0]
    if any(c not in (first, first - 1) for c in counts) or counts != sorted(counts, reverse=True):
        raise UsageError(
            "turns are out of step: taken round by round, each player must have as many "
            "turns as the players before them or one fewer; got "
            + ", ".join(f"{n!r} {c}" for n, c in zip(names, counts))
        )
    cards = [Card.empty() for _ in players]
    for round_index in range(first):
        for i, turns in enumerate(turn_lists):
            if round_index >= len(turns):
                continue
            turn = turns[round_index]
            where = f"player {names[i]!r}, turn {round_index + 1}"
            try:
                if not isinstance(turn, Mapping) or "dice" not in turn or "box" not in turn:
                    raise UsageError('a turn must be an object with "dice" and "box"')
                dice = _turn_dice(turn["dice"])
                roll = check_roll(turn.get("roll", 3))
                cards[i] = place(ruleset, cards[i], dice, turn["box"], roll=roll, joker=joker)
            except (RulesError, UsageError) as exc:
                raise UsageError(f"{where}: {exc}") from None
    results = tuple(
        PlayerResult(
            name=n,
            card=c,
            upper_sum=upper_sum(ruleset, c),
            upper_bonus=upper_bonus(ruleset, c),
            yahtzee_bonus=yahtzee_bonus_points(ruleset, c),
            total=card_total(ruleset, c),
        )
        for n, c in zip(names, cards)
    )
    return ReplayResult(
        ruleset=ruleset,
        joker=joker,
        players=results,
        winners=winners([p.total for p in results]),
        finished=all(not open_boxes(ruleset, c) for c in cards),
    )


def format_result(result: ReplayResult) -> str:
    """Return the human-readable report: one card per player, then the winners."""
    rs = result.ruleset
    lines = [f"{rs.title or rs.id} ({rs.id})" + (f", joker {result.joker}" if rs.has_yahtzee_bonus else "")]
    name_width = max(len(rs.display_name(b)) for b in rs.boxes)
    for p in result.players:
        lines.append("")
        lines.append(f"{p.name}")
        for box in rs.boxes:
            points = p.card.boxes.get(box)
            shown = "-" if points is None else str(points)
            lines.append(f"  {rs.display_name(box):<{name_width}}  {shown:>4}")
            if rs.upper_boxes and box == rs.upper_boxes[-1] and rs.upper_bonus_threshold:
                lines.append(f"  {'Upper sum':<{name_width}}  {p.upper_sum:>4}")
                lines.append(
                    f"  {'Upper bonus':<{name_width}}  {p.upper_bonus:>4}"
                    f"   ({rs.upper_bonus_points} at {rs.upper_bonus_threshold})"
                )
        if rs.has_yahtzee_bonus:
            lines.append(f"  {'Yahtzee bonus':<{name_width}}  {p.yahtzee_bonus:>4}   ({p.card.yahtzee_bonuses} x 100)")
        lines.append(f"  {'Total':<{name_width}}  {p.total:>4}")
        missing = len(open_boxes(rs, p.card))
        if missing:
            lines.append(f"  ({missing} open boxes: game not finished)")
    lines.append("")
    names = [result.players[i].name for i in result.winners]
    top = result.players[result.winners[0]].total
    # one winner, everyone level, some level at the top; an unfinished game has no winner yet
    one, level, shared = (
        ("Winner", "Draw", "Shared win") if result.finished else ("Leading", "Level", "Leading together")
    )
    if len(names) == 1:
        lines.append(f"{one}: {names[0]} with {top}")
    elif len(names) == len(result.players):
        lines.append(f"{level}: {', '.join(names)} all have {top}")
    else:
        lines.append(f"{shared}: {', '.join(names)} with {top}")
    if not result.finished:
        lines.append("(the game is not finished: standings so far)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Replay ``args.game`` and print the result; return 0."""
    result = replay_game(load_game(args.game, args.game_id))
    if args.json:
        print(json.dumps(result.to_json()))
    else:
        print(format_result(result))
    return 0


__all__: Sequence[str] = (
    "PlayerResult",
    "ReplayResult",
    "load_game",
    "replay_game",
    "format_result",
    "register",
    "run",
)
