"""table.rules: API contracts, errors, and Hypothesis properties."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import table.rules as rules
from table.errors import DicetableError
from table.rules import (
    JOKER_VARIANTS,
    RULESET_IDS,
    Card,
    IllegalScoreError,
    InvalidCardError,
    InvalidDiceError,
    InvalidRollError,
    UnknownBoxError,
    UnknownJokerError,
    UnknownRulesetError,
    card_total,
    check_dice,
    find_ruleset,
    is_full,
    open_boxes,
    parse_dice,
    place,
    possible_points,
    score_options,
    upper_bonus,
    upper_sum,
    winners,
    yahtzee_bonus_for,
)

# ---------------------------------------------------------------- rulesets


def test_ruleset_ids_and_joker_variants():
    assert RULESET_IDS == ("yahtzee", "yacht", "chaser", "yatzy", "generala")
    assert JOKER_VARIANTS == ("forced", "free", "free_choice")


@pytest.mark.parametrize(
    ("rid", "n_boxes", "threshold", "bonus", "yahtzee_bonus"),
    [
        ("yahtzee", 13, 63, 35, True),
        ("yacht", 12, 63, 35, False),
        ("chaser", 12, None, 0, False),
        ("yatzy", 15, 63, 50, False),
        ("generala", 11, None, 0, False),
    ],
)
def test_ruleset_shape(rid, n_boxes, threshold, bonus, yahtzee_bonus):
    rs = find_ruleset(rid)
    assert rs.id == rid
    assert len(rs.boxes) == n_boxes == len(set(rs.boxes))
    assert rs.upper_bonus_threshold == threshold
    assert rs.upper_bonus_points == bonus
    assert rs.has_yahtzee_bonus is yahtzee_bonus
    assert set(rs.display_names) == set(rs.boxes)
    assert all(rs.display_name(b) for b in rs.boxes)


def test_box_orders_follow_the_spec():
    assert find_ruleset("yahtzee").boxes[-2:] == ("yahtzee", "chance")  # D2
    assert find_ruleset("chaser").boxes[0] == "chase_off"
    assert find_ruleset("chaser").upper_boxes == ()
    assert find_ruleset("generala").boxes[-1] == "doble_generala"
    assert find_ruleset("yatzy").display_name("aces") == "Ones"


def test_find_ruleset_is_forgiving_about_case_and_rejects_unknown():
    assert find_ruleset(" Yatzy ").id == "yatzy"
    with pytest.raises(UnknownRulesetError) as exc:
        find_ruleset("poker")
    assert isinstance(exc.value, ValueError) and isinstance(exc.value, DicetableError)
    for rid in RULESET_IDS:
        assert rid in str(exc.value)


def test_ruleset_string_arguments_are_accepted_everywhere():
    card = place("yacht", Card.empty(), (5, 5, 5, 5, 5), "yacht")
    assert card_total("yacht", card) == 50
    assert open_boxes("yacht", card) == find_ruleset("yacht").boxes[:-1]


def test_rules_imports_nothing_else_of_the_project():
    code = (
        "import sys, table.rules; "
        "mods = [m for m in sys.modules if m.split('.')[0] in ('table', 'vision', 'calibration')]; "
        "print(sorted(m for m in mods if not m.startswith('table.rules')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    ).stdout.strip()
    assert out in ("['table', 'table.errors']",)


# ---------------------------------------------------------------- dice


@pytest.mark.parametrize("text", ["6,6,6,6,6", "6 6 6 6 6", "66666", " 6, 6 ,6,6,6 "])
def test_parse_dice_forms(text):
    assert parse_dice(text) == (6, 6, 6, 6, 6)


def test_parse_dice_keeps_order():
    assert parse_dice("4 4 2 3 5") == (4, 4, 2, 3, 5)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("0,1,2,3,4", "face 0"),
        ("1,2,3,4,7", "face 7"),
        ("1,1,2,3,4,5,6", "seven dice"),
        ("1234", "four dice"),
        ("", "no dice"),
        ("a,b,c,d,e", "cannot read"),
        ("1234567", "seven dice"),
    ],
)
def test_parse_dice_errors_are_clear(text, words):
    with pytest.raises(InvalidDiceError) as exc:
        parse_dice(text)
    assert words in str(exc.value)
    assert isinstance(exc.value, ValueError)


@pytest.mark.parametrize(
    "bad", [[1, 2, 3, 4], [1, 2, 3, 4, 5, 6], [0, 1, 2, 3, 4], [1, 2, 3, 4, True], [1, 2, 3, 4, 5.0], "12345", None]
)
def test_check_dice_rejects(bad):
    with pytest.raises(InvalidDiceError):
        check_dice(bad)


# ---------------------------------------------------------------- card


def test_card_is_immutable_and_hashable():
    card = Card({"aces": 3})
    with pytest.raises(TypeError):
        card.boxes["twos"] = 4  # type: ignore[index]
    with pytest.raises(AttributeError):
        card.yahtzee_bonuses = 2  # type: ignore[misc]
    assert hash(card) == hash(Card({"aces": 3}))
    assert card == Card({"aces": 3}) != Card({"aces": 3}, 1)
    assert Card.empty() == Card()


def test_card_does_not_alias_the_given_dict():
    source = {"aces": 3}
    card = Card(source)
    source["twos"] = 4
    assert "twos" not in card.boxes


def test_from_mapping_orders_and_validates():
    card = Card.from_mapping("yahtzee", {"chance": 20, "aces": 3})
    assert list(card.boxes) == ["aces", "chance"]
    with pytest.raises(UnknownBoxError) as exc:
        Card.from_mapping("generala", {"chance": 20})
    assert "escalera" in str(exc.value) and "'chance'" in str(exc.value)


@pytest.mark.parametrize(
    ("mapping", "bonuses", "words"),
    [
        ({"aces": -1}, 0, "negative"),
        ({"aces": 1.5}, 0, "whole number"),
        ({"aces": True}, 0, "whole number"),
        ({"aces": "3"}, 0, "whole number"),
        ({"aces": 7}, 0, "cannot hold 7"),
        ({"yahtzee": 49}, 0, "cannot hold 49"),
        ({"yahtzee": 0}, 1, "need 50"),
        ({}, -1, "0 or more"),
        ({"yahtzee": 50}, 13, "at most 12"),
    ],
)
def test_from_mapping_rejects_impossible_cards(mapping, bonuses, words):
    with pytest.raises(InvalidCardError) as exc:
        Card.from_mapping("yahtzee", mapping, bonuses)
    assert words in str(exc.value)


def test_from_mapping_rejects_bonuses_outside_yahtzee():
    with pytest.raises(InvalidCardError):
        Card.from_mapping("yacht", {"yacht": 50}, 1)


def test_possible_points_examples():
    assert possible_points(find_ruleset("yahtzee"), "full_house") == {0, 25}
    assert possible_points(find_ruleset("generala"), "doble_generala") == {0, 100}
    assert possible_points(find_ruleset("generala"), "full") == {0, 30, 35}
    assert possible_points(find_ruleset("yatzy"), "two_pairs") == {0} | {
        2 * (a + b) for a, b in itertools.combinations(range(1, 7), 2)
    }


# ---------------------------------------------------------------- options / place


def test_options_on_an_empty_card_list_every_box():
    rs = find_ruleset("yahtzee")
    options = score_options(rs, (1, 2, 3, 4, 5), Card.empty())
    assert tuple(options) == rs.boxes
    assert options["large_straight"] == 40 and options["small_straight"] == 30


def test_place_returns_a_new_card_and_rejects_a_filled_box():
    card = Card.empty()
    after = place("yahtzee", card, (2, 2, 3, 3, 3), "full_house")
    assert card == Card.empty()
    assert after.boxes == {"full_house": 25}
    with pytest.raises(IllegalScoreError) as exc:
        place("yahtzee", after, (2, 2, 3, 3, 3), "full_house")
    assert "already scored (25 points)" in str(exc.value)
    assert "chance" in str(exc.value)


def test_place_unknown_box():
    with pytest.raises(UnknownBoxError) as exc:
        place("yacht", Card.empty(), (1, 2, 3, 4, 5), "chance")
    assert "choice" in str(exc.value)


def test_place_bad_roll_and_joker():
    with pytest.raises(InvalidRollError):
        place("generala", Card.empty(), (1, 2, 3, 4, 5), "escalera", roll=4)
    with pytest.raises(UnknownJokerError) as exc:
        score_options("yahtzee", (1, 2, 3, 4, 5), Card.empty(), joker="wild")
    assert "free_choice" in str(exc.value)


def test_forced_joker_message_lists_the_only_legal_box():
    card = Card({"yahtzee": 50})
    with pytest.raises(IllegalScoreError) as exc:
        place("yahtzee", card, (3, 3, 3, 3, 3), "full_house")
    assert "threes" in str(exc.value) and "forced" in str(exc.value)


def test_yahtzee_bonus_counts_up():
    card = place("yahtzee", Card.empty(), (4, 4, 4, 4, 4), "yahtzee")
    card = place("yahtzee", card, (4, 4, 4, 4, 4), "fours")
    card = place("yahtzee", card, (4, 4, 4, 4, 4), "chance")
    assert card.yahtzee_bonuses == 2
    assert card_total("yahtzee", card) == 50 + 20 + 20 + 200


def test_scratched_yahtzee_gives_joker_but_no_bonus():
    card = Card({"yahtzee": 0, "threes": 6})
    assert yahtzee_bonus_for("yahtzee", (3, 3, 3, 3, 3), card) == 0
    after = place("yahtzee", card, (3, 3, 3, 3, 3), "large_straight")
    assert after.boxes["large_straight"] == 40 and after.yahtzee_bonuses == 0


def test_no_bonus_in_other_rulesets():
    card = Card({"yacht": 50})
    assert yahtzee_bonus_for("yacht", (3, 3, 3, 3, 3), card) == 0
    assert len(score_options("yacht", (3, 3, 3, 3, 3), card)) == 11


def test_forced_step3_offers_open_upper_boxes_at_zero():
    lower = {b: 0 for b in find_ruleset("yahtzee").lower_boxes}
    lower["yahtzee"] = 50
    card = Card({**lower, "fours": 12})
    assert score_options("yahtzee", (4, 4, 4, 4, 4), card) == {
        "aces": 0,
        "twos": 0,
        "threes": 0,
        "fives": 0,
        "sixes": 0,
    }


def test_free_joker_maxima():
    card = Card({"yahtzee": 50})
    assert score_options("yahtzee", (1, 1, 1, 1, 1), card, joker="free") == {
        "aces": 5,
        "twos": 10,
        "threes": 15,
        "fours": 20,
        "fives": 25,
        "sixes": 30,
    }


def test_free_choice_offers_every_open_box():
    card = Card({"yahtzee": 50, "threes": 9})
    options = score_options("yahtzee", (3, 3, 3, 3, 3), card, joker="free_choice")
    assert len(options) == 11
    assert options["full_house"] == 25 and options["sixes"] == 0


def test_generala_servida_only_on_first_throw():
    for roll, points in ((1, 35), (2, 30), (3, 30)):
        assert score_options("generala", (2, 2, 2, 3, 3), Card.empty(), roll=roll)["full"] == points


def test_full_card_has_no_options():
    rs = find_ruleset("generala")
    card = Card({b: 0 for b in rs.boxes})
    assert is_full(rs, card)
    assert score_options(rs, (1, 2, 3, 4, 5), card) == {}
    with pytest.raises(IllegalScoreError) as exc:
        place(rs, card, (1, 2, 3, 4, 5), "aces")
    assert "card is full" in str(exc.value)


def test_upper_sum_and_bonus_threshold():
    card = Card({"aces": 3, "twos": 6, "threes": 9, "fours": 12, "fives": 15, "sixes": 18})
    assert upper_sum("yatzy", card) == 63
    assert upper_bonus("yatzy", card) == 50
    assert upper_bonus("yahtzee", card) == 35
    assert upper_bonus("generala", card) == 0
    assert upper_bonus("yatzy", Card({"sixes": 30, "fives": 25, "fours": 4})) == 0


@pytest.mark.parametrize(
    ("totals", "expected"),
    [([230, 231], (1,)), ([200, 150, 200], (0, 2)), ([10, 10], (0, 1)), ([5], (0,)), ([], ())],
)
def test_winners(totals, expected):
    assert winners(totals) == expected


# ---------------------------------------------------------------- properties

DICE = st.lists(st.integers(1, 6), min_size=5, max_size=5).map(tuple)
RULESET = st.sampled_from(RULESET_IDS)


@st.composite
def cards(draw, rid):
    rs = find_ruleset(rid)
    filled = draw(st.lists(st.sampled_from(rs.boxes), unique=True, max_size=len(rs.boxes) - 1))
    boxes = {b: draw(st.sampled_from(sorted(possible_points(rs, b)))) for b in filled}
    bonuses = 0
    if rs.has_yahtzee_bonus and boxes.get("yahtzee") == 50:
        bonuses = draw(st.integers(0, 3))
    return Card.from_mapping(rs, boxes, bonuses)


@st.composite
def situations(draw):
    rid = draw(RULESET)
    return (rid, draw(DICE), draw(cards(rid)), draw(st.sampled_from((1, 2, 3))), draw(st.sampled_from(JOKER_VARIANTS)))


@settings(max_examples=300, deadline=None)
@given(situations())
def test_options_are_legal_open_boxes_with_possible_points(situation):
    rid, dice, card, roll, joker = situation
    rs = find_ruleset(rid)
    options = score_options(rs, dice, card, roll=roll, joker=joker)
    assert options, "a card with an open box always offers at least one box"
    assert set(options) <= set(open_boxes(rs, card))
    for box, points in options.items():
        assert points >= 0
        assert points in possible_points(rs, box)
    if not rules.is_bonus_yahtzee(rs, dice, card):
        assert tuple(options) == open_boxes(rs, card)


@settings(max_examples=300, deadline=None)
@given(situations(), st.data())
def test_place_adds_exactly_the_offered_points(situation, data):
    rid, dice, card, roll, joker = situation
    rs = find_ruleset(rid)
    options = score_options(rs, dice, card, roll=roll, joker=joker)
    box = data.draw(st.sampled_from(sorted(options)))
    bonus = yahtzee_bonus_for(rs, dice, card)
    after = place(rs, card, dice, box, roll=roll, joker=joker)
    assert after.boxes[box] == options[box]
    assert sum(after.boxes.values()) == sum(card.boxes.values()) + options[box]
    assert after.yahtzee_bonuses == card.yahtzee_bonuses + bonus // 100
    total = card_total(rs, after)
    assert total == sum(after.boxes.values()) + upper_bonus(rs, after) + 100 * after.yahtzee_bonuses
    assert total >= card_total(rs, card) + options[box]
    # the order of the dice never matters
    assert score_options(rs, tuple(reversed(dice)), card, roll=roll, joker=joker) == options


@settings(max_examples=50, deadline=None)
@given(RULESET, st.lists(DICE, min_size=15, max_size=15), st.data())
def test_a_whole_solitaire_game_fills_the_card(rid, rolls, data):
    rs = find_ruleset(rid)
    card = Card.empty()
    for dice in rolls[: len(rs.boxes)]:
        options = score_options(rs, dice, card)
        card = place(rs, card, dice, data.draw(st.sampled_from(sorted(options))))
    assert is_full(rs, card)
    assert 0 <= card_total(rs, card)


@given(DICE)
def test_parse_dice_round_trips(dice):
    assert parse_dice(rules.format_dice(dice)) == dice
    assert parse_dice(",".join(map(str, dice))) == dice
