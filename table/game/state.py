"""The state of one game: immutable values, the fold of the game's events.

Nothing here changes in place; :func:`table.game.apply.apply` returns new
values.  Derived numbers (totals, upper bonus, winners) come from
:mod:`table.rules` through the helper functions at the bottom.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from table.game.events import EndReason, GameMode, ScoreCause
from table.rules import Card, card_total, find_ruleset, upper_bonus, winners

#: Dice in a scorecard game.
N_DICE = 5
#: Most throws in one turn.
MAX_ROLLS = 3
#: Allowed turn timers, in seconds.
TIMER_CHOICES = (30, 45, 60, 90, 600)
#: Most players at one table.
MAX_PLAYERS = 8


@dataclass(frozen=True, slots=True)
class Turn:
    """The turn in progress.

    Parameters
    ----------
    player : int
        Index of the player whose turn it is.
    roll : int
        Throws made so far in this turn, 0..3 (0: not rolled yet).
    dice : tuple of int
        The last read (with corrections), one value 1..6 per die; empty before
        the first roll.
    holds : tuple of bool, length 5
        Which dice are held for the next re-roll.
    flagged : tuple of int
        Indexes of held dice whose value changed on the last read (a misread,
        or a held die rolled anyway); shown as a warning, never refused.
    started_at : float
        When the turn (or the timer, after a warning) started, in seconds
        since the Unix epoch; the turn timer runs from here.
    timer_warnings : int
        Timer expiries before the first roll (warnings only).
    """

    player: int
    roll: int = 0
    dice: tuple[int, ...] = ()
    holds: tuple[bool, ...] = (False,) * N_DICE
    flagged: tuple[int, ...] = ()
    started_at: float = 0.0
    timer_warnings: int = 0


@dataclass(frozen=True, slots=True)
class ScoredTurn:
    """One finished turn of a scorecard game, as written on the card."""

    player: int
    box: str
    dice: tuple[int, ...]
    roll: int
    points: int
    yahtzee_bonus: int
    cause: ScoreCause
    at: float


@dataclass(frozen=True, slots=True)
class FreeRoll:
    """One roll of free-roll mode: the values read, with their sum and counts."""

    values: tuple[int, ...]
    at: float

    @property
    def total(self) -> int:
        """Sum of the values."""
        return sum(self.values)

    @property
    def counts(self) -> tuple[int, ...]:
        """How many dice show each face 1..6 (index 0 is face 1), length 6."""
        return tuple(self.values.count(f) for f in range(1, 7))


@dataclass(frozen=True, slots=True)
class GameState:
    """Everything known about one game after its events so far.

    Parameters
    ----------
    mode : GameMode
        Scorecard game or free rolling.
    ruleset : str
        Ruleset id; empty in free-roll mode.
    joker : str
        Yahtzee joker variant.
    players : tuple of str
        Player names in seating order.
    first_player : int
        Who played first.
    timer_s : int or None
        Turn timer, in seconds, or None.
    cards : tuple of Card
        One scorecard per player (empty in free-roll mode).
    turn : Turn or None
        The turn in progress; None once the game has ended.
    history : tuple of ScoredTurn
        Every scored turn, in play order.
    rolls : tuple of FreeRoll
        Free-roll mode only: every roll, oldest first.
    ended : EndReason or None
        Why the game ended; None while it runs.
    started_at, last_at : float
        Time of the first and of the latest event, seconds since the Unix epoch.
    events : int
        How many events have been applied (the next event's sequence number).
    bots : tuple of str
        Per seat, ``""`` for a person or the level of a computer player; empty
        when every seat is a person (see :meth:`bot_level`).
    previous : GameState or None
        The state before the last undoable action (None when nothing can be
        undone): reads, hold changes and corrections of the current turn, and
        the last scored box until the next player has rolled.
    """

    mode: GameMode
    ruleset: str
    joker: str
    players: tuple[str, ...]
    first_player: int
    timer_s: int | None
    cards: tuple[Card, ...]
    turn: Turn | None
    history: tuple[ScoredTurn, ...] = ()
    rolls: tuple[FreeRoll, ...] = ()
    ended: EndReason | None = None
    started_at: float = 0.0
    last_at: float = 0.0
    events: int = 0
    bots: tuple[str, ...] = ()
    previous: GameState | None = field(default=None, repr=False)

    def bot_level(self, player: int | None) -> str:
        """The bot level of seat ``player`` (``""`` for a person, or when ``player`` is None)."""
        if player is None or player >= len(self.bots):
            return ""
        return self.bots[player]

    @property
    def finished(self) -> bool:
        """True once the game has ended (cards full, or closed by hand)."""
        return self.ended is not None

    @property
    def current_player(self) -> int | None:
        """Index of the player to play, or None when the game has ended."""
        return None if self.turn is None else self.turn.player

    @property
    def can_undo(self) -> bool:
        """True if an :class:`~table.game.commands.Undo` would be accepted now."""
        return self.previous is not None and self.ended is None

    def totals(self) -> tuple[int, ...]:
        """Each player's total (boxes + upper bonus + Yahtzee bonuses), in seat order."""
        if self.mode is not GameMode.SCORECARD:
            return ()
        rs = find_ruleset(self.ruleset)
        return tuple(card_total(rs, card) for card in self.cards)

    def upper_bonuses(self) -> tuple[int, ...]:
        """Each player's upper bonus so far (0 until the threshold is reached)."""
        if self.mode is not GameMode.SCORECARD:
            return ()
        rs = find_ruleset(self.ruleset)
        return tuple(upper_bonus(rs, card) for card in self.cards)

    def winners(self) -> tuple[int, ...]:
        """Indexes of the players sharing the top total once the cards are full; else ()."""
        if self.ended is not EndReason.FINISHED or self.mode is not GameMode.SCORECARD:
            return ()
        return tuple(winners(self.totals()))
