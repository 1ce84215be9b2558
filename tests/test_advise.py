"""``dicetable advise`` and ``dicetable strategy``: JSON contract, text output, bad input."""

from __future__ import annotations

import json

import pytest

from table.cli import main
from table.strategy.tables import clear_memory_cache


@pytest.fixture(autouse=True)
def tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DICETABLE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("table.strategy.tables.PACKAGE_DATA", tmp_path / "no-package-data")
    clear_memory_cache()
    yield tmp_path / "cache" / "strategy"
    clear_memory_cache()


def run_json(capsys, *args):
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def run_error(capsys, *args):
    assert main(list(args)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"dicetable {args[0]}: error: ")
    return err[0]


def test_advise_holds_json(capsys):
    data = run_json(capsys, "advise", "--rules", "generala", "--dice", "4,4,4,4,1", "--roll", "1")
    assert {k: data[k] for k in ("ruleset", "variant", "dice", "roll")} == {
        "ruleset": "generala",
        "variant": "standard",
        "dice": [4, 4, 4, 4, 1],
        "roll": 1,
    }
    holds = data["holds"]
    assert len(holds) == 10  # distinct sub-multisets of 4 4 4 4 1
    assert set(holds[0]) == {"keep", "hold", "expected", "stop"}
    assert holds[0]["keep"] == [4, 4, 4, 4] and holds[0]["hold"] == [True, True, True, True, False]
    assert [h["expected"] for h in holds] == sorted((h["expected"] for h in holds), reverse=True)
    assert sum(h["stop"] for h in holds) == 1


def test_advise_boxes_json_after_the_last_throw_or_stop(capsys):
    data = run_json(
        capsys, "advise", "--rules", "generala", "--dice", "22233", "--roll", "1", "--stop", "--card", '{"aces": 2}'
    )
    boxes = data["boxes"]
    assert boxes[0] == {"box": "full", "points": 35, "yahtzee_bonus": 0, "expected": boxes[0]["expected"]}
    assert {b["box"] for b in boxes} == {
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
    }
    third = run_json(capsys, "advise", "--rules", "generala", "--dice", "22233", "--roll", "3", "--card", '{"aces": 2}')
    assert third["boxes"][0]["box"] == "full" and third["boxes"][0]["points"] == 30


def test_advise_text(capsys):
    assert main(["advise", "--rules", "chaser", "--dice", "1 3 4 5 5", "--roll", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("chaser (standard): dice 1 3 4 5 5 after throw 2 of 3")
    assert out[1].lstrip().startswith("1. ") and "... 14 more (--all)" in out[-1]
    assert main(["advise", "--rules", "chaser", "--dice", "1 3 4 5 5", "--all"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 + 12 and "points" in out[1]


@pytest.mark.parametrize(
    "args,message",
    [
        (["--rules", "chaser", "--dice", "1,2,3"], "need exactly five dice"),
        (["--rules", "chaser", "--dice", "12345", "--card", "[1]"], "must be a JSON object"),
        (["--rules", "chaser", "--dice", "12345", "--card", '{"sixes": 6}'], "not a chaser box"),
        (["--rules", "nope", "--dice", "12345"], "unknown ruleset"),
        (
            [
                "--rules",
                "generala",
                "--dice",
                "12345",
                "--card",
                '{"aces": 0, "twos": 0, "threes": 0, "fours": 0, "fives": 0, "sixes": 0, "escalera": 0,'
                ' "full": 0, "poker": 0, "generala": 0, "doble_generala": 0}',
            ],
            "nothing to advise",
        ),
        (["--rules", "chaser", "--dice", "12345", "--yahtzee-bonuses", "1"], "no Yahtzee bonus"),
        # regression: 'none' has no Yahtzee bonus (spec section 10), so the bonus was silently ignored
        (
            [
                "--rules",
                "yahtzee",
                "--joker",
                "none",
                "--dice",
                "12345",
                "--card",
                '{"yahtzee": 50}',
                "--yahtzee-bonuses",
                "1",
            ],
            "--yahtzee-bonuses 1 with --joker none: that variant has no Yahtzee bonus (and "
            "no joker), so no bonus can be on the card; leave --yahtzee-bonuses out, or choose "
            "--joker forced, free or free_choice",
        ),
    ],
)
def test_advise_bad_input_exits_2(capsys, args, message):
    assert message in run_error(capsys, "advise", *args)


def test_strategy_expected_and_list(capsys, tmp_cache):
    assert main(["strategy", "expected", "generala"]) == 0
    assert capsys.readouterr().out == "generala (standard): 162.4695\n"
    data = run_json(capsys, "strategy", "expected", "chaser")
    assert data == {"ruleset": "chaser", "variant": "standard", "expected": 174.5586}
    assert main(["strategy", "list"]) == 0
    out = capsys.readouterr().out
    assert "generala  standard     162.4695 (cache" in out
    assert (tmp_cache / "generala-standard.npz").is_file()


def test_strategy_build_quiet_then_up_to_date(capsys, tmp_cache):
    assert main(["strategy", "build", "generala", "--quiet"]) == 0
    assert "built in" in capsys.readouterr().out
    assert main(["strategy", "build", "generala"]) == 0
    assert "up to date" in capsys.readouterr().out


def test_strategy_bad_input_exits_2(capsys):
    assert "has no Yahtzee bonus" in run_error(capsys, "strategy", "expected", "yacht", "--no-bonus")
    assert "unknown ruleset" in run_error(capsys, "strategy", "build", "pachisi")
