"""What the page draws: a JSON-ready snapshot of the game and the table's screen state.

The page owns no game logic: every number it shows (points each open box would
score, the best box, totals, upper-bonus progress, winners) is computed here
from :mod:`table.rules` and the game state, and pushed over the WebSocket.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from table.game import TIMER_CHOICES, GameMode, GameState
from table.rules import (
    JOKER_VARIANTS,
    RULESET_IDS,
    find_ruleset,
    score_options,
    upper_sum,
    yahtzee_bonus_points,
)

#: Screens of the page.
SCREENS = ("setup", "game", "end")

#: Words for the joker variants on the setup screen.
JOKER_NAMES = {"forced": "Forced joker (official)", "free": "Free joker", "free_choice": "Free choice joker"}


@dataclass(slots=True)
class Setup:
    """The setup screen's choices (mutable: the app edits it)."""

    ruleset: str = "yahtzee"
    joker: str = "forced"
    #: Seats: a name, or ``NAME:LEVEL`` for a bot (``easy``, ``medium``, ``optimal``).
    names: list[str] = field(default_factory=lambda: ["Player 1", "Player 2"])
    field: int = 0
    #: Turn timer in seconds (one of :data:`~table.game.TIMER_CHOICES`), or None for none.
    timer_s: int | None = None
    #: ``scorecard`` (a game of `ruleset`) or ``free_roll`` (the table only reads and sums the dice).
    mode: str = "scorecard"

    #: Fields PREV/NEXT move through, in order (``rolloff``: throw for who starts; the last two came later,
    #: so Start stays three NEXTs from the rules).
    FIELDS = ("ruleset", "joker", "players", "start", "timer", "rolloff")

    def to_json(self) -> dict[str, Any]:
        """The setup screen's part of the snapshot."""
        return {
            "ruleset": self.ruleset,
            "joker": self.joker,
            "names": list(self.names),
            "field": self.FIELDS[self.field],
            "rulesets": [{"id": r, "title": find_ruleset(r).title or r} for r in RULESET_IDS],
            "jokers": [{"id": j, "title": JOKER_NAMES.get(j, j)} for j in JOKER_VARIANTS],
            "has_joker": find_ruleset(self.ruleset).has_yahtzee_bonus and self.mode == "scorecard",
            "timer_s": self.timer_s,
            "timers": list(TIMER_CHOICES),
            "mode": self.mode,
        }


def options_of(state: GameState) -> dict[str, int]:
    """Points each open box would score now for the current player (``{}`` before a roll)."""
    turn = state.turn
    if turn is None or turn.roll == 0 or state.mode is not GameMode.SCORECARD:
        return {}
    return score_options(state.ruleset, turn.dice, state.cards[turn.player], roll=turn.roll, joker=state.joker)


def best_of(options: dict[str, int], boxes: tuple[str, ...]) -> str | None:
    """The box worth the most (first in card order on a tie), or None."""
    if not options:
        return None
    return max(options, key=lambda b: (options[b], -boxes.index(b)))


def game_json(state: GameState, selected: str | None) -> dict[str, Any]:
    """The game's part of the snapshot: players' cards, the turn, dice and options.

    Parameters
    ----------
    state : GameState
        A scorecard game (running or ended).
    selected : str or None
        The box selected with PREV/NEXT.

    Returns
    -------
    dict
        ``{"ruleset", "title", "boxes": [{"id", "name", "upper"}], "players": [{"name",
        "boxes": {id: points or None}, "upper_sum", "upper_bonus", "upper_target",
        "yahtzee_bonus", "total", "current", "bot": level or None}], "current", "round", "rounds", "roll",
        "max_rolls", "dice": [{"value", "held", "flagged"}], "options": [{"box", "name",
        "points", "best", "selected"}], "can_undo", "winners", "ended"}``.
    """
    rs = find_ruleset(state.ruleset)
    turn = state.turn
    totals = state.totals()
    bonuses = state.upper_bonuses()
    current = None if turn is None else turn.player
    players = []
    for i, (name, card) in enumerate(zip(state.players, state.cards)):
        players.append(
            {
                "name": name,
                "boxes": {b: card.boxes.get(b) for b in rs.boxes},
                "upper_sum": upper_sum(rs, card) if rs.upper_boxes else None,
                "upper_bonus": bonuses[i],
                "upper_target": rs.upper_bonus_threshold,
                "upper_bonus_points": rs.upper_bonus_points,
                "yahtzee_bonus": yahtzee_bonus_points(rs, card) if rs.has_yahtzee_bonus else None,
                "total": totals[i],
                "current": i == current,
                "bot": state.bot_level(i) or None,
            }
        )
    options = options_of(state)
    best = best_of(options, rs.boxes)
    dice = []
    if turn is not None and turn.roll:
        dice = [
            {"value": v, "held": bool(turn.holds[k]), "flagged": k in turn.flagged} for k, v in enumerate(turn.dice)
        ]
    filled = sum(len(c.boxes) for c in state.cards)
    n = max(1, len(state.players))
    return {
        "ruleset": rs.id,
        "title": rs.title or rs.id,
        "boxes": [{"id": b, "name": rs.display_name(b), "upper": b in rs.upper_boxes} for b in rs.boxes],
        "players": players,
        "current": current,
        "round": min(len(rs.boxes), filled // n + 1),
        "rounds": len(rs.boxes),
        "roll": 0 if turn is None else turn.roll,
        "max_rolls": 3,
        "dice": dice,
        "holds": [] if turn is None else list(turn.holds),
        "options": [
            {"box": b, "name": rs.display_name(b), "points": p, "best": b == best, "selected": b == selected}
            for b, p in options.items()
        ],
        "selected": selected,
        "best": best,
        "can_undo": state.can_undo,
        "winners": [state.players[i] for i in state.winners()],
        "ended": None if state.ended is None else state.ended.value,
    }
