"""Property tests of the game engine, for every ruleset (hypothesis).

Random legal play (``table.game.autoplay``, seeded from hypothesis) mixed with random, often illegal,
commands: the game always ends after boxes x players scored turns with every
card full; totals are boxes + bonuses; the upper bonus is paid exactly at the
threshold; the log replays to the same state; a refused command raises a
``DicetableError`` that is a ``ValueError`` and changes nothing.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table.errors import DicetableError
from table.game import (
    CorrectDie,
    EndGame,
    ExpireTimer,
    ReadDice,
    Reroll,
    ScoreBox,
    SetHold,
    StartGame,
    Undo,
    event_from_json,
    event_to_json,
    execute,
    fold,
)
from table.game.autoplay import random_command
from table.rules import RULESET_IDS, card_total, find_ruleset, is_full, upper_bonus, upper_sum

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def random_noise(state, rng: random.Random, at: float):
    """A random command, legal or not (never EndGame: that ends the game on purpose)."""
    rs = find_ruleset(state.ruleset)
    pick = rng.randint(0, 6)
    if pick == 0:
        return ReadDice(at, tuple(rng.randint(0, 7) for _ in range(rng.randint(4, 6))), roll=rng.randint(0, 4))
    if pick == 1:
        return ScoreBox(at, rng.choice(rs.boxes + ("nope",)))
    if pick == 2:
        return SetHold(at, rng.randint(-1, 5), held=rng.random() < 0.5)
    if pick == 3:
        return Reroll(at, tuple(rng.randint(1, 6) for _ in range(rng.randint(0, 5))))
    if pick == 4:
        return CorrectDie(at, rng.randint(-1, 5), rng.randint(0, 7), by=rng.choice(("", "Ann")))
    if pick == 5:
        return Undo(at)
    return ExpireTimer(at)


def check_card_invariants(state):
    rs = find_ruleset(state.ruleset)
    for card in state.cards:
        bonus = upper_bonus(rs, card)
        paid = rs.upper_bonus_threshold is not None and upper_sum(rs, card) >= rs.upper_bonus_threshold
        assert bonus == (rs.upper_bonus_points if paid else 0)
        expected = sum(card.boxes.values()) + bonus + 100 * card.yahtzee_bonuses
        assert card_total(rs, card) == expected
        if not rs.has_yahtzee_bonus:
            assert card.yahtzee_bonuses == 0
    assert state.totals() == tuple(card_total(rs, c) for c in state.cards)


def play(ruleset, n_players, first, timer, joker, rng, noise):
    state, log = execute(
        None,
        StartGame(
            at=0.0,
            ruleset=ruleset,
            players=tuple(f"P{i}" for i in range(n_players)),
            first_player=first,
            timer_s=timer,
            joker=joker,
        ),
    )
    log = list(log)
    t = 1.0
    refused = 0
    for _ in range(20_000):
        if state.finished:
            break
        command = random_noise(state, rng, t) if rng.random() < noise else random_command(state, rng, t)
        before = state
        try:
            state, events = execute(state, command)
        except ValueError as exc:
            assert isinstance(exc, DicetableError), repr(exc)
            assert state is before
            refused += 1
            continue
        log += events
        check_card_invariants(state)
        t += 1.0
    return state, log, refused


@pytest.mark.parametrize("ruleset", RULESET_IDS)
@SETTINGS
@given(
    n_players=st.integers(1, 4),
    data=st.data(),
    seed=st.integers(0, 2**32 - 1),
    timer=st.sampled_from((None, 30, 600)),
    noise=st.sampled_from((0.0, 0.3)),
)
def test_random_play_ends_full_and_replays(ruleset, n_players, data, seed, timer, noise):
    rng = random.Random(seed)
    first = data.draw(st.integers(0, n_players - 1))
    joker = data.draw(st.sampled_from(("forced", "free", "free_choice")))
    state, log, refused = play(ruleset, n_players, first, timer, joker, rng, noise)
    rs = find_ruleset(ruleset)
    assert state.finished and state.turn is None
    assert all(is_full(rs, c) for c in state.cards)
    assert len(state.history) == len(rs.boxes) * n_players
    # Turns go round the table from the starting player.
    assert [t.player for t in state.history] == [(first + k) % n_players for k in range(len(state.history))]
    check_card_invariants(state)
    assert state.winners() and max(state.totals()) == state.totals()[state.winners()[0]]
    # The log replays (also through its JSON text form) to the very same state.
    assert fold(log) == state
    assert fold(event_from_json(event_to_json(e)) for e in log) == state
    assert log[-1].kind == "box_scored"
    if noise:
        assert refused > 0


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), ruleset=st.sampled_from(RULESET_IDS))
def test_every_prefix_of_the_log_is_a_valid_state(seed, ruleset):
    rng = random.Random(seed)
    state, log, _ = play(ruleset, 2, 0, None, "forced", rng, 0.0)
    states = [None]
    for event in log:
        states.append(fold([event], states[-1]))
    assert states[-1] == state
    # Closing a running game by hand is always possible; a finished one cannot be closed.
    mid = states[len(states) // 2]
    if not mid.finished:
        closed, _ = execute(mid, EndGame(at=1e9))
        assert closed.finished and closed.winners() == ()
