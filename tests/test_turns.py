"""At the table (issue 38): the turn timer on an injected monotonic clock, resumed with the time left; fixing
a misread; the round-by-round history and its export; free roll; the roll-off; ``play``'s bad input.

No sleeps: the app's wall clock and monotonic clock are lists the test moves, and a no-op submitted to the
worker makes it look at the timer (as its queue's timeout does at the table).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from table.app import TableApp
from table.app.rolloff import RollOff, RollOffError
from table.cli import main
from table.display.snapshot import Setup
from table.game import DieCorrected, GameMode, ScoreCause, TimerExpired, best_box
from table.game.history import turns_of
from table.inputs import ButtonPanel, Command
from table.rules import find_ruleset
from vision.watch import EventKind, RollEvent, TrayDie


def settled(values, kind=EventKind.SETTLED):
    dice = tuple(TrayDie(v, (30.0 + 30 * i, 100.0), (0, 0, 10, 10), 0.99) for i, v in enumerate(values))
    return RollEvent(kind, 0, 0.0, dice=dice)


class Clocks:
    """The app's wall clock (epoch s) and monotonic clock, moved together by the test."""

    def __init__(self, mono: float = 1000.0) -> None:
        self.wall, self.mono = 1_700_000_000.0, mono

    def advance(self, s: float) -> None:
        self.wall += s
        self.mono += s


def make_app(path, clocks, **setup):
    s = Setup(setup.pop("ruleset", "yacht"), "forced", setup.pop("names", ["Ann", "Bo"]), **setup)
    return TableApp(path, setup=s, autostart=True, clock=lambda: clocks.wall, mono=lambda: clocks.mono).start()


def tick(app):
    app.submit(lambda: None).result(timeout=5)


def press(app, *commands, at=[5000.0]):  # noqa: B006 - monotonic press times, a second apart
    for c in commands:
        at[0] += 1.0
        app.press(c, mono=at[0]).result(timeout=5)


def test_timer_scores_the_best_box_on_expiry_warns_before_a_roll_and_resumes_with_the_time_left(tmp_path):
    clocks = Clocks()
    db = tmp_path / "g.sqlite3"
    app = make_app(db, clocks, timer_s=30)
    try:
        assert app.snapshot["timer"] == {"total": 30, "left": 30.0, "warn": False}
        clocks.advance(5)
        app.roll_event(settled((3, 3, 3, 5, 5))).result(timeout=5)
        want_box, want_points = best_box(app.state)
        clocks.advance(14)
        tick(app)
        assert app.snapshot["timer"] == {"total": 30, "left": 11.0, "warn": False} and app.state.turn.player == 0
        clocks.advance(2)
        tick(app)
        assert app.snapshot["timer"]["warn"] is True  # the last 10 s: LEDs blink, the page's countdown is red
        clocks.advance(9.5)
        tick(app)
        st = app.state
        assert st.turn.player == 1 and st.history[-1].cause is ScoreCause.TIMER
        assert (st.history[-1].box, st.history[-1].points) == (want_box, want_points)
        shown = find_ruleset("yacht").display_name(want_box)
        assert app.snapshot["message"] == f"Time is up for Ann: {want_points} in {shown}. Bo to roll."
        assert app.snapshot["timer"]["left"] == 30.0
        clocks.advance(30)  # Bo never rolls: a warning, and the timer starts again
        tick(app)
        assert app.state.turn.player == 1 and app.state.turn.timer_warnings == 1
        assert app.snapshot["message"] == "Time is up, Bo: roll now." and app.snapshot["timer"]["left"] == 30.0
        clocks.advance(12)
        app.roll_event(settled((1, 2, 3, 4, 6))).result(timeout=5)
        clocks.advance(7)  # 19 s used in all; the last event was at 12 s
    finally:
        app.close()
    clocks.advance(3600)  # the table was off for an hour; the monotonic clock starts anew
    clocks.mono = 50.0
    app = make_app(db, clocks)
    try:
        assert app.resumed and app.setup.timer_s == 30
        assert app.snapshot["timer"]["left"] == 18.0  # 30 - 12: the time left at the last action
        clocks.advance(17.9)
        tick(app)
        assert app.state.turn.player == 1
        clocks.advance(0.2)
        tick(app)
        assert app.state.turn.player == 0 and app.state.history[-1].cause is ScoreCause.TIMER
        events = app.game_events().result(timeout=5)
        assert [e.rolled for e in events if isinstance(e, TimerExpired)] == [True, False, True]
    finally:
        app.close()


def test_fix_a_misread_with_the_buttons_records_who_old_and_new(tmp_path):
    clocks = Clocks()
    app = make_app(tmp_path / "g.sqlite3", clocks)
    try:
        press(app, Command.MENU)
        app.choose("fix").result(timeout=5)
        assert app.snapshot["message"].startswith("Nothing to fix yet")
        app.roll_event(settled((1, 2, 3, 4, 6))).result(timeout=5)
        press(app, Command.MENU)
        app.choose("fix").result(timeout=5)
        assert app.snapshot["fix"] == {"die": 0, "value": 1, "dice": [1, 2, 3, 4, 6]}
        press(app, Command.NEXT, Command.NEXT, Command.NEXT, Command.NEXT)  # die 5
        press(app, Command.ROLL)  # 6 -> 1
        press(app, Command.HOLD_2, Command.ROLL, Command.ROLL, Command.ROLL)  # die 2: 2 -> 5
        assert app.snapshot["fix"]["die"] == 1 and app.snapshot["fix"]["value"] == 5
        clocks.advance(3)
        press(app, Command.SCORE)
        assert app.state.turn.dice == (1, 5, 3, 4, 6) and app.snapshot["fix"] is None
        ev = [e for e in app.game_events().result(timeout=5) if isinstance(e, DieCorrected)]
        assert [(e.die, e.was, e.value, e.by, e.at) for e in ev] == [(1, 2, 5, "Ann", clocks.wall)]
        assert app.snapshot["message"] == "Die 2 fixed: 2 -> 5 (by Ann)."
        # the page: open, a value that does not exist (one line, nothing changes), then a real one
        app.fix({}, seen=app.seq).result(timeout=5)
        app.fix({"die": 4}, seen=app.seq).result(timeout=5)
        app.fix({"value": 7}, seen=app.seq).result(timeout=5)
        assert app.snapshot["message"] == "A die shows 1 to 6; 7 cannot be set: pick a value from 1 to 6."
        assert app.snapshot["fix"] == {"die": 4, "value": 6, "dice": [1, 5, 3, 4, 6]}
        app.fix({"value": 5}, seen=app.seq).result(timeout=5)
        app.fix({"confirm": True}, seen=app.seq, origin="phone 10.0.0.7").result(timeout=5)
        assert app.state.turn.dice == (1, 5, 3, 4, 5)
        last = app.game_events().result(timeout=5)[-1]
        assert (last.die, last.was, last.value, last.by) == (4, 6, 5, "Ann (phone 10.0.0.7)")
        press(app, Command.MENU)
        app.choose("fix").result(timeout=5)
        press(app, Command.ROLL, Command.MENU)  # MENU cancels
        assert app.snapshot["fix"] is None and app.state.turn.dice == (1, 5, 3, 4, 5)
    finally:
        app.close()


def test_history_view_and_export_show_throws_holds_rerolls_corrections_and_timer(tmp_path, capsys):
    clocks = Clocks()
    db = tmp_path / "g.sqlite3"
    app = make_app(db, clocks, timer_s=45)
    try:
        app.roll_event(settled((2, 2, 5, 1, 6))).result(timeout=5)
        press(app, Command.HOLD_1, Command.HOLD_2)
        app.roll_event(settled((2, 2, 4, 3, 2))).result(timeout=5)
        app.fix({"die": 2}, seen=app.seq).result(timeout=5)
        app.fix({"value": 2}, seen=app.seq).result(timeout=5)
        app.fix({"confirm": True}, seen=app.seq).result(timeout=5)
        clocks.advance(3)
        press(app, Command.SCORE)  # the best box for 2 2 2 3 2
        clocks.advance(46)
        tick(app)  # Bo: time is up before a roll
        press(app, Command.MENU)
        app.choose("history").result(timeout=5)
        h = app.snapshot["history"]
        assert (h["round"], h["rounds"]) == (1, 1)
        ann, bo = h["turns"]
        assert [t["dice"] for t in ann["throws"]] == [[2, 2, 5, 1, 6], [2, 2, 2, 3, 2]]
        assert ann["throws"][1]["held"] == [True, True, False, False, False]
        assert ann["throws"][1]["rerolled"] == [2, 3, 4]
        assert [(c["die"], c["was"], c["value"], c["by"]) for c in ann["corrections"]] == [(2, 4, 2, "Ann")]
        assert ann["box"] == app.state.history[0].box and ann["points"] == app.state.history[0].points
        assert bo["timer"] == [{"at": clocks.wall, "rolled": False}] and bo["box"] is None
        press(app, Command.PREV)  # no round before the first: it stays
        assert app.snapshot["history"]["round"] == 1
        press(app, Command.ROLL)
        assert app.snapshot["history"] is None
        game_id = app.session.game_id
    finally:
        app.close()
    assert main(["export", str(game_id), "--history", "--db", str(db)]) == 0
    turns = json.loads(capsys.readouterr().out)["turns"]
    assert turns[0]["corrections"][0]["was"] == 4 and turns[1]["timer"][0]["rolled"] is False
    # numbered as the CSV and the docs: turn 1, dice 1-5
    assert [t["turn"] for t in turns] == [1, 2]
    assert [th["rerolled"] for th in turns[0]["throws"]] == [[1, 2, 3, 4, 5], [3, 4, 5]]
    assert turns[0]["corrections"][0]["die"] == 3
    assert main(["export", str(game_id), "--history", "--format", "csv", "--db", str(db)]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["player"], r["roll"], r["dice"], r["held"], r["rerolled"]) for r in rows[:2]] == [
        ("Ann", "1", "2 2 5 1 6", "", "1 2 3 4 5"),
        ("Ann", "2", "2 2 2 3 2", "1 2", "3 4 5"),
    ]
    assert rows[1]["corrections"] == "die 3: 4 -> 2 by Ann" and rows[1]["box"] == ann["box"]
    assert rows[2]["player"] == "Bo" and rows[2]["timer"] == "expired before a roll"
    served = served_history(db)
    assert served == main_csv(game_id, db, capsys)  # the page's download is the export's CSV


def main_csv(game_id, db, capsys):
    assert main(["export", str(game_id), "--history", "--format", "csv", "--db", str(db)]) == 0
    return capsys.readouterr().out


def served_history(db):
    """GET /export/history.csv from the page's server on the resumed game."""
    pytest.importorskip("httpx", reason="httpx is not installed: pip install '.[test]'")
    from starlette.testclient import TestClient

    from table.display.server import create_app

    with TableApp(db).start() as app, TestClient(create_app(app, host_names={"testserver"})) as client:
        r = client.get("/export/history.csv")
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
        return r.text


def test_free_roll_reads_any_count_up_to_the_tray_sums_and_logs(tmp_path):
    clocks = Clocks()
    app = make_app(tmp_path / "g.sqlite3", clocks, mode="free_roll", names=["Ann"])
    try:
        assert app.state.mode is GameMode.FREE_ROLL and app.free_dice
        app.roll_event(settled((6, 1))).result(timeout=5)
        app.roll_event(settled((3, 4, 5))).result(timeout=5)
        free = app.snapshot["free"]
        assert free["last"] == {"values": [3, 4, 5], "total": 12} and free["count"] == 2
        assert [(r["n"], r["total"]) for r in free["log"]] == [(2, 12), (1, 7)]
        app.roll_event(settled((1, 2, 3, 4, 5, 6))).result(timeout=5)
        assert app.snapshot["message"].startswith("6 dice is more than this tray takes: throw 1 to 5 dice")
        assert app.snapshot["free"]["count"] == 2
        app.fix({"die": 0}, seen=app.seq).result(timeout=5)
        app.fix({"value": 6}, seen=app.seq).result(timeout=5)
        app.fix({"confirm": True}, seen=app.seq).result(timeout=5)
        assert app.snapshot["free"]["last"] == {"values": [6, 4, 5], "total": 15}
    finally:
        app.close()


def test_rolloff_ties_rethrow_only_the_tied_and_the_winner_starts_the_game(tmp_path):
    r = RollOff(("Ann", "Bo", "Cy", "Di"))
    r = r.read((5, 6, 6, 2))  # one die each, read left to right
    assert r.throwing == ("Bo", "Cy") and r.round == 2 and r.winner is None
    with pytest.raises(RollOffError, match="throw one die for Bo, or one die each for Bo, Cy"):
        r.read((1, 2, 3))
    r = r.read((4,)).read((4,))
    assert r.throwing == ("Bo", "Cy") and r.round == 3
    r = r.read((3, 1))
    assert r.winner == "Bo" and r.seating() == ("Bo", "Cy", "Di", "Ann")
    assert [x for x in r.log if x[1] == "Ann"] == [(1, "Ann", 5)]

    clocks = Clocks()
    app = TableApp(tmp_path / "g.sqlite3", setup=Setup("yacht", "forced", ["Ann", "Bo", "Cy:easy"])).start()
    try:
        for _ in range(Setup.FIELDS.index("rolloff")):
            press(app, Command.NEXT)
        press(app, Command.ROLL)
        assert app.screen == "rolloff" and app.free_dice
        app.roll_event(settled((3,))).result(timeout=5)
        app.roll_event(settled((5, 5))).result(timeout=5)  # Bo and Cy: a tie
        assert app.snapshot["rolloff"]["throwing"] == ["Bo", "Cy"] and "A tie" in app.snapshot["message"]
        app.rolloff_face(7).result(timeout=5)
        assert app.snapshot["message"] == "faces [7] cannot be read as a throw; throw again"
        app.rolloff_face(2).result(timeout=5)
        app.rolloff_face(6).result(timeout=5)
        assert app.snapshot["rolloff"]["winner"] == "Cy"
        press(app, Command.ROLL)
        assert app.screen == "setup" and app.setup.names == ["Cy:easy", "Ann", "Bo"]
        assert app.snapshot["setup"]["field"] == "start"
        press(app, Command.ROLL)  # Start
        assert app.state.players == ("Cy", "Ann", "Bo") and app.state.turn.player == 0
    finally:
        app.close()
    del clocks


@pytest.mark.parametrize(
    "argv, said",
    [
        (["--timer", "50"], "--timer '50' is not offered: give 30, 45, 60, 90, 600 seconds, or leave it out"),
        (["--rules", "free", "--timer", "30"], "a free roll has no turn timer: leave out --timer"),
        (["--rules", "free", "--dice", "9"], "--dice 9: this tray takes 1 to 5 dice"),
    ],
)
def test_play_timer_and_free_roll_bad_input_is_one_line(argv, said, capsys, tmp_path):
    status = main(["play", "--camera", "synthetic", "--no-buttons", "--db", str(tmp_path / "g.sqlite3"), *argv])
    err = capsys.readouterr().err.strip()
    assert status == 2 and said in err and "\n" not in err


def test_history_of_an_undone_throw_shows_what_stands():
    from table.game import ReadDice, ScoreBox, StartGame, Undo, execute

    s, events = None, []
    for c in (
        StartGame(at=0.0, ruleset="yacht", players=("Ann",)),
        ReadDice(at=1.0, values=(1, 1, 2, 3, 4)),
        ReadDice(at=2.0, values=(1, 1, 5, 5, 5)),
        Undo(at=3.0),
        ReadDice(at=4.0, values=(1, 1, 6, 6, 6)),
        ScoreBox(at=5.0, box="full_house"),
    ):
        s, new = execute(s, c)
        events += new
    (turn,) = turns_of(events)
    assert [t["dice"] for t in turn["throws"]] == [[1, 1, 2, 3, 4], [1, 1, 6, 6, 6]] and turn["box"] == "full_house"


def test_hold_leds_blink_in_the_timers_last_seconds_and_show_the_holds_after():
    """The hold LEDs on mock pins: lit for held dice, all blinking (gpiozero's blink thread) while told to."""
    import time

    from gpiozero.pins.mock import MockFactory

    from table.commands._play_options import led_state
    from table.inputs import load_pin_map

    def seen(pin, want):  # waits for the blink thread (not a timed assert: up to 5 s on a busy machine)
        end = time.monotonic() + 5.0
        while pin.state is not want and time.monotonic() < end:
            time.sleep(0.005)
        return pin.state is want

    pins, pin_map = MockFactory(), load_pin_map()
    held = [True, False, True, False, False]
    with ButtonPanel(pin_map, on_command=lambda c: None, pin_factory=pins) as panel:
        leds = [pins.pin(pin_map.leds[i]) for i in range(5)]
        panel.set_holds(*led_state({"game": {"holds": held}, "timer": {"warn": False}}))
        assert [p.state for p in leds] == held
        panel.set_holds(*led_state({"game": {"holds": held}, "timer": {"warn": True}}))
        assert all(seen(p, False) and seen(p, True) and seen(p, False) for p in leds)
        panel.set_holds(*led_state({"game": {"holds": [False, True, False, False, False]}, "timer": None}))
        assert [p.state for p in leds] == [False, True, False, False, False]


def test_free_roll_on_the_synthetic_camera_reads_the_throw_and_the_watcher_takes_any_count(tmp_path):
    """With the real roll watcher (the profile's five dice expected), free roll and the roll-off set it to
    take any count; a scorecard game sets the profile's count back."""
    import time

    from calibration.profile import load_profile
    from table.app.camera import CameraLoop
    from table.commands.play import watcher_factory
    from table.demo.livetray import LiveTray

    profile, tray = load_profile("default"), LiveTray(seed=3)

    make = watcher_factory(profile, "truth")

    def until(cond):  # waits for the camera thread (up to 20 s on a busy machine); not a timed assert
        end = time.monotonic() + 20.0
        while not cond() and time.monotonic() < end:
            time.sleep(0.01)
        return cond()

    setup = Setup("yacht", "forced", ["Ann"], mode="free_roll")
    app = TableApp(tmp_path / "g.sqlite3", setup=setup, autostart=True, tray=tray).start()
    camera = CameraLoop(app, lambda: tray, make, speed=0).start()
    try:
        assert until(lambda: camera.watcher is not None and camera.watcher.expected_dice is None)
        press(app, Command.ROLL)
        assert until(lambda: app.snapshot["free"]["count"] == 1)
        left_to_right = [v for v, _ in sorted(tray.truth_dice(), key=lambda d: d[1][0])]
        assert app.snapshot["free"]["last"]["values"] == left_to_right
        press(app, Command.MENU)
        app.choose("new").result(timeout=5)  # "End this game?"
        app.choose("new", mono=10.0**6).result(timeout=5)  # yes
        app.apply_setup({"mode": "scorecard", "start": True}).result(timeout=5)
        assert app.state.mode is GameMode.SCORECARD
        assert until(lambda: camera.watcher.expected_dice == profile.dice_count)
    finally:
        camera.close()
        app.close()


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc and /sys (folders no file can go in)")
def test_export_says_why_a_folder_cannot_take_the_file(tmp_path, capsys):
    from table.app.session import GameSession
    from table.game import StartGame
    from table.store import open_store

    db = tmp_path / "g.sqlite3"
    with open_store(db) as store:
        game_id = GameSession.start(store, StartGame(at=1, ruleset="yacht", players=("Cy",))).game_id
    for out, why in (("/proc/x.json", "does not exist or cannot hold files"), ("/sys/x.json", "is not writable")):
        assert main(["export", str(game_id), "-o", out, "--db", str(db)]) == 2
        err = capsys.readouterr().err
        assert why in err and "free some space" not in err and len(err.strip().splitlines()) == 1


def test_free_roll_rolls_pressed_while_the_dice_roll_do_not_lose_the_throw(tmp_path):
    """A second ROLL while the synthetic dice still tumble used to throw anew mid-tumble, so the first
    throw was never read (three presses, two logged throws): it is refused, and every throw is logged."""
    import time

    from calibration.profile import load_profile
    from table.app.camera import CameraLoop
    from table.commands.play import watcher_factory
    from table.demo.livetray import LiveTray

    profile, tray = load_profile("default"), LiveTray(seed=5)

    make = watcher_factory(profile, "truth")

    setup = Setup("yacht", "forced", ["Ann"], mode="free_roll")
    app = TableApp(tmp_path / "g.sqlite3", setup=setup, autostart=True, tray=tray).start()
    camera = None
    try:
        press(app, Command.ROLL)
        press(app, Command.ROLL)  # no camera reads yet: the first throw is still rolling
        assert app.snapshot["message"] == "The dice are still rolling." and tray.throws == 1
        camera = CameraLoop(app, lambda: tray, make, speed=0).start()
        end = time.monotonic() + 20.0  # waits for the camera thread; not a timed assert
        while app.snapshot["free"]["count"] < 1 and time.monotonic() < end:
            time.sleep(0.01)
        press(app, Command.ROLL)  # read: this one throws
        while app.snapshot["free"]["count"] < 2 and time.monotonic() < end + 20.0:
            time.sleep(0.01)
        assert app.snapshot["free"]["count"] == tray.throws == 2
    finally:
        if camera is not None:
            camera.close()
        app.close()


def test_held_dice_on_the_synthetic_tray_are_not_read_as_leaning():
    """Held dice in the synthetic tray's hold area, read by the model reader: none boxed as leaning (a held
    6 laid square was boxed 50 x 68 px, over the watcher's box aspect; the bot game re-threw again and again)."""
    import numpy as np

    from calibration.procedure import make_watcher
    from calibration.profile import load_profile
    from table.demo.livetray import LiveTray
    from vision.reader import read_image

    profile = load_profile("default")
    watcher = make_watcher(profile, read_image)
    c, ppm = watcher.config, watcher.geometry.px_per_mm
    side = watcher.die_mm * ppm
    rng = np.random.default_rng(0)
    tray = LiveTray(seed=0)
    tray.throw([])
    held = []
    for keep in ([0, 1, 2], [1, 2, 3], [0, 3], [2]):
        values = [int(v) for v in rng.integers(1, 7, 5)]
        for i in keep:
            values[i] = 6 if rng.random() < 0.5 else values[i]  # a held 6 half the time
        tray.throw(keep, values)
        while tray.busy:
            tray.read()
        for d in read_image(watcher.geometry.rectify(tray.read().image)).dice:
            x, y, w, h = d.box
            if (x + w / 2) / ppm > profile.hold_area_mm[0]:
                held.append((d.value, max(w, h) / side, max(w, h) / max(1, min(w, h))))
    assert len(held) == 9
    assert all(v is not None and size <= c.lean_box_size and aspect <= c.lean_box_aspect for v, size, aspect in held), (
        held
    )
