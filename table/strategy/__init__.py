"""Optimal solitaire strategy for every ruleset: value tables, advice and bots.

The expected final score under optimal play is computed by backward induction
over turn-start states (filled boxes, upper sum capped at the bonus threshold,
and the one flag the rules need: ``yahtzee`` or ``generala`` holding 50); see
:mod:`table.strategy.solver`.  Tables are built once per ruleset and variant,
stored in the user's cache (:func:`cache_dir`) and rebuilt when missing or
stale.

Examples
--------
>>> from table.rules import Card
>>> from table.strategy import get_table, advise_holds, make_bot
>>> table = get_table("yahtzee", "free_choice")          # doctest: +SKIP
>>> round(table.expected, 4)                             # doctest: +SKIP
254.5896
>>> advise_holds(table, Card.empty(), (1, 3, 4, 5, 5), roll=1)[0].keep   # doctest: +SKIP
(5, 5)
"""

from table.strategy.advice import BoxAdvice, HoldAdvice, advise_boxes, advise_holds, roll_value
from table.strategy.bots import (
    BOT_LEVELS,
    Bot,
    GreedyBot,
    LookaheadBot,
    OptimalBot,
    make_bot,
    play_solitaire,
)
from table.strategy.errors import (
    IllegalAdviceRequestError,
    StaleTablesError,
    StrategyError,
    UnknownVariantError,
)
from table.strategy.model import SPEC_VERSION, YAHTZEE_VARIANTS, Model, check_variant, variants_for
from table.strategy.tables import (
    StrategyTable,
    build_table,
    cache_dir,
    get_table,
    load_table,
)

__all__ = [
    "BOT_LEVELS",
    "SPEC_VERSION",
    "YAHTZEE_VARIANTS",
    "Bot",
    "BoxAdvice",
    "GreedyBot",
    "HoldAdvice",
    "LookaheadBot",
    "Model",
    "OptimalBot",
    "StrategyTable",
    "IllegalAdviceRequestError",
    "StaleTablesError",
    "StrategyError",
    "UnknownVariantError",
    "advise_boxes",
    "advise_holds",
    "build_table",
    "cache_dir",
    "check_variant",
    "get_table",
    "load_table",
    "make_bot",
    "play_solitaire",
    "roll_value",
    "variants_for",
]
