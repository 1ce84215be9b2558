"""The game state machine, feature by feature (rulesets.md sections 2, 3.2, 7, 8)."""

from __future__ import annotations

import pytest

from table.game import (
    BoxScored,
    CorrectDie,
    DieCorrected,
    EndGame,
    EndReason,
    ExpireTimer,
    GameMode,
    IllegalCommandError,
    InvalidCommandError,
    ReadDice,
    Reroll,
    ScoreBox,
    ScoreCause,
    SetHold,
    SetHolds,
    StartGame,
    TimerExpired,
    Undo,
    apply,
    decide,
    execute,
    fold,
)
from table.rules import RulesError


def start(ruleset="yahtzee", players=("Ann", "Bo"), **kw):
    state, events = execute(None, StartGame(at=0.0, ruleset=ruleset, players=players, **kw))
    return state, list(events)


def run(state, log, *commands):
    for c in commands:
        state, events = execute(state, c)
        log += events
    return state


def test_start_sets_players_cards_and_first_player():
    state, _ = start(players=("Ann", "Bo", "Cy"), first_player=2)
    assert state.current_player == 2
    assert len(state.cards) == 3 and all(not c.boxes for c in state.cards)
    assert state.turn.roll == 0 and state.turn.holds == (False,) * 5


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(players=()), "1 to 8 players"),
        (dict(players=tuple(f"P{i}" for i in range(9))), "1 to 8 players"),
        (dict(players=("Ann", "ann")), "different name"),
        (dict(players=(" Ann",)), "cannot be used"),
        (dict(first_player=2), "starting player 2"),
        (dict(timer_s=20), "not offered"),
        (dict(joker="lenient"), "joker"),
    ],
)
def test_start_refuses_bad_settings(kw, match):
    kw.setdefault("players", ("Ann", "Bo"))
    with pytest.raises(InvalidCommandError, match=match):
        execute(None, StartGame(at=0.0, ruleset="yahtzee", **kw))


def test_start_refuses_unknown_ruleset():
    with pytest.raises(RulesError):
        execute(None, StartGame(at=0.0, ruleset="poker", players=("A",)))


def test_three_rolls_at_most_and_roll_numbers_in_order():
    state, log = start()
    with pytest.raises(IllegalCommandError, match="must be roll 1"):
        execute(state, ReadDice(at=1, values=(1, 2, 3, 4, 5), roll=2))
    state = run(state, log, ReadDice(1, (1, 2, 3, 4, 5)), ReadDice(2, (1, 2, 3, 4, 6)), ReadDice(3, (1, 2, 3, 4, 4)))
    assert state.turn.roll == 3
    with pytest.raises(IllegalCommandError, match="already rolled 3 times"):
        execute(state, ReadDice(4, (1, 1, 1, 1, 1)))
    with pytest.raises(IllegalCommandError, match="no re-roll is left"):
        execute(state, Reroll(4, (1,)))


def test_bad_dice_are_refused_with_the_rules_message():
    state, _ = start()
    with pytest.raises(ValueError, match="impossible on a d6"):
        execute(state, ReadDice(1, (1, 2, 3, 4, 7)))
    with pytest.raises(ValueError, match="need exactly five dice"):
        execute(state, ReadDice(1, (1, 2, 3, 4)))


def test_holds_reroll_and_flag_on_changed_held_die():
    state, log = start()
    state = run(state, log, ReadDice(1, (6, 6, 2, 3, 4)), SetHold(2, 0), SetHold(3, 1))
    assert state.turn.holds == (True, True, False, False, False)
    state = run(state, log, Reroll(4, (6, 6, 1)))
    assert state.turn.dice == (6, 6, 6, 6, 1) and state.turn.roll == 2
    assert state.turn.flagged == ()
    state = run(state, log, SetHolds(5, (True, True, True, True, False)))
    # Held die 0 reads 5 on the next read: flagged, not refused.
    state = run(state, log, ReadDice(6, (5, 6, 6, 6, 2)))
    assert state.turn.flagged == (0,) and state.turn.dice == (5, 6, 6, 6, 2)
    # Holds are not binding: a held die released later is fine.
    assert fold(log) == state


def test_reroll_needs_one_value_per_free_die_and_a_free_die():
    state, log = start()
    state = run(state, log, ReadDice(1, (6, 6, 2, 3, 4)), SetHolds(2, (True,) * 5))
    with pytest.raises(IllegalCommandError, match="all five dice are held"):
        execute(state, Reroll(3, ()))
    state = run(state, log, SetHold(3, 4, held=False))
    with pytest.raises(InvalidCommandError, match="1 dice are not held"):
        execute(state, Reroll(4, (1, 2)))


def test_holds_need_a_roll_first():
    state, _ = start()
    with pytest.raises(IllegalCommandError, match="roll the dice first"):
        execute(state, SetHold(1, 0))


def test_score_box_moves_to_next_player_and_refuses_filled_box():
    state, log = start()
    state = run(state, log, ReadDice(1, (3, 3, 3, 5, 5)), ScoreBox(2, "full_house"))
    assert state.cards[0].boxes == {"full_house": 25}
    assert state.current_player == 1 and state.turn.roll == 0
    state = run(state, log, ReadDice(3, (1, 1, 1, 1, 2)), ScoreBox(4, "chance"), ReadDice(5, (3, 3, 3, 5, 5)))
    with pytest.raises(IllegalCommandError, match="already filled"):
        execute(state, ScoreBox(6, "full_house"))


def test_scoring_needs_a_roll_and_a_known_box():
    state, log = start()
    with pytest.raises(IllegalCommandError, match="has not rolled"):
        execute(state, ScoreBox(1, "chance"))
    state = run(state, log, ReadDice(1, (1, 2, 3, 4, 5)))
    with pytest.raises(InvalidCommandError, match="no box 'chanse'"):
        execute(state, ScoreBox(2, "chanse"))


def test_scratch_is_allowed():
    state, log = start()
    state = run(state, log, ReadDice(1, (1, 2, 3, 4, 6)), ScoreBox(2, "yahtzee"))
    assert state.cards[0].boxes == {"yahtzee": 0}


def test_forced_joker_only_offers_the_own_upper_box_and_pays_the_bonus():
    state, log = start(players=("Ann",))
    state = run(state, log, ReadDice(1, (3, 3, 3, 3, 3)), ScoreBox(2, "yahtzee"), ReadDice(3, (3, 3, 3, 3, 3)))
    with pytest.raises(IllegalCommandError, match=r"choose one of: threes \(15\)"):
        execute(state, ScoreBox(4, "full_house"))
    state, events = execute(state, ScoreBox(4, "threes"))
    assert events[0].points == 15 and events[0].yahtzee_bonus == 100
    assert state.totals() == (50 + 15 + 100,)


def test_generala_servida_and_doble_generala():
    state, log = start("generala", players=("Ana",))
    state = run(state, log, ReadDice(1, (2, 2, 2, 3, 3)), ScoreBox(2, "full"))
    assert state.cards[0].boxes["full"] == 35  # servida: stopped after roll 1
    state = run(state, log, ReadDice(3, (1, 1, 1, 1, 2)), ReadDice(4, (4, 4, 4, 4, 4)), ScoreBox(5, "doble_generala"))
    assert state.cards[0].boxes["doble_generala"] == 0  # generala still open
    state = run(state, log, ReadDice(6, (5, 5, 5, 5, 5)), ScoreBox(7, "generala"))
    assert state.cards[0].boxes["generala"] == 50


def test_upper_bonus_appears_when_the_threshold_is_reached():
    state, log = start("yacht", players=("Ann",))
    for k, (dice, box) in enumerate(
        [
            ((1, 1, 1, 2, 3), "aces"),
            ((2, 2, 2, 1, 3), "twos"),
            ((3, 3, 3, 1, 2), "threes"),
            ((4, 4, 4, 1, 2), "fours"),
            ((5, 5, 5, 1, 2), "fives"),
        ]
    ):
        state = run(state, log, ReadDice(2 * k, dice), ScoreBox(2 * k + 1, box))
    assert state.upper_bonuses() == (0,)
    state = run(state, log, ReadDice(20, (6, 6, 6, 1, 2)), ScoreBox(21, "sixes"))
    assert state.upper_bonuses() == (35,)
    assert state.totals() == (63 + 35,)


def test_correction_changes_the_die_and_is_logged_with_who_made_it():
    state, log = start()
    state = run(state, log, ReadDice(1, (6, 6, 6, 6, 5)), CorrectDie(2, 4, 6, by="Bo"))
    assert state.turn.dice == (6, 6, 6, 6, 6)
    assert log[-1] == DieCorrected(at=2, die=4, was=5, value=6, by="Bo")
    with pytest.raises(InvalidCommandError, match="who made it"):
        execute(state, CorrectDie(3, 0, 1, by=" "))
    with pytest.raises(IllegalCommandError, match="already shows 6"):
        execute(state, CorrectDie(3, 0, 6, by="Bo"))
    with pytest.raises(InvalidCommandError, match="die 5 does not exist"):
        execute(state, CorrectDie(3, 5, 1, by="Bo"))
    state = run(state, log, ScoreBox(3, "yahtzee"))
    assert state.cards[0].boxes == {"yahtzee": 50}


def test_correcting_a_flagged_held_die_clears_its_flag():
    state, log = start()
    state = run(
        state, log, ReadDice(1, (6, 6, 1, 2, 3)), SetHolds(2, (True, True) + (False,) * 3), ReadDice(3, (6, 5, 4, 4, 4))
    )
    assert state.turn.flagged == (1,)
    state = run(state, log, CorrectDie(4, 1, 6, by="Ann"))
    assert state.turn.flagged == () and state.turn.dice == (6, 6, 4, 4, 4)


def test_undo_within_the_turn_steps_back_one_action_at_a_time():
    state, log = start()
    s1 = run(state, log, ReadDice(1, (6, 6, 1, 2, 3)))
    s2 = run(s1, log, SetHold(2, 0))
    s3 = run(s2, log, Reroll(3, (6, 6, 6, 6)))
    back = run(s3, log, Undo(4, by="Ann"))
    assert back.turn == s2.turn and back.cards == s2.cards
    back = run(back, log, Undo(5))
    assert back.turn == s1.turn
    back = run(back, log, Undo(6))
    assert back.turn.roll == 0
    with pytest.raises(IllegalCommandError, match="nothing to undo"):
        execute(back, Undo(7))
    assert fold(log) == back


def test_undo_of_the_last_box_until_the_next_player_rolls():
    state, log = start()
    before = run(state, log, ReadDice(1, (3, 3, 3, 5, 5)))
    scored = run(before, log, ScoreBox(2, "chance"))
    undone = run(scored, log, Undo(3, by="Ann"))
    assert undone.cards == before.cards and undone.turn == before.turn
    state = run(undone, log, ScoreBox(4, "full_house"), ReadDice(5, (1, 2, 3, 4, 5)))
    # Bo has rolled: Ann's box is locked; only Bo's roll can be undone.
    state = run(state, log, Undo(6))
    assert state.current_player == 1 and state.turn.roll == 0
    assert state.cards[0].boxes == {"full_house": 25}
    with pytest.raises(IllegalCommandError, match="nothing to undo"):
        execute(state, Undo(7))


def test_timer_before_a_roll_only_warns_and_restarts_the_clock():
    state, log = start(timer_s=30)
    with pytest.raises(IllegalCommandError, match="has not run out"):
        execute(state, ExpireTimer(at=29.0))
    state = run(state, log, ExpireTimer(at=30.0))
    assert log[-1] == TimerExpired(at=30.0, player=0, rolled=False)
    assert state.turn.timer_warnings == 1 and state.turn.started_at == 30.0
    assert state.current_player == 0 and not state.cards[0].boxes


def test_timer_after_a_roll_scores_the_open_box_worth_the_most():
    state, log = start(timer_s=45)
    state = run(state, log, ReadDice(10, (2, 3, 4, 5, 6)))
    state, events = execute(state, ExpireTimer(at=45.0))
    assert events[0] == TimerExpired(at=45.0, player=0, rolled=True)
    assert events[1] == BoxScored(
        at=45.0, player=0, box="large_straight", dice=(2, 3, 4, 5, 6), roll=1, points=40, cause=ScoreCause.TIMER
    )
    assert state.current_player == 1


def test_timer_ties_go_to_the_first_box_in_card_order():
    state, log = start("yacht", players=("Ann",), timer_s=60)
    state = run(state, log, ReadDice(1, (1, 1, 2, 3, 6)), ScoreBox(2, "choice"), ReadDice(3, (1, 1, 2, 2, 4)))
    # Open boxes worth the most: aces 2, twos 4, fours 4 -> twos first.
    state, events = execute(state, ExpireTimer(at=62.0))
    assert events[1].box == "twos"


def test_no_timer_no_expiry():
    state, _ = start()
    with pytest.raises(IllegalCommandError, match="no turn timer"):
        execute(state, ExpireTimer(at=1000.0))


def test_game_ends_after_boxes_times_players_turns_with_shared_win():
    state, log = start("generala", players=("Ana", "Bea"))
    t = 0
    for k in range(11 * 2):
        box = (
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
        )[k // 2]
        state = run(state, log, ReadDice(t, (1, 2, 3, 4, 6)), ScoreBox(t + 1, box))
        t += 2
    assert state.finished and state.ended is EndReason.FINISHED
    assert state.totals()[0] == state.totals()[1] and state.winners() == (0, 1)
    with pytest.raises(IllegalCommandError, match="has ended"):
        execute(state, ReadDice(t, (1, 2, 3, 4, 5)))


def test_end_game_abandons_a_scorecard_game():
    state, log = start()
    state = run(state, log, EndGame(1, by="Ann"))
    assert state.ended is EndReason.ABANDONED and state.winners() == ()


def test_free_roll_mode_keeps_values_sum_counts_and_history():
    state, log = start("", players=(), mode=GameMode.FREE_ROLL)
    state = run(state, log, ReadDice(1, (6, 6)), ReadDice(2, (1, 2, 3, 4, 5, 6, 6)))
    assert [r.values for r in state.rolls] == [(6, 6), (1, 2, 3, 4, 5, 6, 6)]
    assert state.rolls[1].total == 27 and state.rolls[1].counts == (1, 1, 1, 1, 1, 2)
    state = run(state, log, CorrectDie(3, 0, 2, by="Ann"))
    assert state.rolls[-1].values[0] == 2
    with pytest.raises(IllegalCommandError, match="no holds"):
        execute(state, SetHold(4, 0))
    with pytest.raises(IllegalCommandError, match="no scorecard"):
        execute(state, ScoreBox(4, "chance"))
    with pytest.raises(InvalidCommandError, match="faces 1-6"):
        execute(state, ReadDice(4, (0, 1)))
    state = run(state, log, Undo(4), EndGame(5))
    assert state.rolls[-1].values[0] == 1 and state.ended is EndReason.FINISHED
    assert fold(log) == state


def test_illegal_command_leaves_state_unchanged_and_decide_has_no_effect():
    state, log = start()
    state = run(state, log, ReadDice(1, (1, 2, 3, 4, 5)))
    snapshot = state
    for bad in (ScoreBox(2, "nope"), ReadDice(2, (1, 2, 3, 4, 5), roll=3), SetHold(2, 7), CorrectDie(2, 0, 1, by="x")):
        with pytest.raises(ValueError):
            decide(state, bad)
    assert state == snapshot and state is snapshot


def test_apply_refuses_events_before_start_and_a_second_start():
    state, log = start()
    with pytest.raises(IllegalCommandError, match="no game started"):
        apply(None, BoxScored(0, 0, "chance", (1,) * 5, 1, 5))
    with pytest.raises(IllegalCommandError, match="already started"):
        apply(state, log[0])


def test_apply_refuses_a_box_event_whose_points_disagree_with_the_rules():
    state, log = start()
    state = run(state, log, ReadDice(1, (1, 2, 3, 4, 5)))
    with pytest.raises(ValueError, match="rules give 15"):
        apply(state, BoxScored(2, 0, "chance", (1, 2, 3, 4, 5), 1, 16))


def test_event_json_refuses_unknown_type_missing_and_bad_fields():
    from table.game import EventError, event_from_json

    with pytest.raises(EventError, match="unknown event type 'boom'"):
        event_from_json('{"type": "boom", "at": 1}')
    with pytest.raises(EventError, match="lacks field 'values'"):
        event_from_json('{"type": "dice_read", "at": 1, "roll": 1}')
    with pytest.raises(EventError, match="'roll' must be a whole number"):
        event_from_json('{"type": "dice_read", "at": 1, "roll": true, "values": [1]}')
    with pytest.raises(EventError, match="unknown fields"):
        event_from_json('{"type": "undone", "at": 1, "who": "x"}')
    with pytest.raises(EventError, match="not valid JSON"):
        event_from_json('{"type": ')
