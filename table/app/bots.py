"""Bots at the table: the next step of a bot's turn, and the app's bot seats.

One decision path for every computer player, shared by the demo's built-in
player (:mod:`table.demo.presser`, which presses the table's buttons) and the
bot seats of ``dicetable play`` (:class:`BotSeats`, which sends the game its
commands on the app's worker thread):

:func:`next_step` says what a bot does next in the turn in progress: throw,
set its holds, select its box, or score it.  Where the dice come from is the
caller's business: a person throws the real dice for the bot on the tray
(``tray``), or the app rolls them on screen with a seeded random source
(``virtual``; the game records those rolls as :attr:`~table.game.DiceSource.VIRTUAL`,
which the engine accepts only on a bot's turn).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from table.game import DiceSource, ReadDice, Reroll, ScoreBox, SetHolds
from table.rules import find_ruleset
from table.strategy.builtin_player import choose_box, choose_holds

log = logging.getLogger(__name__)

#: Where a bot's dice come from: a person throws them on the tray, or the app rolls them on screen.
BOT_DICE = ("tray", "virtual")


@dataclass(frozen=True, slots=True)
class BotStep:
    """What a bot does next in its turn.

    Attributes
    ----------
    action : {"throw", "hold", "select", "score"}
        ``throw``: the dice not held are (re-)rolled next (all five on throw 1);
        ``hold``: set the holds to ``holds`` first; ``select``: select ``box``
        (the page shows the choice); ``score``: score the selected ``box``.
    holds : tuple of bool
        The holds wanted (``hold``; for ``throw`` the holds of the re-roll).
    box : str
        The box chosen (``select``, ``score``).
    """

    action: str
    holds: tuple[bool, ...] = ()
    box: str = ""


class BuiltinBot:
    """The simple built-in player (:mod:`table.strategy.builtin_player`) with the bot interface.

    See :class:`table.strategy.Bot`.
    """

    level = "builtin"

    def __init__(self, ruleset: str, joker: str = "forced") -> None:
        self.ruleset = find_ruleset(ruleset)
        self.joker = joker

    def choose_hold(self, card: Any, dice: tuple[int, ...], roll: int) -> tuple[bool, ...]:
        """Holds of :func:`table.strategy.builtin_player.choose_holds` (all True: stop)."""
        return tuple(choose_holds(self.ruleset, dice, card, roll=roll, joker=self.joker))

    def choose_box(self, card: Any, dice: tuple[int, ...], roll: int) -> str:
        """Box of :func:`table.strategy.builtin_player.choose_box`."""
        return str(choose_box(self.ruleset, dice, card, roll=roll, joker=self.joker))


def next_step(state: Any, bot: Any, selected: str | None, *, release: bool = False) -> BotStep | None:
    """The next step of ``bot`` in the turn in progress (None when no turn is in progress).

    Parameters
    ----------
    state : GameState
        A scorecard game.
    bot : Bot
        Anything with ``choose_hold(card, dice, roll)`` and ``choose_box(card, dice, roll)``.
    selected : str or None
        The box selected on the table now.
    release : bool, optional
        Throw all five again instead of the bot's holds (the demo's way out of
        a throw the camera could not read twice).

    Returns
    -------
    BotStep or None
    """
    turn = state.turn
    if turn is None:
        return None
    if turn.roll == 0:
        return BotStep("throw", (False,) * 5)
    card = state.cards[turn.player]
    if turn.roll < 3:
        want = (False,) * 5 if release else tuple(bool(h) for h in bot.choose_hold(card, turn.dice, turn.roll))
        if not all(want):
            if want != tuple(turn.holds):
                return BotStep("hold", want)
            return BotStep("throw", want)
    box = bot.choose_box(card, turn.dice, turn.roll)
    return BotStep("select" if selected != box else "score", box=box)


def split_seat(entry: str) -> tuple[str, str]:
    """``"HAL:optimal"`` -> ``("HAL", "optimal")``; ``"Ann"`` -> ``("Ann", "")``.

    Raises
    ------
    ValueError
        If the text after the last ``:`` is not a bot level.
    """
    from table.strategy.bots import BOT_LEVELS

    if ":" not in entry:
        return entry, ""
    name, _, level = entry.rpartition(":")
    level = level.strip().lower()
    if level not in BOT_LEVELS:
        raise ValueError(
            f"unknown bot level {level!r} in {entry!r}; write NAME:LEVEL with LEVEL one of "
            f"{', '.join(BOT_LEVELS)} (a ':' in a name marks a bot)"
        )
    return name.strip(), level


def keep_text(holds: tuple[bool, ...], dice: tuple[int, ...]) -> str:
    """``"keeps 5 5"`` / ``"keeps nothing"`` for the held dice."""
    kept = sorted(d for d, h in zip(dice, holds) if h)
    return "keeps " + (" ".join(map(str, kept)) if kept else "nothing")


def bot_text(state: Any, dice: str) -> str:
    """What the page says on a bot's turn: what it chose and what the people at the table do."""
    turn = state.turn
    if turn is None:
        return ""
    who = f"{state.players[turn.player]} (bot)"
    if dice == "virtual":
        if turn.roll == 0:
            return f"{who} rolls on screen."
        if turn.roll < 3 and any(turn.holds):
            return f"{who} {keep_text(turn.holds, turn.dice)} and rolls the rest on screen."
        return f"{who} rolled on screen (throw {turn.roll} of 3)."
    if turn.roll == 0:
        return f"{who}: throw all five dice for it."
    if turn.roll >= 3:
        return f"{who} chooses its box."
    free = sum(not h for h in turn.holds)
    if any(turn.holds):
        return (
            f"{who} {keep_text(turn.holds, turn.dice)}: throw the other {free} {'die' if free == 1 else 'dice'} for it."
        )
    return f"{who} keeps nothing: throw all five dice again for it."


class BotSeats:
    """Plays the bot seats of the app's game: holds, boxes and (virtual) throws.

    Everything runs on the app's worker thread: :meth:`kick` (called after
    every change) arms a timer when a bot is to play; the timer submits
    :meth:`step`, which sends one command.  The bots are made from the game's
    seats (:attr:`GameState.bots`), so a resumed game keeps its bots.

    Parameters
    ----------
    app : TableApp
    dice : {"tray", "virtual"}
        Who rolls a bot's dice: a person on the tray, or the app on screen.
    delay_s : float, optional
        Seconds between a bot's steps (so people can follow), >= 0.
    seed : int, optional
        Seed of the virtual dice (default: fresh entropy).

    Raises
    ------
    ValueError
        If ``dice`` is not one of :data:`BOT_DICE` or ``delay_s`` is negative.
    """

    def __init__(self, app: Any, *, dice: str = "tray", delay_s: float = 0.8, seed: int | None = None) -> None:
        if dice not in BOT_DICE:
            raise ValueError(f"bot dice {dice!r} unknown; choose {' or '.join(BOT_DICE)}")
        if not delay_s >= 0:
            raise ValueError(f"bot delay must be 0 or more seconds, got {delay_s!r}")
        self.app = app
        self.dice = dice
        self.delay_s = float(delay_s)
        self.rng = np.random.default_rng(seed)
        self._bots: dict[tuple[str, str, str], Any] = {}
        self._timer: threading.Timer | None = None
        self._seen: Any = None
        self.steps = 0

    def close(self) -> None:
        """Cancel a pending step."""
        t, self._timer = self._timer, None
        if t is not None:
            t.cancel()

    def bot_for(self, state: Any) -> Any:
        """The bot of the seat to play, or None for a person (or no turn)."""
        if state is None or state.turn is None:
            return None
        level = state.bot_level(state.turn.player)
        if not level:
            return None
        from table.strategy.bots import make_bot

        rs = find_ruleset(state.ruleset)
        key = (rs.id, state.joker, level)
        if key not in self._bots:
            self._bots[key] = make_bot(level, rs, state.joker if rs.has_yahtzee_bonus else None)
        return self._bots[key]

    def virtual_turn(self) -> bool:
        """True while a bot whose dice are rolled on screen is to play (the camera is ignored)."""
        app = self.app
        return self.dice == "virtual" and app.screen == "game" and self.bot_for(app.state) is not None

    def kick(self) -> None:
        """Arm the next step if a bot is to play and something changed (worker thread)."""
        app = self.app
        st = app.state
        if app.screen != "game" or app.menu_open or st is None or st.turn is None or not st.bot_level(st.turn.player):
            self._seen = None  # a menu closed or a new game later arms the bot again
            return
        # a store fault that comes or goes re-arms the step its write failed (play goes on after it)
        key = (
            id(app.session),
            st.events,
            app.selected,
            app.pending is not None,
            app.menu_open,
            app.screen,
            "store" in app.warnings,
        )
        if key == self._seen or self._timer is not None:
            return
        self._seen = key
        self._timer = threading.Timer(self.delay_s, self._due)
        self._timer.daemon = True
        self._timer.start()

    def _due(self) -> None:
        self._timer = None
        try:
            self.app.submit(self.step)
        except Exception:  # the app is closing
            log.debug("bot step not submitted", exc_info=True)

    def step(self) -> None:
        """Send the bot's next command (worker thread)."""
        app = self.app
        st = app.state
        bot = self.bot_for(st) if app.screen == "game" and not app.menu_open else None
        if bot is None:
            return
        s = next_step(st, bot, app.selected)
        if s is None:
            return
        self.steps += 1
        now = app.clock()
        turn = st.turn
        if s.action == "hold":
            app._handle(SetHolds(at=now, holds=s.holds))
        elif s.action == "throw":
            if self.dice != "virtual" or app.pending is not None:
                return  # a person throws the dice for the bot; the camera reads them
            if turn.roll == 0:
                values = tuple(int(v) for v in self.rng.integers(1, 7, size=5))
                ok = app._handle(ReadDice(at=now, values=values, source=DiceSource.VIRTUAL))
            else:
                free = sum(not h for h in turn.holds)
                values = tuple(int(v) for v in self.rng.integers(1, 7, size=free))
                ok = app._handle(Reroll(at=now, values=values, source=DiceSource.VIRTUAL))
            if ok:
                app.selected = None
                app._reselect()
        elif s.action == "select":
            app.selected = s.box
        elif s.action == "score":
            if app._handle(ScoreBox(at=now, box=s.box)):
                app._after_score()
