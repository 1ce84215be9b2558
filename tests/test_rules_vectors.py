"""Every placement and whole-game vector of ``shared/specs/vectors_dev.json`` as a test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from table.rules import (
    Card,
    IllegalScoreError,
    card_total,
    find_ruleset,
    is_full,
    place,
    score_options,
    winners,
    yahtzee_bonus_for,
)

VECTORS_PATH = Path(__file__).resolve().parents[1] / ".." / "shared" / "specs" / "vectors_dev.json"

if not VECTORS_PATH.is_file():  # pragma: no cover - depends on the checkout
    pytest.skip(f"spec vectors not found at {VECTORS_PATH}", allow_module_level=True)

DATA = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))
PLACEMENTS = DATA["vectors"]
GAMES = DATA["games"]


def test_vector_file_has_the_expected_counts():
    assert len(PLACEMENTS) == 229
    assert len(GAMES) == 6


@pytest.mark.parametrize("vec", PLACEMENTS, ids=[v["id"] for v in PLACEMENTS])
def test_placement_vector(vec):
    ruleset = find_ruleset(vec["ruleset"])
    card = Card.from_mapping(ruleset, vec["card"], vec["yahtzee_bonus_count"])
    joker = vec.get("joker") or "forced"
    dice = tuple(vec["dice"])
    options = score_options(ruleset, dice, card, roll=vec["roll"], joker=joker)
    if not vec["legal"]:
        assert vec["box"] not in options
        with pytest.raises(IllegalScoreError) as exc:
            place(ruleset, card, dice, vec["box"], roll=vec["roll"], joker=joker)
        # the message names the legal boxes
        for legal_box in options:
            assert legal_box in str(exc.value)
        return
    assert options[vec["box"]] == vec["expected"]
    assert yahtzee_bonus_for(ruleset, dice, card) == vec["expected_yahtzee_bonus"]
    after = place(ruleset, card, dice, vec["box"], roll=vec["roll"], joker=joker)
    assert after.boxes[vec["box"]] == vec["expected"]
    assert after.yahtzee_bonuses == vec["yahtzee_bonus_count"] + (vec["expected_yahtzee_bonus"] // 100)
    assert card_total(ruleset, after) == vec["expected_total_after"]
    # the input card is unchanged
    assert vec["box"] not in card.boxes


@pytest.mark.parametrize("game", GAMES, ids=[g["id"] for g in GAMES])
def test_whole_game_vector(game):
    ruleset = find_ruleset(game["ruleset"])
    joker = game.get("joker") or "forced"
    players = game["players"]
    cards = [Card.empty() for _ in players]
    rounds = max(len(p["turns"]) for p in players)
    for r in range(rounds):
        for i, player in enumerate(players):
            turn = player["turns"][r]
            card = cards[i]
            dice = tuple(turn["dice"])
            bonus = yahtzee_bonus_for(ruleset, dice, card)
            cards[i] = place(ruleset, card, dice, turn["box"], roll=turn["roll"], joker=joker)
            points = cards[i].boxes[turn["box"]] + bonus
            assert points == turn["expected_points"], (player["name"], r + 1, turn)
    totals = [card_total(ruleset, c) for c in cards]
    assert totals == [p["expected_final_total"] for p in players]
    assert all(is_full(ruleset, c) for c in cards)
    if "expected_winners" in game:
        assert list(winners(totals)) == game["expected_winners"]
