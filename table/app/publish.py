"""The page's snapshot after each change, and the finished game's analysis.

A mixin of :class:`table.app.core.TableApp`: :meth:`PublishMixin._publish` runs on the worker after
every submitted call and hands the snapshot (a JSON-ready dict, the page's whole state) to the
listeners (the display's WebSocket hub, the hold LEDs). The analysis of a finished game (each
decision's loss against optimal play, :mod:`table.strategy.analysis`) is computed in a background
thread and added to the end screen when ready.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from table.app.bots import bot_text
from table.app.texts import CONFIRM_END, MENU_ITEMS
from table.display.snapshot import game_json
from table.game import GameMode
from table.inputs.commands import KEYMAP
from table.rules import find_ruleset

log = logging.getLogger(__name__)


class PublishMixin:
    """The snapshot's part of :class:`~table.app.core.TableApp` (its attributes are set up there)."""

    #: The finished game's "fair dice" panel (:func:`table.audit.game_panel`), set with its analysis.
    fairness: Any = None

    def _publish(self) -> None:
        self.seq += 1
        view = self._view_key()
        if view != self._view:
            self._view, self._view_seq = view, self.seq
        snap = self.build_snapshot()
        self.snapshot = snap
        for listener in tuple(self._listeners):
            try:
                listener(self.seq, snap)
            except Exception:
                log.exception("display listener failed")
        if self.screen == "end":
            self.finished.set()
        self.bots.kick()

    def _analyse(self) -> None:
        """Start the finished game's analysis in a background thread (worker thread; once per game)."""
        session = self.session
        if session is None:
            return
        key = (session.game_id, session.state.events)
        if key == self._analysis_key:
            return
        self._analysis_key = key
        self.analysis, self.analysis_status = None, "computing"
        events = self._store.events(session.game_id)

        def work() -> None:
            from table.audit import game_panel
            from table.strategy.analysis import analyse_events

            try:
                fair = game_panel(key[0], events, self.db_path)
            except Exception as exc:  # noqa: BLE001 - the panel is a nicety: the end screen goes on without it
                log.warning("no fair-dice panel for game %s: %s", key[0], exc)
                fair = None
            try:
                result, status = analyse_events(events), "ready"
            except Exception as exc:  # no table for this variant, say: the end screen says so
                log.info("no analysis of game %s: %s", key[0], exc)
                result, status = None, "unavailable"

            def done() -> None:
                if self._analysis_key == key:
                    self.analysis, self.analysis_status, self.fairness = result, status, fair

            self.submit(done)

        threading.Thread(target=work, name="dicetable-analysis", daemon=True).start()

    def analysis_now(self, timeout: float = 30.0) -> Any:
        """The current game's analysis (waits for it, or computes it for an unfinished game); None if none.

        Any thread but the worker.  Raises what :func:`table.strategy.analysis.analyse_events` raises.
        """
        from table.strategy.analysis import analyse_events

        if self.analysis is not None and self.screen == "end":
            return self.analysis
        events = self.game_events().result(timeout=timeout)
        return analyse_events(events) if events else None

    def build_snapshot(self) -> dict[str, Any]:
        """The page's snapshot (worker thread; the PIN is added for local pages by the display)."""
        st = self.state
        game = None
        bot = None
        if st is not None and st.mode is GameMode.SCORECARD:
            game = game_json(st, self.selected)
            game.update(self.chances.get(st))  # win_chances (per seat, or None) and best_box: table.app.live_chances
            if self.hints and st.turn is not None and st.turn.roll:
                game["hints"] = hints_for(st)
            level = st.bot_level(st.current_player)
            if level:
                bot = {
                    "name": st.players[st.turn.player],
                    "level": level,
                    "dice": self.bots.dice,
                    "text": bot_text(st, self.bots.dice),
                }
        analysis = None
        if self.screen == "end" and self.analysis_status:
            analysis = {"status": self.analysis_status}
            if self.analysis is not None:
                analysis.update(analysis_json(self.analysis))
        out = {
            "seq": self.seq,
            "screen": self.screen,
            "setup": self.screens.setup.to_json(),
            "game": game,
            "warnings": [{"kind": k, "text": t} for k, t in self.warnings.items()],
            "troubles": [{"part": k, "text": t} for k, t in self.troubles.items()],
            "sharing": self.sharing,
            "message": self.message,
            "note": self.note,
            "pending": self.pending is not None,
            "camera": {
                "seq": self.camera_seq,
                "status": self.camera_status,
                "name": self.camera_name,
                "has_view": self.camera_jpeg is not None,
            },
            "menu": {
                "open": self.menu_open,
                "index": self.menu_index,
                "confirm": self.menu_confirm,
                "items": [
                    {"id": i, "title": CONFIRM_END if self.menu_confirm and i == "new" else t} for i, t in MENU_ITEMS
                ],
            },
            "hints_on": self.hints,
            "synthetic": self.tray is not None,
            "bot": bot,
            "analysis": analysis,
            "end_view": self.end_view,
            "fairness": self.fairness if self.screen == "end" else None,
            "cards": self.screens.cards and self.screen == "game",
            "keymap": {k: v.value for k, v in KEYMAP.items()},
        }
        out.update(timer=self.timer_json(), **self.views_json(), **self.free_json())  # timer, fix, history, free roll
        return out


def hints_for(state: Any) -> dict[str, Any] | None:
    """Strategy advice for the current turn, or None where there is none (no table, no roll).

    Returns
    -------
    dict or None
        ``{"box": best box, "costs": {box: expected points lost vs the best box},
        "holds": five bools to hold (roll 1-2), "keep": faces kept, "hold_cost":
        expected points the current holds lose vs the advised ones}``.
    """
    turn = state.turn
    if turn is None or not turn.roll or state.mode is not GameMode.SCORECARD:
        return None
    key = (state.ruleset, state.joker, state.cards[turn.player], turn.dice, turn.roll, turn.holds)
    if key in _HINTS:
        return _HINTS[key]
    try:
        from table.strategy import advise_boxes, advise_holds, get_table

        rs = find_ruleset(state.ruleset)
        table = get_table(rs, state.joker if rs.has_yahtzee_bonus else None, build=False)
        card = state.cards[turn.player]
        boxes = advise_boxes(table, card, turn.dice, turn.roll)
        best = boxes[0]
        out: dict[str, Any] = {"box": best.box, "costs": {b.box: round(best.expected - b.expected, 1) for b in boxes}}
        if turn.roll < 3:
            holds = advise_holds(table, card, turn.dice, turn.roll)
            top = holds[0]
            out["holds"] = list(top.hold)
            out["keep"] = list(top.keep)
            out["stop"] = top.stop
            mine = tuple(sorted(d for d, h in zip(turn.dice, turn.holds) if h))
            same = [h for h in holds if h.keep == mine]
            if same:
                out["hold_cost"] = round(top.expected - same[0].expected, 1)
    except Exception:  # advice is optional (no table for this variant): never break the display
        log.debug("no hints", exc_info=True)
        out = None  # type: ignore[assignment]
    if len(_HINTS) > 64:
        _HINTS.clear()
    _HINTS[key] = out
    return out


_HINTS: dict[Any, Any] = {}


def analysis_json(analysis: Any, worst: int = 5) -> dict[str, Any]:
    """The end screen's analysis: each player's loss and the biggest mistakes.

    Parameters
    ----------
    analysis : table.strategy.analysis.GameAnalysis
    worst : int, optional
        How many of the costliest decisions to list.

    Returns
    -------
    dict
        ``{"players": [{"name", "loss", "decisions", "optimal", "score"}], "worst": [{"name", "turn",
        "roll", "dice", "kind", "choice", "best", "loss"}]}``; losses in expected points, 1 decimal.
    """
    return {
        "players": [
            {"name": p.name, "loss": round(p.loss, 1), "decisions": p.decisions, "optimal": p.optimal, "score": p.score}
            for p in analysis.players
        ],
        "worst": [
            {
                "name": d.name,
                "turn": d.turn,
                "roll": d.roll,
                "dice": list(d.dice),
                "kind": d.kind.value,
                "choice": analysis.describe(d),
                "best": analysis.describe(d, "best"),
                "loss": round(d.loss, 1),
            }
            for d in analysis.worst(worst)
        ],
    }
