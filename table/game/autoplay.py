"""Random legal play, for tests, crash tests, benchmarks and demos.

:func:`random_command` picks a command that the rules allow in a state, using
a random source the caller passes in (the engine itself never draws random
numbers).  Mostly it plays sensibly (roll, hold, re-roll, score); now and
then it corrects a die or undoes an action, so long runs exercise every
event type.
"""

from __future__ import annotations

from typing import Protocol

from table.game.commands import (
    Command,
    CorrectDie,
    EndGame,
    ExpireTimer,
    ReadDice,
    Reroll,
    ScoreBox,
    SetHolds,
    Undo,
)
from table.game.events import GameMode
from table.game.state import MAX_ROLLS, N_DICE, GameState
from table.rules import find_ruleset, score_options


class RandomSource(Protocol):
    """What :func:`random_command` needs of a random source (``random.Random`` fits)."""

    def random(self) -> float: ...  # noqa: D102
    def randint(self, a: int, b: int) -> int: ...  # noqa: D102


def _dice(rng: RandomSource, n: int) -> tuple[int, ...]:
    return tuple(rng.randint(1, 6) for _ in range(n))


def random_command(
    state: GameState, rng: RandomSource, at: float, *, p_undo: float = 0.03, p_correct: float = 0.03
) -> Command:
    """A command the rules allow in ``state`` (which must not have ended).

    Parameters
    ----------
    state : GameState
        A running game.
    rng : RandomSource
        Random source, e.g. ``random.Random(seed)``.
    at : float
        Time to give the command, in seconds since the Unix epoch.
    p_undo, p_correct : float
        Chances, per call, of an undo (when one is possible) and of a correction.

    Returns
    -------
    Command
        Accepted by :func:`table.game.execute` in ``state``.
    """
    turn = state.turn
    assert turn is not None, "the game has ended"
    if state.mode is GameMode.FREE_ROLL:
        if state.rolls and rng.random() < p_correct:
            die = rng.randint(0, len(state.rolls[-1].values) - 1)
            old = state.rolls[-1].values[die]
            return CorrectDie(at, die, old % 6 + 1, by="autoplay")
        if len(state.rolls) > 20 and rng.random() < 0.05:
            return EndGame(at, by="autoplay")
        return ReadDice(at, _dice(rng, rng.randint(1, 8)))
    if state.can_undo and rng.random() < p_undo:
        return Undo(at, by="autoplay")
    if turn.roll == 0:
        if state.timer_s is not None and rng.random() < 0.05:
            return ExpireTimer(turn.started_at + state.timer_s)
        return ReadDice(at, _dice(rng, N_DICE))
    if rng.random() < p_correct:
        die = rng.randint(0, N_DICE - 1)
        return CorrectDie(at, die, turn.dice[die] % 6 + 1, by="autoplay")
    if state.timer_s is not None and rng.random() < 0.03:
        return ExpireTimer(max(at, turn.started_at + state.timer_s))
    if turn.roll < MAX_ROLLS and rng.random() < 0.6:
        if rng.random() < 0.5:
            return SetHolds(at, tuple(rng.random() < 0.5 for _ in range(N_DICE)))
        free = sum(1 for h in turn.holds if not h)
        if free:
            return Reroll(at, _dice(rng, free))
    rs = find_ruleset(state.ruleset)
    options = score_options(rs, turn.dice, state.cards[turn.player], roll=turn.roll, joker=state.joker)
    boxes = list(options)
    if rng.random() < 0.5:  # often take the best box, sometimes any legal one
        return ScoreBox(at, max(boxes, key=lambda b: options[b]))
    return ScoreBox(at, boxes[rng.randint(0, len(boxes) - 1)])
