"""The display app without a browser: snapshots, WebSocket commands and the PIN, exports, camera -> game.

Roll events are built as the roll watcher makes them (vision.watch.RollEvent), so
the app's path from a settled reading to the game is tested here too.
"""

from __future__ import annotations

import http.client
import itertools
import json
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="fastapi is not installed: pip install .")
pytest.importorskip("httpx", reason="httpx is not installed: pip install '.[test]'")
from starlette.testclient import TestClient  # noqa: E402

from table.app import (  # noqa: E402
    ADVICE,
    CONFIRM_END,
    CONFIRM_PAUSE_S,
    CONFIRM_TOO_SOON,
    MENU_CLOSED,
    MENU_ITEMS,
    NOT_SEEN,
    SETUP_TOO_SOON,
    TableApp,
    assign_slots,
)
from table.display.export import scorecards_png  # noqa: E402
from table.display.server import STATIC, create_app  # noqa: E402
from table.display.snapshot import Setup  # noqa: E402
from table.inputs import Command  # noqa: E402
from table.rules import score_options  # noqa: E402
from vision.watch import EventKind, Flag, FlagKind, RollEvent, TrayDie  # noqa: E402

NEW = [i for i, _ in MENU_ITEMS].index("new")  # the menu's "New game" item (the last: PREV wraps to it)
HOLD_X = 180.0  # tray mm of the hold area in these events


def settled(values, held=(), flags=(), kind=EventKind.SETTLED, problems=()):
    """A watcher event: dice in the roll area at x = 30, 60, ...; held ones in the hold area."""
    dice = []
    for i, v in enumerate(values):
        xy = (HOLD_X, 20.0 + 20 * i) if i in held else (30.0 + 30 * i, 100.0)
        dice.append(TrayDie(v, xy, (0, 0, 10, 10), 0.99, held=i in held))
    return RollEvent(kind, 0, 0.0, dice=tuple(dice), flags=tuple(flags), problems=tuple(problems))


@pytest.fixture
def app(tmp_path):
    a = TableApp(
        tmp_path / "games.sqlite3",
        setup=Setup("yacht", "forced", ["Ann", "Bo"]),
        autostart=True,
        pin="2468",
        clock=lambda: 1_700_000_000.0,
    ).start()
    yield a
    a.close()


_PRESSED_AT = itertools.count(start=1000.0, step=1.0)


def press(app, *commands):
    """Press `commands` one by one, a second apart (time.monotonic as the app sees it), as a person would."""
    for c in commands:
        app.press(c, mono=next(_PRESSED_AT)).result(timeout=5)


def test_display_settled_roll_goes_into_the_game_with_options_and_best(app):
    app.roll_event(settled((3, 3, 3, 5, 5))).result(timeout=5)
    snap = app.snapshot
    g = snap["game"]
    assert g["roll"] == 1 and [d["value"] for d in g["dice"]] == [3, 3, 3, 5, 5]
    opts = score_options("yacht", (3, 3, 3, 5, 5), app.state.cards[0], roll=1)
    assert [(o["box"], o["points"]) for o in g["options"]] == list(opts.items())
    best = [o["box"] for o in g["options"] if o["best"]]
    assert best == ["choice"] and g["selected"] == "choice"  # 19 points, first in card order on a tie
    assert snap["screen"] == "game" and g["players"][0]["current"]


def test_display_holds_keep_their_slots_when_read_again(app):
    app.roll_event(settled((6, 2, 6, 1, 4))).result(timeout=5)
    press(app, Command.HOLD_1, Command.HOLD_3)
    assert app.state.turn.holds == (True, False, True, False, False)
    # The watcher reads the held sixes in the hold area, first in its order, then the new dice.
    ev = settled((6, 6, 5, 5, 2), held=(0, 1))
    app.roll_event(ev).result(timeout=5)
    assert app.state.turn.roll == 2 and app.state.turn.dice == (6, 5, 6, 5, 2)
    assert app.state.turn.flagged == ()


def test_display_held_die_changed_is_flagged_and_warned(app):
    app.roll_event(settled((6, 2, 3, 1, 4))).result(timeout=5)
    press(app, Command.HOLD_1)
    app.roll_event(settled((5, 2, 2, 2, 2), held=(0,))).result(timeout=5)
    assert app.state.turn.flagged == (0,)
    assert {"kind": "held-changed", "text": ADVICE["held-changed"]} in app.snapshot["warnings"]
    assert app.snapshot["game"]["dice"][0]["flagged"] is True


def test_display_unmoved_die_waits_for_confirm(app):
    app.roll_event(settled((6, 2, 3, 1, 4))).result(timeout=5)
    flag = Flag(FlagKind.UNMOVED, 1, "die did not move")
    app.roll_event(settled((1, 2, 5, 5, 4), flags=(flag,))).result(timeout=5)
    assert app.state.turn.roll == 1 and app.snapshot["pending"]
    assert any(w["kind"] == "unmoved" for w in app.snapshot["warnings"])
    press(app, Command.ROLL)  # CONFIRM
    assert app.state.turn.roll == 2 and sorted(app.state.turn.dice) == [1, 2, 4, 5, 5]
    assert not app.snapshot["pending"] and not any(w["kind"] == "unmoved" for w in app.snapshot["warnings"])


@pytest.mark.parametrize(
    "problem, kind",
    [
        ("the die at (182, 63) mm is leaning on the wall or another die; lay it flat or re-roll", "leaning"),
        (
            "the tray walls do not line up with the calibration (alignment 0.50): the camera was moved; run "
            "'dicetable calibrate' again",
            "recalibrate",
        ),
        ("found 4 dice, expected 5; make sure every die is in the tray", "count"),
        ("dice stacked: separate them", "stacked"),  # the reader's problem for a die lying on another
    ],
)
def test_display_unreadable_rolls_warn_what_to_do(app, problem, kind):
    app.roll_event(settled((6, 2, 3, 1, 4), kind=EventKind.UNREADABLE, problems=(problem,))).result(timeout=5)
    assert app.state.turn.roll == 0
    assert {"kind": kind, "text": ADVICE[kind]} in app.snapshot["warnings"]
    app.roll_event(RollEvent(EventKind.MOVING, 1, 0.1)).result(timeout=5)  # a re-roll clears dice warnings
    assert kind == "recalibrate" or not app.snapshot["warnings"]


def test_display_disturbed_after_third_roll_warns_reading_stands(app):
    for vals in ((1, 2, 3, 4, 6), (1, 2, 3, 4, 6), (1, 2, 3, 4, 5)):
        app.roll_event(settled(vals)).result(timeout=5)
    assert app.state.turn.roll == 3
    app.roll_event(RollEvent(EventKind.DISTURBED, 2, 0.2)).result(timeout=5)
    assert any(w["kind"] == "moved" for w in app.snapshot["warnings"])
    app.roll_event(settled((6, 6, 6, 6, 6))).result(timeout=5)
    assert app.state.turn.dice == (1, 2, 3, 4, 5)  # no fourth roll


def test_display_prev_next_score_undo(app):
    app.roll_event(settled((2, 2, 2, 2, 5))).result(timeout=5)
    first = app.selected
    press(app, Command.NEXT)
    assert app.selected != first
    press(app, Command.PREV)
    assert app.selected == first
    press(app, Command.SCORE)
    assert app.state.cards[0].boxes == {
        first: score_options("yacht", (2, 2, 2, 2, 5), app.state.cards[0].__class__.empty(), roll=1)[first]
    }
    assert app.state.turn.player == 1
    press(app, Command.UNDO)
    assert app.state.turn.player == 0 and app.state.cards[0].boxes == {}


def test_display_refused_commands_say_why(app):
    press(app, Command.SCORE)
    assert "Roll the dice first" in app.snapshot["message"]
    press(app, Command.HOLD_2)
    assert "Roll the dice first" in app.snapshot["message"]
    press(app, Command.ROLL)  # no synthetic tray: the camera reads the dice
    assert "camera reads them" in app.snapshot["message"]


def test_display_menu_new_game_goes_to_setup_and_setup_buttons(app):
    press(app, Command.MENU)
    assert app.snapshot["menu"]["open"]
    press(app, *[Command.NEXT] * NEW, Command.ROLL)
    assert app.screen == "game" and app.snapshot["menu"]["confirm"]  # a running game: asked first
    press(app, Command.ROLL)  # CONFIRM
    assert app.screen == "setup" and app.state is None and not app.snapshot["menu"]["open"]
    press(app, Command.ROLL)  # ruleset: yacht -> chaser
    press(app, Command.NEXT, Command.NEXT, Command.ROLL)  # players: 2 -> 3
    assert app.setup.ruleset == "chaser" and app.setup.names == ["Ann", "Bo", "Player 3"]
    press(app, Command.NEXT, Command.ROLL)
    assert app.screen == "game" and app.state.ruleset == "chaser" and len(app.state.players) == 3


def _status(app):
    from table.store import open_store

    with open_store(app.db_path, readonly=True) as store:
        return [g.status for g in store.games()]


@pytest.mark.parametrize("path", [(Command.PREV,), (Command.NEXT,) * NEW])
@pytest.mark.parametrize(
    "other", [Command.PREV, Command.NEXT, Command.SCORE, Command.HOLD_1, Command.UNDO, Command.MENU]
)
def test_regression_menu_ending_a_game_asks_first_and_any_other_button_keeps_it(app, path, other):
    """MENU, PREV, ROLL (PREV wraps round to "New game") used to end the game at once, with no way back."""
    app.roll_event(settled((3, 3, 3, 5, 5))).result(timeout=5)
    before = app.state
    press(app, Command.MENU, *path, Command.ROLL)
    menu = app.snapshot["menu"]
    assert app.screen == "game" and app.state == before and _status(app) == ["playing"]
    assert menu["open"] and menu["confirm"] and menu["items"][menu["index"]] == {"id": "new", "title": CONFIRM_END}
    press(app, other)
    assert app.screen == "game" and app.state == before and _status(app) == ["playing"]
    menu = app.snapshot["menu"]
    assert not menu["confirm"] and menu["items"][NEW]["title"] == MENU_ITEMS[NEW][1]
    assert menu["open"] == (other is not Command.MENU)  # MENU closes the menu; the others leave it open
    if menu["open"]:
        assert menu["index"] == NEW and app.snapshot["message"] == "The game goes on: it was not ended."
        press(app, Command.MENU)
    press(app, Command.ROLL)  # the menu is closed: ROLL is a roll again, not a late confirmation
    assert app.screen == "game" and _status(app) == ["playing"]


def test_display_menu_confirmed_end_keeps_the_game_as_abandoned(app):
    press(app, Command.MENU, Command.PREV, Command.ROLL, Command.ROLL)
    assert app.screen == "setup" and app.state is None and _status(app) == ["abandoned"]
    press(app, Command.MENU, Command.PREV, Command.ROLL)  # no game running: nothing to confirm
    assert app.screen == "setup" and not app.snapshot["menu"]["open"] and not app.snapshot["menu"]["confirm"]


def test_regression_a_double_press_of_roll_does_not_end_the_game(app):
    """ROLL twice in quick succession (a double press, beyond the buttons' debounce) asked and confirmed at once."""
    app.roll_event(settled((3, 3, 3, 5, 5))).result(timeout=5)
    before = app.state
    t = 1000.0
    for c in (Command.MENU, Command.PREV):
        app.press(c, mono=t).result(timeout=5)
    app.press(Command.ROLL, mono=t).result(timeout=5)  # asks
    app.press(Command.ROLL, mono=t + 0.25).result(timeout=5)  # the double press
    assert app.screen == "game" and app.state == before and _status(app) == ["playing"]
    menu = app.snapshot["menu"]
    assert menu["open"] and menu["confirm"] and app.snapshot["message"] == CONFIRM_TOO_SOON
    for k in range(1, 6):  # a burst, or a held key, 0.3 s apart: the pause counts from the last press
        app.press(Command.ROLL, mono=t + 0.25 + 0.3 * k).result(timeout=5)
    assert app.screen == "game" and _status(app) == ["playing"] and app.snapshot["menu"]["confirm"]
    app.press(Command.ROLL, mono=t + 1.75 + CONFIRM_PAUSE_S).result(timeout=5)  # a pause, then ROLL
    assert app.screen == "setup" and _status(app) == ["abandoned"]


def choose(app, item, seen=None):
    """A tap on the menu's `item`, a second after the last press (as :func:`press` times them)."""
    app.choose(item, seen, mono=next(_PRESSED_AT)).result(timeout=5)


def test_a_tap_on_a_menu_item_chooses_it_by_name(app):
    press(app, Command.MENU)
    choose(app, "hints")
    assert app.hints and not app.menu_open
    press(app, Command.MENU)
    choose(app, "resume")
    assert not app.menu_open and app.screen == "game"
    press(app, Command.MENU)
    choose(app, "new")  # a running game: asked first
    assert app.menu_confirm and app.screen == "game" and _status(app) == ["playing"]
    choose(app, "hints")  # any other item keeps the game
    assert not app.menu_confirm and app.menu_open and _status(app) == ["playing"]
    assert app.snapshot["message"] == "The game goes on: it was not ended." and app.hints
    choose(app, "new")
    choose(app, "new", seen=app.seq)  # the question, tapped on a page that shows it
    assert app.screen == "setup" and _status(app) == ["abandoned"]
    press(app, Command.MENU)
    choose(app, "shutdown <b>" * 1000)
    items = ", ".join(i for i, _ in MENU_ITEMS)
    assert items == "resume, hints, history, fix, cards, new"
    assert app.menu_open and app.snapshot["message"] == f"No such menu item; the menu has: {items}."


@pytest.mark.parametrize("answer", ["tap", "roll"])
def test_regression_a_page_that_had_not_drawn_the_question_does_not_answer_it(app, answer):
    """The table asked "End this game?" from a GPIO ROLL; a phone still drawing the plain menu sent the ROLL of
    its tap on "New game" (key steps worked out from what it showed), or of its CONFIRM key, which ended the
    game as the answer."""
    app.roll_event(settled((3, 3, 3, 5, 5))).result(timeout=5)
    before = app.state
    press(app, Command.MENU, Command.PREV)
    drawn = app.seq  # what the lagging phone shows: "New game" selected
    press(app, Command.ROLL)  # the table's button asks
    assert app.menu_confirm

    def answer_from(seen):  # the phone's tap or key, a second later
        if answer == "tap":
            choose(app, "new", seen=seen)
        else:
            app.press(Command.ROLL, mono=next(_PRESSED_AT), seen=seen).result(timeout=5)

    answer_from(drawn)
    assert app.screen == "game" and app.state == before and _status(app) == ["playing"]
    assert app.menu_confirm and app.snapshot["message"] == NOT_SEEN
    answer_from(app.seq)  # its next one, on the question it now shows
    assert app.screen == "setup" and _status(app) == ["abandoned"]


def test_regression_a_tap_on_a_menu_that_closed_meanwhile_does_nothing(app):
    """A tap on an item of a menu the table had closed (MENU on the table) threw the dice: its key steps and
    ROLL reached the game."""
    app.roll_event(settled((3, 3, 3, 5, 5))).result(timeout=5)
    before, selected = app.state, app.selected
    press(app, Command.MENU, Command.MENU)
    choose(app, "resume")  # how the page's tap beside the menu closes it
    choose(app, "new", seen=app.seq)
    assert app.state == before and app.selected == selected and not app.menu_open
    assert app.snapshot["message"] == MENU_CLOSED and _status(app) == ["playing"]


def test_a_second_tap_on_the_question_sooner_than_the_pause_is_too_quick(app):
    app.roll_event(settled((3, 3, 3, 5, 5))).result(timeout=5)
    t = 5000.0
    app.press(Command.MENU, mono=t).result(timeout=5)
    app.choose("new", mono=t + 0.1).result(timeout=5)
    app.choose("new", app.seq, mono=t + 0.3).result(timeout=5)  # a double tap
    assert app.menu_confirm and app.snapshot["message"] == CONFIRM_TOO_SOON and _status(app) == ["playing"]
    app.choose("new", app.seq, mono=t + 0.3 + CONFIRM_PAUSE_S).result(timeout=5)
    assert app.screen == "setup" and _status(app) == ["abandoned"]


def test_a_tap_on_a_box_selects_it_and_a_second_tap_scores_it(app):
    choose_box = lambda box, seen=None: app.tap_box(box, seen).result(timeout=5)  # noqa: E731
    choose_box("choice")
    assert app.snapshot["message"] == "Roll the dice first; then choose a box."
    app.roll_event(settled((3, 3, 3, 5, 5))).result(timeout=5)
    assert app.selected != "threes"
    choose_box("threes")
    assert app.selected == "threes" and app.state.cards[0].boxes == {}
    choose_box("threes")
    assert app.state.cards[0].boxes == {"threes": 9} and app.state.turn.player == 1
    app.roll_event(settled((3, 3, 3, 5, 5))).result(timeout=5)
    choose_box("nonsense")
    assert app.snapshot["message"] == "That box is not open for these dice." and app.state.cards[1].boxes == {}
    press(app, Command.MENU)
    choose_box(app.selected)
    assert app.snapshot["message"] == "Boxes are chosen during a turn." and app.state.cards[1].boxes == {}


def test_regression_a_lagging_page_never_scores_a_box_it_did_not_show_selected(app):
    """A tap on a box worked out NEXT steps from the selection the page showed, then SCORE: with the selection
    moved meanwhile (a button, another phone), the tap on the box the page showed selected scored another."""
    app.roll_event(settled((3, 3, 3, 5, 5))).result(timeout=5)
    shown, drawn = app.selected, app.seq  # the page draws the best box selected
    press(app, Command.NEXT, Command.NEXT)  # a button moves the selection
    app.tap_box(shown, drawn).result(timeout=5)  # the page's tap on the box it shows selected
    assert app.state.cards[0].boxes == {} and app.snapshot["message"] == NOT_SEEN
    app.tap_box(shown, app.seq).result(timeout=5)  # once it shows the table's selection: selects
    assert app.selected == shown and app.state.cards[0].boxes == {}


def test_regression_a_late_confirm_does_not_act_on_the_screen_that_followed(app):
    """The page's CONFIRM for "End this game?", lagging behind a button's answer, changed the ruleset on the
    setup screen that followed; one lagging behind a button's MENU (closing the menu) threw the dice."""
    press(app, Command.MENU, Command.PREV, Command.ROLL)  # asks
    drawn = app.seq  # the page draws the question
    press(app, Command.ROLL)  # a button answers yes: the setup screen
    assert app.screen == "setup"
    ruleset = app.setup.ruleset
    app.press(Command.ROLL, mono=next(_PRESSED_AT), seen=drawn).result(timeout=5)  # the page's CONFIRM, late
    assert app.setup.ruleset == ruleset and app.snapshot["message"] == NOT_SEEN


def test_a_tap_beside_the_menu_while_it_asks_keeps_the_game_and_closes_the_menu(app):
    press(app, Command.MENU, Command.PREV, Command.ROLL)  # asks
    choose(app, "resume", seen=app.seq)
    assert not app.menu_open and not app.menu_confirm and _status(app) == ["playing"]


def finished_game(tmp_path):
    """A one-player yacht game played to its end screen (every throw 1 2 3 4 6, the selected box scored)."""
    a = TableApp(tmp_path / "one.sqlite3", setup=Setup("yacht", "forced", ["Ann"]), autostart=True).start()
    for _ in range(12):
        a.roll_event(settled((1, 2, 3, 4, 6))).result(timeout=5)
        press(a, Command.SCORE)
    assert a.screen == "end"
    return a


def test_regression_undo_on_the_end_screen_says_a_finished_game_stays_finished(tmp_path):
    """UNDO on the end screen did nothing and said nothing (end-screen presses never reached the undo)."""
    with finished_game(tmp_path) as a:
        press(a, Command.UNDO)
        assert a.screen == "end" and a.state.finished and len(a.state.cards[0].boxes) == 12
        assert "the game has ended (finished)" in a.snapshot["message"]


def test_regression_a_double_press_on_the_end_screen_does_not_start_a_game_at_once(tmp_path):
    """ROLL on the end screen left the setup's focus on Start (where the last game was started from), so a
    double press went through the setup screen and started a new game."""
    with finished_game(tmp_path) as a:
        a.setup.field = len(a.setup.FIELDS) - 1  # as when the last game was started from Start
        press(a, Command.ROLL, Command.ROLL)
        assert a.screen == "setup" and a.setup.field == 0 and a.session is None


def test_regression_a_double_press_that_brings_the_setup_does_not_change_the_rules(tmp_path):
    """The second ROLL of a double press on the end screen (or of the ROLL that ends a game from the menu)
    landed on the setup's rules field and changed the new game's rules."""
    with finished_game(tmp_path) as a:
        t = next(_PRESSED_AT)
        a.press(Command.ROLL, mono=t).result(timeout=5)  # end screen -> setup
        for k in range(1, 4):  # the double press, then a held key 0.3 s apart: the pause counts from the last
            a.press(Command.ROLL, mono=t + 0.3 * k).result(timeout=5)
            assert a.screen == "setup" and a.setup.ruleset == "yacht" and a.snapshot["message"] == SETUP_TOO_SOON
        a.press(Command.ROLL, mono=t + 1.0 + CONFIRM_PAUSE_S).result(timeout=5)  # a deliberate press, after a pause
        assert a.setup.ruleset != "yacht" and a.snapshot["message"] == "", a.snapshot["message"]
    with TableApp(tmp_path / "two.sqlite3", setup=Setup("yacht", "forced", ["Ann"]), autostart=True).start() as a:
        t = next(_PRESSED_AT)
        for c in (Command.MENU, Command.PREV, Command.ROLL):  # "New game": asks
            a.press(c, mono=t).result(timeout=5)
        a.press(Command.ROLL, mono=t + 1.0).result(timeout=5)  # ends the game: the setup
        a.press(Command.ROLL, mono=t + 1.2).result(timeout=5)
        assert a.screen == "setup" and a.setup.ruleset == "yacht" and a.snapshot["message"] == SETUP_TOO_SOON
        a.apply_setup({"ruleset": "yahtzee"}).result(timeout=5)  # the page's tap: the message goes
        assert a.setup.ruleset == "yahtzee" and a.snapshot["message"] == ""
    (tmp_path / "three").mkdir()
    with finished_game(tmp_path / "three") as a:
        t = next(_PRESSED_AT)
        a.press(Command.ROLL, mono=t).result(timeout=5)
        a.press(Command.NEXT, mono=t + 0.2).result(timeout=5)  # moving between the fields: looking at the setup
        a.press(Command.ROLL, mono=t + 0.4).result(timeout=5)
        assert a.setup.field == 1 and a.setup.joker != "forced" and a.snapshot["message"] == ""


def test_regression_score_waits_for_thrown_dice_to_stop(app):
    """SCORE while the thrown dice still rolled scored the old dice, and the throw was then read as the next
    player's first roll."""
    from table.app import ROLLING_S
    from vision.watch import EventKind

    app.roll_event(settled((3, 3, 3, 5, 5))).result(timeout=5)
    t = next(_PRESSED_AT)
    app.roll_event(RollEvent(EventKind.MOVING, 0, 0.0), mono=t).result(timeout=5)  # thrown again
    app.press(Command.SCORE, mono=t + 1.0).result(timeout=5)
    assert app.state.cards[0].boxes == {} and app.snapshot["message"].startswith("The dice are still rolling")
    app.roll_event(settled((3, 3, 3, 3, 5))).result(timeout=5)
    press(app, Command.SCORE)
    assert len(app.state.cards[0].boxes) == 1 and app.state.turn.player == 1
    app.roll_event(settled((2, 2, 3, 5, 6))).result(timeout=5)
    t = next(_PRESSED_AT)
    app.roll_event(RollEvent(EventKind.MOVING, 0, 0.0), mono=t).result(timeout=5)  # the dice taken out of the tray
    app.press(Command.SCORE, mono=t + ROLLING_S + 0.5).result(timeout=5)  # no reading will follow: SCORE is taken
    assert len(app.state.cards[1].boxes) == 1


def test_a_tap_on_a_die_names_the_hold_it_asks_for(app):
    """A page's hold tap crossing a button's HOLD of the same die used to toggle it back (both meant 'hold');
    taps name the state asked for, so quick taps on several dice never wait for the page to redraw."""
    app.roll_event(settled((3, 3, 3, 5, 5))).result(timeout=5)
    drawn = app.seq  # the page shows every die free
    press(app, Command.HOLD_1)  # a button holds die 1
    app.set_hold(0, True, drawn).result(timeout=5)  # the page's tap on die 1, which it shows free
    app.set_hold(1, True, drawn).result(timeout=5)  # and on die 2, before the page redrew
    assert app.state.turn.holds == (True, True, False, False, False)
    app.set_hold(1, False, app.seq).result(timeout=5)
    assert app.state.turn.holds == (True, False, False, False, False)
    app.roll_event(settled((3, 3, 3, 5, 6))).result(timeout=5)  # the next throw
    app.set_hold(2, True, drawn).result(timeout=5)  # a tap from a page still showing the throw before
    assert app.state.turn.holds[2] is False and app.snapshot["message"] == NOT_SEEN
    app.set_hold(7, True).result(timeout=5)
    assert app.snapshot["message"] == "Dice are numbered 1 to 5."


def test_regression_a_lagging_page_does_not_act_on_a_setup_it_did_not_show(tmp_path):
    """The setup screen was not part of what a page must have drawn: Enter on a page showing the rules field
    started the game once a button had moved the focus to Start."""
    with TableApp(tmp_path / "s.sqlite3", setup=Setup("yacht", "forced", ["Ann", "Bo"])).start() as a:
        drawn = a.seq
        press(a, Command.PREV)  # a button: focus on Start
        a.press(Command.ROLL, mono=next(_PRESSED_AT), seen=drawn).result(timeout=5)  # the page's Enter
        assert a.screen == "setup" and a.snapshot["message"] == NOT_SEEN
        a.apply_setup({"start": True, "ruleset": "yacht", "joker": "forced", "names": ["Ann", "Bo"]}).result(5)
        assert a.screen == "game" and a.state.players == ("Ann", "Bo")  # the page's Start names what it shows


def test_menu_taps_over_the_websocket_name_their_item_and_need_the_pin(app):
    with TestClient(web_app(app), client=("192.168.1.20", 50000)).websocket_connect("/ws") as ws:
        receive_state(ws)
        app.press(Command.MENU).result(timeout=5)
        while not (snap := receive_state(ws))["menu"]["open"]:
            pass
        ws.send_text(json.dumps({"type": "menu", "item": "hints", "seen": snap["seq"]}))  # no PIN: read-only
        assert "Read-only" in json.loads(ws.receive_text())["message"]
        assert app.menu_open and not app.hints
        ws.send_text(json.dumps({"type": "menu", "item": "hints", "pin": "2468"}))  # an old page: no 'seen'
        while (snap := receive_state(ws))["message"] != NOT_SEEN:
            pass
        assert app.menu_open and not app.hints  # not taken for what the table shows
        ws.send_text(json.dumps({"type": "menu", "item": "hints", "seen": snap["seq"], "pin": "2468"}))
        while receive_state(ws)["menu"]["open"]:
            pass
    assert app.hints and not app.menu_open
    with TestClient(web_app(app), client=("192.168.1.20", 50001)).websocket_connect("/ws") as ws:
        receive_state(ws)
        ws.send_text(json.dumps({"type": "menu", "item": "new", "seen": "latest", "pin": "2468"}))
        with pytest.raises(Exception):
            ws.receive_text()  # closed: a field of the wrong type


def test_message_fields_of_the_wrong_type_are_named():
    from table.display.server import parse_message

    assert parse_message('{"type": "menu", "item": "new", "seen": 7}')["seen"] == 7
    with pytest.raises(ValueError, match="field 'seen' must be a whole number, got a string"):
        parse_message('{"type": "menu", "item": "new", "seen": "7"}')
    with pytest.raises(ValueError, match="field 'item' must be a string, got a number"):
        parse_message('{"type": "menu", "item": 2}')
    with pytest.raises(ValueError, match="field 'seq' must be a whole number, got true"):
        parse_message('{"type": "rendered", "seq": true}')


def test_display_resumes_an_unfinished_game_after_restart(tmp_path):
    db = tmp_path / "games.sqlite3"
    with TableApp(db, setup=Setup("yacht", "forced", ["Ann", "Bo"]), autostart=True) as a:
        a.roll_event(settled((4, 4, 4, 1, 2))).result(timeout=5)
        press(a, Command.SCORE)
        before = a.state
    with TableApp(db, setup=Setup("yahtzee", "forced", ["X"]), autostart=True) as b:
        assert b.state == before and b.screen == "game"
        assert "Resumed" in b.snapshot["message"]


def test_display_damaged_store_is_set_aside_and_said(tmp_path):
    db = tmp_path / "games.sqlite3"
    db.write_bytes(b"SQLite format 3\x00" + b"not a database" * 200)  # an SQLite file, damaged
    with TableApp(db, autostart=True) as a:
        assert "damaged" in a.snapshot["note"] and "corrupt-" in a.snapshot["note"]


def test_display_assign_slots_prefers_hold_area_then_value_then_position():
    read = [
        (6, True, (180, 20)),
        (5, False, (30, 100)),
        (6, False, (60, 100)),
        (2, True, (180, 40)),
        (3, False, (90, 100)),
    ]
    # Slots 0 (a 6) and 3 (a 2) are held; both lie in the hold area.
    slots = assign_slots((6, 1, 1, 2, 1), (True, False, False, True, False), [None] * 5, read)
    assert slots[0] == 0 and slots[3] == 3 and sorted(slots) == [0, 1, 2, 3, 4]
    assert assign_slots((), (False,) * 5, [None] * 5, read) == [0, 1, 2, 3, 4]


# -- the web app ----------------------------------------------------------------------


def web_app(table, **options):
    """The display's app as Starlette's TestClient reaches it: by the name ``testserver``."""
    return create_app(table, host_names={"testserver"}, **options)


def receive_state(ws):
    while True:
        msg = json.loads(ws.receive_text())
        if "seq" in msg:
            return msg


def test_display_local_client_commands_without_pin_and_sees_it(app):
    client = TestClient(web_app(app), client=("127.0.0.1", 50000))
    with client.websocket_connect("/ws") as ws:
        snap = receive_state(ws)
        assert snap["local"] and snap["can_command"] and snap["pin"] == "2468"
        app.roll_event(settled((1, 1, 1, 1, 1))).result(timeout=5)
        ws.send_text(json.dumps({"type": "command", "command": "hold_2", "seen": snap["seq"]}))  # before the roll
        while (snap := receive_state(ws))["message"] != NOT_SEEN:
            pass
        assert app.state.turn.holds == (False,) * 5
        ws.send_text(json.dumps({"type": "command", "command": "hold_2", "seen": snap["seq"]}))
        while not receive_state(ws)["game"]["holds"][1]:
            pass
        assert app.state.turn.holds == (False, True, False, False, False)


def test_display_remote_client_is_read_only_without_the_pin(app):
    client = TestClient(web_app(app), client=("192.168.1.20", 50000))
    with client.websocket_connect("/ws") as ws:
        snap = receive_state(ws)
        assert not snap["local"] and not snap["can_command"] and "pin" not in snap
        ws.send_text(json.dumps({"type": "command", "command": "menu"}))
        refused = json.loads(ws.receive_text())
        assert refused["type"] == "refused" and "PIN" in refused["message"]
        ws.send_text(json.dumps({"type": "command", "command": "menu", "pin": "1111"}))
        assert json.loads(ws.receive_text())["type"] == "refused"
        ws.send_text(json.dumps({"type": "setup", "names": ["Eve"], "pin": "0000"}))
        assert json.loads(ws.receive_text())["type"] == "refused"
        assert not app.menu_open and app.setup.names == ["Ann", "Bo"]
        ws.send_text(json.dumps({"type": "command", "command": "menu", "pin": "2468"}))
        for _ in range(20):
            if receive_state(ws)["menu"]["open"]:
                break
        assert app.menu_open
        ws.send_text(json.dumps({"type": "unlock", "pin": "2468"}))
        reply = json.loads(ws.receive_text())
        assert reply == {"type": "unlock", "ok": True, "token": reply["token"]}  # the token: for reconnecting
        assert receive_state(ws)["can_command"]


def test_display_names_typed_on_a_phone_with_the_pin(tmp_path):
    a = TableApp(tmp_path / "g.sqlite3", pin="2468").start()
    try:
        client = TestClient(web_app(a), client=("192.168.1.21", 50000))
        with client.websocket_connect("/ws") as ws:
            receive_state(ws)
            ws.send_text(
                json.dumps(
                    {"type": "setup", "names": ["Zoë", "Yann"], "ruleset": "yatzy", "start": True, "pin": "2468"}
                )
            )
            for _ in range(20):
                if receive_state(ws)["screen"] == "game":
                    break
        assert a.state.players == ("Zoë", "Yann") and a.state.ruleset == "yatzy"
    finally:
        a.close()


def test_display_bad_setup_says_why(app):
    app.apply_setup({"names": ["Ann", "ann"]}).result(timeout=5)
    assert "two players are called 'ann'" in app.snapshot["message"]


def test_display_http_routes_and_exports(app):
    client = TestClient(web_app(app))
    assert client.get("/health").json()["ok"] is True
    page = client.get("/")
    assert page.status_code == 200 and "/static/app.js" in page.text
    for name in ("app.js", "style.css"):
        assert client.get(f"/static/{name}").status_code == 200
    assert client.get("/camera.jpg").status_code == 404
    app.camera_update(jpeg=b"\xff\xd8fake").result(timeout=5)
    assert client.get("/camera.jpg").content == b"\xff\xd8fake"
    app.roll_event(settled((5, 5, 5, 5, 5))).result(timeout=5)
    press(app, Command.SCORE)
    csv = client.get("/export/scorecards.csv")
    assert csv.status_code == 200 and csv.text.splitlines()[0] == "box,Ann,Bo"
    assert "yacht,50," in csv.text and csv.text.splitlines()[-1] == "total,50,0"
    png = client.get("/export/scorecards.png")
    assert png.content[:8] == b"\x89PNG\r\n\x1a\n"
    assert client.get("/api/state").json()["game"]["players"][0]["total"] == 50


def test_display_static_files_load_nothing_from_outside():
    for f in Path(STATIC).iterdir():
        text = f.read_text()
        assert "http://" not in text and "https://" not in text and "//cdn" not in text, f.name


def test_display_scorecards_png_has_a_row_per_box(app):
    import cv2
    import numpy as np

    img = cv2.imdecode(np.frombuffer(scorecards_png(app.state), np.uint8), cv2.IMREAD_COLOR)
    assert img.shape[0] >= 60 + 34 * (12 + 3) and img.shape[1] >= 200 + 2 * 120


def test_display_say_shows_a_message(app):
    app.say("Hold UNDO down for a second to undo.").result(timeout=5)
    assert app.snapshot["message"] == "Hold UNDO down for a second to undo."


# -- malformed messages, the Origin, the PIN and the setup (regressions) -------------------


@pytest.mark.parametrize("here", ["127.0.0.1", "192.168.1.20"], ids=["local", "phone"])
@pytest.mark.parametrize(
    "text, words",
    [
        ("[[1,2]]", "got a list; send an object"),
        ("[5]", "got a list; send an object"),
        ("5", "got a number; send an object"),
        ('"unlock"', "got a string; send an object"),
        ('{"type":"rendered","seq":"abc"}', "field 'seq' must be a whole number, got a string"),
        ('{"type":"rendered","seq":true}', "field 'seq' must be a whole number, got true"),
        ('{"type":"unlock","pin":2468}', "field 'pin' must be a string, got a number"),
        ('{"type":"command","command":null}', "field 'command' must be a string, got null"),
        ('{"type":["command"],"command":"menu"}', "field 'type' must be a string, got a list"),
        ("not json", "not JSON"),
        (b'{"type":"command","command":"menu"}', "send text frames of JSON"),
    ],
    ids=[
        "list-of-lists",
        "list",
        "number",
        "string",
        "seq-text",
        "seq-bool",
        "pin-number",
        "command-null",
        "type-list",
        "not-json",
        "binary",
    ],
)
def test_regression_malformed_messages_close_the_socket_cleanly(app, here, text, words):
    from starlette.websockets import WebSocketDisconnect

    with TestClient(web_app(app), client=(here, 50000)).websocket_connect("/ws") as ws:
        receive_state(ws)
        if isinstance(text, bytes):
            ws.send_bytes(text)
        else:
            ws.send_text(text)
        ws.send_text(json.dumps({"type": "command", "command": "nonsense"}))  # answered if still open
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_text()
    assert closed.value.code == 1003 and words in closed.value.reason
    assert not app.menu_open


def test_regression_websocket_from_another_sites_page_is_refused(app):
    from starlette.websockets import WebSocketDisconnect

    client = TestClient(web_app(app), client=("127.0.0.1", 50000))  # served as http://testserver
    for origin in ("http://evil.example", "http://testserver.evil.example", "null", "http://127.0.0.1:8000"):
        with pytest.raises(WebSocketDisconnect) as refused:
            with client.websocket_connect("/ws", headers={"origin": origin}) as ws:
                ws.receive_text()
        assert refused.value.code == 1008, origin
    for headers in ({"origin": "http://testserver"}, {"origin": "https://TestServer"}, {}):
        with client.websocket_connect("/ws", headers=headers) as ws:
            assert receive_state(ws)["pin"] == "2468"


def test_regression_real_server_refuses_a_foreign_origin(app):
    websockets = pytest.importorskip("websockets.sync.client")
    from websockets.exceptions import InvalidStatus

    from table.display.server import DisplayServer

    with DisplayServer(app, port=0) as server:
        url = f"ws://127.0.0.1:{server.port}/ws"
        with pytest.raises(InvalidStatus) as refused:
            websockets.connect(url, origin="http://evil.example", open_timeout=5)
        assert refused.value.response.status_code == 403
        with websockets.connect(url, origin=f"http://127.0.0.1:{server.port}", open_timeout=5) as ws:
            assert json.loads(ws.recv(timeout=5))["pin"] == "2468"
        web = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        web.request("GET", "/api/state", headers={"Host": f"rebind.example:{server.port}"})  # DNS rebinding
        answer = web.getresponse()
        assert answer.status == 400 and b"does not answer to the name" in answer.read()
        web.close()


def test_regression_dns_rebinding_is_refused(app):
    """A site whose name is made to resolve to the table (DNS rebinding) passed the Origin check as the
    page's own host, so a page of it in the table's browser was local: it could send commands and read the PIN."""
    from starlette.websockets import WebSocketDisconnect

    client = TestClient(web_app(app), client=("127.0.0.1", 50000), base_url="http://rebind.example:8000")
    with pytest.raises(WebSocketDisconnect) as refused:
        with client.websocket_connect("/ws", headers={"origin": "http://rebind.example:8000"}) as ws:
            ws.receive_text()
    assert refused.value.code == 1008
    for path in ("/", "/api/state", "/health", "/export/scorecards.csv", "/static/app.js"):
        got = client.get(path)
        assert got.status_code == 400 and "does not answer to the name 'rebind.example:8000'" in got.text, path
        assert "IP address" in got.text and "http://testserver:PORT/" in got.text
    assert not app.menu_open


@pytest.mark.parametrize(
    "host, allowed",
    [
        ("127.0.0.1:8000", True),
        ("192.168.1.20", True),
        ("[::1]:8000", True),
        ("[fe80::1]", True),
        ("::1", True),
        ("localhost:8000", True),
        ("LocalHost.", True),
        ("dicepi.local:8000", True),
        ("DicePi", True),
        ("", True),
        (None, True),
        ("rebind.example:8000", False),
        ("localhost.rebind.example", False),
        ("dicepi.local.example", False),
        ("127.0.0.1.nip.io", False),
        ("[not-an-address]:80", False),
    ],
)
def test_host_allowed_takes_ip_addresses_and_the_tables_names(host, allowed):
    from table.display.server import host_allowed

    assert host_allowed(host, {"localhost", "dicepi", "dicepi.local"}) is allowed


def test_table_host_names_are_localhost_and_this_machines_name(monkeypatch):
    import socket

    from table.display.server import table_host_names

    monkeypatch.setattr(socket, "gethostname", lambda: "DicePi.home.")
    assert table_host_names() == {"localhost", "dicepi.home", "dicepi", "dicepi.local"}


def unlock(ws, pin):
    ws.send_text(json.dumps({"type": "unlock", "pin": pin}))
    return receive_unlock(ws)


def receive_unlock(ws):
    while True:
        msg = json.loads(ws.receive_text())
        if msg.get("type") == "unlock":
            return msg


def test_regression_wrong_pins_lock_the_address_out_for_longer_each_time(app):
    from table.display.server import PinGuard

    now = [100.0]
    web = web_app(app, pin_guard=PinGuard(clock=lambda: now[0]))
    with TestClient(web, client=("192.168.1.20", 50000)).websocket_connect("/ws") as ws:
        receive_state(ws)
        for pin in ("0000", "0001", "0002", "0003"):
            assert unlock(ws, pin) == {"type": "unlock", "ok": False}  # the page says "Wrong PIN."
        locked = unlock(ws, "0004")
        assert not locked["ok"] and locked["message"] == "Too many wrong PINs; try again in 30 s."
        now[0] += 20
        late = unlock(ws, "2468")  # the right PIN is not even checked while locked out
        assert not late["ok"] and late["message"] == "Too many wrong PINs; try again in 10 s."
        ws.send_text(json.dumps({"type": "command", "command": "menu", "pin": "2468"}))
        assert json.loads(ws.receive_text()) == {
            "type": "refused",
            "message": "Too many wrong PINs; try again in 10 s.",
        }
        # Another address is not locked out.
        with TestClient(web, client=("192.168.1.21", 50000)).websocket_connect("/ws") as other:
            receive_state(other)
            assert unlock(other, "2468")["ok"]
        now[0] += 10
        assert unlock(ws, "0005")["message"] == "Too many wrong PINs; try again in 60 s."  # doubled
        now[0] += 60
        assert unlock(ws, "2468")["ok"]
    assert not app.menu_open
    # The right PIN cleared the count: four wrong ones again do not lock out.
    with TestClient(web, client=("192.168.1.20", 50001)).websocket_connect("/ws") as ws:
        receive_state(ws)
        for pin in ("1000", "1001", "1002", "1003"):
            assert unlock(ws, pin) == {"type": "unlock", "ok": False}
        assert unlock(ws, "2468")["ok"]


def test_regression_pins_carried_by_commands_count_as_tries(app):
    from table.display.server import PinGuard

    now = [0.0]
    web = web_app(app, pin_guard=PinGuard(clock=lambda: now[0]))
    with TestClient(web, client=("192.168.1.20", 50000)).websocket_connect("/ws") as ws:
        receive_state(ws)
        for k in range(5):
            ws.send_text(json.dumps({"type": "command", "command": "menu", "pin": f"{k:04d}"}))
            assert json.loads(ws.receive_text())["type"] == "refused"
        ws.send_text(json.dumps({"type": "setup", "start": True, "pin": "2468"}))
        assert json.loads(ws.receive_text())["message"] == "Too many wrong PINs; try again in 30 s."
        ws.send_text(json.dumps({"type": "command", "command": "menu"}))  # no PIN: read-only, not a try
        assert "try again in 30 s" in json.loads(ws.receive_text())["message"]
        now[0] += 30
        ws.send_text(json.dumps({"type": "command", "command": "menu", "pin": "2468"}))
        for _ in range(20):
            if receive_state(ws)["menu"]["open"]:
                break
    assert app.menu_open


def test_a_phone_that_gave_the_pin_reconnects_with_its_token_through_a_lock_out(app):
    from table.display.server import PinGuard

    guard = PinGuard(clock=lambda: 0.0, max_tokens=3)
    web = web_app(app, pin_guard=guard)
    with TestClient(web, client=("192.168.1.20", 50000)).websocket_connect("/ws") as ws:
        receive_state(ws)
        reply = unlock(ws, "2468")
        assert reply["ok"] and len(reply["token"]) >= 20
    token = reply["token"]
    for k in range(25):  # strangers: every address is locked out
        guard.check(f"198.51.100.{k}", "0000", "2468")
    assert guard.refusal("192.168.1.20")
    with TestClient(web, client=("192.168.1.20", 50001)).websocket_connect("/ws") as ws:
        receive_state(ws)
        assert unlock(ws, "2468") == {
            "type": "unlock",
            "ok": False,
            "wait_s": 960,  # the PIN: locked out
            "message": guard.refusal("192.168.1.20"),
        }
        ws.send_text(json.dumps({"type": "unlock", "token": "a" * 22}))  # a guess: refused, not counted
        assert json.loads(ws.receive_text()) == {"type": "unlock", "ok": False, "by": "token"}
        ws.send_text(json.dumps({"type": "unlock", "token": token}))
        assert json.loads(ws.receive_text()) == {"type": "unlock", "ok": True, "by": "token"}
        ws.send_text(json.dumps({"type": "command", "command": "menu"}))
        for _ in range(20):
            if receive_state(ws)["menu"]["open"]:
                break
        ws.send_text(json.dumps({"type": "unlock", "token": "b" * 22}))  # a wrong token: still unlocked
        assert json.loads(ws.receive_text())["ok"]
    assert app.menu_open and guard.wait_s("198.51.100.0") == 30 * 2**5  # the guessed tokens counted nothing
    assert not guard.recognises(token + "x" * 100)  # too long to be one: not compared
    first, second = guard.remember(), guard.remember()  # three kept: token, first, second
    assert guard.recognises(token)  # used: the last to be forgotten
    guard.remember()
    assert guard.recognises(token) and not guard.recognises(first) and guard.recognises(second)


def test_an_unknown_token_beside_the_right_pin_leaves_the_pin_to_decide(app):
    with TestClient(web_app(app), client=("192.168.1.20", 50000)).websocket_connect("/ws") as ws:
        receive_state(ws)
        ws.send_text(json.dumps({"type": "unlock", "token": "c" * 22, "pin": "2468"}))
        reply = receive_unlock(ws)
        assert reply["ok"] and reply["token"] != "c" * 22


def test_regression_local_clients_are_never_locked_out(app):
    from table.display.server import PinGuard

    guard = PinGuard(clock=lambda: 0.0)
    with TestClient(web_app(app, pin_guard=guard), client=("127.0.0.1", 50000)).websocket_connect("/ws") as ws:
        receive_state(ws)
        for k in range(10):
            assert unlock(ws, f"{k:04d}")["ok"]
    assert guard.wait_s("127.0.0.1") == 0


def test_regression_pin_guard_lock_outs_double_up_to_the_longest():
    from table.display.server import PinGuard

    now = [0.0]
    guard = PinGuard(max_wrong=2, lockout_s=10, max_lockout_s=35, clock=lambda: now[0])
    assert not guard.check("a", "", "2468") and not guard.check("a", "", "2468")  # nothing typed: not a try
    assert not guard.check("a", "1", "2468") and guard.refusal("a") is None
    assert not guard.check("a", "2", "2468") and guard.wait_s("a") == 10
    for wait in (20, 35, 35):
        now[0] += 100
        assert guard.refusal("a") is None and not guard.check("a", "3", "2468") and guard.wait_s("a") == wait
    now[0] += 0.5
    assert guard.refusal("a") == "Too many wrong PINs; try again in 35 s."  # rounded up
    now[0] += 100
    assert guard.check("a", "2468", "2468") and guard.wait_s("a") == 0


@pytest.mark.parametrize(
    "data, words",
    [
        ({"names": "Ann"}, 'The player names must be a list of names, e.g. ["Ann", "Bo"].'),
        ({"names": ["Ann", 5]}, 'The player names must be a list of names, e.g. ["Ann", "Bo"].'),
        ({"ruleset": 5}, "The ruleset and the joker rule must each be given as text"),
        ({"joker": ["free"]}, "The ruleset and the joker rule must each be given as text"),
        ({"names": []}, "0 players given; give 1 to 8 names"),
    ],
)
def test_regression_bad_setup_fields_are_refused_in_page_words(tmp_path, data, words):
    a = TableApp(tmp_path / "g.sqlite3", pin="2468").start()
    try:
        a.apply_setup(data).result(timeout=5)
        assert words in a.snapshot["message"] and "--" not in a.snapshot["message"]
        assert a.setup.names == ["Player 1", "Player 2"] and a.setup.ruleset == "yahtzee"
    finally:
        a.close()


def test_regression_start_while_a_game_runs_is_told_before_bad_names(app):
    app.apply_setup({"names": "Ann", "start": True}).result(timeout=5)
    assert app.snapshot["message"] == "A game is running: open the MENU to start a new one."
    app.apply_setup({"names": ["Ann", "ann"], "start": True}).result(timeout=5)
    assert app.snapshot["message"] == "A game is running: open the MENU to start a new one."
    assert app.setup.names == ["Ann", "Bo"] and app.state.players == ("Ann", "Bo")


def test_regression_ipv6_addresses_of_one_network_share_one_pin_count():
    """A phone on IPv6 can take any address of its /64; five wrong PINs from one must lock out the rest."""
    from table.display.server import PinGuard

    guard = PinGuard(max_wrong=5, clock=lambda: 0.0)
    for k in range(5):
        assert guard.check(f"fd00::{k + 2}", "0000", "4321") is False
    assert guard.refusal("fd00::99") and guard.refusal("fd00::ffff:1:2:3")
    assert guard.refusal("fd00:0:0:1::2") is None  # another /64: another network
    assert guard.refusal("192.0.2.2") is None
    assert guard.check("fd00:0:0:1::2", "4321", "4321") is True


def test_regression_many_addresses_share_a_table_wide_pin_count():
    """A device that takes one IPv4 address after another had 5 tries at each: 10 000 PINs in 2000 addresses."""
    from table.display.server import PinGuard

    now = [0.0]
    guard = PinGuard(max_wrong=5, max_table_wrong=20, lockout_s=30, clock=lambda: now[0])
    for k in range(19):  # 19 addresses, one wrong PIN each: none locked out alone
        assert guard.check(f"192.0.2.{k + 2}", "0000", "4321") is False
    assert guard.refusal("192.0.2.2") is None and guard.refusal("198.51.100.1") is None
    assert guard.check("192.0.2.200", "0001", "4321") is False  # the 20th wrong PIN at the table
    for host in ("192.0.2.2", "198.51.100.1", "fd00::2"):
        assert guard.refusal(host) == "Too many wrong PINs at this table from several devices; try again in 30 s."
        assert guard.wait_s(host) == 30
    now[0] = 31.0
    assert guard.refusal("198.51.100.1") is None
    assert guard.check("198.51.100.1", "0002", "4321") is False  # the 21st: twice as long
    assert guard.wait_s("192.0.2.9") == 60
    now[0] = 100.0
    assert guard.check("192.0.2.9", "4321", "4321") is True  # the owner's phone, reconnecting with its PIN...
    assert guard.check("198.51.100.7", "0003", "4321") is False  # ...gives no fresh tries: the 22nd
    assert guard.wait_s("203.0.113.1") == 120
    now[0] = 100.0 + 3600.0  # an hour later the table's old wrong PINs no longer count
    assert guard.check("198.51.100.8", "0004", "4321") is False and guard.refusal("203.0.113.1") is None


def test_regression_owner_reconnecting_with_the_right_pin_does_not_reset_the_table_count():
    """An attacker on a fresh IPv4 address every 5 tries, the owner's page offering the right PIN once a minute
    (it does on every reconnect): the right PIN cleared the table's count, 190 wrong PINs in 10 minutes."""
    from table.display.server import PinGuard

    now = [0.0]
    guard = PinGuard(clock=lambda: now[0])
    tried, address = 0, 0
    for second in range(600):
        now[0] = float(second)
        if second % 60 == 0:
            guard.check("192.0.2.200", "4321", "4321")
        if second % 3 == 0:  # 20 tries a minute, each address 5 tries
            if guard.refusal(f"10.0.{address // 250}.{address % 250}") is None:
                guard.check(f"10.0.{address // 250}.{address % 250}", f"{tried:04d}", "4321")
                tried += 1
                if tried % 5 == 0:
                    address += 1
    assert tried <= 25


def test_pin_guard_says_an_address_own_lock_out_when_it_is_the_longer_one():
    from table.display.server import PinGuard

    guard = PinGuard(max_wrong=2, max_table_wrong=3, lockout_s=10, clock=lambda: 0.0)
    for _ in range(4):  # one address alone: its own count reaches 4 (40 s), the table's 4 (20 s)
        guard.check("192.0.2.2", "0000", "4321")
    assert guard.refusal("192.0.2.2") == "Too many wrong PINs; try again in 40 s."
    assert guard.refusal("192.0.2.3").startswith("Too many wrong PINs at this table")


def test_regression_ipv4_clients_of_a_server_on_ipv6_are_seen_as_ipv4():
    """Under --listen ::, the table's own page (127.0.0.1) arrives as ::ffff:127.0.0.1 and must stay local."""
    from table.display.server import LOCAL_HOSTS, PinGuard, plain_address

    assert plain_address("::ffff:127.0.0.1") == "127.0.0.1" in LOCAL_HOSTS
    assert plain_address("::FFFF:192.0.2.7") == "192.0.2.7"
    assert plain_address("fd00::2") == "fd00::2" and plain_address(None) is None
    assert plain_address("testclient") == "testclient"
    guard = PinGuard(max_wrong=1, clock=lambda: 0.0)
    guard.check("::ffff:192.0.2.7", "0000", "4321")
    assert guard.refusal("192.0.2.7")  # one count, however the address is written


def test_regression_deeply_nested_json_is_refused_as_not_json():
    from table.display.server import parse_message

    with pytest.raises(ValueError, match="not JSON"):
        parse_message("[" * 4_000 + "]" * 4_000)  # deeper than Python's recursion limit, short enough to parse
    with pytest.raises(ValueError, match="send at most"):
        parse_message("[" * 100_000 + "]" * 100_000)  # refused for its length before it is parsed
