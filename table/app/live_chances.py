"""Each player's win chance (and the best box by the tables) for the snapshot, never in a press's way.

:meth:`LiveChances.get` answers from a cache keyed by what the chances depend
on (ruleset, joker, cards, the turn's player, throw and dice).  A state not
seen yet is handed to one background thread (the latest state wins; older ones
waiting are dropped) and waited for at most :data:`WAIT_S`; if not ready by
then, the previous chances of the same game are shown meanwhile and
``on_ready`` is called once the new ones are (the app then publishes a fresh
snapshot).  The computation is
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
#: Seconds a snapshot waits for a new state's chances before going out without them (unnoticeable
#: beside a press; most states take 0.3-3 ms here).
WAIT_S = 0.005


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
        self._cond = threading.Condition()
        self._done: dict[tuple[Any, ...], dict[str, Any]] = {}
        self._shown: tuple[tuple[Any, ...], dict[str, Any]] | None = None  # the last answer, for its game
        self._waiting: tuple[tuple[Any, ...], Any] | None = None
        self._asked: tuple[Any, ...] | None = None  # the key the snapshot last asked for
        self._gave_up = False  # True once get() stopped waiting for it (then on_ready is called)
        self._busy = False

    def get(self, state: Any) -> dict[str, Any]:
        """``{"win_chances": per seat or None, "best_box": box id or None}`` of ``state``.

        Waits at most :data:`WAIT_S` for a state not seen yet (most take 0.3-3 ms here, so the
        snapshot has them at once); past that, the chances last shown for the same game and no
        best box, and ``on_ready`` is called when the new ones are ready.
        """
        key = chance_key(state)
        if key is None:
            return dict(NONE)
        with self._cond:
            if key not in self._done:
                self._waiting, self._asked, self._gave_up = (key, state), key, False
                if not self._busy:
                    self._busy = True
                    threading.Thread(target=self._work, name="dicetable-chances", daemon=True).start()
                self._cond.wait_for(lambda: key in self._done, timeout=WAIT_S)
            if key in self._done:
                value = self._done[key]
                self._shown = (key, value)
                return value
            self._gave_up = True
            shown = self._shown
        if shown is not None and shown[0][:2] == key[:2] and len(shown[0][2]) == len(key[2]):
            return {"win_chances": shown[1]["win_chances"], "best_box": None}
        return dict(NONE)

    def _work(self) -> None:
        from table.strategy.win_chances import win_chances_for

        while True:
            with self._cond:
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
            with self._cond:
                if len(self._done) > 256:
                    self._done.clear()
                self._done[key] = value
                self._cond.notify_all()
                late = key == self._asked and self._gave_up  # the snapshot went out without them
            if late:
                try:
                    self._on_ready()
                except Exception:
                    log.exception("win chances: could not ask for a new snapshot")
