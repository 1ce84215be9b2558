"""``dicetable options``: JSON contract, human table, bad input (exit 2, one line)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from table.cli import main


def run_json(capsys, *args):
    assert main(["options", *args, "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return json.loads(captured.out)


def test_json_empty_card_lists_every_box(capsys):
    data = run_json(capsys, "--rules", "yacht", "--dice", "4,4,4,4,4")
    assert set(data) == {"options", "yahtzee_bonus"}
    assert data["yahtzee_bonus"] == 0
    assert list(data["options"]) == [
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
    ]
    assert data["options"]["full_house"] == 20 and data["options"]["yacht"] == 50


def test_json_forced_joker_lists_only_legal_boxes(capsys):
    data = run_json(capsys, "--rules", "yahtzee", "--dice", "33333", "--card", '{"yahtzee": 50}')
    assert data == {"options": {"threes": 15}, "yahtzee_bonus": 100}


def test_json_joker_variants(capsys):
    card = '{"yahtzee": 50, "threes": 9}'
    forced = run_json(capsys, "--rules", "yahtzee", "--dice", "3 3 3 3 3", "--card", card)
    assert set(forced["options"]) == {
        "three_of_a_kind",
        "four_of_a_kind",
        "full_house",
        "small_straight",
        "large_straight",
        "chance",
    }
    assert forced["options"]["full_house"] == 25
    free = run_json(capsys, "--rules", "yahtzee", "--dice", "1,1,1,1,1", "--card", '{"yahtzee": 50}', "--joker", "free")
    assert free["options"]["sixes"] == 30 and "chance" not in free["options"]
    choice = run_json(
        capsys, "--rules", "yahtzee", "--dice", "33333", "--card", '{"yahtzee": 50}', "--joker", "free_choice"
    )
    assert choice["options"]["full_house"] == 0 and len(choice["options"]) == 12


def test_json_filled_boxes_are_left_out(capsys):
    data = run_json(capsys, "--rules", "chaser", "--dice", "55556", "--card", '{"four_dice": 22}')
    assert "four_dice" not in data["options"]
    assert data["options"]["choice"] == 26 and data["options"]["full_house"] == 0


def test_json_generala_roll(capsys):
    first = run_json(capsys, "--rules", "generala", "--dice", "22233", "--roll", "1")
    third = run_json(capsys, "--rules", "generala", "--dice", "22233")
    assert first["options"]["full"] == 35 and third["options"]["full"] == 30


def test_human_table_marks_the_best_box(capsys):
    assert main(["options", "--rules", "yatzy", "--dice", "6,6,6,6,5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    best = [line for line in lines if line.startswith(" *")]
    assert len(best) == 1 and "chance" in best[0] and "29" in best[0]
    assert any("four_of_a_kind" in line and "Four of a Kind" in line and "24" in line for line in lines)
    assert len([line for line in lines if line.startswith("   ") or line.startswith(" *")]) == 15


def test_human_table_marks_every_tied_best_box(capsys):
    assert main(["options", "--rules", "yatzy", "--dice", "6,6,6,5,5"]) == 0
    best = [line.split()[1] for line in capsys.readouterr().out.splitlines() if line.startswith(" *")]
    assert best == ["full_house", "chance"]


def test_human_table_shows_yahtzee_bonus_and_closed_boxes(capsys):
    assert main(["options", "--rules", "yahtzee", "--dice", "33333", "--card", '{"yahtzee": 50}']) == 0
    out = capsys.readouterr().out
    assert "+100" in out and "not allowed now" in out and "threes" in out


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--rules", "poker", "--dice", "12345"], "unknown ruleset 'poker'"),
        (["--rules", "yahtzee", "--dice", "0,1,2,3,4"], "face 0"),
        (["--rules", "yahtzee", "--dice", "1,2,3,4,5,6,6"], "seven dice"),
        (["--rules", "yahtzee", "--dice", "12345", "--card", '{"escalera": 20}'], "'escalera' is not a yahtzee box"),
        (["--rules", "yahtzee", "--dice", "12345", "--card", "{yahtzee: 50}"], "not valid JSON"),
        (["--rules", "yahtzee", "--dice", "12345", "--card", "[50]"], "JSON object"),
        (["--rules", "yahtzee", "--dice", "12345", "--card", '{"aces": -1}'], "negative"),
        (["--rules", "yahtzee", "--dice", "12345", "--card", '{"aces": 2.5}'], "whole number"),
        (["--rules", "yahtzee", "--dice", "12345", "--card", '{"full_house": 20}'], "cannot hold 20"),
        (
            [
                "--rules",
                "generala",
                "--dice",
                "12345",
                "--card",
                json.dumps(
                    {
                        b: 0
                        for b in (
                            "aces",
                            "twos",
                            "threes",
                            "fours",
                            "fives",
                            "sixes",
                            "escalera",
                            "full",
                            "poker",
                            "generala",
                            "doble_generala",
                        )
                    }
                ),
            ],
            "no box is open",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, args, words):
    assert main(["options", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("dicetable options: error: ")
    assert words in lines[0]
    assert "Traceback" not in captured.err


@pytest.mark.parametrize("args", [["--roll", "4"], ["--joker", "wild"]])
def test_argparse_rejects_bad_roll_and_joker(capsys, args):
    with pytest.raises(SystemExit) as exc:
        main(["options", "--rules", "yahtzee", "--dice", "12345", *args])
    assert exc.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


def test_help_explains_itself(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["options", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for words in ("--rules", "--dice", "--card", "--roll", "--joker", "--json", "servida", "yahtzee_bonus"):
        assert words in out


def test_console_script_module_prints_one_line_without_traceback():
    root = Path(__file__).resolve().parents[1]
    bad = subprocess.run(
        [sys.executable, "-m", "table", "options", "--rules", "yahtzee", "--dice", "0,1,2,3,4"],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=60,
    )
    assert bad.returncode == 2
    assert bad.stderr.strip().count("\n") == 0 and "face 0" in bad.stderr
    assert "Traceback" not in bad.stderr
    good = subprocess.run(
        [sys.executable, "-m", "table", "options", "--rules", "yahtzee", "--dice", "66666", "--json"],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=60,
    )
    assert good.returncode == 0
    assert json.loads(good.stdout)["options"]["yahtzee"] == 50
