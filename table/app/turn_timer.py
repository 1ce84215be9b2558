"""The turn timer on the app's side: when the running turn's time runs out, on the monotonic clock.

The engine keeps the timer's rules (:class:`~table.game.ExpireTimer`: a warning before the first roll, else
the open box worth the most is scored) and reads no clock. Here a deadline is kept in
:func:`time.monotonic` seconds (wall-clock jumps, e.g. NTP setting a Pi's clock after boot, do not move it);
the app's worker waits for work at most until the next deadline or warning (:meth:`TimerMixin._timer_wait_s`),
so no thread ticks every second.

Across a restart the turn goes on with the time that was left: what was used is taken from the events, from
the turn's start to the game's last event (``state.last_at - turn.started_at``). A power cut thus gives back
at most the time since the player's last action, never takes any.
"""

from __future__ import annotations

from typing import Any

from table.game import ExpireTimer, GameMode
from table.rules import find_ruleset

#: Seconds before the end when the hold LEDs blink and the page's countdown turns red.
WARN_S = 10.0


class TurnTimer:
    """The running turn's deadline (monotonic seconds), re-armed when a new turn (or timer) starts."""

    def __init__(self) -> None:
        self.key: Any = None
        self.deadline: float | None = None
        self.total: int | None = None

    def sync(self, state: Any, mono: float) -> None:
        """Follow `state` at `mono`: a turn (or a timer restarted by a warning) not seen before is armed with
        its time left (``timer_s - (last_at - started_at)``, at least 0); no timer or no turn disarms."""
        turn = None if state is None else state.turn
        if turn is None or state.timer_s is None or state.mode is not GameMode.SCORECARD:
            self.key, self.deadline, self.total = None, None, None
            return
        key = (state.started_at, turn.player, turn.started_at)
        if key == self.key:
            return
        used = max(0.0, state.last_at - turn.started_at)
        self.key, self.total = key, state.timer_s
        self.deadline = mono + max(0.0, state.timer_s - used)

    def left(self, mono: float) -> float | None:
        """Seconds left at `mono` (0 when run out), or None without a timer."""
        return None if self.deadline is None else max(0.0, self.deadline - mono)


class TimerMixin:
    """The timer's part of :class:`~table.app.core.TableApp` (worker thread only)."""

    turn_timer: TurnTimer
    mono: Any
    clock: Any
    session: Any
    message: str
    _warned_key: Any = None

    def _wait_s(self) -> float | None:
        """How long the worker waits for work: until the store's next retry or the timer's next need."""
        waits = [w for w in (self.store_faults.retry_s, self._timer_wait_s()) if w is not None]  # type: ignore[attr-defined]
        return min(waits) if waits else None

    def _tick(self) -> bool:
        """Check the timer through the store's fault handling (a failed write is said, tried again); True if
        the page needs a new snapshot."""
        self.turn_timer.sync(self.state, self.mono())
        left = self.turn_timer.left(self.mono())
        if left is None:
            return False
        if left > 0:  # nothing to write: only the warning's start, maybe
            return self._check_timer()
        try:
            return bool(self.store_faults.call(self._check_timer, ()))  # type: ignore[attr-defined]
        except Exception:  # a store fault: said on every screen by StoreFaults
            return True

    def _timer_wait_s(self) -> float | None:
        """Seconds until the timer needs the worker (its warning or its end), or None."""
        self.turn_timer.sync(self.state, self.mono())
        left = self.turn_timer.left(self.mono())
        if left is None:
            return None
        return max(0.0, left - WARN_S) + 0.01 if left > WARN_S else left + 0.01

    def _check_timer(self) -> bool:
        """Fire the engine's expiry if the turn's time has run out (worker thread); True if anything changed
        for the page (an expiry, or the warning's start)."""
        st = self.state
        self.turn_timer.sync(st, self.mono())
        left = self.turn_timer.left(self.mono())
        if left is None or st.turn is None:
            return False
        if left > 0:
            warn = left <= WARN_S and self._warned_key != self.turn_timer.key
            if warn:
                self._warned_key = self.turn_timer.key
            return warn
        name = st.players[st.turn.player]
        at = max(self.clock(), st.turn.started_at + st.timer_s)  # a wall clock set back must not refuse it
        if not self._handle(ExpireTimer(at=at)):
            self.turn_timer.deadline = None  # refused (said in the message): not tried again in a loop
            return True
        new = self.state
        if new.history and new.history[-1].at == at and new.history[-1].cause.value == "timer":
            t = new.history[-1]
            self._after_timer_score()
            shown = find_ruleset(new.ruleset).display_name(t.box)
            self.message = f"Time is up for {name}: {t.points} in {shown}. {self.message}"
        else:
            self.message = f"Time is up, {name}: roll now."
        self.turn_timer.sync(self.state, self.mono())
        return True

    def timer_json(self) -> dict[str, Any] | None:
        """The page's countdown: ``{"total": s, "left": s, "warn": bool}``, or None without a timer."""
        self.turn_timer.sync(self.state, self.mono())
        left = self.turn_timer.left(self.mono())
        if left is None:
            return None
        return {"total": self.turn_timer.total, "left": round(left, 2), "warn": left <= WARN_S}

    def _after_timer_score(self) -> None:
        """After the timer scored the box: as after a SCORE (the next player, or the end screen)."""
        self._after_score()  # type: ignore[attr-defined]
