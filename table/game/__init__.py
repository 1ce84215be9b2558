"""The game engine: an event-sourced state machine over :mod:`table.rules`.

Everything that happens at the table is an event (:mod:`table.game.events`);
the state is the fold of the events (:func:`apply`, :func:`fold`).  Inputs
build commands (:mod:`table.game.commands`); :func:`decide` turns a command
into checked events, or raises and changes nothing.  :class:`GameSession`
(in :mod:`table.app.session`) adds the store and subscribers.

Example
-------
>>> state, _ = execute(None, StartGame(at=0.0, ruleset="generala", players=("Ana",)))
>>> state, _ = execute(state, ReadDice(at=1.0, values=(1, 2, 3, 4, 5)))
>>> state, events = execute(state, ScoreBox(at=2.0, box="escalera"))
>>> events[0].points   # servida: stopped after the first roll
25
"""

from table.game.apply import apply, fold
from table.game.commands import (
    Command,
    CorrectDie,
    EndGame,
    ExpireTimer,
    ReadDice,
    Reroll,
    ScoreBox,
    SetHold,
    SetHolds,
    StartGame,
    Undo,
    best_box,
    decide,
    execute,
)
from table.game.errors import EventError, GameError, IllegalCommandError, InvalidCommandError
from table.game.events import (
    EVENT_TYPES,
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
    ScoreCause,
    TimerExpired,
    Undone,
    event_from_dict,
    event_from_json,
    event_to_dict,
    event_to_json,
)
from table.game.state import TIMER_CHOICES, FreeRoll, GameState, ScoredTurn, Turn

__all__ = [
    "EVENT_TYPES",
    "TIMER_CHOICES",
    "BoxScored",
    "Command",
    "CorrectDie",
    "DiceRead",
    "DiceSource",
    "DieCorrected",
    "EndGame",
    "EndReason",
    "Event",
    "EventError",
    "ExpireTimer",
    "FreeRoll",
    "GameEnded",
    "GameError",
    "GameMode",
    "GameStarted",
    "GameState",
    "HoldsChanged",
    "IllegalCommandError",
    "InvalidCommandError",
    "ReadDice",
    "Reroll",
    "ScoreBox",
    "ScoreCause",
    "ScoredTurn",
    "SetHold",
    "SetHolds",
    "StartGame",
    "TimerExpired",
    "Turn",
    "Undo",
    "Undone",
    "apply",
    "best_box",
    "decide",
    "event_from_dict",
    "event_from_json",
    "event_to_dict",
    "event_to_json",
    "execute",
    "fold",
]
