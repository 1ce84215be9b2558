"""``dicetable replay``: every whole-game vector through the CLI, JSON contract, bad files."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from table.cli import main
from table.commands.replay import replay_game

ROOT = Path(__file__).resolve().parents[1]
VECTORS_PATH = ROOT / ".." / "shared" / "specs" / "vectors_dev.json"
needs_vectors = pytest.mark.skipif(not VECTORS_PATH.is_file(), reason=f"spec vectors not found at {VECTORS_PATH}")
GAMES = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))["games"] if VECTORS_PATH.is_file() else []

SMALL_GAME = {
    "ruleset": "generala",
    "players": [
        {
            "name": "Ana",
            "turns": [
                {"dice": [2, 2, 2, 3, 3], "box": "full", "roll": 1},
                {"dice": "44444", "box": "generala", "roll": 3},
            ],
        },
        {"name": "Ben", "turns": [{"dice": [1, 2, 3, 4, 5], "box": "escalera", "roll": 2}]},
    ],
}


def write(tmp_path, data, name="game.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return str(path)


def run_json(capsys, *args):
    assert main(["replay", *args, "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return json.loads(captured.out)


def bad(capsys, *args):
    assert main(["replay", *args]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dicetable replay: error: ")
    assert "Traceback" not in captured.err
    return lines[0]


@needs_vectors
@pytest.mark.parametrize("game", GAMES, ids=[g["id"] for g in GAMES])
def test_replay_every_whole_game_vector(tmp_path, capsys, game):
    data = run_json(capsys, write(tmp_path, game))
    assert set(data) == {"players", "winners"}
    assert [p["total"] for p in data["players"]] == [p["expected_final_total"] for p in game["players"]]
    assert data["winners"] == game["expected_winners"]
    for out, player in zip(data["players"], game["players"]):
        assert set(out) == {"name", "boxes", "upper_bonus", "yahtzee_bonus", "total"}
        assert out["name"] == player["name"]
        assert out["total"] == sum(out["boxes"].values()) + out["upper_bonus"] + out["yahtzee_bonus"]
        bonus_turns = 0
        for turn in player["turns"]:
            points = out["boxes"][turn["box"]]
            assert turn["expected_points"] in (points, points + 100)
            bonus_turns += turn["expected_points"] - points
        assert out["yahtzee_bonus"] == bonus_turns


@needs_vectors
def test_replay_vectors_file_picks_a_game_by_id(capsys):
    data = run_json(capsys, str(VECTORS_PATH), "--game", "dev-game-yacht-2p-tie")
    assert data["winners"] == [0, 1]
    assert "players" in data


@needs_vectors
def test_replay_vectors_file_needs_a_game_id(capsys):
    line = bad(capsys, str(VECTORS_PATH))
    assert "--game" in line and "dev-game-chaser-novel" in line
    assert "no game with id 'nope'" in bad(capsys, str(VECTORS_PATH), "--game", "nope")


@needs_vectors
def test_replay_human_output_for_the_novel(capsys):
    assert main(["replay", str(VECTORS_PATH), "--game", "dev-game-chaser-novel"]) == 0
    out = capsys.readouterr().out
    assert "Regent" in out and "Daphnen" in out
    assert "Winner: Daphnen with 231" in out
    assert "230" in out and "Chase Off" in out


def test_replay_small_unfinished_game(tmp_path, capsys):
    data = run_json(capsys, write(tmp_path, SMALL_GAME))
    assert data == {
        "players": [
            {"name": "Ana", "boxes": {"full": 35, "generala": 50}, "upper_bonus": 0, "yahtzee_bonus": 0, "total": 85},
            {"name": "Ben", "boxes": {"escalera": 20}, "upper_bonus": 0, "yahtzee_bonus": 0, "total": 20},
        ],
        "winners": [0],
    }
    assert main(["replay", write(tmp_path, SMALL_GAME)]) == 0
    out = capsys.readouterr().out
    # Nobody has won a game that is not finished: the leader is named as such.
    assert out.splitlines()[-2:] == ["Leading: Ana with 85", "(the game is not finished: standings so far)"]
    assert "Winner" not in out


def test_replay_tie_in_an_unfinished_game_is_level(tmp_path, capsys):
    game = {
        "ruleset": "yacht",
        "players": [
            {"name": "A", "turns": [{"dice": [6, 6, 6, 6, 6], "box": "yacht"}]},
            {"name": "B", "turns": [{"dice": [1, 1, 1, 1, 1], "box": "yacht"}]},
        ],
    }
    assert run_json(capsys, write(tmp_path, game))["winners"] == [0, 1]
    assert main(["replay", write(tmp_path, game)]) == 0
    out = capsys.readouterr().out
    assert "Level: A, B all have 50" in out and "Draw" not in out and "not finished" in out


@pytest.mark.parametrize("raw", ["", "   ", None])
def test_regression_replay_of_players_with_empty_names_calls_them_player_n(tmp_path, capsys, raw):
    """A hand-written game with "name": "" printed 'Level: ,  all have 1' (the table refuses such names)."""
    game = {
        "ruleset": "yacht",
        "players": [
            {"name": raw, "turns": [{"dice": [1, 2, 2, 3, 4], "box": "aces"}]},
            {"name": raw, "turns": [{"dice": [1, 2, 2, 3, 4], "box": "aces"}]},
        ],
    }
    assert main(["replay", write(tmp_path, game)]) == 0
    out = capsys.readouterr().out
    assert "\nPlayer 1\n" in out and "\nPlayer 2\n" in out
    assert "Level: Player 1, Player 2 all have 1" in out
    assert [p["name"] for p in run_json(capsys, write(tmp_path, game))["players"]] == ["Player 1", "Player 2"]


@needs_vectors
def test_replay_finished_tie_is_a_draw(capsys):
    assert main(["replay", str(VECTORS_PATH), "--game", "dev-game-yacht-2p-tie"]) == 0
    out = capsys.readouterr().out
    assert "\nDraw: " in out and "not finished" not in out and "Leading" not in out


def test_replay_game_id_on_a_file_whose_game_has_no_id(tmp_path, capsys):
    line = bad(capsys, write(tmp_path, SMALL_GAME), "--game", "foo")
    assert 'holds one game, which has no "id"' in line and "leave out --game" in line and "None" not in line
    line = bad(capsys, write(tmp_path, {**SMALL_GAME, "id": "g7"}), "--game", "foo")
    assert "holds one game with id 'g7', not 'foo'; give --game 'g7' or leave out --game" in line


def test_replay_counts_yahtzee_bonus_points(tmp_path, capsys):
    turns = [{"dice": [5, 5, 5, 5, 5], "box": box} for box in ("yahtzee", "fives", "chance")]
    game = {"ruleset": "yahtzee", "joker": "forced", "players": [{"name": "S", "turns": turns}]}
    player = run_json(capsys, write(tmp_path, game))["players"][0]
    assert player["yahtzee_bonus"] == 200
    assert player["total"] == 50 + 25 + 25 + 200


@pytest.mark.parametrize(
    ("mutate", "words"),
    [
        (
            lambda g: g["players"][0]["turns"][1].update(box="full"),
            "player 'Ana', turn 2: box 'full' is already scored",
        ),
        (lambda g: g["players"][1]["turns"][0].update(dice=[0, 1, 2, 3, 4]), "player 'Ben', turn 1: face 0"),
        (lambda g: g["players"][1]["turns"][0].update(dice=[1, 2, 3, 4, 5, 6, 6]), "seven dice"),
        (
            lambda g: g["players"][1]["turns"][0].update(box="chance"),
            "player 'Ben', turn 1: 'chance' is not a generala box",
        ),
        (lambda g: g["players"][1]["turns"][0].update(roll=4), "roll must be"),
        (lambda g: g.update(ruleset="poker"), "unknown ruleset 'poker'"),
        (lambda g: g.update(joker="wild"), "unknown joker variant"),
        (lambda g: g.update(players=[]), "non-empty list"),
        (lambda g: g["players"][1]["turns"].extend([{"dice": [1, 1, 1, 1, 1], "box": "aces"}] * 2), "out of step"),
        (lambda g: g["players"][0]["turns"].__setitem__(0, "oops"), "player 'Ana', turn 1: a turn must be an object"),
    ],
)
def test_replay_bad_games_name_player_turn_and_reason(tmp_path, capsys, mutate, words):
    game = copy.deepcopy(SMALL_GAME)
    mutate(game)
    assert words in bad(capsys, write(tmp_path, game))


def test_replay_forced_joker_violation(tmp_path, capsys):
    turns = [{"dice": [3, 3, 3, 3, 3], "box": "yahtzee"}, {"dice": [3, 3, 3, 3, 3], "box": "full_house"}]
    game = {"ruleset": "yahtzee", "players": [{"name": "S", "turns": turns}]}
    line = bad(capsys, write(tmp_path, game))
    assert "player 'S', turn 2" in line and "threes" in line


def test_replay_too_many_turns(tmp_path, capsys):
    game = {
        "ruleset": "yacht",
        "players": [
            {
                "name": "S",
                "turns": [
                    {"dice": [1, 2, 3, 4, 5], "box": box}
                    for box in (
                        "aces",
                        "twos",
                        "threes",
                        "fours",
                        "fives",
                        "sixes",
                        "choice",
                        "four_of_a_kind",
                        "full_house",
                        "small_straight",
                        "large_straight",
                        "yacht",
                        "choice",
                    )
                ],
            }
        ],
    }
    line = bad(capsys, write(tmp_path, game))
    assert "turn 13" in line and "card is full" in line


@pytest.mark.parametrize(
    ("content", "words"),
    [("{not json", "not valid JSON"), ("[1, 2]", "JSON object"), ('{"players": []}', 'no "ruleset"')],
)
def test_replay_malformed_files(tmp_path, capsys, content, words):
    assert words in bad(capsys, write(tmp_path, content))


def test_replay_unreadable_file(tmp_path, capsys):
    line = bad(capsys, str(tmp_path / "missing.json"))
    assert "cannot read game file" in line and "missing.json" in line
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    assert "cannot read game file" in bad(capsys, str(binary))


def test_replay_game_function_returns_values():
    result = replay_game(SMALL_GAME)
    assert result.winners == (0,)
    assert not result.finished
    assert result.players[0].card.boxes == {"full": 35, "generala": 50}


def test_replay_help_explains_itself(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["replay", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for words in ("GAME.json", "round by round", "--json", "--game", "winners", "ruleset"):
        assert words in out


def test_console_script_replay_bad_file_has_no_traceback(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "table", "replay", str(tmp_path / "nope.json")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("dicetable replay: error: cannot read game file")
    assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr
