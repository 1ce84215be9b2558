"""Post-game analysis: every decision's expected-score loss against optimal play.

Like a proficiency test, each decision a player made is priced with the value
tables (:mod:`table.strategy.advice`): the expected final score of the choice
made against that of the best choice, in points.  Two kinds of decision are
priced:

``hold``
    After throw 1 or 2 (a re-roll still allowed): which dice to keep, or to
    stop (keep all five and score).  The choice is read from the holds the
    player set before the re-roll (:class:`~table.game.HoldsChanged`), or
    *stop* when a box was scored before the third throw.
``box``
    Which box the final dice went in.

The model is *solitaire-optimal per player*: each card is priced as if its
owner played alone to maximise their own expected final score (upper bonus and
Yahtzee bonuses included), which is what the tables hold; it ignores the
opponents' scores (playing to win can differ near the end of a close game).
A box the turn timer chose is priced like any other.  Holds are the ones
declared on the table (HOLD buttons or the page); a person
who kept dice without declaring them is analysed as having re-rolled all five.
Undone actions are not analysed: only the decisions that stand in the log.

Examples
--------
>>> from table.game import ReadDice, ScoreBox, StartGame, execute
>>> state, log = None, []
>>> for c in (StartGame(at=0, ruleset="yacht", players=("Ann",)),
...           ReadDice(at=1, values=(5, 5, 5, 5, 5)), ScoreBox(at=2, box="aces")):
...     state, events = execute(state, c)
...     log += events
>>> a = analyse_events(log)
>>> [(d.kind.value, d.choice, d.best) for d in a.decisions]
[('hold', 'stop', 'stop'), ('box', 'aces', 'yacht')]
>>> a.players[0].loss > 40
True
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from table.game.apply import apply
from table.game.events import BoxScored, DiceRead, Event, GameMode
from table.game.state import MAX_ROLLS, GameState
from table.rules import Card, find_ruleset
from table.strategy.advice import advise_boxes, advise_holds
from table.strategy.tables import StrategyTable, get_table

#: Losses below this many points count as optimal (float noise of the tables).
OPTIMAL_TOLERANCE = 1e-6

#: Columns of :meth:`GameAnalysis.to_csv`.
CSV_COLUMNS = ("turn", "player", "kind", "roll", "dice", "choice", "best", "expected", "best_expected", "loss")


class DecisionKind(StrEnum):
    """What a decision chose."""

    HOLD = "hold"
    """Which dice to keep for the re-roll after throw 1 or 2 (or to stop)."""
    BOX = "box"
    """Which box to score the final dice in."""


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision of one player, priced against optimal play.

    Attributes
    ----------
    turn : int
        The player's turn number, 1-based (a round of the game).
    player : int
        Seat of the player (index into the game's players).
    name : str
        The player's name.
    kind : DecisionKind
        ``hold`` or ``box``.
    roll : int
        The throw the decision followed, 1..3.
    dice : tuple of int, length 5
        The dice the player saw, in die order.
    choice : str
        What was chosen: ``"keep 5 5"`` / ``"keep nothing"`` / ``"stop"`` for a
        hold, the box id for a box.
    best : str
        The choice the tables rank first, in the same form.
    expected : float
        Expected final score (points) after ``choice``, playing on optimally.
    best_expected : float
        Expected final score after ``best``.
    loss : float
        ``best_expected - expected`` (>= 0), in points.
    """

    turn: int
    player: int
    name: str
    kind: DecisionKind
    roll: int
    dice: tuple[int, ...]
    choice: str
    best: str
    expected: float
    best_expected: float
    loss: float

    @property
    def optimal(self) -> bool:
        """True when the choice loses nothing (within :data:`OPTIMAL_TOLERANCE`)."""
        return self.loss <= OPTIMAL_TOLERANCE

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of the attributes (expected values and loss to 4 decimals)."""
        return {
            "turn": self.turn,
            "player": self.player,
            "name": self.name,
            "kind": self.kind.value,
            "roll": self.roll,
            "dice": list(self.dice),
            "choice": self.choice,
            "best": self.best,
            "expected": round(self.expected, 4),
            "best_expected": round(self.best_expected, 4),
            "loss": round(self.loss, 4),
            "optimal": self.optimal,
        }


@dataclass(frozen=True, slots=True)
class PlayerAnalysis:
    """One player's totals.

    Attributes
    ----------
    player : int
        Seat.
    name : str
    decisions : int
        Decisions analysed.
    optimal : int
        How many of them lost nothing.
    loss : float
        Sum of the losses, in expected points.
    score : int
        The player's total on the card (so far).
    """

    player: int
    name: str
    decisions: int
    optimal: int
    loss: float
    score: int

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of the attributes (loss to 4 decimals)."""
        return {
            "player": self.player,
            "name": self.name,
            "decisions": self.decisions,
            "optimal": self.optimal,
            "loss": round(self.loss, 4),
            "score": self.score,
        }


@dataclass(frozen=True, slots=True)
class GameAnalysis:
    """Every decision of a game priced against optimal play, with per-player totals.

    Attributes
    ----------
    ruleset : str
    variant : str
        The value table's variant (Yahtzee: the joker rule; others ``standard``).
    finished : bool
        True when the game ended with every card full.
    decisions : tuple of Decision
        In play order.
    players : tuple of PlayerAnalysis
        In seat order.
    """

    ruleset: str
    variant: str
    finished: bool
    decisions: tuple[Decision, ...]
    players: tuple[PlayerAnalysis, ...]

    def worst(self, n: int = 5, player: int | None = None) -> tuple[Decision, ...]:
        """The ``n`` decisions that lost the most (losses > 0 only), largest first.

        Parameters
        ----------
        n : int
            How many at most.
        player : int, optional
            Only this seat's decisions.
        """
        pool = [d for d in self.decisions if not d.optimal and (player is None or d.player == player)]
        pool.sort(key=lambda d: -d.loss)
        return tuple(pool[:n])

    def describe(self, decision: Decision, which: str = "choice") -> str:
        """``decision.choice`` (or ``.best`` for ``which="best"``) in words: boxes by their card names."""
        text = decision.best if which == "best" else decision.choice
        return find_ruleset(self.ruleset).display_name(text) if decision.kind is DecisionKind.BOX else text

    def to_json(self) -> dict[str, Any]:
        """``{"ruleset", "variant", "finished", "players": [...], "decisions": [...]}``."""
        return {
            "ruleset": self.ruleset,
            "variant": self.variant,
            "finished": self.finished,
            "players": [p.to_json() for p in self.players],
            "decisions": [d.to_json() for d in self.decisions],
        }

    def to_csv(self) -> str:
        """One row per decision (:data:`CSV_COLUMNS`), then one ``total`` row per player.

        The ``dice`` column is the five faces without spaces (``"13455"``);
        expected values and losses have 4 decimals.  A total row gives
        ``turn=total``, the player, ``kind`` = decisions analysed, ``choice`` =
        optimal decisions, and the summed loss.
        """
        buf = io.StringIO()
        out = csv.writer(buf, lineterminator="\n")
        out.writerow(CSV_COLUMNS)
        for d in self.decisions:
            out.writerow(
                [
                    d.turn,
                    d.name,
                    d.kind.value,
                    d.roll,
                    "".join(map(str, d.dice)),
                    d.choice,
                    d.best,
                    f"{d.expected:.4f}",
                    f"{d.best_expected:.4f}",
                    f"{d.loss:.4f}",
                ]
            )
        for p in self.players:
            out.writerow(["total", p.name, p.decisions, "", "", p.optimal, "", "", "", f"{p.loss:.4f}"])
        return buf.getvalue()


def table_for(state: GameState) -> StrategyTable:
    """The value table a game is priced with (loaded, never built here).

    Raises
    ------
    FileNotFoundError
        If no table of the game's ruleset and variant is shipped or cached
        (``dicetable strategy --build`` makes one).
    ValueError
        If the game is a free-roll session (nothing to analyse).
    """
    if state.mode is not GameMode.SCORECARD:
        raise ValueError("a free-roll session has no decisions to analyse; give a scorecard game")
    rs = find_ruleset(state.ruleset)
    return get_table(rs, state.joker if rs.has_yahtzee_bonus else None, build=False)


def _keep_text(keep: tuple[int, ...], n: int) -> str:
    if len(keep) == n:
        return "stop"
    return "keep " + " ".join(map(str, keep)) if keep else "keep nothing"


@dataclass(frozen=True, slots=True)
class _Seen:
    """A decision as read from the log, before pricing."""

    turn: int
    player: int
    kind: DecisionKind
    roll: int
    card: Card
    dice: tuple[int, ...]
    keep: tuple[int, ...] = ()
    box: str = ""


def _collect(events: Iterable[Event]) -> tuple[GameState, list[_Seen]]:
    """Fold the log; return the final state and the decisions that stand (undone ones dropped)."""
    state: GameState | None = None
    found: dict[tuple[int, str, int], _Seen] = {}
    for event in events:
        before = state
        state = apply(state, event)
        if before is None or before.turn is None or before.mode is not GameMode.SCORECARD:
            continue
        turn = before.turn
        number = len(before.history)  # index of the turn being played, in play order
        card = before.cards[turn.player]
        if isinstance(event, DiceRead) and 2 <= event.roll <= MAX_ROLLS:
            keep = tuple(sorted(d for d, h in zip(turn.dice, turn.holds) if h))
            found[(number, "hold", turn.roll)] = _Seen(
                number, turn.player, DecisionKind.HOLD, turn.roll, card, turn.dice, keep=keep
            )
        elif isinstance(event, BoxScored):
            if turn.roll < MAX_ROLLS:
                found[(number, "hold", turn.roll)] = _Seen(
                    number, turn.player, DecisionKind.HOLD, turn.roll, card, turn.dice, keep=tuple(sorted(turn.dice))
                )
            found[(number, "box", turn.roll)] = _Seen(
                number, turn.player, DecisionKind.BOX, turn.roll, card, turn.dice, box=event.box
            )
    if state is None:
        raise ValueError("the game has no events; give a game that was started")
    # Keep what stands: for each scored turn, its holds before its last roll and its box; for the
    # turn in progress, the holds before its current roll.
    kept: list[_Seen] = []
    for (number, kind, roll), seen in sorted(found.items(), key=lambda kv: (kv[0][0], kv[0][1] == "box", kv[0][2])):
        if number < len(state.history):
            scored = state.history[number]
            ok = (seen.box == scored.box and roll == scored.roll) if kind == "box" else roll <= scored.roll
            ok = ok and seen.player == scored.player and (kind == "box" or roll < MAX_ROLLS)
            if kind == "hold" and roll == scored.roll and len(seen.keep) != len(seen.dice):
                ok = False  # a hold at the throw the turn stopped on was undone; the stop replaced it
        else:
            cur = state.turn
            ok = kind == "hold" and cur is not None and number == len(state.history) and roll < cur.roll
        if ok:
            kept.append(seen)
    return state, kept


def analyse_events(events: Iterable[Event], *, table: StrategyTable | None = None) -> GameAnalysis:
    """Price every decision of a game's event log against optimal play.

    Parameters
    ----------
    events : iterable of Event
        The game's whole log, from its :class:`~table.game.GameStarted` (as
        :meth:`table.store.Store.events` gives it); finished or not.
    table : StrategyTable, optional
        The value table of the game's ruleset and variant (default: loaded
        with :func:`table_for`; tables are cached per process).

    Returns
    -------
    GameAnalysis
        Every standing decision with its loss, and per-player totals.

    Raises
    ------
    ValueError
        If the log is empty, or the game is a free-roll session.
    FileNotFoundError
        If the value table is missing (see :func:`table_for`).
    table.game.GameError
        If the log is not a valid game (it is folded with :func:`table.game.apply`).

    Notes
    -----
    The loss of a hold is ``E[best hold] - E[hold made]`` and of a box
    ``E[best box] - E[box chosen]``, expected final scores under the
    solitaire-optimal strategy of the tables (see the module docstring).  A
    turn stopped early gives a *stop* hold decision (priced with the best box)
    and then a box decision, so no point is counted twice.
    """
    state, seen = _collect(events)
    tab = table if table is not None else table_for(state)
    out: list[Decision] = []
    for s in seen:
        if s.kind is DecisionKind.HOLD:
            ranked = advise_holds(tab, s.card, s.dice, s.roll)
            best = ranked[0]
            mine = next(a for a in ranked if a.keep == s.keep)
            choice, top = _keep_text(s.keep, len(s.dice)), _keep_text(best.keep, len(s.dice))
            expected, best_expected = mine.expected, best.expected
        else:
            boxes = advise_boxes(tab, s.card, s.dice, s.roll)
            top, best_expected = boxes[0].box, boxes[0].expected
            choice = s.box
            expected = next(b.expected for b in boxes if b.box == s.box)
        turn = s.turn // len(state.players) + 1
        out.append(
            Decision(
                turn,
                s.player,
                state.players[s.player],
                s.kind,
                s.roll,
                s.dice,
                choice,
                top if best_expected - expected > OPTIMAL_TOLERANCE else choice,
                expected,
                best_expected,
                max(0.0, best_expected - expected),
            )
        )
    totals = state.totals()
    players = []
    for seat, name in enumerate(state.players):
        mine_d = [d for d in out if d.player == seat]
        players.append(
            PlayerAnalysis(
                seat, name, len(mine_d), sum(d.optimal for d in mine_d), sum(d.loss for d in mine_d), totals[seat]
            )
        )
    return GameAnalysis(
        state.ruleset,
        tab.variant,
        state.ended is not None and all(len(c) == len(find_ruleset(state.ruleset).boxes) for c in state.cards),
        tuple(out),
        tuple(players),
    )


__all__ = [
    "CSV_COLUMNS",
    "OPTIMAL_TOLERANCE",
    "Decision",
    "DecisionKind",
    "GameAnalysis",
    "PlayerAnalysis",
    "analyse_events",
    "table_for",
]
