"""Presses and taps carried out: the screens' state machine stepped, and its action done.

A mixin of :class:`table.app.core.TableApp`, run on its worker thread only. A page (the table's own
screen or a phone) says which snapshot it had drawn with each press; a press that acts (ROLL/CONFIRM,
SCORE, UNDO, HOLD, a tap on a box or a menu item) from a page that had not drawn what the table now
shows is not taken (:data:`~table.app.texts.NOT_SEEN`): over a slow network it would act on something else.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from table.app import screens
from table.app.seats import check_setup
from table.app.texts import ACTING_COMMANDS, NOT_SEEN
from table.errors import UsageError
from table.game import TIMER_CHOICES, EndGame, GameMode
from table.inputs.commands import Command


class PressMixin:
    """The presses' part of :class:`~table.app.core.TableApp` (its attributes are set up there)."""

    def _seen_now(self, seen: int | None) -> bool:
        """Whether a page that drew snapshot `seen` (None: a button) saw what the table shows now."""
        if seen is None or seen >= self._view_seq:
            return True
        self.message = NOT_SEEN
        return False

    def _view_key(self) -> tuple[Any, ...]:
        """What acting presses act on: the screen, the menu, the selected box, the turn's throw, the setup.

        Not the holds: a page's hold taps name the state they ask for (:meth:`set_hold`), so quick
        taps on several dice are never refused on a slow phone.
        """
        st = self.state
        turn = None if st is None or st.turn is None else (st.turn.player, st.turn.roll, st.turn.dice)
        s = self.setup
        setup = (s.field, s.ruleset, s.joker, tuple(s.names)) if self.screen == "setup" else None
        return (
            self.screen,
            self.menu_open,
            self.menu_index,
            self.menu_confirm,
            self.selected,
            self.pending is not None,
            turn,
            setup,
            self.screens.fix,
            self.screens.history,
            None if self.rolloff is None else (self.rolloff.round, len(self.rolloff.thrown), self.rolloff.winner),
            None if st is None else len(st.rolls),
        )

    def _game_running(self) -> bool:
        st = self.state
        return st is not None and not st.finished

    def _press(self, c: Command, origin: str, mono: float, seen: int | None = None) -> None:
        self.message = ""
        if c in ACTING_COMMANDS and not self._seen_now(seen):
            return
        rounds = self.history_rounds() if self.screens.history is not None else 0
        step = screens.press(
            self.screens, c, mono, game_running=self._game_running(), dice=self.fix_dice(), rounds=rounds
        )
        self._carry_out(step, c, origin, mono)

    def _choose(self, item: str, seen: int | None, mono: float) -> None:
        self.message = ""
        seen_ok = seen is None or seen >= self._view_seq
        step = screens.choose(
            self.screens,
            item,
            mono,
            game_running=self._game_running(),
            seen=seen_ok,
            not_seen=NOT_SEEN,
            dice=self.fix_dice(),
        )
        self._carry_out(step, Command.ROLL, "table", mono)

    def _carry_out(self, step: screens.Step, c: Command, origin: str, mono: float) -> None:
        """Take the screens' new state and do its action (`c`, `origin`, `mono`: the press that made it)."""
        self.screens = step.screens
        if step.say:
            self.message = step.say
        action = step.action
        st = self.state
        if action is screens.Action.GAME and st is not None and st.mode is GameMode.FREE_ROLL and c is not Command.UNDO:
            self._free_press(c)
        elif action is screens.Action.GAME:
            self._game_press(c, origin, mono)
        elif action is screens.Action.CORRECT and step.fix is not None:
            self._correct(*step.fix, origin)
        elif action is screens.Action.ROLLOFF:
            self._start_rolloff()
        elif action is screens.Action.ROLLOFF_PRESS:
            self._rolloff_press(c)
        elif action is screens.Action.UNDO:
            self._undo(origin)
        elif action is screens.Action.LEAVE_GAME:
            self.session = None
        elif action is screens.Action.START_GAME:
            self._start_game()
        elif action is screens.Action.END_GAME:
            if self._game_running() and not self._handle(EndGame(at=self.clock(), by="menu")):
                return  # refused: the message says why, the game stays
            self.session = None
            self.screens = screens.ended(self.screens, mono)

    def _apply_setup(self, data: dict[str, Any]) -> None:
        self.message = ""
        s = self.setup
        if data.get("start") and self.screen != "setup":
            self.message = "A game is running: open the MENU to start a new one."
            return
        ruleset, joker, names = data.get("ruleset", s.ruleset), data.get("joker", s.joker), data.get("names", s.names)
        if not isinstance(ruleset, str) or not isinstance(joker, str):
            self.message = 'The ruleset and the joker rule must each be given as text, e.g. "yahtzee".'
            return
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            self.message = 'The player names must be a list of names, e.g. ["Ann", "Bo"].'
            return
        timer_s, mode = data.get("timer_s", s.timer_s), data.get("mode", s.mode)
        if timer_s not in (None, *TIMER_CHOICES) or isinstance(timer_s, bool):
            self.message = (
                f"A turn timer of {timer_s!r} s is not offered: choose {', '.join(map(str, TIMER_CHOICES))} s, or none."
            )
            return
        if mode not in ("scorecard", "free_roll"):
            self.message = 'The mode must be "scorecard" or "free_roll".'
            return
        names = [n.strip() for n in names]
        try:
            check_setup(ruleset, joker, names)
        except UsageError as exc:
            self.message = str(exc)
            return
        setup = replace(s, ruleset=ruleset, joker=joker, names=names, timer_s=timer_s, mode=mode)
        self.screens = replace(self.screens, setup=setup)
        if data.get("start"):
            self._start_game()
