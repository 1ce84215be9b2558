"""table.strategy.analysis: every decision priced against the tables, undo-aware, and ``export --analysis``."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from table.cli import main
from table.game import (
    DiceSource,
    EndGame,
    GameMode,
    ReadDice,
    Reroll,
    ScoreBox,
    SetHolds,
    StartGame,
    Undo,
    execute,
    fold,
)
from table.rules import Card
from table.store import open_store
from table.strategy import advise_boxes, advise_holds, get_table, make_bot
from table.strategy.analysis import CSV_COLUMNS, DecisionKind, analyse_events


class Log:
    """Commands in, the game's event log out."""

    def __init__(self, ruleset="yacht", players=("Ann",), **kw):
        self.state, self.events = None, []
        self.do(StartGame(at=0.0, ruleset=ruleset, players=players, **kw))

    def do(self, *commands):
        for c in commands:
            self.state, new = execute(self.state, c)
            self.events.extend(new)
        return self


def test_analysis_prices_a_bad_box_and_a_bad_hold_like_the_advice_api():
    table = get_table("yacht", build=False)
    log = Log()
    # Turn 1: throw 1 shows 1 3 4 5 5; Ann keeps only the 1 (bad), re-rolls into 1 2 2 6 6, scores Twos.
    log.do(
        ReadDice(at=1, values=(1, 3, 4, 5, 5)),
        SetHolds(at=2, holds=(True, False, False, False, False)),
        Reroll(at=3, values=(2, 2, 6, 6)),
    )
    # Throw 2: she stops at once and writes the dice in Aces (1 point) instead of the best box.
    log.do(ScoreBox(at=4, box="aces"))
    a = analyse_events(log.events)
    hold1, hold2, box = a.decisions
    # Hold after throw 1: independently from the advice API.
    ranked = advise_holds(table, Card.empty(), (1, 3, 4, 5, 5), 1)
    mine = next(h for h in ranked if h.keep == (1,))
    assert (hold1.kind, hold1.roll, hold1.choice) == (DecisionKind.HOLD, 1, "keep 1")
    assert hold1.best == "keep " + " ".join(map(str, ranked[0].keep))
    assert hold1.loss == pytest.approx(ranked[0].expected - mine.expected, abs=1e-9) and hold1.loss > 1
    # Stopping after throw 2 (a hold of all five) against the best hold there.
    ranked2 = advise_holds(table, Card.empty(), (1, 2, 2, 6, 6), 2)
    stop = next(h for h in ranked2 if h.stop)
    assert hold2.choice == "stop" and hold2.loss == pytest.approx(ranked2[0].expected - stop.expected, abs=1e-9)
    # The box: Aces against the best box for 1 2 2 6 6 stopped on throw 2.
    boxes = advise_boxes(table, Card.empty(), (1, 2, 2, 6, 6), 2)
    aces = next(b for b in boxes if b.box == "aces")
    assert (box.kind, box.choice, box.best) == (DecisionKind.BOX, "aces", boxes[0].box)
    assert box.loss == pytest.approx(boxes[0].expected - aces.expected, abs=1e-9) and box.loss > 0
    p = a.players[0]
    assert p.decisions == 3 and p.optimal == sum(d.optimal for d in a.decisions)
    assert p.loss == pytest.approx(hold1.loss + hold2.loss + box.loss)
    assert not a.finished and a.variant == "standard"


def test_analysis_drops_undone_decisions():
    log = Log()
    log.do(ReadDice(at=1, values=(5, 5, 5, 5, 5)), ScoreBox(at=2, box="aces"), Undo(at=3), ScoreBox(at=4, box="yacht"))
    a = analyse_events(log.events)
    assert [(d.kind, d.choice) for d in a.decisions] == [(DecisionKind.HOLD, "stop"), (DecisionKind.BOX, "yacht")]
    assert a.players[0].loss == pytest.approx(0.0, abs=1e-6) and a.players[0].optimal == 2
    # An undone re-roll: the hold made before it is dropped, the stop that replaced it counts.
    log = Log()
    log.do(
        ReadDice(at=1, values=(1, 2, 3, 4, 6)),
        SetHolds(at=2, holds=(True,) * 4 + (False,)),
        Reroll(at=3, values=(1,)),
        Undo(at=4),
        ScoreBox(at=5, box="choice"),
    )
    a = analyse_events(log.events)
    assert [d.choice for d in a.decisions] == ["stop", "choice"]


def test_analysis_of_a_turn_in_progress_counts_its_holds_only():
    log = Log(players=("Ann", "Bo"))
    log.do(
        ReadDice(at=1, values=(6, 6, 1, 2, 3)),
        SetHolds(at=2, holds=(True, True, False, False, False)),
        Reroll(at=3, values=(6, 4, 4)),
    )
    a = analyse_events(log.events)
    assert [(d.kind, d.roll, d.choice) for d in a.decisions] == [(DecisionKind.HOLD, 1, "keep 6 6")]
    assert a.players[1].decisions == 0 and a.players[1].loss == 0.0


def _bot_game(ruleset, levels, seed, joker="forced"):
    rng = np.random.default_rng(seed)
    bots = [make_bot(lv, ruleset, joker if ruleset == "yahtzee" else None) for lv in levels]
    log = Log(ruleset, tuple(f"P{i}" for i in range(len(levels))), joker=joker, bots=tuple(levels))
    while log.state.turn is not None:
        p = log.state.turn.player
        bot = bots[p]
        log.do(ReadDice(at=1, values=tuple(int(x) for x in rng.integers(1, 7, 5)), source=DiceSource.VIRTUAL))
        while log.state.turn.roll < 3:
            hold = bot.choose_hold(log.state.cards[p], log.state.turn.dice, log.state.turn.roll)
            if all(hold):
                break
            log.do(
                SetHolds(at=1, holds=hold),
                Reroll(
                    at=1, values=tuple(int(x) for x in rng.integers(1, 7, 5 - sum(hold))), source=DiceSource.VIRTUAL
                ),
            )
        log.do(ScoreBox(at=1, box=bot.choose_box(log.state.cards[p], log.state.turn.dice, log.state.turn.roll)))
    return log


@pytest.mark.parametrize("ruleset", ["yacht", "yahtzee"])
def test_optimal_bot_loses_nothing_and_easy_bot_loses_something(ruleset):
    log = _bot_game(ruleset, ["optimal", "easy"], seed=3)
    a = analyse_events(log.events)
    best, easy = a.players
    assert a.finished and best.decisions >= len(log.state.cards[0])
    assert best.loss == pytest.approx(0.0, abs=1e-6) and best.optimal == best.decisions
    assert easy.loss > 5 and easy.optimal < easy.decisions
    assert all(d.loss >= 0 for d in a.decisions)
    worst = a.worst(5)
    assert worst and all(d.name == "P1" for d in worst) and list(worst) == sorted(worst, key=lambda d: -d.loss)
    assert (best.score, easy.score) == log.state.totals()


def test_analysis_refuses_free_roll_and_empty_logs():
    log = Log(ruleset="", players=(), mode=GameMode.FREE_ROLL)
    with pytest.raises(ValueError, match="free-roll"):
        analyse_events(log.events)
    with pytest.raises(ValueError, match="no events"):
        analyse_events([])


@pytest.fixture
def stored(tmp_path):
    """A finished two-player Yacht game (optimal vs easy) in a store; returns (db path, game id, log)."""
    log = _bot_game("yacht", ["optimal", "easy"], seed=8)
    db = tmp_path / "games.sqlite3"
    with open_store(db) as store:
        gid = store.create_game(log.events[0], fold(log.events[:1]))
        for i, e in enumerate(log.events[1:], start=1):
            store.append(gid, i, (e,), fold(log.events[: i + 1]))
    return db, gid, log


def test_export_analysis_json_csv_and_text(stored, capsys):
    db, gid, log = stored
    expected = analyse_events(log.events)
    assert main(["export", str(gid), "--analysis", "--format", "json", "--db", str(db)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [p["name"] for p in data["players"]] == ["P0", "P1"] and data["finished"] is True
    assert len(data["decisions"]) == len(expected.decisions)
    assert data["players"][1]["loss"] == pytest.approx(expected.players[1].loss, abs=1e-4)
    assert main(["export", str(gid), "--analysis", "--format", "csv", "--db", str(db)]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert tuple(rows[0]) == CSV_COLUMNS and len(rows) == 1 + len(expected.decisions) + 2
    assert rows[-1][0] == "total" and rows[-1][1] == "P1"
    assert float(rows[-1][-1]) == pytest.approx(expected.players[1].loss, abs=1e-4)
    assert sum(float(r[-1]) for r in rows[1:-2] if r[1] == "P1") == pytest.approx(expected.players[1].loss, abs=1e-2)
    assert main(["export", str(gid), "--analysis", "--db", str(db)]) == 0
    text = capsys.readouterr().out
    assert "P0: 0.00 points lost over" in text and f"P1: {expected.players[1].loss:.2f} points lost" in text


def test_export_analysis_bad_format_is_one_line(stored, capsys):
    db, gid, _ = stored
    assert main(["export", str(gid), "--analysis", "--format", "xml", "--db", str(db)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dicetable export: error:") and "choose text or json or csv" in err and "\n" not in err
    assert main(["export", str(gid), "--format", "text", "--db", str(db)]) == 2
    assert "choose json or csv" in capsys.readouterr().err


def test_export_analysis_of_an_abandoned_game(tmp_path, capsys):
    log = Log(players=("Ann",))
    log.do(ReadDice(at=1, values=(2, 2, 2, 3, 3)), ScoreBox(at=2, box="twos"), EndGame(at=3))
    db = tmp_path / "g.sqlite3"
    with open_store(db) as store:
        gid = store.create_game(log.events[0], fold(log.events[:1]))
        store.append(gid, 1, tuple(log.events[1:]), log.state)
    assert main(["export", str(gid), "--analysis", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "not finished" in out and "Ann:" in out and "over 2 decisions" in out
