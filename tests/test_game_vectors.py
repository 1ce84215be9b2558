"""Every whole-game vector of ../shared/specs/vectors_dev.json played through the engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from table.game import ReadDice, ScoreBox, StartGame, execute, fold

VECTORS = Path(__file__).resolve().parents[2] / "shared" / "specs" / "vectors_dev.json"


def _games() -> list[dict]:
    if not VECTORS.exists():
        return []
    return json.loads(VECTORS.read_text(encoding="utf-8"))["games"]


GAMES = _games()


def play_vector_game(game: dict):
    """Play a vector game round by round; return (final state, all events, per-turn events)."""
    players = game["players"]
    state, events = execute(
        None,
        StartGame(
            at=0.0,
            ruleset=game["ruleset"],
            joker=game.get("joker", "forced"),
            players=tuple(p["name"] for p in players),
        ),
    )
    log = list(events)
    scored = []
    t = 1.0
    for round_index in range(len(players[0]["turns"])):
        for i, player in enumerate(players):
            turn = player["turns"][round_index]
            assert state.current_player == i
            for roll in range(1, turn["roll"] + 1):
                state, events = execute(state, ReadDice(at=t, values=tuple(turn["dice"])))
                log += events
                t += 1
            state, events = execute(state, ScoreBox(at=t, box=turn["box"]))
            log += events
            scored.append((turn, events[0]))
            t += 1
    return state, log, scored


@pytest.mark.skipif(not GAMES, reason=f"spec vectors not found at {VECTORS}")
@pytest.mark.parametrize("game", GAMES, ids=[g["id"] for g in GAMES])
def test_vector_game_plays_to_the_expected_totals(game):
    state, log, scored = play_vector_game(game)
    for turn, event in scored:
        assert event.points + event.yahtzee_bonus == turn["expected_points"], turn
    assert state.finished
    assert state.turn is None
    assert list(state.totals()) == [p["expected_final_total"] for p in game["players"]]
    assert list(state.winners()) == game["expected_winners"]
    assert fold(log) == state
