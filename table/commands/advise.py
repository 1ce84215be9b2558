"""``dicetable advise``: optimal holds or boxes for a position, from the strategy tables.

Examples
--------
``dicetable advise --rules yacht --dice 1,3,4,5,5 --roll 1`` ranks the 12
distinct holds; ``--roll 3`` (or ``--stop``) ranks the legal boxes.
"""

from __future__ import annotations

import argparse
import json
import sys

from table.commands.options import parse_card
from table.errors import UsageError
from table.rules import ROLLS, RULESET_IDS, Card, find_ruleset, parse_dice
from table.strategy import YAHTZEE_VARIANTS, advise_boxes, advise_holds, check_variant, get_table

DESCRIPTION = """\
Advice from the optimal-play tables (see 'dicetable strategy'). With a re-roll
left (--roll 1 or 2), every distinct hold is ranked by the expected final score
of playing on optimally; keeping all five means stopping now. After the third
throw, or with --stop, every legal box is ranked the same way.

The expected final score counts the points on the card, the Yahtzee bonuses
(--yahtzee-bonuses), this turn and the rest of the game, upper bonus included.
The first use of a ruleset builds its table (seconds to a minute, progress bar
on stderr).
"""

EPILOG = """\
examples:
  dicetable advise --rules yacht --dice 1,3,4,5,5 --roll 1
  dicetable advise --rules yahtzee --card '{"yahtzee": 50}' --dice 33333 --roll 3
  dicetable advise --rules generala --dice 22233 --roll 1 --stop --json

--json prints {"ruleset", "variant", "dice", "roll", and either "holds": [{"keep",
"hold", "expected", "stop"}, ...] or "boxes": [{"box", "points", "yahtzee_bonus",
"expected"}, ...]}, best first. Bad input exits with status 2.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``advise`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "advise",
        help="rank holds or boxes by expected final score (optimal play)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--rules", required=True, metavar="ID", help=f"ruleset id: {', '.join(RULESET_IDS)}")
    parser.add_argument(
        "--dice", required=True, metavar="DICE", help="the five dice on the tray: '1,3,4,5,5', '1 3 4 5 5' or 13455"
    )
    parser.add_argument(
        "--card",
        metavar="JSON",
        default=None,
        help="boxes already filled -> points, as for 'dicetable options' (default: empty card)",
    )
    parser.add_argument(
        "--roll",
        type=int,
        choices=ROLLS,
        default=3,
        metavar="N",
        help="the throw just made, 1-3 (default 3: box advice)",
    )
    parser.add_argument(
        "--stop", action="store_true", help="the player stops now: rank the boxes even with re-rolls left"
    )
    parser.add_argument(
        "--joker",
        choices=YAHTZEE_VARIANTS,
        default="forced",
        help="Yahtzee variant (default forced; 'none' = no bonus, no joker; ignored by other rulesets)",
    )
    parser.add_argument(
        "--yahtzee-bonuses",
        type=int,
        default=0,
        metavar="N",
        help="Yahtzee bonuses already on the card (adds 100 each to the totals; "
        "not with --joker none, which has no Yahtzee bonus)",
    )
    parser.add_argument("--all", action="store_true", help="list every choice (default: top 10)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the advice; return 0 (bad input raises and the dispatcher exits 2)."""
    ruleset = find_ruleset(args.rules)
    dice = parse_dice(args.dice)
    card = parse_card(ruleset, args.card)
    if args.yahtzee_bonuses:
        card = Card.from_mapping(ruleset, dict(card.boxes), args.yahtzee_bonuses)
    if len(card) == len(ruleset.boxes):
        raise UsageError(
            f"--card fills all {len(ruleset.boxes)} {ruleset.id} boxes, so there is nothing to "
            "advise; leave at least one box out of the card"
        )
    variant = check_variant(ruleset, args.joker if ruleset.has_yahtzee_bonus else None)
    if variant == "none" and args.yahtzee_bonuses:
        raise UsageError(
            f"--yahtzee-bonuses {args.yahtzee_bonuses} with --joker none: that variant has no Yahtzee bonus "
            "(and no joker), so no bonus can be on the card; leave --yahtzee-bonuses out, or choose "
            "--joker forced, free or free_choice"
        )
    table = get_table(ruleset, variant, stream=sys.stderr)
    head = {"ruleset": ruleset.id, "variant": variant, "dice": list(dice), "roll": args.roll}
    if args.roll < 3 and not args.stop:
        holds = advise_holds(table, card, dice, args.roll)
        if args.json:
            print(json.dumps({**head, "holds": [h.to_json() for h in holds]}))
            return 0
        print(
            f"{ruleset.id} ({variant}): dice {' '.join(map(str, dice))} after throw "
            f"{args.roll} of 3; holds ranked by expected final score"
        )
        shown = holds if args.all else holds[:10]
        for rank, h in enumerate(shown, start=1):
            marks = " ".join(str(d) if held else "-" for d, held in zip(dice, h.hold))
            what = "stop and score" if h.stop else (f"keep {' '.join(map(str, h.keep))}" if h.keep else "re-roll all")
            print(f"  {rank:>2}. {marks}   {h.expected:9.4f}   {what}")
        if len(shown) < len(holds):
            print(f"  ... {len(holds) - len(shown)} more (--all)")
        return 0
    boxes = advise_boxes(table, card, dice, args.roll)
    if args.json:
        print(json.dumps({**head, "boxes": [b.to_json() for b in boxes]}))
        return 0
    print(
        f"{ruleset.id} ({variant}): dice {' '.join(map(str, dice))}, stopped on throw "
        f"{args.roll}; boxes ranked by expected final score"
    )
    width = max(len(b.box) for b in boxes)
    shown = boxes if args.all else boxes[:10]
    for rank, b in enumerate(shown, start=1):
        bonus = f"  (+{b.yahtzee_bonus} Yahtzee bonus)" if b.yahtzee_bonus else ""
        print(f"  {rank:>2}. {b.box:<{width}}  {b.points:>3} points   {b.expected:9.4f}{bonus}")
    if len(shown) < len(boxes):
        print(f"  ... {len(boxes) - len(shown)} more (--all)")
    return 0
