"""``dicetable games`` and ``dicetable export``: listing, JSON (replay round trip), CSV, bad input."""

from __future__ import annotations

import csv
import io
import json
import random

import pytest

from table.app.session import GameSession
from table.cli import main
from table.game import GameMode, ReadDice, StartGame
from table.game.autoplay import random_command
from table.store import SQLITE_HEADER, open_store


def play(session, n=100_000, seed=0):
    rng = random.Random(seed)
    t = 100.0
    for _ in range(n):
        if session.state.finished:
            break
        session.handle(random_command(session.state, rng, t))
        t += 1.0


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """A store with a finished Yahtzee game (Bo starts), an unfinished Yatzy game, a free roll."""
    path = tmp_path_factory.mktemp("cli") / "games.sqlite3"
    with open_store(path) as store:
        done = GameSession.start(
            store, StartGame(at=1.0, ruleset="yahtzee", players=("Ann", "Bo", "Cy"), first_player=1, timer_s=30)
        )
        play(done, seed=3)
        running = GameSession.start(store, StartGame(at=2.0, ruleset="yatzy", players=("Di", "Ed"), first_player=1))
        play(running, n=40, seed=4)
        free = GameSession.start(store, StartGame(at=3.0, ruleset="", players=(), mode=GameMode.FREE_ROLL))
        free.handle(ReadDice(4.0, (6, 6, 1)))
    return path


def run_cli(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_games_lists_id_ruleset_players_state_started_winner(db, capsys):
    status, out, err = run_cli(capsys, "games", "--db", str(db))
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "RULESET", "PLAYERS", "STATE", "STARTED", "WINNER"]
    assert lines[1].startswith("1 ") and "yahtzee" in lines[1] and "Ann, Bo, Cy" in lines[1]
    assert "finished" in lines[1]
    assert "yatzy" in lines[2] and "playing" in lines[2]
    assert "free_roll" in lines[3]


def test_games_json_and_env_default(db, capsys, monkeypatch):
    monkeypatch.setenv("DICETABLE_DB", str(db))
    status, out, _ = run_cli(capsys, "games", "--json")
    games = json.loads(out)
    assert status == 0 and [g["status"] for g in games] == ["finished", "playing", "playing"]
    with open_store(db) as store:
        state = store.load(1)
    assert games[0]["winners"] == [state.players[i] for i in state.winners()]


def test_games_on_a_missing_store_says_so(tmp_path, capsys):
    status, out, _ = run_cli(capsys, "games", "--db", str(tmp_path / "none.sqlite3"))
    assert status == 0 and "no games stored yet" in out
    assert not (tmp_path / "none.sqlite3").exists()


@pytest.mark.parametrize("game_id", [1, 2])
def test_export_json_replays_to_the_same_totals(db, tmp_path, capsys, game_id):
    out_file = tmp_path / f"game{game_id}.json"
    status, _, _ = run_cli(capsys, "export", str(game_id), "--db", str(db), "-o", str(out_file))
    assert status == 0
    exported = json.loads(out_file.read_text())
    with open_store(db) as store:
        state = store.load(game_id)
    # Players in play order: the starting player (index 1) first.
    assert [p["name"] for p in exported["players"]] == [
        state.players[(state.first_player + k) % len(state.players)] for k in range(len(state.players))
    ]
    status, out, err = run_cli(capsys, "replay", str(out_file), "--json")
    assert status == 0, err
    replayed = json.loads(out)
    by_name = {p["name"]: p["total"] for p in replayed["players"]}
    assert by_name == {n: t for n, t in zip(state.players, state.totals())}
    assert [p["expected_final_total"] for p in exported["players"]] == [by_name[p["name"]] for p in exported["players"]]
    if state.finished:
        assert replayed["winners"] == exported["expected_winners"]
        assert sorted(exported["players"][i]["name"] for i in exported["expected_winners"]) == sorted(
            state.players[i] for i in state.winners()
        )


def test_export_csv_has_a_row_per_box_a_column_per_player_and_totals(db, capsys):
    status, out, _ = run_cli(capsys, "export", "1", "--format", "csv", "--db", str(db))
    rows = list(csv.reader(io.StringIO(out)))
    with open_store(db) as store:
        state = store.load(1)
    assert status == 0
    assert rows[0] == ["box", "Ann", "Bo", "Cy"]
    boxes = [r[0] for r in rows[1:14]]
    assert boxes[0] == "aces" and boxes[-1] == "chance" and len(boxes) == 13
    for r in rows[1:14]:
        assert [int(v) for v in r[1:]] == [c.boxes[r[0]] for c in state.cards]
    labels = [r[0] for r in rows[14:]]
    assert labels == ["upper_sum", "upper_bonus", "yahtzee_bonus", "total"]
    assert [int(v) for v in rows[-1][1:]] == list(state.totals())
    # every total is its boxes plus its bonuses
    for col in range(1, 4):
        boxes_sum = sum(int(r[col]) for r in rows[1:14])
        assert boxes_sum + int(rows[15][col]) + int(rows[16][col]) == int(rows[-1][col])


def test_export_free_roll(db, capsys):
    status, out, _ = run_cli(capsys, "export", "3", "--db", str(db))
    data = json.loads(out)
    assert status == 0 and data["rolls"][0] == {"values": [6, 6, 1], "sum": 13, "counts": [1, 0, 0, 0, 0, 2], "at": 4.0}
    status, out, _ = run_cli(capsys, "export", "3", "--db", str(db), "--format", "csv")
    assert out.splitlines()[1] == "1,6 6 1,13,1,0,0,0,0,2"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["export", "9"], "no game with id 9"),
        (["export", "one"], "is not a game number"),
        (["export", "game-0"], "e.g. 3 or game-3"),
        (["export", "game-x"], "is not a game number"),
        (["export", "game-1.json"], "is not a game number"),
        (["export", "1", "--format", "xml"], "unknown format 'xml'; choose json or csv"),
    ],
)
def test_export_bad_input_is_one_line_exit_2(db, capsys, argv, message):
    status, out, err = run_cli(capsys, *argv, "--db", str(db))
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and message in err and err.startswith("dicetable export: error:")


@pytest.mark.parametrize("command", [["games"], ["export", "1"]])
@pytest.mark.parametrize(
    "data, words",
    [
        (b"\x00garbage" * 500, "is not a dicetable game store (not an SQLite database)"),
        (SQLITE_HEADER + b"\x00garbage" * 500, "damaged or not a database"),
    ],
)
def test_corrupt_store_is_one_line_exit_2_and_left_alone(tmp_path, capsys, command, data, words):
    bad = tmp_path / "games.sqlite3"
    bad.write_bytes(data)
    status, out, err = run_cli(capsys, *command, "--db", str(bad))
    assert status == 2 and err.count("\n") == 1 and words in err
    assert bad.read_bytes() == data
    assert list(tmp_path.iterdir()) == [bad]


def test_regression_games_and_export_leave_an_empty_file_empty(tmp_path, capsys):
    empty = tmp_path / "empty.db"
    empty.touch()
    status, out, err = run_cli(capsys, "games", "--db", str(empty))
    assert status == 0 and "no games stored yet" in out and "is an empty file" in out and err == ""
    status, out, err = run_cli(capsys, "games", "--db", str(empty), "--json")
    assert status == 0 and json.loads(out) == []
    status, out, err = run_cli(capsys, "export", "1", "--db", str(empty))
    assert status == 2 and out == "" and err.count("\n") == 1
    assert "is an empty file, not a dicetable game store" in err
    assert empty.stat().st_size == 0 and list(tmp_path.iterdir()) == [empty]


def test_games_and_export_do_not_change_the_store(db, tmp_path, capsys):
    before = db.read_bytes()
    assert run_cli(capsys, "games", "--db", str(db))[0] == 0
    assert run_cli(capsys, "export", "1", "--db", str(db), "-o", str(tmp_path / "g.json"))[0] == 0
    assert db.read_bytes() == before


def test_regression_export_to_a_folder_says_give_a_file_path(db, tmp_path, capsys):
    folder = tmp_path / "adir"
    folder.mkdir()
    status, out, err = run_cli(capsys, "export", "1", "--db", str(db), "-o", str(folder))
    assert status == 2 and out == "" and err.count("\n") == 1 and "Errno" not in err
    assert f"--output {str(folder)!r} is a folder; give a file path" in err and "game-1.json" in err
    assert list(folder.iterdir()) == []
    status, out, err = run_cli(
        capsys, "export", "1", "--db", str(db), "-o", str(tmp_path / "nothere" / "g.csv"), "--format", "csv"
    )
    assert status == 2 and "the folder" in err and "does not exist" in err and "Errno" not in err


def test_export_from_a_missing_store_is_exit_2(tmp_path, capsys):
    status, _, err = run_cli(capsys, "export", "1", "--db", str(tmp_path / "none.sqlite3"))
    assert status == 2 and "no game store" in err


def test_regression_export_accepts_the_id_its_json_writes(db, capsys):
    """The JSON says "id": "game-1"; 'dicetable export game-1' used to be refused as not a game number."""
    status, out, err = run_cli(capsys, "export", "1", "--db", str(db))
    assert status == 0 and json.loads(out)["id"] == "game-1"
    assert run_cli(capsys, "export", "game-1", "--db", str(db)) == (0, out, "")
    status, out, err = run_cli(capsys, "export", "game-3", "--format", "csv", "--db", str(db))
    assert status == 0 and out.splitlines()[1] == "1,6 6 1,13,1,0,0,0,0,2"


def test_games_and_export_read_a_store_that_a_running_game_has_open(db, capsys):
    """Only writers take the store's lock: listing and exporting work while the table plays."""
    with open_store(db) as running:  # a 'dicetable play' holding the store
        status, out, err = run_cli(capsys, "games", "--db", str(db))
        assert status == 0 and err == "" and "yatzy" in out
        status, out, err = run_cli(capsys, "export", "2", "--db", str(db))
        assert status == 0 and err == "" and json.loads(out)["id"] == "game-2"
        assert running.games()
