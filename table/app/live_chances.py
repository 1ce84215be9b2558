"""Each player's win chance (and the best box by the tables) for the snapshot, never in a press's way.

:meth:`LiveChances.get` answers at once from a cache keyed by what the chances
depend on (ruleset, joker, cards, the turn's player, throw and dice).  A state
not seen yet is handed to one background thread (the latest state wins; older
ones waiting are dropped) and the previous chances of the same game are shown
meanwhile; when the new ones are ready, ``on_ready`` is called (the app then
publishes a fresh snapshot).  The computation is
:func:`table.strategy.win_chances.win_chances_for`: a few ms, plus loading the
ruleset's table once per process; with it, the box the strategy tables
rank first for the dice now (:func:`table.strategy.advise_boxes`), for the
stream overlay.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

#: Decimals sent to the page (0.1 percentage point).
DECIMALS = 3


def chance_key(state: Any) -> tuple[Any, ...] | None:
    """What the chances of ``state`` depend on (None: no scorecard game)."""
    if state is None or not getattr(state, "cards", None):
        return None
    turn = state.turn
    t = None if turn is None else (turn.player, turn.roll, tuple(turn.dice))
    return (state.ruleset, state.joker, tuple(state.cards), t)


#: The answer where there is none.
NONE: dict[str, Any] = {"win_chances": None, "best_box": None}


def best_box(state: Any) -> str | None:
    """The box the strategy tables rank first for the current dice (None before a throw or without a table)."""
    from table.rules import find_ruleset
    from table.strategy import advise_boxes, get_table

    turn = state.turn
    if turn is None or not turn.roll:
        return None
    rs = find_ruleset(state.ruleset)
    table = get_table(rs, state.joker if rs.has_yahtzee_bonus else None, build=False)
    return advise_boxes(table, state.cards[turn.player], turn.dice, turn.roll)[0].box


class LiveChances:
    """Cached, background-computed win chances (see the module). ``on_ready``: called from the helper thread."""

    def __init__(self, on_ready: Callable[[], Any]) -> None:
        self._on_ready = on_ready
        self._lock = threading.Lock()
        self._done: dict[tuple[Any, ...], dict[str, Any]] = {}
        self._shown: tuple[tuple[Any, ...], dict[str, Any]] | None = None  # the last answer, for its game
        self._waiting: tuple[tuple[Any, ...], Any] | None = None
        self._busy = False

    def get(self, state: Any) -> dict[str, Any]:
        """``{"win_chances": per seat or None, "best_box": box id or None}`` of ``state``; never waits.

        While a new state is being computed: the chances last shown for the same game, no best box.
        """
        key = chance_key(state)
        if key is None:
            return dict(NONE)
        with self._lock:
            if key in self._done:
                value = self._done[key]
                self._shown = (key, value)
                return value
            self._waiting = (key, state)
            if not self._busy:
                self._busy = True
                threading.Thread(target=self._work, name="dicetable-chances", daemon=True).start()
            shown = self._shown
        if shown is not None and shown[0][:2] == key[:2] and len(shown[0][2]) == len(key[2]):
            return {"win_chances": shown[1]["win_chances"], "best_box": None}
        return dict(NONE)

    def _work(self) -> None:
        from table.strategy.win_chances import win_chances_for

        while True:
            with self._lock:
                job, self._waiting = self._waiting, None
                if job is None:
                    self._busy = False
                    return
            key, state = job
            value = dict(NONE)
            try:
                chances = win_chances_for(state)
                value["win_chances"] = None if chances is None else [round(p, DECIMALS) for p in chances]
                value["best_box"] = best_box(state) if chances is not None else None
            except Exception:  # the chances are optional: never break the table
                log.exception("win chances failed")
            with self._lock:
                if len(self._done) > 256:
                    self._done.clear()
                self._done[key] = value
            try:
                self._on_ready()
            except Exception:
                log.exception("win chances: could not ask for a new snapshot")
