"""table.strategy bots: legal boxes only, holds that match their own choice, level order."""

from __future__ import annotations

import numpy as np
import pytest

from table.rules import Card, card_total, find_ruleset
from table.strategy import (
    BOT_LEVELS,
    GreedyBot,
    LookaheadBot,
    OptimalBot,
    advise_boxes,
    advise_holds,
    get_table,
    make_bot,
    play_solitaire,
    variants_for,
)
from table.strategy.model import Model
from table.strategy.tables import clear_memory_cache


@pytest.fixture(autouse=True)
def tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DICETABLE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("table.strategy.tables.PACKAGE_DATA", tmp_path / "no-package-data")
    clear_memory_cache()
    yield
    clear_memory_cache()


class CheckingBot:
    """Wraps a bot and checks every decision against the rules while a game is played."""

    def __init__(self, bot, ruleset, variant=None):
        self.bot = bot
        self.model = Model.of(ruleset, variant)
        self.level = bot.level
        self.holds = 0

    def choose_hold(self, card, dice, roll):
        hold = self.bot.choose_hold(card, dice, roll)
        assert isinstance(hold, tuple) and len(hold) == 5 and all(isinstance(h, bool) for h in hold)
        self.holds += 1
        return hold

    def choose_box(self, card, dice, roll):
        box = self.bot.choose_box(card, dice, roll)
        assert box in self.model.options(card, dice, roll), (card, dice, box)
        return box


@pytest.mark.parametrize("level", ["easy", "medium"])
@pytest.mark.parametrize(
    "ruleset,variant", [(r, v) for r in ("yahtzee", "yacht", "chaser", "yatzy", "generala") for v in variants_for(r)]
)
def test_heuristic_bots_only_pick_legal_boxes(level, ruleset, variant):
    rng = np.random.default_rng(11)
    checker = CheckingBot(make_bot(level, ruleset, variant), ruleset, variant)
    for _ in range(3):
        card = play_solitaire(checker, ruleset, rng, variant)
        assert len(card) == len(find_ruleset(ruleset).boxes)
    assert checker.holds > 0


@pytest.mark.parametrize("ruleset", ["generala", "chaser"])
def test_optimal_bot_follows_the_advice_and_picks_legal_boxes(ruleset):
    table = get_table(ruleset)
    bot = OptimalBot(ruleset, table=table)
    rng = np.random.default_rng(5)
    card = Card.empty()
    checker = CheckingBot(bot, ruleset)
    for _ in range(3):
        card = play_solitaire(checker, ruleset, rng)
    # Holds are exactly the best-ranked keep: no die it should re-roll is held.
    for dice, roll in [((1, 1, 2, 5, 6), 1), ((3, 3, 3, 3, 3), 2), ((1, 3, 4, 5, 6), 1)]:
        hold = bot.choose_hold(Card.empty(), dice, roll)
        best = advise_holds(table, Card.empty(), dice, roll)[0]
        assert hold == best.hold
        assert tuple(sorted(d for d, h in zip(dice, hold) if h)) == best.keep
    assert (
        bot.choose_box(card.__class__.empty(), (2, 2, 2, 3, 3), 3)
        == advise_boxes(table, Card.empty(), (2, 2, 2, 3, 3), 3)[0].box
    )


def test_easy_bot_holds_the_largest_group_and_stops_on_a_big_box():
    bot = GreedyBot("yahtzee")
    assert bot.choose_hold(Card.empty(), (2, 6, 2, 6, 1), 1) == (False, True, False, True, False)
    assert bot.choose_hold(Card.empty(), (1, 2, 3, 4, 5), 1) == (True,) * 5  # 40 points
    assert bot.choose_box(Card.empty(), (1, 2, 3, 4, 5), 1) == "large_straight"
    # Nothing scores: scratch the box that can hold the least (aces, at most 5).
    card = Card.from_mapping("yacht", {"choice": 20, "twos": 4, "threes": 6, "sixes": 12})
    assert GreedyBot("yacht").choose_box(card, (2, 2, 3, 3, 6), 3) == "aces"


def test_medium_bot_immediate_points_match_the_rules():
    from table.strategy._dice import ROLLS

    for ruleset, variant in [("yahtzee", "forced"), ("yahtzee", "none"), ("generala", None)]:
        bot = LookaheadBot(ruleset, variant)
        rs = find_ruleset(ruleset)
        card = Card.from_mapping(
            rs,
            {
                rs.boxes[0]: 0,
                rs.boxes[-2]: 50 if ruleset == "yahtzee" else 0,
                **({"generala": 50} if ruleset == "generala" else {}),
            },
        )
        fast = bot._immediate_all(card)
        assert list(fast) == [bot.immediate(card, d, 3) for d in ROLLS]


def test_medium_bot_keeps_what_the_next_throw_rewards():
    bot = LookaheadBot("yacht")
    card = Card.from_mapping("yacht", {b: 0 for b in find_ruleset("yacht").boxes if b not in ("sixes",)})
    # Only Sixes left: hold the sixes, throw the rest.
    assert bot.choose_hold(card, (6, 1, 6, 2, 3), 1) == (True, False, True, False, False)


def test_bots_refuse_a_hold_after_the_third_throw():
    for level in ("easy", "medium"):
        with pytest.raises(ValueError, match="no re-roll is left"):
            make_bot(level, "yacht").choose_hold(Card.empty(), (1, 2, 3, 4, 5), 3)
    with pytest.raises(ValueError, match="unknown bot level"):
        make_bot("grandmaster", "yacht")
    assert BOT_LEVELS == ("easy", "medium", "optimal")


def test_levels_are_ordered_by_strength():
    rng_seeds = range(30)
    means = {}
    for level in BOT_LEVELS:
        bot = make_bot(level, "generala")
        scores = [card_total("generala", play_solitaire(bot, "generala", np.random.default_rng(s))) for s in rng_seeds]
        means[level] = np.mean(scores)
    assert means["easy"] < means["medium"] < means["optimal"]


# -- bots seated in the demo (table.demo) ------------------------------------------------------


class _TruthReader:
    """Reports the rendered truth, so the demo game is decided by the players alone."""

    def __init__(self):
        self.tray = None

    def on_image(self, tray):
        self.tray = tray

    def __call__(self, image):
        from vision.reading import DieReading, ImageReading

        return ImageReading(tuple(DieReading(d.value, d.box, 0.99) for d in self.tray.dice))


def test_demo_seats_bots_and_they_play_legally():
    import table.demo.headless as demo

    checker = CheckingBot(make_bot("optimal", "generala"), "generala")
    reader = _TruthReader()
    lines: list[str] = []
    result = demo.play_demo(
        rules="generala",
        players=3,
        seed=3,
        reader=reader,
        on_image=reader.on_image,
        out=lines.append,
        bots=[checker, "easy"],
    )
    assert result.players == ("Player 1 (optimal)", "Player 2 (easy)", "Player 3")
    assert all(len(card) == 11 for card in result.cards)
    assert checker.holds > 0
    assert any(line.startswith("Round 1/11 - Player 1 (optimal)") for line in lines)


def test_demo_refuses_bad_bots():
    import table.demo.headless as demo
    from table.errors import UsageError

    with pytest.raises(UsageError, match="unknown bot level 'genius'"):
        demo.play_demo(rules="yacht", players=1, bots=["genius"], reader=_TruthReader())
    with pytest.raises(UsageError, match="2 bots given for 1 player"):
        demo.play_demo(rules="yacht", players=1, bots=["easy", "easy"], reader=_TruthReader())
