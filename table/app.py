"""The table app: camera -> roll watcher -> game -> store -> display, and the inputs.

:class:`TableApp` is a small actor: one worker thread owns the store (SQLite
connections stay on the thread that made them) and does everything that changes
the game, in order.  Buttons, keys, page taps and the camera only *submit*
work (:meth:`TableApp.press`, :meth:`TableApp.roll_event`); after each change
the worker builds the page's snapshot and hands it to the listeners (the
display's WebSocket hub, the hold LEDs).

How a turn goes at the table:

* The player throws; the camera's :class:`vision.watch.RollWatcher` says
  *settled*; the values go into the game as the next roll (held dice keep
  their places: matched by value, hold area and position).  A reading with a
  die that did not move is held back until ROLL/CONFIRM (or a proper re-roll).
* HOLD 1-5 hold dice for the re-roll (their LEDs light); PREV/NEXT select a
  box (the best one is selected after each roll); SCORE writes it; a long
  press on UNDO takes back the last action; MENU opens the menu.
* Ending a running game from the menu ("New game") asks first: the item turns
  into :data:`CONFIRM_END`; ROLL/CONFIRM then ends it (an ``EndGame`` event:
  the game is kept as abandoned, and cannot be resumed or undone), any other
  button keeps playing. A ROLL/CONFIRM sooner than :data:`CONFIRM_PAUSE_S` after
  the one before it (the one that asked, or one ignored so) is taken as part of a
  double press or a held key and does not end the game. Likewise the setup
  shown after the end screen's ROLL, or after a game ended from the menu, takes
  ROLL/CONFIRM only that long after the press that brought it
  (:data:`SETUP_TOO_SOON`): a double press does not change the new game's rules.
* A page (the table's own screen or a phone) says which snapshot it had drawn
  with each press; a press that acts (ROLL/CONFIRM, SCORE, UNDO, HOLD, a tap on a
  box or a menu item) from a page that had not drawn what the table now shows is
  not taken (:data:`NOT_SEEN`): over a slow network it would act on something else.
* SCORE waits until thrown dice stop (scored earlier, the throw would be read as
  the next player's).
* With the synthetic camera (``dicetable demo``), ROLL/CONFIRM throws the dice
  that are not held.
* A seat given as ``NAME:LEVEL`` is a bot (:mod:`table._botdriver`): it sets its
  holds and scores its box by itself; a person throws its dice on the tray, or
  the app rolls them on screen (``bot_dice="virtual"``).
* When the game ends, its analysis (each decision's loss against optimal play,
  :mod:`table.strategy.analysis`) is computed in a background thread and added
  to the end screen.
"""

from __future__ import annotations

import logging
import math
import queue
import secrets
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from table.display.snapshot import Setup, best_of, game_json, options_of
from table.errors import UsageError
from table.game import (
    DiceSource,
    EndGame,
    GameError,
    GameMode,
    ReadDice,
    ScoreBox,
    SetHold,
    StartGame,
    Undo,
)
from table.game.session import GameSession
from table._botdriver import BotSeats, bot_text
from table.app_support import _unique, analysis_json, assign_slots, check_setup, hints_for, split_seats
from table.inputs.commands import HOLD_COMMANDS, KEYMAP, Command
from table.rules import JOKER_VARIANTS, RULESET_IDS, RulesError, find_ruleset
from table.store import open_store

log = logging.getLogger(__name__)

#: Menu items, in order.
MENU_ITEMS = (("resume", "Back to the game"), ("hints", "Hints on/off"),
              ("new", "New game: end this one, set up players and rules"))
#: The "new" item's title while it waits for ROLL/CONFIRM to end a running game.
CONFIRM_END = "End this game? ROLL/CONFIRM (or a second tap here) ends it; any other button keeps it"
#: Least pause (seconds) before the ROLL/CONFIRM that ends a game, after the one that asked
#: "End this game?" and after any ROLL/CONFIRM ignored since (so a burst of presses never
#: ends it). Button debounce (``pins.toml``'s ``debounce_s``, at most 0.5 s) filters contact
#: bounce only; a finger's double press, or a double tap on the page, lands 0.1-0.3 s apart and
#: used to end the game before its question was even on screen.
CONFIRM_PAUSE_S = 0.6
#: Said when a page's press or tap that acts (ROLL/CONFIRM, SCORE, UNDO, HOLD, a menu item or a box)
#: comes from a page that had not drawn what the table now shows (a button, another phone or the camera
#: changed it meanwhile, e.g. the table asked "End this game?"): it is not taken for what the table shows.
NOT_SEEN = "The table changed before your press reached it: look again, then press"
#: Commands that act on what the screen shows; PREV, NEXT and MENU only move or open (their repeats are
#: not refused). See :meth:`TableApp.press`.
ACTING_COMMANDS = frozenset({Command.ROLL, Command.SCORE, Command.UNDO, *HOLD_COMMANDS})
#: Seconds after the camera first sees thrown dice move during which SCORE waits for them to stop.
ROLLING_S = 3.0
#: Said when a tap on a menu item reaches the table after its menu was closed.
MENU_CLOSED = "That tap was on a menu that is closed now: open the MENU again"
#: Said when a ROLL/CONFIRM comes sooner than :data:`CONFIRM_PAUSE_S` after the one before.
CONFIRM_TOO_SOON = "Too quick (a double press?): press ROLL/CONFIRM again to end the game"

#: Said when a ROLL/CONFIRM (or SCORE) on the setup comes sooner than :data:`CONFIRM_PAUSE_S` after the one
#: that brought the setup (from the end screen, or by ending a game from the menu): the second press of a
#: double press used to change the new game's rules at once.
SETUP_TOO_SOON = ("Too quick (a double press?): the setup for a new game is shown; "
                  "wait a moment, then press to change it")

#: Views of the end screen that PREV/NEXT switch between (side by side on a wide enough screen).
END_VIEWS = ("card", "analysis")

#: Camera warnings and what to do about them (kind -> text).
ADVICE = {
    "leaning": "A die is leaning on the wall or another die: re-roll it.",
    "unreadable": "Some dice could not be read: lay them flat, apart, and re-roll them.",
    "held-changed": "A held die changed: turn it back as it was, or UNDO if it was misread.",
    "unmoved": "A die did not move since the last roll: re-roll it, or press CONFIRM to use this reading.",
    "moved": "The dice moved after they were read: the reading shown stands.",
    "camera-lost": "Camera lost: check the camera cable. Trying again...",
    "recalibrate": "The camera moved: run 'dicetable calibrate' again.",
    "count": "Not all five dice were found: put every die in the tray.",
    "no-rolls": "All 3 rolls are used: choose a box with PREV/NEXT and press SCORE.",
}


def _now() -> float:
    return time.time()


class TableApp:
    """The running table (see the module docstring).

    Parameters
    ----------
    db_path : str or Path
        The game store (SQLite); an unfinished game in it is resumed.
    setup : Setup, optional
        Rules and players for a new game.
    autostart : bool, optional
        Start a game with `setup` at once when none is resumed (else show the setup screen).
    tray : LiveTray, optional
        The synthetic camera, when ROLL should throw (``dicetable demo``).
    pin : str, optional
        The table's PIN (commands from a non-local client need it); random 4 digits by default.
    clock : callable, optional
        Wall-clock time in seconds since the Unix epoch (event times).
    hints : bool, optional
        Show strategy hints.
    camera_name : str, optional
        The camera's name for the page.
    bot_dice : {"tray", "virtual"}, optional
        Who rolls a bot's dice: a person on the tray (default), or the app on screen.
    bot_delay_s : float, optional
        Seconds between a bot's steps.
    bot_seed : int, optional
        Seed of the virtual dice.

    Raises
    ------
    UsageError
        If the setup cannot be used (unknown ruleset or joker, bad names).
    """

    def __init__(self, db_path: str | Path, *, setup: Setup | None = None, autostart: bool = False,
                 tray: Any = None, pin: str | None = None, clock: Callable[[], float] = _now,
                 hints: bool = False, camera_name: str = "", bot_dice: str = "tray", bot_delay_s: float = 0.8,
                 bot_seed: int | None = None) -> None:
        self.db_path = Path(db_path)
        self.setup = setup or Setup()
        check_setup(self.setup.ruleset, self.setup.joker, self.setup.names)
        self.autostart = autostart
        self.tray = tray
        self.pin = pin if pin is not None else f"{secrets.randbelow(10000):04d}"
        self.clock = clock
        self.hints = hints
        self.camera_name = camera_name
        self.session: GameSession | None = None
        self.screen = "setup"
        self.selected: str | None = None
        self.menu_open = False
        self.menu_index = 0
        self.menu_confirm = False  # the "new" item was chosen during a game: ROLL/CONFIRM ends it
        self._confirm_asked_at = -math.inf  # time.monotonic() of the last ROLL since menu_confirm was set
        self._setup_shown_at = -math.inf  # time.monotonic() of the ROLL that brought the setup (or of one too soon)
        self._view = None  # what acting presses act on (_view_key), as last published
        self._view_seq = 0  # the seq of the first snapshot that showed it
        self._moving_since = -math.inf  # time.monotonic() when the camera last began to see motion
        self.warnings: dict[str, str] = {}
        self.message = ""
        self.note = ""
        self.resumed = False  # True when start() picked up an unfinished game from the store
        self.pending: Any = None
        self.camera_status = "starting"
        self.camera_seq = 0
        self.camera_jpeg: bytes | None = None
        self.seq = 0
        self.verdicts = 0
        self._verdicts_at_throw = -1
        self.slot_mm: list[tuple[float, float] | None] = [None] * 5
        self.slot_script: list[int] = list(range(5))
        self.latencies_ms: list[float] = []
        self._stamps: dict[int, float] = {}
        self._listeners: list[Callable[[int, dict[str, Any]], None]] = []
        self._queue: queue.Queue[Any] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._store: Any = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self.snapshot: dict[str, Any] = {}
        self.finished = threading.Event()
        self.bots = BotSeats(self, dice=bot_dice, delay_s=bot_delay_s, seed=bot_seed)
        self.analysis: Any = None
        self.analysis_status = ""
        self._analysis_key: Any = None
        self.end_view = END_VIEWS[0]

    # -- lifetime -------------------------------------------------------------

    def start(self) -> TableApp:
        """Start the worker (opens the store, resumes or starts a game); return self.

        Raises
        ------
        DicetableError
            If the store cannot be opened (the worker's error, re-raised here).
        """
        self._thread = threading.Thread(target=self._run, name="dicetable-app", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error
        return self

    def close(self) -> None:
        """Stop the worker and close the store; safe to call twice."""
        self.bots.close()
        if self._thread is not None and self._thread.is_alive():
            self._queue.put(None)
            self._thread.join(timeout=10)
        self._thread = None

    def __enter__(self) -> TableApp:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self) -> None:
        try:
            self._store = open_store(self.db_path)
        except BaseException as exc:  # reported to start()
            self._error = exc
            self._ready.set()
            return
        try:
            if self._store.note:
                self.note = f"The game store was damaged: {self._store.note}."
            self.session = GameSession.resume(self._store)
            if self.session is not None:
                self._resumed()
            elif self.autostart:
                self._start_game()
            self._publish()
        except BaseException as exc:
            self._error = exc
            self._store.close()
            self._ready.set()
            return
        self._ready.set()
        try:
            while True:
                item = self._queue.get()
                if item is None:
                    break
                fn, args, fut = item
                if not fut.set_running_or_notify_cancel():
                    continue
                try:
                    result = fn(*args)
                except BaseException as exc:
                    self._publish()
                    fut.set_exception(exc)
                else:
                    self._publish()  # listeners (page, LEDs) are told before the caller hears back
                    fut.set_result(result)
        finally:
            self._store.close()

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        """Run ``fn(*args)`` on the worker; return its future (the snapshot is published after it)."""
        fut: Future[Any] = Future()
        self._queue.put((fn, args, fut))
        return fut

    def subscribe(self, listener: Callable[[int, dict[str, Any]], None]) -> Callable[[], None]:
        """Call ``listener(seq, snapshot)`` after every change (on the worker thread); return an unsubscriber."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    # -- what inputs call -------------------------------------------------------

    def press(self, command: Command | str, origin: str = "table", mono: float | None = None,
              seen: int | None = None) -> Future[Any]:
        """A button, key or tap: submit `command` (a :class:`Command` or its name).

        `mono` is when it was pressed (seconds of :func:`time.monotonic`; default now). `seen`
        is the ``seq`` of the snapshot the page showed when it was pressed (None: a button,
        which the table's own screen shows at once): a command of :data:`ACTING_COMMANDS` from
        a page that had not drawn what the table now shows (:meth:`_view_key`: the screen, the
        menu and its question, the selected box, the turn's throw, the setup) is not
        taken (:data:`NOT_SEEN`), so that a lagging page never answers "End this game?" it did
        not show or scores a box it did not select.
        """
        return self.submit(self._press, Command(command), origin, time.monotonic() if mono is None else mono, seen)

    def choose(self, item: str, seen: int | None = None, mono: float | None = None) -> Future[Any]:
        """A tap on the menu's item `item` (an id of :data:`MENU_ITEMS`): choose it, as PREV/NEXT then ROLL would.

        The tap names the item, so that it cannot act on a menu the table no longer shows (key
        steps worked out on the page could). `seen` is the ``seq`` of the snapshot the page
        showed, as for :meth:`press` (None: trusted as current). While the table asks "End this
        game?", a tap on that item answers yes (at least :data:`CONFIRM_PAUSE_S` after the ROLL
        that asked, as ROLL/CONFIRM); "resume" (how the page's tap beside the menu closes it)
        keeps the game and closes the menu; any other item keeps the game. A tap that reaches a
        closed menu does nothing (:data:`MENU_CLOSED`), and an unknown item is said in
        :attr:`message`. `mono` is when it was tapped (seconds of :func:`time.monotonic`).
        """
        return self.submit(self._choose, str(item), seen, time.monotonic() if mono is None else mono)

    def set_hold(self, die: int, held: bool, seen: int | None = None, origin: str = "table") -> Future[Any]:
        """A tap on die `die` (0-4) asking for it held (`held` True) or free, as the page showed it the other way.

        Naming the state, not a toggle, makes a tap that crosses a button's HOLD harmless (both
        meant the same) and quick taps on several dice independent of the page's redraws.
        `seen` is as for :meth:`press`: a tap from a page that had not drawn this throw is not taken.
        """
        return self.submit(self._set_hold, int(die), bool(held), seen, origin)

    def tap_box(self, box: str, seen: int | None = None, origin: str = "table") -> Future[Any]:
        """A tap on the box `box` (a box id) among the options: select it, or score it if it is selected.

        The tap names the box, so that a page whose selection is out of date never scores
        another box (NEXT steps worked out on the page could). `seen` is as for :meth:`press`.
        A box that is not open now, or a tap outside a turn, is said in :attr:`message`.
        """
        return self.submit(self._tap_box, str(box), seen, origin)

    def roll_event(self, event: Any, mono: float | None = None) -> Future[Any]:
        """The watcher's event (from the camera thread); `mono` is when it was seen (time.monotonic)."""
        return self.submit(self._roll_event, event, time.monotonic() if mono is None else mono)

    def apply_setup(self, data: dict[str, Any], origin: str = "table") -> Future[Any]:
        """The page's setup form: ``{"ruleset": str, "joker": str, "names": [str, ...], "start": bool}``.

        A field of the wrong type or a bad setup is said in :attr:`message` and changes nothing;
        so is ``start`` while a game is running.
        """
        return self.submit(self._apply_setup, dict(data))

    def camera_update(self, jpeg: bytes | None = None, status: str | None = None,
                      warning: tuple[str, str | None] | None = None) -> Future[Any]:
        """A new camera view (JPEG), camera status, or camera warning ``(kind, text or None to clear)``."""
        return self.submit(self._camera_update, jpeg, status, warning)

    def say(self, text: str) -> Future[Any]:
        """Show `text` in the page's message line (e.g. "hold UNDO to undo" after a short press)."""
        return self.submit(setattr, self, "message", str(text))

    def rendered(self, seq: int) -> None:
        """The local page drew snapshot `seq` (measures settled -> shown)."""
        now = time.monotonic()
        for k in [k for k in tuple(self._stamps) if k <= int(seq)]:  # a later snapshot shows the roll too
            t = self._stamps.pop(k, None)
            if t is not None:
                self.latencies_ms.append((now - t) * 1000.0)

    # -- worker side --------------------------------------------------------------

    @property
    def state(self) -> Any:
        """The game state (None on the setup screen before any game)."""
        return None if self.session is None else self.session.state

    def _handle(self, command: Any) -> bool:
        assert self.session is not None
        try:
            self.session.handle(command)
        except (GameError, RulesError) as exc:
            self.message = str(exc)
            return False
        return True

    def _resumed(self) -> None:
        st = self.session.state
        seats = [n + (f":{st.bot_level(i)}" if st.bot_level(i) else "") for i, n in enumerate(st.players)]
        self.setup = Setup(st.ruleset or "yahtzee", st.joker, seats)
        self.screen = "end" if st.finished else "game"
        if st.finished:
            self._analyse()
        self._reselect()
        if not st.finished:
            self.resumed = True
            self.message = f"Resumed the unfinished game of {', '.join(st.players)}."

    def _start_game(self) -> None:
        s = self.setup
        check_setup(s.ruleset, s.joker, s.names)
        names, bots = split_seats(s.names)
        cmd = StartGame(at=self.clock(), ruleset=s.ruleset, players=tuple(names), joker=s.joker,
                        bots=tuple(bots) if any(bots) else ())
        self.session = GameSession.start(self._store, cmd)
        self.screen = "game"
        self.selected = None
        self.warnings.clear()
        self.pending = None
        self.analysis, self.analysis_status, self._analysis_key = None, "", None
        self.message = f"New game: {find_ruleset(s.ruleset).title}. {names[0]} to roll."
        self.finished.clear()

    def _reselect(self) -> None:
        st = self.state
        if st is None or st.mode is not GameMode.SCORECARD:
            self.selected = None
            return
        options = options_of(st)
        if self.selected not in options:
            self.selected = best_of(options, find_ruleset(st.ruleset).boxes)

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
        return (self.screen, self.menu_open, self.menu_index, self.menu_confirm, self.selected,
                self.pending is not None, turn, setup)

    def _press(self, c: Command, origin: str, mono: float, seen: int | None = None) -> None:
        self.message = ""
        if c in ACTING_COMMANDS and not self._seen_now(seen):
            return
        if c is Command.MENU:
            self.menu_open = not self.menu_open
            self.menu_index = 0
            self.menu_confirm = False
            return
        if self.menu_open:
            self._menu(c, mono)
        elif self.screen == "setup":
            self._setup_press(c, mono)
        elif self.screen == "end":
            if c is Command.ROLL:
                self.screen = "setup"
                self.session = None
                self.setup.field = 0  # a double press of ROLL must not start the next game at once
                self._setup_shown_at = mono  # ... nor change its rules (:data:`SETUP_TOO_SOON`)
            elif c is Command.UNDO:
                self._undo(origin)
            elif c in (Command.PREV, Command.NEXT):  # scorecards <-> analysis where they do not fit side by side
                self.end_view = END_VIEWS[(END_VIEWS.index(self.end_view) + 1) % len(END_VIEWS)]
        else:
            self._game_press(c, origin, mono)

    def _choose(self, item: str, seen: int | None, mono: float) -> None:
        self.message = ""
        ids = [i for i, _ in MENU_ITEMS]
        if item not in ids:  # not echoed: the message is on every screen
            self.message = f"No such menu item; the menu has: {', '.join(ids)}."
        elif not self.menu_open:
            self.message = MENU_CLOSED
        elif not self._seen_now(seen):
            return
        elif self.menu_confirm:
            self._answer_end(item == "new", mono)
            if item == "resume":
                self.menu_open = False
        else:
            self.menu_index = ids.index(item)
            self._menu(Command.ROLL, mono)

    def _in_turn(self) -> bool:
        """Whether the game screen shows a turn (no menu over it): where dice and boxes are tapped."""
        st = self.state
        return self.screen == "game" and not self.menu_open and st is not None and st.turn is not None

    def _set_hold(self, die: int, held: bool, seen: int | None, origin: str) -> None:
        self.message = ""
        if not 0 <= die < 5:
            self.message = "Dice are numbered 1 to 5."
        elif not self._in_turn():
            self.message = "Dice are held during a turn."
        elif self._seen_now(seen) and self.state.turn.holds[die] != held:
            self._game_press(HOLD_COMMANDS[die], origin)

    def _tap_box(self, box: str, seen: int | None, origin: str) -> None:
        self.message = ""
        if not self._in_turn():
            self.message = "Boxes are chosen during a turn."
        elif self._seen_now(seen):
            options = options_of(self.state)
            if box not in options:
                self.message = "That box is not open for these dice." if options else \
                    "Roll the dice first; then choose a box."
            elif box == self.selected:
                self._game_press(Command.SCORE, origin)
            elif not self._bots_turn_refuses(Command.NEXT):
                self.selected = box

    def _answer_end(self, yes: bool, mono: float) -> None:
        """The answer to "End this game?": yes (ROLL/CONFIRM, after the pause) ends it; no keeps it."""
        if yes and mono - self._confirm_asked_at < CONFIRM_PAUSE_S:
            self.message = CONFIRM_TOO_SOON  # a double press or a burst: still asking
            self._confirm_asked_at = mono  # the pause counts from the last press
            return
        self.menu_confirm = False
        if yes:
            self._end_and_set_up(mono)
        else:
            self.message = "The game goes on: it was not ended."

    def _menu(self, c: Command, mono: float) -> None:
        if self.menu_confirm:  # ending the game waits for ROLL/CONFIRM; any other button keeps it
            self._answer_end(c is Command.ROLL, mono)
        elif c is Command.PREV:
            self.menu_index = (self.menu_index - 1) % len(MENU_ITEMS)
        elif c is Command.NEXT:
            self.menu_index = (self.menu_index + 1) % len(MENU_ITEMS)
        elif c in (Command.ROLL, Command.SCORE):
            item = MENU_ITEMS[self.menu_index][0]
            st = self.state
            if item == "new" and st is not None and not st.finished:
                self.menu_confirm = True  # a running game is ended only once confirmed; the menu stays open
                self._confirm_asked_at = mono
                return
            self.menu_open = False
            if item == "hints":
                self.hints = not self.hints
            elif item == "new":
                self._end_and_set_up(mono)

    def _end_and_set_up(self, mono: float) -> None:
        """Close the menu, end the running game (an ``EndGame`` event; kept as abandoned), show the setup.

        `mono` (time.monotonic(), seconds) is when the ROLL/CONFIRM that did it came: the setup takes
        ROLL/CONFIRM only :data:`CONFIRM_PAUSE_S` after it.
        """
        self.menu_open = False
        st = self.state
        if st is not None and not st.finished:
            if not self._handle(EndGame(at=self.clock(), by="menu")):
                return  # refused: the message says why, the game stays
        self.session = None
        self.screen = "setup"
        self.setup.field = 0
        self._setup_shown_at = mono

    def _setup_press(self, c: Command, mono: float) -> None:
        s = self.setup
        if c in (Command.ROLL, Command.SCORE) and mono - self._setup_shown_at < CONFIRM_PAUSE_S:
            self.message = SETUP_TOO_SOON  # the second press of a double press that brought the setup
            self._setup_shown_at = max(self._setup_shown_at, mono)  # the pause counts from the last press
            return
        if c in (Command.PREV, Command.NEXT):
            self._setup_shown_at = -math.inf  # moving between the fields: the setup is being looked at
        if c is Command.PREV:
            s.field = (s.field - 1) % len(Setup.FIELDS)
        elif c is Command.NEXT:
            s.field = (s.field + 1) % len(Setup.FIELDS)
        elif c in (Command.ROLL, Command.SCORE):
            name = Setup.FIELDS[s.field]
            if name == "ruleset":
                s.ruleset = RULESET_IDS[(RULESET_IDS.index(s.ruleset) + 1) % len(RULESET_IDS)]
            elif name == "joker":
                s.joker = JOKER_VARIANTS[(JOKER_VARIANTS.index(s.joker) + 1) % len(JOKER_VARIANTS)]
            elif name == "players":
                n = len(s.names) % 8 + 1
                s.names = (s.names + [f"Player {k + 1}" for k in range(len(s.names), n)])[:n]
                s.names = _unique(s.names)
            else:
                self._start_game()

    def _apply_setup(self, data: dict[str, Any]) -> None:
        self.message = ""
        s = self.setup
        if data.get("start") and self.screen != "setup":
            self.message = "A game is running: open the MENU to start a new one."
            return
        ruleset, joker, names = data.get("ruleset", s.ruleset), data.get("joker", s.joker), data.get("names", s.names)
        if not isinstance(ruleset, str) or not isinstance(joker, str):
            self.message = "The ruleset and the joker rule must each be given as text, e.g. \"yahtzee\"."
            return
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            self.message = "The player names must be a list of names, e.g. [\"Ann\", \"Bo\"]."
            return
        names = [n.strip() for n in names]
        try:
            check_setup(ruleset, joker, names)
        except UsageError as exc:
            self.message = str(exc)
            return
        s.ruleset, s.joker, s.names = ruleset, joker, names
        if data.get("start"):
            self._start_game()

    def _bots_turn_refuses(self, c: Command) -> bool:
        """Whether `c` is refused because a bot plays this turn (said in :attr:`message`)."""
        st = self.state
        level = st.bot_level(st.turn.player)
        if level and c is not Command.UNDO and not (c is Command.ROLL and self.bots.dice == "tray"):
            who = f"{st.players[st.turn.player]} ({level} bot)"
            self.message = (f"{who} rolls on screen; wait for your turn." if self.bots.dice == "virtual" else
                            f"{who} chooses its holds and box; throw its dice in the tray.")
            return True
        return False

    def _game_press(self, c: Command, origin: str, mono: float | None = None) -> None:
        st = self.state
        if st is None or st.turn is None:
            return
        turn = st.turn
        now = self.clock()
        if self._bots_turn_refuses(c):
            return
        if c in HOLD_COMMANDS:
            die = HOLD_COMMANDS.index(c)
            if turn.roll == 0:
                self.message = "Roll the dice first; then HOLD the dice you keep."
            elif turn.roll >= 3:
                self.message = ADVICE["no-rolls"]
            else:
                self._handle(SetHold(at=now, die=die, held=not turn.holds[die]))
        elif c is Command.ROLL:
            if self.pending is not None:
                event, self.pending = self.pending, None
                self.warnings.pop("unmoved", None)
                self._read(event, None, accept_unmoved=True)
            elif self.tray is not None:
                self._throw()
            else:
                self.message = "Roll the dice in the tray: the camera reads them when they stop."
        elif c in (Command.PREV, Command.NEXT):
            options = list(options_of(st))
            if not options:
                self.message = "Roll the dice first; then choose a box."
                return
            k = options.index(self.selected) if self.selected in options else 0
            k = (k + (1 if c is Command.NEXT else -1)) % len(options)
            self.selected = options[k]
        elif c is Command.SCORE:
            if turn.roll == 0 or self.selected is None:
                self.message = "Roll the dice first; then choose a box and press SCORE."
                return
            if turn.roll < 3 and self._dice_rolling(time.monotonic() if mono is None else mono):  # scored now, the throw would be read as the next's
                self.message = "The dice are still rolling: SCORE once they stop."
                return
            box = self.selected
            if self._handle(ScoreBox(at=now, box=box)):
                self._after_score()
        elif c is Command.UNDO:
            self._undo(origin)

    def _undo(self, origin: str) -> None:
        """Take back the last action (an ``Undo`` event); a finished game's refusal is said in :attr:`message`."""
        if self._handle(Undo(at=self.clock(), by=origin)):
            self.warnings.clear()
            self.pending = None
            self._reselect()

    def _dice_rolling(self, mono: float) -> bool:
        """Whether thrown dice are still rolling at `mono` (time.monotonic): the synthetic tray's throw is
        unread, or the camera has seen motion for less than :data:`ROLLING_S` (dice taken out of the tray
        leave it seeing motion with no reading to follow, which must not block SCORE)."""
        if self.tray is not None:
            return self.tray.busy and self.verdicts == self._verdicts_at_throw
        return self.camera_status == "moving" and mono - self._moving_since < ROLLING_S

    def _after_score(self) -> None:
        self.selected = None
        self.warnings.clear()
        self.pending = None
        self.slot_mm = [None] * 5
        st = self.state
        if st.finished:
            self.screen = "end"
            names = [st.players[i] for i in st.winners()]
            self.message = f"{' and '.join(names)} won!"
            self.end_view = END_VIEWS[0]
            self._analyse()
        else:
            self.message = f"{st.players[st.turn.player]} to roll."

    def _throw(self) -> None:
        st = self.state
        turn = st.turn
        if turn.roll >= 3:
            self.message = ADVICE["no-rolls"]
            return
        if turn.roll and all(turn.holds):
            self.message = "All five dice are held: release one, or choose a box and SCORE."
            return
        if self._dice_rolling(time.monotonic()):
            self.message = "The dice are still rolling."
            return  # the last throw has not been read yet
        keep = [self.slot_script[i] for i in range(5) if turn.roll and turn.holds[i]]
        self.tray.throw(keep)
        self._verdicts_at_throw = self.verdicts

    def _roll_event(self, event: Any, mono: float) -> None:
        kind = str(getattr(event.kind, "value", event.kind))
        st = self.state
        in_game = self.screen == "game" and st is not None and st.turn is not None
        if in_game and self.bots.virtual_turn():
            if kind == "settled":
                self.verdicts += 1
            return  # a bot rolls on screen: the tray is not read
        if kind == "moving":
            if self.camera_status != "moving":
                self._moving_since = mono
            self.camera_status = "moving"
            for k in ("leaning", "unreadable", "count", "unmoved", "moved"):
                self.warnings.pop(k, None)
            self.pending = None
        elif kind == "disturbed":
            if in_game and st.turn.roll >= 3:
                self.warnings["moved"] = ADVICE["moved"] + " " + ADVICE["no-rolls"]
        elif kind == "camera-moved":
            text = "; ".join(event.problems)
            if "calibrat" in text:
                self.warnings["recalibrate"] = ADVICE["recalibrate"]
        elif kind == "unreadable":
            self.camera_status = "unreadable"
            text = " ".join(event.problems).lower()
            if "leaning" in text:
                self.warnings["leaning"] = ADVICE["leaning"]
            if "calibrat" in text:
                self.warnings["recalibrate"] = ADVICE["recalibrate"]
            if "expected" in text and "found" in text:
                self.warnings["count"] = ADVICE["count"]
            if any(v is None for v in event.values) or not self.warnings:
                self.warnings["unreadable"] = ADVICE["unreadable"]
        elif kind == "settled":
            self.camera_status = "settled"
            self.warnings.pop("recalibrate", None)
            if in_game:
                self._read(event, mono)
        if kind in ("settled", "unreadable"):
            self.verdicts += 1

    def _read(self, event: Any, mono: float | None, accept_unmoved: bool = False) -> None:
        st = self.state
        turn = st.turn
        values = tuple(event.values)
        if len(values) != 5 or any(v is None for v in values):
            self.warnings["count"] = ADVICE["count"]
            return
        if turn.roll >= 3:
            if sorted(values) != sorted(turn.dice):
                self.warnings["no-rolls"] = ADVICE["no-rolls"]
            return
        flags = {str(getattr(f.kind, "value", f.kind)) for f in event.flags}
        if "unmoved" in flags and not accept_unmoved:
            moved = [d for d in event.dice if not d.held]
            if turn.roll and sorted(values) == sorted(turn.dice) and all(
                    any(math.dist(d.centre_mm, p) < 3.0 for p in self.slot_mm if p) for d in moved):
                return  # nothing moved: a nudge, not a roll
            self.pending = event
            self.warnings["unmoved"] = ADVICE["unmoved"]
            return
        slots = assign_slots(turn.dice if turn.roll else (), turn.holds if turn.roll else (False,) * 5,
                             self.slot_mm, [(d.value, d.held, d.centre_mm) for d in event.dice])
        ordered = tuple(values[j] for j in slots)
        if self._handle(ReadDice(at=self.clock(), values=ordered, source=DiceSource.CAMERA)):
            self.slot_mm = [event.dice[j].centre_mm for j in slots]
            if self.tray is not None:
                self.slot_script = [self.tray.nearest_die(p) for p in self.slot_mm]
            if self.state.turn.flagged:
                self.warnings["held-changed"] = ADVICE["held-changed"]
            else:
                self.warnings.pop("held-changed", None)
            self.selected = None
            self._reselect()
            if mono is not None:
                self._stamps[self.seq + 1] = mono

    def _camera_update(self, jpeg: bytes | None, status: str | None,
                       warning: tuple[str, str | None] | None) -> None:
        if jpeg is not None:
            self.camera_jpeg = jpeg
            self.camera_seq += 1
        if status is not None:
            self.camera_status = status
        if warning is not None:
            kind, text = warning
            if text is None:
                self.warnings.pop(kind, None)
            else:
                self.warnings[kind] = text

    # -- snapshot -------------------------------------------------------------------

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

    # -- analysis -----------------------------------------------------------------------

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
            from table.strategy.analysis import analyse_events

            try:
                result, status = analyse_events(events), "ready"
            except Exception as exc:  # no table for this variant, say: the end screen says so
                log.info("no analysis of game %s: %s", key[0], exc)
                result, status = None, "unavailable"

            def done() -> None:
                if self._analysis_key == key:
                    self.analysis, self.analysis_status = result, status
            self.submit(done)
        threading.Thread(target=work, name="dicetable-analysis", daemon=True).start()

    def analysis_now(self, timeout: float = 30.0) -> Any:
        """The current game's analysis (waits for it, or computes it for an unfinished game); None if none.

        Any thread but the worker.  Raises what :func:`table.strategy.analysis.analyse_events` raises.
        """
        from table.strategy.analysis import analyse_events

        if self.analysis is not None and self.screen == "end":
            return self.analysis
        events = self.submit(lambda: () if self.session is None else self._store.events(self.session.game_id)
                             ).result(timeout=timeout)
        return analyse_events(events) if events else None

    def build_snapshot(self) -> dict[str, Any]:
        """The page's snapshot (worker thread; the PIN is added for local pages by the display)."""
        st = self.state
        game = None
        bot = None
        if st is not None and st.mode is GameMode.SCORECARD:
            game = game_json(st, self.selected)
            if self.hints and st.turn is not None and st.turn.roll:
                game["hints"] = hints_for(st)
            level = st.bot_level(st.current_player)
            if level:
                bot = {"name": st.players[st.turn.player], "level": level, "dice": self.bots.dice,
                       "text": bot_text(st, self.bots.dice)}
        analysis = None
        if self.screen == "end" and self.analysis_status:
            analysis = {"status": self.analysis_status}
            if self.analysis is not None:
                analysis.update(analysis_json(self.analysis))
        return {
            "seq": self.seq, "screen": self.screen, "setup": self.setup.to_json(), "game": game,
            "warnings": [{"kind": k, "text": t} for k, t in self.warnings.items()],
            "message": self.message, "note": self.note, "pending": self.pending is not None,
            "camera": {"seq": self.camera_seq, "status": self.camera_status, "name": self.camera_name,
                       "has_view": self.camera_jpeg is not None},
            "menu": {"open": self.menu_open, "index": self.menu_index, "confirm": self.menu_confirm,
                     "items": [{"id": i, "title": CONFIRM_END if self.menu_confirm and i == "new" else t}
                               for i, t in MENU_ITEMS]},
            "hints_on": self.hints, "synthetic": self.tray is not None, "bot": bot, "analysis": analysis,
            "end_view": self.end_view,
            "keymap": {k: v.value for k, v in KEYMAP.items()},
        }
