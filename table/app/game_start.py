"""Starting a game from the setup screen's choices, and taking up a stored game again (a mixin of TableApp).

Runs on the table's worker thread (:mod:`table.app.core`): it opens the game in the store through
:class:`~table.app.session.GameSession` and sets what the screens show.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from table.app.seats import check_setup, split_seats
from table.app.session import GameSession
from table.display.snapshot import Setup
from table.game import GameError, GameMode, StartGame
from table.rules import find_ruleset


class GameStartMixin:
    """``_resumed`` (a stored game taken up again) and ``_start_game`` (a new one from the setup)."""

    session: Any
    screens: Any
    setup: Any

    def _resumed(self) -> None:
        st = self.session.state
        seats = [n + (f":{st.bot_level(i)}" if st.bot_level(i) else "") for i, n in enumerate(st.players)]
        self.screens = replace(
            self.screens,
            setup=Setup(st.ruleset or "yahtzee", st.joker, seats, timer_s=st.timer_s, mode=st.mode.value),
            screen="end" if st.finished else "game",
        )
        if st.finished:
            self._analyse()
        self._reselect()
        if not st.finished:
            self.resumed = True
            who = ", ".join(st.players) if len(st.players) <= 3 else f"{len(st.players)} players"
            self.message = f"Resumed the unfinished game of {who}."

    def _start_game(self) -> None:
        s = self.setup
        check_setup(s.ruleset, s.joker, s.names)
        names, bots = split_seats(s.names)
        free = s.mode == GameMode.FREE_ROLL.value
        cmd = StartGame(
            at=self.clock(),
            ruleset="" if free else s.ruleset,
            players=tuple(names),
            joker=s.joker,
            bots=tuple(bots) if any(bots) else (),
            timer_s=None if free else s.timer_s,
            mode=GameMode(s.mode),
        )
        try:
            self.session = GameSession.start(self._store, cmd)
        except GameError as exc:  # e.g. bots in a free roll: said, the setup stays
            self.message = str(exc)
            return
        self.screens = replace(self.screens, screen="game")
        self.selected = None
        self.warnings.clear()
        self.pending = None
        self.analysis, self.analysis_status, self._analysis_key = None, "", None
        title = "Free roll" if free else find_ruleset(s.ruleset).title
        timer = f" Turn timer: {s.timer_s} s." if s.timer_s and not free else ""
        self.message = f"New game: {title}.{timer} {'Throw the dice' if free else names[0] + ' to roll'}."
        self.finished.clear()
