"""Bots as players: engine rules for virtual rolls, the shared bot step, the app's bot seats, ``play`` with bots."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from table.app.bots import BotStep, bot_text, next_step, split_seat
from table.game import (
    DiceSource,
    IllegalCommandError,
    InvalidCommandError,
    ReadDice,
    ScoreBox,
    SetHolds,
    StartGame,
    event_from_json,
    event_to_json,
    execute,
)
from table.game.events import DiceRead, GameStarted
from table.inputs import Command
from table.rules import Card, find_ruleset, score_options
from table.strategy import advise_boxes, advise_holds, get_table, make_bot

# -- the engine ---------------------------------------------------------------------------


def test_virtual_rolls_only_on_a_bots_turn():
    state, _ = execute(None, StartGame(at=0, ruleset="yacht", players=("Ann", "HAL"), bots=("", "optimal")))
    with pytest.raises(IllegalCommandError, match="only for a bot's turn, and Ann is a person"):
        execute(state, ReadDice(at=1, values=(1, 2, 3, 4, 5), source=DiceSource.VIRTUAL))
    state, _ = execute(state, ReadDice(at=1, values=(1, 2, 3, 4, 5), source=DiceSource.CAMERA))
    state, _ = execute(state, ScoreBox(at=2, box="choice"))
    state, events = execute(state, ReadDice(at=3, values=(6, 6, 6, 6, 6), source=DiceSource.VIRTUAL))
    assert events[0].source is DiceSource.VIRTUAL and state.turn.dice == (6,) * 5
    assert state.bots == ("", "optimal") and state.bot_level(1) == "optimal" and state.bot_level(0) == ""
    # Without bots, no seat takes virtual dice.
    plain, _ = execute(None, StartGame(at=0, ruleset="yacht", players=("Ann",)))
    with pytest.raises(IllegalCommandError):
        execute(plain, ReadDice(at=1, values=(1, 2, 3, 4, 5), source=DiceSource.VIRTUAL))


def test_bot_seats_must_fit_the_players_and_round_trip():
    with pytest.raises(InvalidCommandError, match="one entry per seat"):
        execute(None, StartGame(at=0, ruleset="yacht", players=("Ann", "Bo"), bots=("optimal",)))
    with pytest.raises(InvalidCommandError, match="one entry per seat"):
        execute(None, StartGame(at=0, ruleset="yacht", players=("Ann",), bots=("Not a level",)))
    e = GameStarted(at=0.0, ruleset="yacht", joker="forced", players=("Ann", "HAL"), bots=("", "easy"))
    assert event_from_json(event_to_json(e)) == e
    plain = GameStarted(at=0.0, ruleset="yacht", joker="forced", players=("Ann",))
    assert "bots" not in event_to_json(plain) and event_from_json(event_to_json(plain)) == plain
    d = DiceRead(at=1.0, values=(1, 2, 3, 4, 5), roll=1, source=DiceSource.VIRTUAL)
    assert event_from_json(event_to_json(d)) == d


def test_split_seat():
    assert split_seat("Ann") == ("Ann", "")
    assert split_seat("HAL: Optimal") == ("HAL", "optimal")
    with pytest.raises(ValueError, match="unknown bot level 'genius'"):
        split_seat("Ann:genius")


# -- the shared bot step -------------------------------------------------------------------


def test_optimal_bot_step_holds_exactly_what_the_advice_keeps_and_scores_legal_boxes():
    table = get_table("yahtzee", "forced", build=False)
    bot = make_bot("optimal", "yahtzee", "forced", table=table)
    rng = np.random.default_rng(2)
    state, _ = execute(None, StartGame(at=0, ruleset="yahtzee", players=("HAL",), bots=("optimal",)))
    checked = 0
    while state.turn is not None:
        step = next_step(state, bot, None)
        assert step == BotStep("throw", (False,) * 5)
        state, _ = execute(state, ReadDice(at=1, values=tuple(int(v) for v in rng.integers(1, 7, 5))))
        while True:
            turn = state.turn
            card = state.cards[0]
            step = next_step(state, bot, None)
            if turn.roll < 3:
                best = advise_holds(table, card, turn.dice, turn.roll)[0]
                if best.stop:
                    assert step.action == "select"
                else:
                    # Never holds a die the advice would re-roll, never re-rolls one it would keep.
                    if tuple(turn.holds) != best.hold:
                        assert step == BotStep("hold", best.hold)
                        state, _ = execute(state, SetHolds(at=1, holds=best.hold))
                    checked += 1
                    assert next_step(state, bot, None) == BotStep("throw", best.hold)
                    kept = [d for d, h in zip(turn.dice, best.hold) if h]
                    values = [int(v) for v in rng.integers(1, 7, 5 - len(kept))]
                    new = [d if h else values.pop() for d, h in zip(turn.dice, best.hold)]
                    state, _ = execute(state, ReadDice(at=1, values=tuple(new)))
                    continue
            assert step.box in score_options("yahtzee", turn.dice, card, roll=turn.roll, joker="forced")
            assert step.box == advise_boxes(table, card, turn.dice, turn.roll)[0].box
            assert next_step(state, bot, step.box) == BotStep("score", box=step.box)
            state, _ = execute(state, ScoreBox(at=1, box=step.box))
            break
    assert checked > 5 and len(state.cards[0]) == 13


@pytest.mark.parametrize("level", ["easy", "medium", "optimal"])
def test_every_level_plays_a_whole_game_of_legal_boxes_on_the_app(tmp_path, level):
    """Virtual dice, no delay: the engine refuses an illegal box, so a finished game means every box was legal."""
    from table.app import TableApp
    from table.display.snapshot import Setup

    with TableApp(
        tmp_path / "g.sqlite3",
        setup=Setup("generala", "forced", [f"Bot:{level}"]),
        autostart=True,
        bot_dice="virtual",
        bot_delay_s=0,
        bot_seed=5,
    ) as app:
        assert app.finished.wait(60), app.snapshot["message"]
        st = app.state
        assert len(st.cards[0]) == len(find_ruleset("generala").boxes) and st.bots == (level,)
        assert app.message.endswith("won!")


# -- the app's bot seats ---------------------------------------------------------------------


def _wait(cond, timeout=20.0):
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.02)


def test_app_virtual_bots_play_a_whole_game_and_the_end_screen_has_the_analysis(tmp_path):
    from table.app import TableApp
    from table.display.snapshot import Setup

    with TableApp(
        tmp_path / "g.sqlite3",
        setup=Setup("yacht", "forced", ["HAL:optimal", "Eve:easy"]),
        autostart=True,
        bot_dice="virtual",
        bot_delay_s=0,
        bot_seed=1,
    ) as app:
        assert app.finished.wait(60)
        _wait(lambda: (app.snapshot.get("analysis") or {}).get("status") == "ready")
        events = app.game_events().result(timeout=5)
        reads = [e for e in events if isinstance(e, DiceRead)]
        assert reads and all(e.source is DiceSource.VIRTUAL for e in reads)
        a = app.snapshot["analysis"]
        assert [p["name"] for p in a["players"]] == ["HAL", "Eve"]
        assert a["players"][0]["loss"] == 0.0 and a["players"][0]["optimal"] == a["players"][0]["decisions"]
        assert a["players"][1]["loss"] > 0 and 0 < len(a["worst"]) <= 5
        assert all(w["name"] == "Eve" for w in a["worst"]) and a["worst"][0]["loss"] >= a["worst"][-1]["loss"]
        assert [p["bot"] for p in app.snapshot["game"]["players"]] == ["optimal", "easy"]
        assert app.snapshot["screen"] == "end" and app.snapshot["end_view"] == "card"
        pytest.importorskip("httpx", reason="httpx is not installed: pip install '.[test]'")
        from starlette.testclient import TestClient

        from table.display.server import create_app

        got = TestClient(create_app(app, host_names={"testserver"})).get("/export/analysis.csv")
        assert got.status_code == 200 and got.headers["content-type"].startswith("text/csv")
        lines = got.text.splitlines()
        assert lines[0].startswith("turn,player,kind") and lines[-1].startswith("total,Eve,")
        app.press(Command.NEXT).result(timeout=5)
        assert app.snapshot["end_view"] == "analysis"


def test_app_virtual_bot_ignores_the_camera_and_people_wait(tmp_path):
    from table.app import TableApp
    from table.display.snapshot import Setup
    from tests.test_display import settled

    with TableApp(
        tmp_path / "g.sqlite3",
        setup=Setup("yacht", "forced", ["Ann", "HAL:medium"]),
        autostart=True,
        bot_dice="virtual",
        bot_delay_s=600,
        bot_seed=1,
    ) as app:
        app.roll_event(settled((2, 2, 2, 5, 5))).result(timeout=5)
        app.press(Command.SCORE).result(timeout=5)
        assert app.state.turn.player == 1 and app.snapshot["bot"]["text"] == "HAL (bot) rolls on screen."
        app.roll_event(settled((1, 1, 1, 1, 1))).result(timeout=5)
        assert app.state.turn.roll == 0  # the tray is not read on a virtual bot's turn
        for c in (Command.HOLD_1, Command.ROLL, Command.SCORE):
            app.press(c).result(timeout=5)
            assert "HAL (medium bot) rolls on screen; wait for your turn" in app.snapshot["message"]
        app.submit(app.bots.step).result(timeout=5)  # the timer's step, now
        assert app.state.turn.roll == 1


def test_app_tray_bot_sets_its_holds_and_scores_by_itself(tmp_path):
    """A person throws for the bot; after each settled roll the bot holds as the tables advise, then scores."""
    from table.app import TableApp
    from table.display.snapshot import Setup
    from tests.test_display import settled

    table = get_table("yacht", build=False)
    with TableApp(
        tmp_path / "g.sqlite3",
        setup=Setup("yacht", "forced", ["HAL:optimal"]),
        autostart=True,
        bot_dice="tray",
        bot_delay_s=600,
    ) as app:
        step = lambda: app.submit(app.bots.step).result(timeout=5)  # noqa: E731
        assert app.snapshot["bot"]["text"] == "HAL (bot): throw all five dice for it."
        step()
        assert app.state.turn.roll == 0  # waits for the dice
        app.press(Command.HOLD_1).result(timeout=5)
        assert "throw its dice in the tray" in app.snapshot["message"]
        app.roll_event(settled((6, 6, 1, 2, 6))).result(timeout=5)
        step()
        best = advise_holds(table, Card.empty(), (6, 6, 1, 2, 6), 1)[0]
        assert app.state.turn.holds == best.hold == (True, True, False, False, True)
        assert app.snapshot["bot"]["text"] == "HAL (bot) keeps 6 6 6: throw the other 2 dice for it."
        assert [d["held"] for d in app.snapshot["game"]["dice"]] == list(best.hold)
        app.roll_event(settled((6, 6, 6, 6, 6), held=(0, 1, 2))).result(timeout=5)
        assert app.state.turn.roll == 2 and app.state.turn.dice == (6,) * 5
        assert app.selected == "yacht"  # the table selects the box worth the most
        step()  # five sixes: the bot stops and scores Yacht, already selected
        assert app.state.cards[0].boxes == {"yacht": 50}
        assert app.snapshot["message"] == "HAL to roll."


def test_bot_text_for_each_phase():
    state, _ = execute(None, StartGame(at=0, ruleset="yacht", players=("HAL",), bots=("easy",)))
    assert bot_text(state, "virtual") == "HAL (bot) rolls on screen."
    state, _ = execute(state, ReadDice(at=1, values=(1, 2, 3, 4, 6)))
    assert bot_text(state, "tray") == "HAL (bot) keeps nothing: throw all five dice again for it."
    assert bot_text(state, "virtual") == "HAL (bot) rolled on screen (throw 1 of 3)."


# -- dicetable play with bots ---------------------------------------------------------------------

pytest.importorskip("fastapi", reason="fastapi is not installed: pip install .")


def _run_play(argv, monkeypatch):
    import table.app as app_mod
    from table.cli import main

    apps = []
    real_start = app_mod.TableApp.start
    monkeypatch.setattr(app_mod.TableApp, "start", lambda self: apps.append(self) or real_start(self))
    result = {}
    t = threading.Thread(target=lambda: result.setdefault("status", main(argv)))
    t.start()
    _wait(lambda: apps and apps[0].seq)
    return apps[0], t, result


def test_play_bad_bot_level_is_one_line(capsys, tmp_path):
    import socket

    from table.cli import main

    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    try:  # the bad level is told, not the port in use (the usage error comes first)
        status = main(
            [
                "play",
                "--camera",
                "synthetic",
                "--no-buttons",
                "--db",
                str(tmp_path / "g.sqlite3"),
                "--port",
                str(busy.getsockname()[1]),
                "--players",
                "Ann,HAL:genius",
            ]
        )
    finally:
        busy.close()
    err = capsys.readouterr().err.strip()
    assert status == 2 and "unknown bot level 'genius'" in err and "\n" not in err
    with pytest.raises(SystemExit) as exc:  # argparse's own usage error
        main(["play", "--camera", "synthetic", "--no-buttons", "--players", "HAL:easy", "--bot-dice", "dice"])
    assert exc.value.code == 2 and "invalid choice: 'dice'" in capsys.readouterr().err


def test_play_virtual_bots_play_the_game_through(tmp_path, monkeypatch):
    db = tmp_path / "g.sqlite3"
    argv = [
        "play",
        "--camera",
        "synthetic:2",
        "--reader",
        "truth",
        "--rules",
        "yacht",
        "--players",
        "HAL:optimal,Eve:easy",
        "--bot-dice",
        "virtual",
        "--bot-delay",
        "0",
        "--bot-seed",
        "4",
        "--port",
        "0",
        "--no-buttons",
        "--db",
        str(db),
        "--duration",
        "6",
    ]
    app, t, result = _run_play(argv, monkeypatch)
    assert app.finished.wait(30), app.snapshot["message"]
    st = app.state
    assert st.bots == ("optimal", "easy") and all(len(c) == 12 for c in st.cards)
    t.join(timeout=40)
    assert result["status"] == 0


@pytest.mark.slow
def test_play_tray_bot_on_the_synthetic_camera(tmp_path, monkeypatch):
    """A person presses ROLL (throws the synthetic dice) for the bot; the bot holds and scores by itself."""
    db = tmp_path / "g.sqlite3"
    argv = [
        "play",
        "--camera",
        "synthetic:3",
        "--reader",
        "truth",
        "--rules",
        "yacht",
        "--players",
        "HAL:optimal",
        "--bot-delay",
        "0",
        "--port",
        "0",
        "--no-buttons",
        "--db",
        str(db),
        "--duration",
        "25",
    ]
    app, t, result = _run_play(argv, monkeypatch)
    bot = make_bot("optimal", "yacht")
    try:
        end = time.monotonic() + 24
        while len(app.state.history) < 2:
            assert time.monotonic() < end, f"stuck: {app.snapshot['message']!r} {app.state.turn}"
            st = app.state
            step = next_step(st, bot, app.selected)
            if step is not None and step.action == "throw" and tuple(st.turn.holds) == step.holds and not app.tray.busy:
                before = app.verdicts
                app.press(Command.ROLL).result(timeout=5)
                _wait(lambda: app.verdicts > before or app.state is not st)
            time.sleep(0.05)
        events = app.game_events().result(timeout=5)
        reads = [e for e in events if isinstance(e, DiceRead)]
        assert reads and all(e.source is DiceSource.CAMERA for e in reads)
        assert [h.player for h in app.state.history[:2]] == [0, 0]
    finally:
        t.join(timeout=60)
    assert result["status"] == 0
