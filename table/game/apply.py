"""The pure fold: ``apply(state, event) -> state``.

:func:`apply` is strict: an event that does not fit the state (a roll number
out of order, a box the rules forbid, points that differ from the rules)
raises and no state is returned, so a state is always the fold of a valid
event log.  Commands are turned into events by
:func:`table.game.commands.decide`, which relies on these checks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from table.game.errors import EventError, IllegalCommandError, InvalidCommandError
from table.game.events import (
    BoxScored,
    DiceRead,
    DiceSource,
    DieCorrected,
    EndReason,
    Event,
    GameEnded,
    GameMode,
    GameStarted,
    HoldsChanged,
    TimerExpired,
    Undone,
)
from table.game.state import (
    MAX_PLAYERS,
    MAX_ROLLS,
    N_DICE,
    TIMER_CHOICES,
    FreeRoll,
    GameState,
    ScoredTurn,
    Turn,
)
from table.rules import (
    JOKER_VARIANTS,
    Card,
    check_dice,
    find_ruleset,
    is_full,
    place,
    score_options,
    yahtzee_bonus_for,
)

#: Most dice in one free roll.
MAX_FREE_DICE = 30
#: Longest player name, in characters.
MAX_NAME_LEN = 40

_replace = dataclasses.replace


def apply(state: GameState | None, event: Event) -> GameState:
    """Return the state after ``event``; ``state`` is None before :class:`GameStarted`.

    Parameters
    ----------
    state : GameState or None
        The state so far (None for a game not started yet).
    event : Event
        The next event of the game.

    Returns
    -------
    GameState
        A new state; ``state`` is not changed.

    Raises
    ------
    InvalidCommandError
        If the event holds values that cannot be used (dice out of 1..6, an
        unknown box, a bad timer).
    IllegalCommandError
        If the event is not allowed in ``state`` (wrong phase, wrong roll
        number, a box the rules forbid, nothing to undo).
    EventError
        If the event is not an event, or a stored value disagrees with the
        rules (e.g. recorded points).
    """
    if isinstance(event, GameStarted):
        if state is not None:
            raise IllegalCommandError("this game has already started; start a new game instead")
        return _start(event)
    if state is None:
        raise IllegalCommandError(f"no game started yet; the first event must be a game start, got {event.kind!r}")
    if state.ended is not None:
        raise IllegalCommandError(f"the game has ended ({state.ended.value}); start a new game to play on")
    handler = _HANDLERS.get(type(event))
    if handler is None:
        raise EventError(f"not a game event: {event!r}")
    new = handler(state, event)
    return _replace(new, events=state.events + 1, last_at=event.at)


def fold(events: Iterable[Event], state: GameState | None = None) -> GameState | None:
    """Apply ``events`` in order, starting from ``state`` (None: from nothing)."""
    for event in events:
        state = apply(state, event)
    return state


def _check_names(players: tuple[str, ...], least: int) -> None:
    if not least <= len(players) <= MAX_PLAYERS:
        raise InvalidCommandError(f"{len(players)} players given; a table takes {least} to {MAX_PLAYERS} players")
    seen: set[str] = set()
    for name in players:
        if not name.strip() or name != name.strip() or len(name) > MAX_NAME_LEN:
            raise InvalidCommandError(
                f"player name {name!r} cannot be used; give 1-{MAX_NAME_LEN} characters without spaces at either end"
            )
        if name.casefold() in seen:
            raise InvalidCommandError(f"two players are called {name!r}; give each player a different name")
        seen.add(name.casefold())


def _start(e: GameStarted) -> GameState:
    if e.mode is GameMode.FREE_ROLL:
        _check_names(e.players, 0)
        if e.ruleset or e.timer_s is not None or any(e.bots):
            raise InvalidCommandError("free-roll mode has no ruleset, no turn timer and no bots")
        return GameState(
            mode=e.mode,
            ruleset="",
            joker=e.joker,
            players=e.players,
            first_player=0,
            timer_s=None,
            cards=(),
            turn=Turn(player=0),
            started_at=e.at,
            last_at=e.at,
            events=1,
        )
    rs = find_ruleset(e.ruleset)
    if e.joker not in JOKER_VARIANTS:
        raise InvalidCommandError(f"unknown joker variant {e.joker!r}; choose one of {', '.join(JOKER_VARIANTS)}")
    _check_names(e.players, 1)
    if not 0 <= e.first_player < len(e.players):
        raise InvalidCommandError(f"starting player {e.first_player} does not exist; give 0 to {len(e.players) - 1}")
    if e.timer_s is not None and e.timer_s not in TIMER_CHOICES:
        raise InvalidCommandError(
            f"turn timer {e.timer_s!r} s is not offered; choose one of "
            f"{', '.join(map(str, TIMER_CHOICES))} s, or no timer"
        )
    if e.bots and (
        len(e.bots) != len(e.players) or not all(b == "" or (b.isidentifier() and b.islower()) for b in e.bots)
    ):
        raise InvalidCommandError(
            f"bots {list(e.bots)} do not fit {len(e.players)} player(s); give one entry per seat, "
            "'' for a person or a bot level such as 'optimal'"
        )
    return GameState(
        mode=e.mode,
        ruleset=rs.id,
        joker=e.joker,
        players=e.players,
        first_player=e.first_player,
        timer_s=e.timer_s,
        bots=tuple(e.bots) if any(e.bots) else (),
        cards=tuple(Card.empty() for _ in e.players),
        turn=Turn(player=e.first_player, started_at=e.at),
        started_at=e.at,
        last_at=e.at,
        events=1,
    )


def _turn(state: GameState) -> Turn:
    assert state.turn is not None  # ended games are refused in apply()
    return state.turn


def _dice_read(state: GameState, e: DiceRead) -> GameState:
    turn = _turn(state)
    if e.source is DiceSource.VIRTUAL and not state.bot_level(turn.player):
        who = state.players[turn.player] if state.players else "this table"
        raise IllegalCommandError(
            f"virtual dice are rolled only for a bot's turn, and {who} is a person; "
            "roll the real dice in the tray (the camera reads them) or type them in"
        )
    if state.mode is GameMode.FREE_ROLL:
        values = tuple(e.values)
        if not 1 <= len(values) <= MAX_FREE_DICE or any(
            isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 6 for v in values
        ):
            raise InvalidCommandError(f"free roll {list(values)} cannot be used; give 1 to {MAX_FREE_DICE} faces 1-6")
        if e.roll != 1:
            raise InvalidCommandError(f"free rolls are not numbered; give roll 1, not {e.roll}")
        return _replace(state, rolls=state.rolls + (FreeRoll(values, e.at),), previous=state)
    dice = check_dice(e.values)
    if turn.roll >= MAX_ROLLS:
        raise IllegalCommandError(
            f"{state.players[turn.player]} has already rolled {MAX_ROLLS} times this turn; choose a box to score"
        )
    if e.roll != turn.roll + 1:
        raise IllegalCommandError(
            f"roll {e.roll} read, but {state.players[turn.player]} has rolled {turn.roll} "
            f"time(s) this turn; the next read must be roll {turn.roll + 1}"
        )
    if e.roll == 1:
        # A new turn: holds start released; the previous player's box is now locked.
        new_turn = _replace(turn, roll=1, dice=dice, holds=(False,) * N_DICE, flagged=())
        return _replace(state, turn=new_turn, previous=_replace(state, previous=None))
    flagged = tuple(i for i in range(N_DICE) if turn.holds[i] and dice[i] != turn.dice[i])
    new_turn = _replace(turn, roll=e.roll, dice=dice, flagged=flagged)
    return _replace(state, turn=new_turn, previous=state)


def _holds_changed(state: GameState, e: HoldsChanged) -> GameState:
    turn = _turn(state)
    if state.mode is not GameMode.SCORECARD:
        raise IllegalCommandError("free-roll mode has no holds; just roll the dice you want")
    if len(e.holds) != N_DICE or not all(isinstance(h, bool) for h in e.holds):
        raise InvalidCommandError(f"holds must be five true/false values, got {list(e.holds)}")
    if turn.roll == 0:
        raise IllegalCommandError("nothing to hold yet; roll the dice first")
    if turn.roll >= MAX_ROLLS:
        raise IllegalCommandError(f"no re-roll is left after roll {MAX_ROLLS}, so holds do not matter; choose a box")
    return _replace(state, turn=_replace(turn, holds=tuple(e.holds)), previous=state)


def _die_corrected(state: GameState, e: DieCorrected) -> GameState:
    turn = _turn(state)
    if state.mode is GameMode.FREE_ROLL:
        if not state.rolls:
            raise IllegalCommandError("nothing to correct yet; no roll has been read")
        current = state.rolls[-1].values
    else:
        if turn.roll == 0:
            raise IllegalCommandError("nothing to correct yet; roll the dice first")
        current = turn.dice
    if not 0 <= e.die < len(current):
        raise InvalidCommandError(f"die {e.die} does not exist; the last read has dice 0 to {len(current) - 1}")
    if isinstance(e.value, bool) or not 1 <= e.value <= 6:
        raise InvalidCommandError(f"face {e.value!r} is impossible on a d6; give 1-6")
    if not e.by.strip():
        raise InvalidCommandError("a correction must say who made it (a player name)")
    if e.was != current[e.die]:
        raise EventError(f"correction says die {e.die} was {e.was}, but it shows {current[e.die]}")
    if e.value == e.was:
        raise IllegalCommandError(f"die {e.die} already shows {e.value}; nothing to correct")
    values = current[: e.die] + (e.value,) + current[e.die + 1 :]
    if state.mode is GameMode.FREE_ROLL:
        last = _replace(state.rolls[-1], values=values)
        return _replace(state, rolls=state.rolls[:-1] + (last,), previous=state)
    flagged = tuple(i for i in turn.flagged if i != e.die)
    return _replace(state, turn=_replace(turn, dice=values, flagged=flagged), previous=state)


def _box_scored(state: GameState, e: BoxScored) -> GameState:
    turn = _turn(state)
    if state.mode is not GameMode.SCORECARD:
        raise IllegalCommandError("free-roll mode has no scorecard to write in")
    if turn.roll == 0:
        raise IllegalCommandError(f"{state.players[turn.player]} has not rolled yet; roll before choosing a box")
    if e.player != turn.player or tuple(e.dice) != turn.dice or e.roll != turn.roll:
        raise EventError(
            f"box event for player {e.player}, dice {list(e.dice)}, roll {e.roll} does not "
            f"match the turn (player {turn.player}, dice {list(turn.dice)}, roll {turn.roll})"
        )
    rs = find_ruleset(state.ruleset)
    if e.box not in rs.boxes:
        raise InvalidCommandError(f"{rs.id} has no box {e.box!r}; its boxes are {', '.join(rs.boxes)}")
    card = state.cards[turn.player]
    options = score_options(rs, turn.dice, card, roll=turn.roll, joker=state.joker)
    if e.box not in options:
        why = "is already filled" if e.box in card.boxes else "is not allowed for these dice"
        raise IllegalCommandError(
            f"box {e.box!r} {why} for {state.players[turn.player]}; choose one of: "
            + ", ".join(f"{b} ({p})" for b, p in options.items())
        )
    bonus = yahtzee_bonus_for(rs, turn.dice, card)
    if e.points != options[e.box] or e.yahtzee_bonus != bonus:
        raise EventError(
            f"box event records {e.points} points (+{e.yahtzee_bonus}) in {e.box!r}, "
            f"but the rules give {options[e.box]} (+{bonus})"
        )
    new_card = place(rs, card, turn.dice, e.box, roll=turn.roll, joker=state.joker)
    cards = state.cards[: turn.player] + (new_card,) + state.cards[turn.player + 1 :]
    history = state.history + (ScoredTurn(turn.player, e.box, turn.dice, turn.roll, e.points, bonus, e.cause, e.at),)
    if all(is_full(rs, c) for c in cards):
        return _replace(state, cards=cards, history=history, turn=None, ended=EndReason.FINISHED, previous=state)
    nxt = Turn(player=(turn.player + 1) % len(state.players), started_at=e.at)
    return _replace(state, cards=cards, history=history, turn=nxt, previous=state)


def _undone(state: GameState, e: Undone) -> GameState:
    if state.previous is None:
        raise IllegalCommandError(
            "nothing to undo: only this turn's actions, and the last scored box until the "
            "next player has rolled, can be undone"
        )
    return state.previous


def _timer_expired(state: GameState, e: TimerExpired) -> GameState:
    turn = _turn(state)
    if state.timer_s is None:
        raise IllegalCommandError("this game has no turn timer")
    if e.player != turn.player or e.rolled != (turn.roll > 0):
        raise EventError(
            f"timer event for player {e.player} (rolled={e.rolled}) does not match the turn "
            f"(player {turn.player}, roll {turn.roll})"
        )
    if e.at < turn.started_at + state.timer_s:
        raise IllegalCommandError(
            f"the {state.timer_s} s timer has not run out: {e.at - turn.started_at:.1f} s since the turn started"
        )
    if e.rolled:
        return state  # the BoxScored(cause="timer") that follows does the work
    return _replace(state, turn=_replace(turn, started_at=e.at, timer_warnings=turn.timer_warnings + 1))


def _game_ended(state: GameState, e: GameEnded) -> GameState:
    want = EndReason.FINISHED if state.mode is GameMode.FREE_ROLL else EndReason.ABANDONED
    if e.reason is not want:
        raise EventError(f"a {state.mode.value} game closed by hand ends as {want.value!r}")
    return _replace(state, turn=None, ended=e.reason, previous=None)


#: The fold step of each event type but GameStarted (each handler takes its own event type).
_HANDLERS: dict[type, Callable[[GameState, Any], GameState]] = {
    DiceRead: _dice_read,
    HoldsChanged: _holds_changed,
    DieCorrected: _die_corrected,
    BoxScored: _box_scored,
    Undone: _undone,
    TimerExpired: _timer_expired,
    GameEnded: _game_ended,
}
