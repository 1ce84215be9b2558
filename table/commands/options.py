"""``dicetable options``: what each box the rules allow now would score.

Examples
--------
``dicetable options --rules yahtzee --dice 3,3,3,3,3 --card '{"yahtzee": 50}' --json``
prints ``{"options": {"threes": 15}, "yahtzee_bonus": 100}``.
"""

from __future__ import annotations

import argparse
import json

from table.errors import UsageError
from table.rules import (
    JOKER_VARIANTS,
    ROLLS,
    RULESET_IDS,
    Card,
    Ruleset,
    find_ruleset,
    is_full,
    open_boxes,
    parse_dice,
    score_options,
    yahtzee_bonus_for,
)

DESCRIPTION = """\
Show the points each box the rules allow now would score for five dice.

Every open box is listed (0 means a scratch), except that in Yahtzee a bonus
Yahtzee (five alike with the 'yahtzee' box already filled) narrows the choice
according to the joker variant. The best box is marked with '*'.
"""

EPILOG = """\
examples:
  dicetable options --rules yacht --dice 4,4,4,4,4
  dicetable options --rules yahtzee --dice 33333 --card '{"yahtzee": 50}'
  dicetable options --rules generala --dice "2 2 2 3 3" --roll 1 --json

--json prints exactly {"options": {"<box>": points, ...}, "yahtzee_bonus": 0 or 100}.
Bad input (unknown ruleset or box, face 0, seven dice, a malformed card) exits with status 2.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``options`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "options",
        help="points each allowed box would score for five dice",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--rules", required=True, metavar="ID", help=f"ruleset id: {', '.join(RULESET_IDS)}")
    parser.add_argument(
        "--dice",
        required=True,
        metavar="DICE",
        help="the five final dice, faces 1-6: '6,6,6,6,6', '6 6 6 6 6' or 66666",
    )
    parser.add_argument(
        "--card",
        metavar="JSON",
        default=None,
        help="boxes already filled -> points, as a JSON object, "
        'e.g. \'{"yahtzee": 50, "threes": 9}\' (default: empty card)',
    )
    parser.add_argument(
        "--roll",
        type=int,
        choices=ROLLS,
        default=3,
        metavar="N",
        help="throw the player stopped on, 1-3 (Generala: 1 = servida, +5); default 3",
    )
    parser.add_argument(
        "--joker",
        choices=JOKER_VARIANTS,
        default="forced",
        help="Yahtzee joker variant (default forced; ignored by other rulesets)",
    )
    parser.add_argument("--json", action="store_true", help="print the options as one JSON object instead of a table")
    parser.set_defaults(func=run)


def _short(text: str, most: int = 80) -> str:
    """`text` quoted for a message, cut to `most` characters."""
    return repr(text) if len(text) <= most else repr(text[:most]) + f"... ({len(text)} characters)"


def parse_card(ruleset: Ruleset, text: str | None) -> Card:
    """Read ``--card`` JSON text into a validated :class:`~table.rules.Card`.

    Raises
    ------
    UsageError
        If the text is not a JSON object (or is nested too deeply to parse).
    table.rules.UnknownBoxError, table.rules.InvalidCardError
        If a box or its points are impossible for ``ruleset``.
    """
    if text is None:
        return Card.empty()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"--card is not valid JSON ({exc.msg} at character {exc.pos}): {_short(text)}; "
            'write an object like \'{"yahtzee": 50, "threes": 9}\''
        ) from None
    except RecursionError:  # lists or objects nested deeper than Python's recursion limit (about 1,000)
        raise UsageError(
            "--card is nested too deeply to be a card; write one object of box -> points, "
            'like \'{"yahtzee": 50, "threes": 9}\''
        ) from None
    if not isinstance(data, dict):
        raise UsageError(
            f"--card must be a JSON object of box -> points, got {_short(text)}; "
            'e.g. \'{"yahtzee": 50, "threes": 9}\''
        )
    return Card.from_mapping(ruleset, data)


def run(args: argparse.Namespace) -> int:
    """Print the options; return 0 (bad input raises and the dispatcher exits 2)."""
    ruleset = find_ruleset(args.rules)
    dice = parse_dice(args.dice)
    card = parse_card(ruleset, args.card)
    if is_full(ruleset, card):
        raise UsageError(
            f"--card fills all {len(ruleset.boxes)} {ruleset.id} boxes, so no box is open; "
            "leave at least one box out of the card"
        )
    options = score_options(ruleset, dice, card, roll=args.roll, joker=args.joker)
    bonus = yahtzee_bonus_for(ruleset, dice, card)
    if args.json:
        print(json.dumps({"options": options, "yahtzee_bonus": bonus}))
        return 0
    print(format_table(ruleset, dice, card, options, bonus, roll=args.roll, joker=args.joker))
    return 0


def format_table(
    ruleset: Ruleset, dice: tuple[int, ...], card: Card, options: dict[str, int], bonus: int, *, roll: int, joker: str
) -> str:
    """Return the human-readable options table (one line per allowed box)."""
    best = max(options.values()) if options else None
    lines = [
        f"{ruleset.id}: dice {' '.join(map(str, dice))}"
        + (f", stopped on throw {roll}" if ruleset.id == "generala" else "")
        + (f", joker {joker}" if ruleset.has_yahtzee_bonus else "")
    ]
    width = max(len(b) for b in ruleset.boxes)
    name_width = max(len(ruleset.display_name(b)) for b in ruleset.boxes)
    for box, points in options.items():
        mark = "*" if points == best and points > 0 else " "
        lines.append(f" {mark} {box:<{width}}  {ruleset.display_name(box):<{name_width}}  {points:>3}")
    closed = [b for b in open_boxes(ruleset, card) if b not in options]
    if closed:
        lines.append(f"   not allowed now (joker rule): {', '.join(closed)}")
    if bonus:
        lines.append(f"   Yahtzee bonus: +{bonus} whichever box is chosen")
    return "\n".join(lines)
