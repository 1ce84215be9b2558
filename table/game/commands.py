"""Commands (what a player or the camera asks for) and :func:`decide`.

Inputs (buttons, keys, the web page, the camera's roll watcher) only build
commands.  :func:`decide` checks a command against the state and the rules and
returns the events it causes; an invalid command raises and changes nothing.
:func:`execute` does both steps and returns the new state with the events.

Example
-------
>>> state, _ = execute(None, StartGame(at=0.0, ruleset="yacht", players=("Ann", "Bo")))
>>> state, _ = execute(state, ReadDice(at=1.0, values=(3, 3, 3, 5, 5)))
>>> state, events = execute(state, ScoreBox(at=2.0, box="full_house"))
>>> events[0].points, state.current_player
(19, 1)
"""

from __future__ import annotations

from dataclasses import dataclass

from table.game.apply import apply
from table.game.errors import IllegalCommandError, InvalidCommandError
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
    ScoreCause,
    TimerExpired,
    Undone,
)
from table.game.state import MAX_ROLLS, N_DICE, GameState, Turn
from table.rules import find_ruleset, score_options, yahtzee_bonus_for


@dataclass(frozen=True, slots=True)
class StartGame:
    """Start a game: ruleset, joker variant, players (names), who starts, turn timer.

    ``at`` is the time in seconds since the Unix epoch; ``timer_s`` one of
    30, 45, 60, 90, 600 or None.  For free-roll mode give ``mode="free_roll"``
    and ``ruleset=""``.  ``bots`` gives per seat ``""`` (a person) or a bot
    level (see :class:`~table.game.events.GameStarted`).
    """

    at: float
    ruleset: str
    players: tuple[str, ...]
    joker: str = "forced"
    first_player: int = 0
    timer_s: int | None = None
    mode: GameMode = GameMode.SCORECARD
    bots: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ReadDice:
    """A read of all the dice (camera or typed); ``roll`` None means the next roll."""

    at: float
    values: tuple[int, ...]
    roll: int | None = None
    source: DiceSource = DiceSource.TYPED


@dataclass(frozen=True, slots=True)
class SetHold:
    """Hold (``held=True``) or release die ``die`` (0-based) before the next re-roll."""

    at: float
    die: int
    held: bool = True


@dataclass(frozen=True, slots=True)
class SetHolds:
    """Set every die's hold at once (five bools)."""

    at: float
    holds: tuple[bool, ...]


@dataclass(frozen=True, slots=True)
class Reroll:
    """The re-roll of the dice not held: ``values`` are the new faces of those dice, in die order."""

    at: float
    values: tuple[int, ...]
    source: DiceSource = DiceSource.TYPED


@dataclass(frozen=True, slots=True)
class ScoreBox:
    """Write the current dice in ``box`` of the current player's card (0 points: a scratch)."""

    at: float
    box: str


@dataclass(frozen=True, slots=True)
class CorrectDie:
    """Correct a misread die of the last read: die ``die`` (0-based) shows ``value``."""

    at: float
    die: int
    value: int
    by: str


@dataclass(frozen=True, slots=True)
class Undo:
    """Take back the last action of this turn, or the last scored box until the next roll."""

    at: float
    by: str = ""


@dataclass(frozen=True, slots=True)
class ExpireTimer:
    """The caller's clock says the turn timer ran out at ``at``."""

    at: float


@dataclass(frozen=True, slots=True)
class EndGame:
    """Close the game by hand (free-roll session over, or a scorecard game abandoned)."""

    at: float
    by: str = ""


Command = StartGame | ReadDice | SetHold | SetHolds | Reroll | ScoreBox | CorrectDie | Undo | ExpireTimer | EndGame


def _running(state: GameState | None) -> tuple[GameState, Turn]:
    if state is None:
        raise IllegalCommandError("no game started yet; start a game first")
    if state.turn is None:
        raise IllegalCommandError(f"the game has ended ({state.ended.value if state.ended else '?'}); start a new game")
    return state, state.turn


def best_box(state: GameState) -> tuple[str, int]:
    """The legal open box worth the most for the current dice (first in card order on a tie).

    Raises
    ------
    IllegalCommandError
        If the game has ended, is a free-roll game, or the player has not rolled.
    """
    state, turn = _running(state)
    if state.mode is not GameMode.SCORECARD or turn.roll == 0:
        raise IllegalCommandError("no dice to score yet")
    rs = find_ruleset(state.ruleset)
    options = score_options(rs, turn.dice, state.cards[turn.player], roll=turn.roll, joker=state.joker)
    box = max(options, key=lambda b: (options[b], -rs.boxes.index(b)))
    return box, options[box]


def _scored(state: GameState, turn: Turn, at: float, box: str, cause: ScoreCause) -> BoxScored:
    if state.mode is not GameMode.SCORECARD:
        raise IllegalCommandError("free-roll mode has no scorecard to write in")
    rs = find_ruleset(state.ruleset)
    card = state.cards[turn.player]
    points = 0
    if turn.roll and box in rs.boxes:
        options = score_options(rs, turn.dice, card, roll=turn.roll, joker=state.joker)
        points = options.get(box, 0)
    bonus = yahtzee_bonus_for(rs, turn.dice, card) if turn.roll else 0
    return BoxScored(
        at=at,
        player=turn.player,
        box=box,
        dice=turn.dice,
        roll=turn.roll,
        points=points,
        yahtzee_bonus=bonus,
        cause=cause,
    )


def _events_for(state: GameState | None, c: Command) -> tuple[Event, ...]:
    if isinstance(c, StartGame):
        return (
            GameStarted(
                at=c.at,
                ruleset=c.ruleset,
                joker=c.joker,
                players=tuple(c.players),
                first_player=c.first_player,
                timer_s=c.timer_s,
                mode=c.mode,
                bots=tuple(c.bots),
            ),
        )
    if isinstance(c, Undo):
        _running(state)
        return (Undone(at=c.at, by=c.by),)
    if isinstance(c, EndGame):
        st, _ = _running(state)
        reason = EndReason.FINISHED if st.mode is GameMode.FREE_ROLL else EndReason.ABANDONED
        return (GameEnded(at=c.at, reason=reason, by=c.by),)
    st, turn = _running(state)
    if isinstance(c, ReadDice):
        roll = c.roll if c.roll is not None else (1 if st.mode is GameMode.FREE_ROLL else turn.roll + 1)
        return (DiceRead(at=c.at, values=tuple(c.values), roll=roll, source=c.source),)
    if isinstance(c, SetHold):
        if not 0 <= c.die < N_DICE:
            raise InvalidCommandError(f"die {c.die} does not exist; give 0 to {N_DICE - 1}")
        holds = turn.holds[: c.die] + (bool(c.held),) + turn.holds[c.die + 1 :]
        return (HoldsChanged(at=c.at, holds=holds),)
    if isinstance(c, SetHolds):
        return (HoldsChanged(at=c.at, holds=tuple(c.holds)),)
    if isinstance(c, Reroll):
        return (_reroll(st, turn, c),)
    if isinstance(c, ScoreBox):
        return (_scored(st, turn, c.at, c.box, ScoreCause.PLAYER),)
    if isinstance(c, CorrectDie):
        current = st.rolls[-1].values if st.mode is GameMode.FREE_ROLL and st.rolls else turn.dice
        was = current[c.die] if 0 <= c.die < len(current) else 0
        return (DieCorrected(at=c.at, die=c.die, was=was, value=c.value, by=c.by),)
    if isinstance(c, ExpireTimer):
        if st.mode is not GameMode.SCORECARD or st.timer_s is None:
            raise IllegalCommandError("this game has no turn timer")
        expired = TimerExpired(at=c.at, player=turn.player, rolled=turn.roll > 0)
        if turn.roll == 0:
            return (expired,)
        box, _ = best_box(st)
        return (expired, _scored(st, turn, c.at, box, ScoreCause.TIMER))
    raise InvalidCommandError(f"not a game command: {c!r}")


def _reroll(state: GameState, turn: Turn, c: Reroll) -> DiceRead:
    if state.mode is not GameMode.SCORECARD:
        raise IllegalCommandError("free-roll mode has no re-rolls; read the new roll instead")
    if turn.roll == 0:
        raise IllegalCommandError("roll all five dice first; a re-roll comes after a roll")
    if turn.roll >= MAX_ROLLS:
        raise IllegalCommandError(f"no re-roll is left after roll {MAX_ROLLS}; choose a box")
    free = [i for i in range(N_DICE) if not turn.holds[i]]
    if not free:
        raise IllegalCommandError("all five dice are held; release a die or choose a box")
    if len(c.values) != len(free):
        raise InvalidCommandError(
            f"{len(c.values)} values given for the re-roll, but {len(free)} dice are not held "
            f"(dice {', '.join(map(str, free))}); give one value per re-rolled die"
        )
    values = list(turn.dice)
    for i, v in zip(free, c.values):
        values[i] = v
    return DiceRead(at=c.at, values=tuple(values), roll=turn.roll + 1, source=c.source)


def decide(state: GameState | None, command: Command) -> tuple[Event, ...]:
    """Return the events ``command`` causes in ``state``, after checking them.

    Parameters
    ----------
    state : GameState or None
        The current state (None before the game starts).
    command : Command
        What was asked.

    Returns
    -------
    tuple of Event
        One event, or two for a timer that ran out after a roll
        (:class:`TimerExpired` then the automatic :class:`BoxScored`).

    Raises
    ------
    InvalidCommandError, IllegalCommandError
        If the command cannot be used or is not allowed now; nothing changes.
    table.rules.RulesError
        If dice or a ruleset name cannot be read (also a ValueError).
    """
    return execute(state, command)[1]


def execute(state: GameState | None, command: Command) -> tuple[GameState, tuple[Event, ...]]:
    """Decide ``command`` and apply its events; return ``(new_state, events)``.

    Raises the errors of :func:`decide`; ``state`` itself never changes.
    """
    events = _events_for(state, command)
    new = state
    for event in events:
        new = apply(new, event)
    assert new is not None
    return new, events
