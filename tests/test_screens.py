"""table.app.screens: the screens and menus as a pure state machine (no app, no store, no thread)."""

from dataclasses import replace

from table.app.screens import Action, Screens, choose, ended, fix_tap, press
from table.app.texts import CONFIRM_PAUSE_S, CONFIRM_TOO_SOON, MENU_CLOSED, MENU_ITEMS, NOTHING_TO_FIX, SETUP_TOO_SOON
from table.display.snapshot import Setup
from table.inputs.commands import Command

GAME = Screens(screen="game")
NEW = [i for i, _ in MENU_ITEMS].index("new")


def test_menu_toggles_and_a_press_in_a_turn_goes_to_the_game():
    step = press(GAME, Command.MENU, 0.0, game_running=True)
    assert step.screens.menu_open and step.action is None and step.say == ""
    assert press(step.screens, Command.MENU, 0.1, game_running=True).screens == GAME
    assert press(GAME, Command.SCORE, 0.0, game_running=True).action is Action.GAME


def test_new_game_during_a_game_asks_and_only_a_paused_confirm_ends_it():
    s = replace(GAME, menu_open=True, menu_index=NEW)
    asked = press(s, Command.ROLL, 10.0, game_running=True)
    assert asked.screens.menu_confirm and asked.action is None and asked.screens.confirm_asked_at == 10.0
    too_soon = press(asked.screens, Command.ROLL, 10.0 + CONFIRM_PAUSE_S / 2, game_running=True)
    assert too_soon.say == CONFIRM_TOO_SOON and too_soon.action is None and too_soon.screens.menu_confirm
    yes = press(too_soon.screens, Command.ROLL, 11.0 + CONFIRM_PAUSE_S, game_running=True)
    assert yes.action is Action.END_GAME and not yes.screens.menu_open and not yes.screens.menu_confirm
    no = press(asked.screens, Command.NEXT, 20.0, game_running=True)
    assert no.action is None and no.say == "The game goes on: it was not ended." and no.screens.menu_open


def test_new_game_without_a_running_game_ends_at_once():
    s = replace(GAME, screen="end", menu_open=True, menu_index=NEW)
    step = press(s, Command.ROLL, 5.0, game_running=False)
    assert step.action is Action.END_GAME and not step.screens.menu_open


def test_hints_item_toggles_hints_and_closes_the_menu():
    s = replace(GAME, menu_open=True, menu_index=1)
    step = press(s, Command.SCORE, 0.0, game_running=True)
    assert step.screens.hints and not step.screens.menu_open


def test_cards_item_shows_every_card_and_the_next_press_only_brings_the_dice_back():
    ids = [i for i, _ in MENU_ITEMS]
    s = replace(GAME, menu_open=True, menu_index=ids.index("cards"))
    shown = press(s, Command.ROLL, 0.0, game_running=True)
    assert shown.screens.cards and not shown.screens.menu_open and "full scorecard" in shown.say
    back = press(shown.screens, Command.SCORE, 1.0, game_running=True)
    assert not back.screens.cards and back.action is None  # SCORE was not passed to the turn
    assert press(back.screens, Command.SCORE, 2.0, game_running=True).action is Action.GAME
    on_end = press(replace(s, screen="end"), Command.ROLL, 0.0, game_running=False)
    assert not on_end.screens.cards  # the end screen shows the cards already


def test_setup_after_a_game_refuses_a_double_press_then_cycles_the_ruleset():
    s = ended(replace(GAME, setup=Setup(field=Setup.FIELDS.index("start"))), 100.0)
    assert s.screen == "setup" and s.setup.field == 0 and s.setup_shown_at == 100.0
    step = press(s, Command.ROLL, 100.2, game_running=False)
    assert step.say == SETUP_TOO_SOON and step.screens.setup.ruleset == "yahtzee"
    step = press(step.screens, Command.ROLL, 100.2 + CONFIRM_PAUSE_S + 0.1, game_running=False)
    assert step.say == "" and step.screens.setup.ruleset != "yahtzee"
    assert s.setup.ruleset == "yahtzee"  # never changed in place


def test_setup_players_field_adds_numbered_seats_and_start_starts():
    s = Screens(setup=Setup(names=["Ann", "Player 2"], field=2))
    step = press(s, Command.ROLL, 0.0, game_running=False)
    assert step.screens.setup.names == ["Ann", "Player 2", "Player 3"]
    last = press(replace(s, setup=Setup(field=Setup.FIELDS.index("start"))), Command.SCORE, 0.0, game_running=False)
    assert last.action is Action.START_GAME


def test_end_screen_roll_leaves_the_game_and_prev_switches_the_view():
    s = replace(GAME, screen="end")
    assert press(s, Command.ROLL, 1.0, game_running=False).action is Action.LEAVE_GAME
    assert press(s, Command.PREV, 1.0, game_running=False).screens.end_view == "analysis"
    assert press(s, Command.UNDO, 1.0, game_running=False).action is Action.UNDO


def test_choose_names_the_item_and_is_refused_on_a_closed_menu_or_unseen_page():
    ids = [i for i, _ in MENU_ITEMS]
    assert choose(GAME, "hints", 0.0, game_running=True, seen=True, not_seen="x").say == MENU_CLOSED
    s = replace(GAME, menu_open=True)
    assert choose(s, "hints", 0.0, game_running=True, seen=False, not_seen="unseen").say == "unseen"
    assert choose(s, "nope", 0.0, game_running=True, seen=True, not_seen="x").say.endswith(", ".join(ids) + ".")
    assert choose(s, "hints", 0.0, game_running=True, seen=True, not_seen="x").screens.hints
    asked = choose(s, "new", 0.0, game_running=True, seen=True, not_seen="x").screens
    assert asked.menu_confirm
    kept = choose(asked, "resume", 5.0, game_running=True, seen=True, not_seen="x")
    assert not kept.screens.menu_open and kept.action is None


def _at(field):
    return Screens(setup=Setup(field=Setup.FIELDS.index(field)))


def test_setup_timer_field_cycles_the_engines_choices_and_none():
    s, seen = _at("timer"), []
    for _ in range(7):
        s = press(s, Command.ROLL, 0.0, game_running=False).screens
        seen.append(s.setup.timer_s)
    assert seen == [30, 45, 60, 90, 600, None, 30]


def test_setup_rules_field_goes_past_the_last_ruleset_to_free_roll_and_round_again():
    s = replace(_at("ruleset"), setup=Setup(ruleset="generala", field=0))
    free = press(s, Command.ROLL, 0.0, game_running=False).screens.setup
    assert free.mode == "free_roll" and free.ruleset == "generala"
    back = press(replace(s, setup=free), Command.ROLL, 0.0, game_running=False).screens.setup
    assert back.mode == "scorecard" and back.ruleset == "yahtzee"


def test_setup_rolloff_field_opens_the_rolloff_and_its_presses_go_to_it():
    assert press(_at("rolloff"), Command.ROLL, 0.0, game_running=False).action is Action.ROLLOFF
    s = Screens(screen="rolloff")
    for c in (Command.ROLL, Command.MENU, Command.UNDO):
        step = press(s, c, 0.0, game_running=False)
        assert step.action is Action.ROLLOFF_PRESS and not step.screens.menu_open


def test_fix_view_picks_a_die_steps_its_value_saves_or_cancels():
    dice = (1, 2, 3, 4, 6)
    s = replace(GAME, menu_open=True, menu_index=[i for i, _ in MENU_ITEMS].index("fix"))
    assert press(s, Command.ROLL, 0.0, game_running=True).say == NOTHING_TO_FIX
    s = press(s, Command.ROLL, 0.0, game_running=True, dice=dice).screens
    assert s.fix == (0, 1) and not s.menu_open
    s = press(s, Command.PREV, 0.0, game_running=True, dice=dice).screens
    assert s.fix == (4, 6)
    s = press(s, Command.ROLL, 0.0, game_running=True, dice=dice).screens
    assert s.fix == (4, 1)  # 6 -> 1: round the faces
    s = press(s, Command.HOLD_3, 0.0, game_running=True, dice=dice).screens
    assert s.fix == (2, 3)
    saved = press(s, Command.SCORE, 0.0, game_running=True, dice=dice)
    assert saved.action is Action.CORRECT and saved.fix == (2, 3) and saved.screens.fix is None
    cancel = press(s, Command.MENU, 0.0, game_running=True, dice=dice)
    assert cancel.action is None and cancel.screens.fix is None and not cancel.screens.menu_open
    assert fix_tap(s, dice, value=0).say == "A die shows 1 to 6; 0 cannot be set: pick a value from 1 to 6."
    assert fix_tap(s, dice, die=5).say.startswith("Pick one of dice 1 to 5")
    assert fix_tap(s, dice, die=1, value=6).screens.fix == (1, 6)


def test_history_view_steps_through_the_rounds_and_closes():
    s = replace(GAME, menu_open=True, menu_index=[i for i, _ in MENU_ITEMS].index("history"))
    s = press(s, Command.ROLL, 0.0, game_running=True).screens
    assert s.history == 0 and not s.menu_open  # 0: the latest round
    s = press(s, Command.PREV, 0.0, game_running=True, rounds=4).screens
    assert s.history == 3
    s = press(s, Command.NEXT, 0.0, game_running=True, rounds=4).screens
    s = press(s, Command.NEXT, 0.0, game_running=True, rounds=4).screens
    assert s.history == 4
    assert press(s, Command.HOLD_1, 0.0, game_running=True, rounds=4).screens.history == 4
    closed = press(s, Command.MENU, 0.0, game_running=True, rounds=4)
    assert closed.screens.history is None and not closed.screens.menu_open and closed.action is None
