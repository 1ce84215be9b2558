"""Each player's chance to win: its properties, the game-state adapter, and a small Monte Carlo floor."""

from __future__ import annotations

import numpy as np
import pytest

from table.game import ReadDice, ScoreBox, StartGame, execute
from table.rules import Card, card_total
from table.strategy import get_table
from table.strategy.late_game import LateGame, points_bound
from table.strategy.simulate import MemoOptimalBot, play_out
from table.strategy.win_chances import combine, player_moments, win_chances, win_chances_for, win_probabilities

YACHT = ("aces", "twos", "threes", "fours", "fives", "sixes", "choice", "four_of_a_kind", "full_house")


def test_chances_sum_to_one_and_follow_the_players() -> None:
    means, variances = [180.0, 200.0, 195.0, 150.0], [1500.0, 900.0, 40.0, 0.0]
    p = win_probabilities(means, variances)
    assert sum(p) == pytest.approx(1.0, abs=1e-12)
    assert all(0.0 <= x <= 1.0 for x in p)
    order = [2, 0, 3, 1]
    q = win_probabilities([means[i] for i in order], [variances[i] for i in order])
    assert q == pytest.approx([p[i] for i in order], abs=1e-12)


def test_equal_positions_have_equal_chances() -> None:
    table = get_table("yacht", build=False)
    card = Card({"aces": 3, "sixes": 24, "choice": 22})
    p = win_chances(table, [card, card, card])
    assert p == pytest.approx([1 / 3] * 3, abs=1e-12)


def test_equal_full_cards_split_the_win() -> None:
    table = get_table("yacht", build=False)
    full = Card({b: 5 for b in table.ruleset.boxes})
    other = Card({b: 4 for b in table.ruleset.boxes})
    assert win_chances(table, [full, full, other]) == pytest.approx([0.5, 0.5, 0.0], abs=1e-12)


def test_far_ahead_near_the_end_is_almost_sure_and_a_better_mean_wins_more() -> None:
    table = get_table("yacht", build=False)
    boxes = [b for b in table.ruleset.boxes if b != "yacht"]
    ahead = Card({b: 30 for b in boxes})  # 330 with one box to go
    behind = Card({b: 10 for b in boxes})  # 110: even a Yacht (50) cannot catch up
    assert win_chances(table, [ahead, behind])[0] > 1 - 1e-9
    p = win_probabilities([200.0, 210.0], [900.0, 900.0])
    assert 0.5 < p[1] < 0.8


def test_a_turn_in_progress_counts_the_dice() -> None:
    table = get_table("yacht", build=False)
    card = Card({b: 20 for b in table.ruleset.boxes if b != "yacht"})  # the last turn, Yacht open
    rival = Card(dict(card.boxes) | {"choice": 45, "yacht": 0})  # 25 more, finished
    # five sixes on throw 1 score the Yacht (50) for sure; a dud must hope for it
    mean, var = player_moments(table, card, (6, 6, 6, 6, 6), 1)
    assert (mean, var) == (pytest.approx(card_total("yacht", card) + 50), pytest.approx(0.0, abs=1e-9))
    good = win_chances(table, [card, rival], 0, (6, 6, 6, 6, 6), 1)
    dud = win_chances(table, [card, rival], 0, (1, 2, 3, 4, 6), 3)
    assert good[0] > 1 - 1e-9 and dud[0] < 1e-9


def test_win_chances_for_a_game_state() -> None:
    state, _ = execute(None, StartGame(at=0, ruleset="yacht", players=("Ann", "Bob")))
    p0 = win_chances_for(state)
    assert p0 == pytest.approx([0.5, 0.5], abs=1e-9)
    state, _ = execute(state, ReadDice(at=1, values=(6, 6, 6, 6, 6)))
    p1 = win_chances_for(state)
    assert p1 is not None and p1[0] > 0.6  # Ann threw a Yacht on her first throw
    state, _ = execute(state, ScoreBox(at=2, box="yacht"))
    p2 = win_chances_for(state)
    assert p2 is not None and p2[0] == pytest.approx(p1[0], abs=0.02) and sum(p2) == pytest.approx(1.0)


def _empirical_pmf(samples: list[list[int]]) -> np.ndarray:
    low, high = min(map(min, samples)), max(map(max, samples))
    pmf = np.zeros((len(samples), high - low + 1))
    for i, s in enumerate(samples):
        np.add.at(pmf[i], np.asarray(s) - low, 1.0 / len(s))
    return pmf


def test_monte_carlo_floor_on_a_late_position() -> None:
    """Two yacht players, three boxes open each: the model against 300 bot continuations each."""
    table = get_table("yacht", build=False)
    a = Card({b: p for b, p in zip(YACHT, (3, 6, 9, 12, 20, 24, 23, 20, 25))})
    b = Card({b: p for b, p in zip(YACHT, (2, 8, 12, 16, 15, 18, 26, 24, 0))})
    bot, rng, n = MemoOptimalBot(table), np.random.default_rng(36), 300
    samples = [[play_out(bot, card, rng) for _ in range(n)] for card in (a, b)]
    pmf = _empirical_pmf(samples)
    mc = combine(pmf)
    model = win_chances(table, [a, b])
    # the sample error of a two-sample win share: each side's mean of its win share against the other's samples
    below = np.cumsum(pmf, axis=1) - pmf
    se = 0.0
    for i, j in ((0, 1), (1, 0)):
        share = below[j] + pmf[j] / 2  # P(other below) + half a tie, per score
        values = share[np.asarray(samples[i]) - (min(map(min, samples)))]
        se += values.var() / n
    se = float(np.sqrt(se))
    assert 0.1 < mc[0] < 0.9  # a close position, not a foregone one
    assert abs(model[0] - mc[0]) < 0.02 + 3 * se, (model, mc, se)


@pytest.mark.parametrize(
    ("rules", "variant", "open_"), [("yacht", None, ("yacht",)), ("yahtzee", "forced", ("sixes",))]
)
def test_late_game_distribution_has_the_tables_mean_and_variance(rules, variant, open_) -> None:
    table = get_table(rules, variant, build=False)
    card = Card({b: (50 if b == "yahtzee" else 3) for b in table.ruleset.boxes if b not in open_})
    late = LateGame(table, points_bound(table))
    pmf = late.start(card)
    k = np.arange(pmf.size)
    mean, var = table.final_moments(card)
    assert pmf.sum() == pytest.approx(1.0) and pmf.min() >= 0.0
    assert table.model.banked(card) + pmf @ k == pytest.approx(mean, abs=1e-3)
    assert pmf @ (k * k) - (pmf @ k) ** 2 == pytest.approx(var, rel=1e-4)


def test_the_last_throw_of_the_one_before_last_turn_is_exact() -> None:
    """Throw 3 with two boxes open: the box is chosen now, the rest is the last box's exact distribution."""
    table = get_table("yacht", build=False)
    open_ = ("yacht", "full_house")
    card = Card({b: 10 for b in table.ruleset.boxes if b not in open_})
    late = LateGame(table, points_bound(table, 2))
    pmf = late.scored(card, (3, 3, 3, 5, 5), 3)  # full house (19: Yacht scores the dice) now, then 0 or 50
    assert set(np.nonzero(pmf > 1e-12)[0]) == {19, 69}
    k = np.arange(pmf.size)
    after = Card(dict(card.boxes) | {"full_house": 19})
    assert table.model.banked(card) + pmf @ k == pytest.approx(table.final_moments(after)[0], abs=1e-3)


def test_generala_splits_on_the_lump_box_and_a_file_without_it_gives_one_normal(tmp_path) -> None:
    from dataclasses import replace

    from table.strategy.tables import load_table
    from table.strategy.win_chances import player_mixture

    table = get_table("generala", build=False)
    card = Card({"aces": 3, "twos": 6})
    (w1, m1, v1), (w0, m0, v0) = player_mixture(table, card)
    mean, var = table.final_moments(card)
    assert w1 + w0 == pytest.approx(1.0) and 0.05 < w1 < 0.95
    assert m1 > m0 + 40  # a Generala is worth 50 and opens the Doble's 100
    assert w1 * m1 + w0 * m0 == pytest.approx(mean, rel=1e-6)
    assert w1 * (v1 + m1**2) + w0 * (v0 + m0**2) - mean**2 == pytest.approx(var, rel=1e-4)
    old = replace(table, lump=None).save(tmp_path / "generala-standard.npz")
    plain = load_table(old, table.model)
    assert plain.lump is None
    cards = [card, Card({"fives": 20, "generala": 0})]  # a rival with no Generala to hope for: 4-6 pp apart
    assert win_chances(plain, cards) == pytest.approx(win_chances(table, cards, lump=False), abs=1e-6)
    assert abs(win_chances(plain, cards)[0] - win_chances(table, cards)[0]) > 0.02


def test_the_turn_moments_kept_stay_bounded_and_the_latest_are_kept() -> None:
    """Turn-start moments are kept least recently used first, at most ROLLS_KEPT of them: the one in use
    stays (the old cache held up to 65 and then dropped them all, the one in use too)."""
    from table.strategy import win_chances as wc

    table = get_table("yacht", build=False)
    wc._ROLLS.clear()
    boxes = list(table.ruleset.boxes)
    cards = [Card({b: 1 + i % 5 for b in boxes[: 1 + i % 8]} | {"choice": i + 5}) for i in range(wc.ROLLS_KEPT + 6)]
    first = cards[0]
    for card in cards:
        player_moments(table, card, (1, 2, 3, 4, 5), 1)
        player_moments(table, first, (6, 6, 6, 6, 6), 2)  # used again and again: never the oldest
    assert len(wc._ROLLS) == wc.ROLLS_KEPT
    states = {key[1] for key in wc._ROLLS}
    assert table.model.state_of(first) in states and table.model.state_of(cards[-1]) in states
    assert table.model.state_of(cards[1]) not in states


def test_the_late_game_keeps_a_few_whole_turns_least_recently_used_first() -> None:
    """Whole turns (2.7 MB each for Yahtzee) are kept MEMO_TURNS at most; the one looked up again stays."""
    from table.strategy import late_game

    table = get_table("yacht", build=False)
    late = LateGame(table, points_bound(table, 2))
    boxes = list(table.ruleset.boxes)
    cards = [Card({b: 3 + i for b in boxes if b != boxes[i]}) for i in range(late_game.MEMO_TURNS + 3)]
    for card in cards:
        late.turn(card)
        late.turn(cards[0])  # the current player's turn, looked up at each throw
    assert len(late._turns) == late_game.MEMO_TURNS
    kept = set(late._turns)
    assert table.model.state_of(cards[0]) in kept and table.model.state_of(cards[-1]) in kept
    assert table.model.state_of(cards[1]) not in kept
