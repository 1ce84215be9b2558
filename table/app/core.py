"""The running table: one worker thread applies presses, taps and camera events in order.

:class:`TableApp` is a small actor: one worker thread owns the store (SQLite connections stay on the
thread that made them) and does everything that changes the game, in order. Buttons, keys, page taps
and the camera only *submit* work (:meth:`TableApp.press`, :meth:`TableApp.roll_event`); after each
change the worker builds the page's snapshot and hands it to the listeners (the display's WebSocket
hub, the hold LEDs). The screens and menus are :mod:`table.app.screens` (a pure state machine), the
turn is :mod:`table.app.turn`, the snapshot and the analysis :mod:`table.app.publish`.

A page (the table's own screen or a phone) says which snapshot it had drawn with each press; a press
that acts (ROLL/CONFIRM, SCORE, UNDO, HOLD, a tap on a box or a menu item) from a page that had not
drawn what the table now shows is not taken (:data:`~table.app.texts.NOT_SEEN`): over a slow network
it would act on something else.
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

from table.app import screens
from table.app.bots import BotSeats
from table.app.fix_history import FixHistoryMixin
from table.app.free_play import FreePlayMixin
from table.app.game_start import GameStartMixin
from table.app.heap import HeapTrimmer
from table.app.live_chances import LiveChances
from table.app.presses import PressMixin
from table.app.publish import PublishMixin
from table.app.seats import check_setup
from table.app.session import GameSession
from table.app.store_faults import StoreFaults
from table.app.turn import TurnMixin
from table.app.turn_timer import TimerMixin, TurnTimer
from table.display.snapshot import Setup
from table.inputs.commands import Command
from table.store import open_store

log = logging.getLogger(__name__)


def _republish() -> None:
    """Nothing: submitted so that the worker publishes a fresh snapshot (the win chances are ready)."""


def _now() -> float:
    return time.time()


class TableApp(PressMixin, TurnMixin, PublishMixin, TimerMixin, FixHistoryMixin, FreePlayMixin, GameStartMixin):
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
    mono : callable, optional
        Monotonic seconds (:func:`time.monotonic`) for the turn timer; tests inject a fake.
    max_dice : int, optional
        Most dice the tray takes in a free roll (the calibration profile's ``dice_count``).

    Raises
    ------
    UsageError
        If the setup cannot be used (unknown ruleset or joker, bad names).
    """

    def __init__(
        self,
        db_path: str | Path,
        *,
        setup: Setup | None = None,
        autostart: bool = False,
        tray: Any = None,
        pin: str | None = None,
        clock: Callable[[], float] = _now,
        hints: bool = False,
        camera_name: str = "",
        bot_dice: str = "tray",
        bot_delay_s: float = 0.8,
        bot_seed: int | None = None,
        mono: Callable[[], float] = time.monotonic,
        max_dice: int = 5,
    ) -> None:
        self.db_path = Path(db_path)
        setup = setup or Setup()
        check_setup(setup.ruleset, setup.joker, setup.names)
        self.screens = screens.Screens(setup=setup, hints=hints)
        self.autostart = autostart
        self.tray = tray
        self.pin = pin if pin is not None else f"{secrets.randbelow(10000):04d}"
        self.clock = clock
        self.mono = mono
        self.turn_timer = TurnTimer()
        self.max_dice = max_dice
        self.camera_name = camera_name
        self.session: GameSession | None = None
        self.selected: str | None = None
        self._view = None  # what acting presses act on (_view_key), as last published
        self._view_seq = 0  # the seq of the first snapshot that showed it
        self._moving_since = -math.inf  # time.monotonic() when the camera last began to see motion
        self.warnings: dict[str, str] = {}
        self.troubles: dict[str, str] = {}  # part -> the doctor's line for it (camera, buttons, store), every screen
        self.sharing: dict[str, Any] | None = None  # café sharing: {"ok", "text"} (table.cafe.link); None: off
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
        self.store_faults = StoreFaults(self)  # a write that fails: unapplied, said, tried again
        self.heap = HeapTrimmer()  # freed frames' pages back to the OS every minute (glibc keeps them)
        self.analysis: Any = None
        self.analysis_status = ""
        self._analysis_key: Any = None
        # each player's win chance, computed beside the worker; a fresh snapshot when ready
        self.chances = LiveChances(lambda: self.submit(_republish))

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
                try:
                    item = self._queue.get(timeout=self._wait_s())
                except queue.Empty:
                    item = ()
                # Between calls too, not only when idle: camera views every 0.5 s keep a busy worker from
                # ever timing out (a failed store write, or the turn timer's warning or end).
                if (self.store_faults.due() and self.store_faults.retry()) | self._tick():
                    self._publish()
                self.heap.maybe_trim()
                if item is None:
                    break
                if not item:
                    continue
                fn, args, fut = item
                if not fut.set_running_or_notify_cancel():
                    continue
                try:
                    result = self.store_faults.call(fn, args)
                except BaseException as exc:
                    self._publish()
                    fut.set_exception(exc)
                else:
                    self._tick()  # the timer ran out while the worker was busy (or on a test's clock)
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

    def press(
        self, command: Command | str, origin: str = "table", mono: float | None = None, seen: int | None = None
    ) -> Future[Any]:
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

    def roll_event(self, event: Any, mono: float | None = None, frame: bytes | None = None) -> Future[Any]:
        """The watcher's event (from the camera thread); `mono` is when it was seen (time.monotonic);
        `frame`: a small JPEG of the tray for a verdict, kept for the audit when ``self.frames`` is set."""
        args = (event, time.monotonic() if mono is None else mono) + (() if frame is None else (frame,))
        return self.submit(self._roll_event, *args)

    def apply_setup(self, data: dict[str, Any], origin: str = "table") -> Future[Any]:
        """The page's setup form: ``{"ruleset": str, "joker": str, "names": [str, ...], "start": bool}``.

        A field of the wrong type or a bad setup is said in :attr:`message` and changes nothing;
        so is ``start`` while a game is running.
        """
        return self.submit(self._apply_setup, dict(data))

    def camera_update(
        self, jpeg: bytes | None = None, status: str | None = None, warning: tuple[str, str | None] | None = None
    ) -> Future[Any]:
        """A new camera view (JPEG), camera status, or camera warning ``(kind, text or None to clear)``."""
        return self.submit(self._camera_update, jpeg, status, warning)

    def trouble(self, part: str, line: str | None) -> Future[Any]:
        """Show the doctor's `line` for a `part` the table cannot use (``"camera"``, ``"buttons"``,
        ``"store"``) on every screen until it is cleared (`line` None); see :mod:`table.doctor`."""
        return self.submit(lambda: self.troubles.update({part: line}) if line else self.troubles.pop(part, None))

    def say(self, text: str) -> Future[Any]:
        """Show `text` in the page's message line (e.g. "hold UNDO to undo" after a short press)."""
        return self.submit(setattr, self, "message", str(text))

    def game_events(self) -> Future[Any]:
        """The current game's stored events, oldest first (a future; ``()`` on the setup screen)."""
        return self.submit(lambda: () if self.session is None else self._store.events(self.session.game_id))

    def not_shown(self, seq: int) -> None:
        """Snapshot `seq` went out with no page open: a roll it shows is left out of :attr:`latencies_ms`."""
        self._stamps.pop(int(seq), None)

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

    # What the screens show (read-only here: :mod:`table.app.screens` makes each new state).
    screen = property(lambda self: self.screens.screen, doc="``setup``, ``game`` or ``end``.")
    setup = property(lambda self: self.screens.setup, doc="The setup screen's choices (:class:`Setup`).")
    menu_open = property(lambda self: self.screens.menu_open, doc="Whether the MENU is open.")
    menu_index = property(lambda self: self.screens.menu_index, doc="The menu item selected (index).")
    menu_confirm = property(lambda self: self.screens.menu_confirm, doc='Whether it asks "End this game?".')
    hints = property(lambda self: self.screens.hints, doc="Whether strategy hints are shown.")
    end_view = property(lambda self: self.screens.end_view, doc="The end screen's view (:data:`END_VIEWS`).")
