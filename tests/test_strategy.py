"""table.strategy: combinatorics, hand-worked values, agreement with table.rules, tables I/O."""

from __future__ import annotations

import json
import random
from fractions import Fraction

import numpy as np
import pytest

from table.rules import Card, find_ruleset, possible_points
from table.strategy import (
    StaleTablesError,
    UnknownVariantError,
    advise_boxes,
    advise_holds,
    build_table,
    get_table,
    load_table,
    roll_value,
)
from table.strategy._dice import (
    CHILD,
    INDEX,
    LEVELS,
    N_PARENTS,
    PARENT,
    ROLL_PROB,
    ROLLS,
    hold_mask,
    sub_multisets,
)
from table.strategy.model import Model, check_variant, variants_for
from table.strategy.solver import roll_values, stop_values, turn_start_values
from table.strategy.tables import PACKAGE_DATA, clear_memory_cache, file_name


@pytest.fixture(autouse=True)
def tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DICETABLE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("table.strategy.tables.PACKAGE_DATA", tmp_path / "no-package-data")
    clear_memory_cache()
    yield tmp_path / "cache" / "strategy"
    clear_memory_cache()


# -- dice combinatorics ---------------------------------------------------------------------


def test_levels_hold_every_keeper_once():
    assert [len(level) for level in LEVELS] == [1, 6, 21, 56, 126, 252]
    assert sum(len(level) for level in LEVELS) == 462
    assert len(ROLLS) == 252 and all(tuple(sorted(r)) == r for r in ROLLS)


def test_roll_probabilities_are_multinomial():
    assert ROLL_PROB.sum() == pytest.approx(1.0, abs=1e-12)
    assert ROLL_PROB[INDEX[5][(6, 6, 6, 6, 6)]] == pytest.approx(1 / 6**5)
    assert ROLL_PROB[INDEX[5][(1, 2, 3, 4, 5)]] == pytest.approx(120 / 6**5)
    assert ROLL_PROB[INDEX[5][(2, 2, 3, 3, 3)]] == pytest.approx(10 / 6**5)


def test_child_adds_one_die_and_parent_removes_one():
    for k in range(5):
        for i, m in enumerate(LEVELS[k]):
            for j, f in enumerate(range(1, 7)):
                assert LEVELS[k + 1][CHILD[k][i, j]] == tuple(sorted(m + (f,)))
    for k in range(1, 6):
        for i, m in enumerate(LEVELS[k]):
            distinct = sorted(set(m))
            real = [LEVELS[k - 1][PARENT[k][i, j]] for j in range(6) if i < N_PARENTS[k][j]]
            assert len(real) == len(distinct)
            for f, parent in zip(distinct, real):
                rest = list(m)
                rest.remove(f)
                assert parent == tuple(rest)


def test_sub_multisets_and_hold_mask():
    subs = sub_multisets((5, 1, 5, 3, 4))
    assert len(subs) == 24 and () in subs and (1, 3, 4, 5, 5) in subs
    assert hold_mask((5, 1, 5, 3, 4), (4, 5)) == (True, False, False, False, True)
    with pytest.raises(ValueError):
        hold_mask((1, 2, 3, 4, 5), (6,))


# -- variants ------------------------------------------------------------------------------


def test_variants():
    assert variants_for("yahtzee") == ("forced", "free", "free_choice", "none")
    assert variants_for("yatzy") == ("standard",)
    assert check_variant("yahtzee", None) == "forced"
    assert check_variant("generala", None) == "standard"
    with pytest.raises(UnknownVariantError, match="no joker variants"):
        check_variant("yacht", "forced")
    with pytest.raises(UnknownVariantError, match="choose one of: forced, free"):
        check_variant("yahtzee", "house")


def test_model_layout():
    assert Model.of("yahtzee", "forced").shape == (8192, 2, 64)
    assert Model.of("yahtzee", "none").shape == (8192, 1, 64)
    assert Model.of("yatzy").shape == (32768, 1, 64)
    assert Model.of("generala").shape == (2048, 2, 1)
    assert Model.of("generala").flag_box == find_ruleset("generala").boxes.index("generala")
    assert Model.of("chaser").shape == (4096, 1, 1)


# -- exact values on small cases worked out by hand -----------------------------------------


def _one_open(ruleset: str, open_box: str) -> Card:
    """A card with every box but ``open_box`` scratched (upper sum 0: no bonus in reach)."""
    rs = find_ruleset(ruleset)
    return Card({b: 0 for b in rs.boxes if b != open_box})


def _single_state_value(ruleset, card, variant=None):
    """Expected points to come for ``card`` with one box left, solved from terminal values."""
    model = Model.of(ruleset, variant)
    V = np.zeros(model.shape)  # the only next states are full cards, worth 0 (no bonus reached)
    m, g, u = (np.array([x]) for x in model.state_of(card))
    return float(turn_start_values(model, V, m, g, u)[0])


def test_yacht_box_alone_is_the_three_throw_yacht_probability():
    # P(five alike within three throws, holding the largest group) = 2783176 / 6**10.
    value = _single_state_value("yacht", _one_open("yacht", "yacht"))
    assert value == pytest.approx(float(50 * Fraction(2783176, 6**10)), abs=1e-12)


def test_aces_alone_keeps_every_one():
    # Each die ends a one with probability 1 - (5/6)**3 = 91/216.
    value = _single_state_value("yacht", _one_open("yacht", "aces"))
    assert value == pytest.approx(5 * 91 / 216, abs=1e-12)


def test_choice_alone_is_five_times_the_best_single_die():
    # One die, three throws: 3.5, then E[max(X, 3.5)] = 4.25, then E[max(X, 4.25)] = 14/3.
    value = _single_state_value("yacht", _one_open("yacht", "choice"))
    assert value == pytest.approx(5 * 14 / 3, abs=1e-12)


def test_one_throw_left_on_choice_keeps_four_and_up():
    model = Model.of("yacht")
    card = _one_open("yacht", "choice")
    m, g, u = (np.array([x]) for x in model.state_of(card))
    W1, W2, W3, E2, E3 = roll_values(model, np.zeros(model.shape), m, g, u)
    # Before the last throw, holding (4, 5, 6) and throwing two dice: 15 + 2 * 3.5 = 22.
    assert E3[3][INDEX[3][(4, 5, 6)], 0] == pytest.approx(22.0)
    assert W2[INDEX[5][(1, 2, 4, 5, 6)], 0] == pytest.approx(22.0)


def test_generala_doble_alone_needs_the_flag():
    # Doble Generala scores only over a 50 in 'generala'.
    rs = find_ruleset("generala")
    others = {b: 0 for b in rs.boxes if b != "doble_generala"}
    with_flag = Card({**others, "generala": 50})
    assert _single_state_value("generala", Card(others)) == 0.0
    assert _single_state_value("generala", with_flag) == pytest.approx(float(100 * Fraction(2783176, 6**10)), abs=1e-12)


def test_generala_full_alone_on_the_first_throw_gets_servida():
    rs = find_ruleset("generala")
    card = Card({b: 0 for b in rs.boxes if b != "full"})
    model = Model.of("generala")
    m, g, u = (np.array([x]) for x in model.state_of(card))
    V = np.zeros(model.shape)
    stop1 = stop_values(model, V, m, g, u, 1)
    stop3 = stop_values(model, V, m, g, u, 3)
    row = INDEX[5][(2, 2, 2, 3, 3)]
    assert (stop1[row, 0], stop3[row, 0]) == (35.0, 30.0)


# -- the solver's scores are table.rules' scores ---------------------------------------------


def _random_card(rng: random.Random, ruleset: str, variant: str) -> Card:
    rs = find_ruleset(ruleset)
    n_filled = rng.randrange(len(rs.boxes))
    filled = rng.sample(rs.boxes, n_filled)
    boxes = {b: rng.choice(sorted(possible_points(rs, b))) for b in filled}
    if "yahtzee" in boxes:
        boxes["yahtzee"] = rng.choice([0, 50])
    if "generala" in boxes:
        boxes["generala"] = rng.choice([0, 50])
    return Card.from_mapping(rs, boxes)


@pytest.mark.parametrize(
    "ruleset,variant", [(r, v) for r in ("yahtzee", "yacht", "chaser", "yatzy", "generala") for v in variants_for(r)]
)
def test_stop_values_agree_with_table_rules(ruleset, variant):
    """Best box + bonus + V(next) computed by the solver equals the rules' own placement."""
    model = Model.of(ruleset, variant)
    rng = random.Random(f"{ruleset}/{variant}")
    V = np.random.default_rng(7).random(model.shape) * 100
    for _ in range(12):
        card = _random_card(rng, ruleset, variant)
        m, g, u = (np.array([x]) for x in model.state_of(card))
        for roll in (1, 3):
            got = stop_values(model, V, m, g, u, roll)[:, 0]
            for i, dice in enumerate(ROLLS):
                best = max(
                    pts + model.bonus_for(card, dice) + V[model.state_of(model.after(card, dice, box, roll))]
                    for box, pts in model.options(card, dice, roll).items()
                )
                assert got[i] == pytest.approx(best, abs=1e-9), (card, dice, roll)


def test_forced_joker_is_taken_from_the_rules():
    model = Model.of("yahtzee", "forced")
    mask = 1 << model.ruleset.boxes.index("yahtzee")
    threes = model.ruleset.boxes.index("threes")
    row = model.joker[mask, 2]
    assert row[threes] == 15 and (row >= 0).sum() == 1


# -- whole (small) tables, advice and files ----------------------------------------------------


@pytest.mark.parametrize("ruleset,value", [("generala", 162.4695), ("chaser", 174.5586)])
def test_published_small_rulesets(ruleset, value):
    table = build_table(ruleset)
    assert round(table.expected, 4) == value


@pytest.mark.parametrize("ruleset", ["generala", "chaser"])
def test_advice_agrees_with_tables(ruleset):
    table = get_table(ruleset)
    rs = table.ruleset
    start = sum(p * roll_value(table, Card.empty(), r, 1) for r, p in zip(ROLLS, ROLL_PROB))
    assert start == pytest.approx(table.expected, abs=1e-4)  # float32 table on disk
    card = Card.from_mapping(rs, {rs.boxes[0]: 0, rs.boxes[-2]: 0})
    mid = sum(p * roll_value(table, card, r, 1) for r, p in zip(ROLLS, ROLL_PROB))
    assert mid == pytest.approx(table.expected_final(card), abs=1e-4)


def test_advice_ranks_and_marks_holds():
    table = get_table("generala")
    holds = advise_holds(table, Card.empty(), (4, 4, 4, 4, 1), 1)
    assert len(holds) == len(sub_multisets((4, 4, 4, 4, 1)))
    assert [h.expected for h in holds] == sorted((h.expected for h in holds), reverse=True)
    stop = [h for h in holds if h.stop]
    assert len(stop) == 1 and stop[0].keep == (1, 4, 4, 4, 4)
    # Servida Poker (45) is the best box now, but chasing Generala with four 4s is better.
    boxes = advise_boxes(table, Card.empty(), (4, 4, 4, 4, 1), 1)
    assert boxes[0].box == "poker" and boxes[0].points == 45
    assert stop[0].expected == pytest.approx(boxes[0].expected)
    assert holds[0].keep == (4, 4, 4, 4) and holds[0].hold == (True, True, True, True, False)
    assert holds[0].expected > stop[0].expected
    assert {b.box for b in boxes} == set(table.ruleset.boxes)


def test_advice_refuses_impossible_requests():
    table = get_table("generala")
    with pytest.raises(ValueError, match="no re-roll is left"):
        advise_holds(table, Card.empty(), (1, 2, 3, 4, 5), 3)
    full = Card({b: 0 for b in table.ruleset.boxes})
    with pytest.raises(ValueError, match="card is full"):
        advise_boxes(table, full, (1, 2, 3, 4, 5), 3)
    with pytest.raises(ValueError, match="need exactly five dice"):
        advise_boxes(table, Card.empty(), (1, 2, 3), 3)


def test_tables_are_saved_loaded_and_rebuilt_when_stale(tmp_cache):
    table = get_table("chaser")
    path = tmp_cache / file_name("chaser", "standard")
    assert path.is_file()
    loaded = load_table(path, table.model)
    with np.load(path) as data:
        assert data["values"].dtype == np.float32
    assert loaded.values.dtype == np.float64
    assert loaded.expected == table.expected
    reachable = ~np.isnan(table.values)
    assert np.allclose(loaded.values[reachable], table.values[reachable], atol=1e-4)

    with np.load(path) as data:
        meta = json.loads(str(data["meta"]))
        values = data["values"]
    assert (meta["ruleset"], meta["variant"], meta["spec"]) == ("chaser", "standard", "1.0")
    meta["solver"] = "0-old"
    np.savez_compressed(path, values=values, meta=np.array(json.dumps(meta)))
    with pytest.raises(StaleTablesError, match="stale: solver"):
        load_table(path, table.model)
    clear_memory_cache()
    rebuilt = get_table("chaser")
    assert round(rebuilt.expected, 4) == 174.5586
    assert load_table(path, table.model).expected == rebuilt.expected


def test_get_table_without_build_says_what_to_run():
    with pytest.raises(FileNotFoundError, match="dicetable strategy build generala"):
        get_table("generala", build=False)


SHIPPED_DATA = PACKAGE_DATA  # bound at import, before any test patches it
SHIPPED = {
    ("yahtzee", "forced"): 254.5877,
    ("yahtzee", "free"): 255.6639,
    ("yahtzee", "free_choice"): 254.5896,
    ("yahtzee", "none"): 245.8708,
    ("yacht", "standard"): 191.7744,
    ("chaser", "standard"): 174.5586,
    ("yatzy", "standard"): 248.4400,
    ("generala", "standard"): 162.4695,
}


@pytest.mark.parametrize("ruleset,variant", sorted(SHIPPED))
def test_shipped_tables_are_fresh(ruleset, variant):
    """The package's tables match today's rules and solver (else: rebuild and re-ship them)."""
    path = SHIPPED_DATA / file_name(ruleset, variant)
    table = load_table(path, Model.of(ruleset, variant))
    assert round(table.expected, 4) == SHIPPED[(ruleset, variant)]


def test_advice_on_a_loaded_float32_table_with_an_upper_section(monkeypatch):
    # Regression: float32 values from a file broke np.take(out=float64) in stop_values.
    monkeypatch.setattr("table.strategy.tables.PACKAGE_DATA", SHIPPED_DATA)
    table = get_table("yacht", build=False)
    assert table.values.dtype == np.float64
    holds = advise_holds(table, Card.from_mapping("yacht", {"aces": 3}), (1, 3, 4, 5, 5), 1)
    assert holds[0].keep == (5, 5)


def test_damaged_table_file_is_rebuilt(tmp_cache):
    tmp_cache.mkdir(parents=True)
    path = tmp_cache / file_name("generala", "standard")
    path.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(StaleTablesError, match="not a strategy table"):
        load_table(path, Model.of("generala"))
    assert round(get_table("generala").expected, 4) == 162.4695
    assert load_table(path, Model.of("generala")).expected == get_table("generala").expected


def test_unwritable_cache_still_gives_a_table(tmp_path, monkeypatch, capsys):
    import sys

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("DICETABLE_CACHE", str(blocker))
    table = get_table("chaser", stream=sys.stderr)
    assert round(table.expected, 4) == 174.5586
    assert "warning: could not save the chaser table" in capsys.readouterr().err
