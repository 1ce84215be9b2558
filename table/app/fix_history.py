"""Fixing a misread die and the round-by-round history, on the app's worker.

A mixin of :class:`table.app.core.TableApp`. The fix view (:func:`table.app.screens.open_fix`) is driven by
the buttons (PREV/NEXT or HOLD n pick the die, ROLL/CONFIRM steps its value, SCORE saves) or by taps on the
page (:meth:`FixHistoryMixin.fix`); saving is a :class:`~table.game.CorrectDie` command, recorded as a
:class:`~table.game.DieCorrected` event with who, when, the old and the new value. The history view reads
the game's stored events (:func:`table.game.history.turns_of`).
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import replace
from typing import Any

from table.app import screens
from table.app.texts import NOT_SEEN
from table.game import CorrectDie, GameMode
from table.game.history import rounds_of, turns_of
from table.rules import find_ruleset


class FixHistoryMixin:
    """The fix and history views' part of :class:`~table.app.core.TableApp` (attributes set up there)."""

    session: Any
    screens: Any
    message: str
    warnings: dict[str, str]
    _history_cache: Any = None

    # -- what inputs call (any thread) ---------------------------------------------------------

    def fix(self, data: dict[str, Any], seen: int | None = None, origin: str = "table") -> Future[Any]:
        """A tap in the page's fix view: ``{}`` opens it, ``{"die": 0-based}`` picks a die, ``{"value": 1-6}``
        sets its value, ``{"confirm": true}`` saves, ``{"cancel": true}`` closes. A die or value that does not
        exist, or a tap from a page that had not drawn what the table shows (`seen`), is said in one line."""
        return self.submit(self._fix_tap, dict(data), seen, origin)  # type: ignore[attr-defined]

    # -- worker side ---------------------------------------------------------------------------

    def fix_dice(self) -> tuple[int, ...]:
        """The dice the fix view can change: the last read (corrections included), or ``()``."""
        st = self.state  # type: ignore[attr-defined]
        if st is None or st.turn is None:
            return ()
        if st.mode is GameMode.FREE_ROLL:
            return st.rolls[-1].values if st.rolls else ()
        return st.turn.dice if st.turn.roll else ()

    def history_rounds(self) -> int:
        """How many rounds the history view can show."""
        return rounds_of(self._history_turns())

    def _history_turns(self) -> list[dict[str, Any]]:
        if self.session is None:
            return []
        key = (self.session.game_id, self.session.state.events)
        if self._history_cache is None or self._history_cache[0] != key:
            events = self._store.events(self.session.game_id)  # type: ignore[attr-defined]
            self._history_cache = (key, turns_of(events))
        return self._history_cache[1]

    def _fix_tap(self, data: dict[str, Any], seen: int | None, origin: str) -> None:
        self.message = ""
        if not self._seen_now(seen):  # type: ignore[attr-defined]
            self.message = NOT_SEEN
            return
        dice = self.fix_dice()
        if data.get("cancel"):
            self.screens = replace(self.screens, fix=None)
            return
        if data.get("confirm") and self.screens.fix is not None:
            die, value = self.screens.fix
            self.screens = replace(self.screens, fix=None)
            self._correct(die, value, origin)
            return
        step = screens.fix_tap(self.screens, dice, die=data.get("die"), value=data.get("value"))
        self.screens = step.screens
        self.message = step.say

    def _correct(self, die: int, value: int, origin: str) -> None:
        """Save a correction of die `die` (0-based) to `value` (a :class:`CorrectDie`); said in the message."""
        st = self.state  # type: ignore[attr-defined]
        dice = self.fix_dice()
        if not dice:
            self.message = "Nothing to fix: no dice have been read."
            return
        if not 0 <= die < len(dice):  # the dice changed while the view was open (a new throw)
            self.message = f"There is no die {die + 1} now: open the fix again and pick one of 1 to {len(dice)}."
            return
        if value == dice[die]:
            self.message = f"Die {die + 1} already shows {value}: nothing was changed."
            return
        who = st.players[st.turn.player] if st.players and st.mode is GameMode.SCORECARD else "table"
        by = who if origin in ("table", "button") else f"{who} ({origin})"
        if self._handle(CorrectDie(at=self.clock(), die=die, value=value, by=by)):  # type: ignore[attr-defined]
            self.message = f"Die {die + 1} fixed: {dice[die]} -> {value} (by {by})."
            if st.mode is GameMode.SCORECARD and not self.state.turn.flagged:  # type: ignore[attr-defined]
                self.warnings.pop("held-changed", None)
            self.selected = None
            self._reselect()  # type: ignore[attr-defined]

    def views_json(self) -> dict[str, Any]:
        """The fix and history views' part of the snapshot (``fix``, ``history``: None when closed)."""
        fix = None
        if self.screens.fix is not None:
            die, value = self.screens.fix
            fix = {"die": die, "value": value, "dice": list(self.fix_dice())}
        history = None
        if self.screens.history is not None and self.session is not None:
            turns = self._history_turns()
            rounds = rounds_of(turns)
            shown = self.screens.history or rounds
            history = {
                "round": shown,
                "rounds": rounds,
                "free": self.session.state.mode is GameMode.FREE_ROLL,
                "turns": [t for t in turns if t["round"] == shown][-8:],
                "boxes": _box_names(self.session.state.ruleset),
            }
        return {"fix": fix, "history": history}


def _box_names(ruleset: str) -> dict[str, str]:
    """Box id -> the name the page shows (``{}`` for a free roll)."""
    if not ruleset:
        return {}
    rs = find_ruleset(ruleset)
    return {b: rs.display_name(b) for b in rs.boxes}
