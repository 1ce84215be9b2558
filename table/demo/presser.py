"""The built-in player of ``dicetable demo``: presses the table's buttons like a person would.

It only sends :class:`table.inputs.Command` values to the app (the same path as
the GPIO buttons), at a watchable pace: ROLL to throw, HOLD 1-5 to keep dice,
NEXT to walk to the box it wants, SCORE to write it.  Holds and boxes come from
:mod:`table.strategy.builtin_player` or a strategy bot (:mod:`table.strategy.bots`); what to do
next is :func:`table.app.bots.next_step`, the same decision path as the bot
seats of ``dicetable play``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from table.app.bots import BuiltinBot, next_step
from table.inputs.commands import HOLD_COMMANDS, Command
from table.store import StoreWriteError

#: Seconds the player waits after a press the store could not keep (a full or read-only disk) before it
#: decides again: the page says what is wrong and the app's worker retries the store every 5 s.
STORE_RETRY_S = 1.0


class DemoPlayer:
    """Plays every seat of the app's game through commands, in a thread.

    Parameters
    ----------
    app : TableApp
        A started app on the game screen with the synthetic tray.
    delay_s : float, optional
        Seconds between presses.
    bots : sequence of Bot or None, optional
        Strategy bots for the first seats; the built-in player for the others.
    """

    def __init__(self, app: Any, *, delay_s: float = 0.5, bots: Sequence[Any] = ()) -> None:
        self.app = app
        self.delay_s = float(delay_s)
        self.bots = list(bots)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dicetable-demo-player", daemon=True)
        self.presses = 0
        self.unread = 0
        self._builtin: dict[tuple[str, str], BuiltinBot] = {}

    def start(self) -> DemoPlayer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _press(self, c: Command) -> bool:
        """Press `c`; False when the store could not keep it (not applied: the player waits, then decides anew)."""
        self.presses += 1
        try:
            self.app.press(c, "demo").result(timeout=30)
        except StoreWriteError:
            self._stop.wait(STORE_RETRY_S)
            return False
        return True

    def _throw(self) -> None:
        """Press ROLL and wait until the camera gave its verdict on the throw (read or unreadable)."""
        verdicts = self.app.verdicts
        before = self.app.state.events
        if not self._press(Command.ROLL):
            return
        deadline = time.monotonic() + 30
        while not self._stop.is_set() and time.monotonic() < deadline and self.app.verdicts == verdicts:
            if "store" in self.app.warnings:  # the reading could not be kept: wait for the store, throw again
                self._stop.wait(STORE_RETRY_S)
                return
            self._stop.wait(0.02)
        st = self.app.state
        # The throw was not read (a die leaning, say): count it; a static cause (two held dice
        # touching in the hold area) would repeat forever, so after two the player re-rolls all.
        self.unread = self.unread + 1 if st is not None and st.events == before else 0

    def _run(self) -> None:
        while not self._stop.is_set():
            st = self.app.state
            if st is None or st.turn is None or self.app.screen != "game":
                if self.app.finished.is_set() or self.app.screen == "end":
                    return
                self._stop.wait(0.05)
                continue
            self._stop.wait(self.delay_s)
            if "store" in self.app.warnings:  # the store cannot keep a press now: the app's worker retries it
                self._stop.wait(STORE_RETRY_S)
                continue
            turn = st.turn
            if self.app.pending is not None:
                self._press(Command.ROLL)  # a die did not move: use the reading anyway
                continue
            bot = self.bots[turn.player] if turn.player < len(self.bots) else None
            if bot is None:
                bot = self._builtin.get((st.ruleset, st.joker))
                if bot is None:
                    bot = self._builtin[(st.ruleset, st.joker)] = BuiltinBot(st.ruleset, st.joker)
            step = next_step(st, bot, self.app.selected, release=self.unread >= 2)
            if step is None:
                continue
            if step.action == "throw":
                self._throw()
            elif step.action == "hold":
                diff = [i for i in range(5) if step.holds[i] != turn.holds[i]]
                self._press(HOLD_COMMANDS[diff[0]])
            elif step.action == "select":
                self._press(Command.NEXT)
            else:
                self._press(Command.SCORE)
