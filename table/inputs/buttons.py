"""GPIO buttons and hold LEDs through gpiozero, with debounce and long press in our code.

gpiozero's own ``bounce_time`` is not used: its mock pins do not bounce, so the
debounce is done here against an injected clock, where tests can drive it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from table.errors import DicetableError
from table.inputs.commands import Command
from table.inputs.pins import PinMap

log = logging.getLogger(__name__)

#: Seconds on and off of the hold LEDs' blink in the turn timer's last seconds (2 Hz: seen at a glance).
BLINK_S = 0.25


class _Debounced:
    """One button's debounced state: edges within ``debounce_s`` of the last accepted change are bounce.

    When the window after an accepted change closes with the line at the other level (a tap shorter
    than ``debounce_s``: its release fell inside the window), that level is taken then: otherwise the
    button stayed "pressed" and the next press, seen as no change, was lost.
    """

    def __init__(self, panel: ButtonPanel, command: Command, button: Any) -> None:
        self.panel = panel
        self.command = command
        self.button = button
        self.pressed = False
        self.changed_at = -1e9
        self._lock = threading.Lock()
        self._settle_due = False  # a look at the line is scheduled for when the window closes
        button.when_pressed = self._edge
        button.when_released = self._edge

    def _edge(self) -> None:
        with self._lock:
            now = self.panel.clock()
            level = bool(self.button.is_pressed)
            left_s = self.changed_at + self.panel.pin_map.debounce_s - now
            if left_s > 0:  # contact bounce, or a tap shorter than the window: look again when it closes
                if level != self.pressed and not self._settle_due:
                    self._settle_due = True
                    self.panel.schedule(left_s, self._settle)
                return
            if level != self.pressed:
                self._accept(level, now)

    def _settle(self) -> None:
        """The window has closed (a timer): take the level the line settled at, if it changed."""
        with self._lock:
            self._settle_due = False
            if self.panel.closed:
                return
            now = self.panel.clock()
            left_s = self.changed_at + self.panel.pin_map.debounce_s - now
            if left_s > 0:  # the clock says not yet (a late change, or a test's clock)
                self._settle_due = True
                self.panel.schedule(left_s, self._settle)
                return
            try:
                level = bool(self.button.is_pressed)
            except Exception:  # closed meanwhile
                return
            if level != self.pressed:
                self._accept(level, now)

    def _accept(self, level: bool, now: float) -> None:
        held_s = now - self.changed_at
        self.pressed = level
        self.changed_at = now
        self.panel._changed(self.command, level, held_s)


def _timer(delay_s: float, fn: Callable[[], None]) -> None:
    """Call `fn` on a thread of its own after `delay_s` seconds."""
    timer = threading.Timer(delay_s, fn)
    timer.daemon = True
    timer.start()


class ButtonPanel:
    """The table's buttons and hold LEDs, wired as a :class:`PinMap` says.

    Each button is a push button from its GPIO pin to ground (internal pull-up).
    A press sends its :class:`Command` to `on_command` when the button goes
    down, except UNDO, which is sent on release after a press of at least
    ``pin_map.long_press_s`` (a shorter one calls `on_short_undo`, if given, so
    the display can say "hold UNDO to undo").  Edges closer than
    ``pin_map.debounce_s`` to the last accepted change are contact bounce.

    Parameters
    ----------
    pin_map : PinMap or dict
        The wiring; a plain ``{"roll": 17, ...}`` dict gives buttons only.
    on_command : callable
        ``on_command(command)``; called on gpiozero's callback thread.
    pin_factory : gpiozero pin factory, optional
        E.g. ``gpiozero.pins.mock.MockFactory()`` in tests; default: gpiozero's
        choice at run time (lgpio on a Pi 5).
    clock : callable, optional
        Monotonic time in seconds (default :func:`time.monotonic`); tests inject a fake.
    on_short_undo : callable, optional
        Called when UNDO is released before the long press.
    schedule : callable, optional
        ``schedule(delay_s, fn)`` calls ``fn()`` after `delay_s` seconds (default: a timer thread);
        used to look at a button again when its debounce window closes. Tests give their own.

    Raises
    ------
    DicetableError
        If gpiozero is not installed or a pin cannot be opened (the message says what to do).

    Examples
    --------
    >>> with ButtonPanel({"roll": 17}, on_command=print) as panel:   # doctest: +SKIP
    ...     panel.set_holds((True, False, False, False, False))
    """

    def __init__(
        self,
        pin_map: PinMap | dict[str, int],
        *,
        on_command: Callable[[Command], None],
        pin_factory: Any = None,
        clock: Callable[[], float] = time.monotonic,
        on_short_undo: Callable[[], None] | None = None,
        schedule: Callable[[float, Callable[[], None]], Any] = _timer,
    ) -> None:
        if not isinstance(pin_map, PinMap):
            pin_map = PinMap({Command(k): v for k, v in pin_map.items()})
        self.pin_map = pin_map
        self.on_command = on_command
        self.on_short_undo = on_short_undo
        self.clock = clock
        self.schedule = schedule
        self._lock = threading.Lock()
        self._buttons: list[_Debounced] = []
        self._leds: dict[int, Any] = {}
        self._blinking = False
        self._closed = False
        try:
            from gpiozero import LED, Button
        except ImportError:
            raise DicetableError(
                "gpiozero is not installed; run 'pip install gpiozero' (or play with --no-buttons and use the keyboard)"
            ) from None
        try:
            for command, pin in pin_map.buttons.items():
                button = Button(pin, pull_up=True, bounce_time=None, pin_factory=pin_factory)
                self._buttons.append(_Debounced(self, command, button))
            for die, pin in pin_map.leds.items():
                self._leds[die] = LED(pin, pin_factory=pin_factory)
        except Exception as exc:
            self.close()
            if isinstance(exc, DicetableError):
                raise
            raise DicetableError(
                f"cannot open the GPIO pins ({type(exc).__name__}: {exc}); on a Pi add your "
                "user to the 'gpio' group, elsewhere play with --no-buttons"
            ) from None

    def _changed(self, command: Command, pressed: bool, held_s: float) -> None:
        if self._closed:
            return
        with self._lock:
            if command is Command.UNDO:
                if pressed:
                    return
                if held_s >= self.pin_map.long_press_s:
                    self._send(command)
                elif self.on_short_undo is not None:
                    self.on_short_undo()
                return
            if pressed:
                self._send(command)

    def _send(self, command: Command) -> None:
        try:
            self.on_command(command)
        except Exception:  # a refused command must not kill the GPIO callback thread
            log.exception("command %s failed", command)

    def set_holds(self, holds: Sequence[bool], blink: bool = False) -> None:
        """Light the LED of each held die (``holds``: five bools, die order); `blink`: every hold LED blinks
        instead (the turn timer's last seconds), at :data:`BLINK_S` on and off, from gpiozero's own thread."""
        if self._closed:
            return
        if blink:
            if not self._blinking:
                for led in self._leds.values():
                    led.blink(on_time=BLINK_S, off_time=BLINK_S, background=True)
            self._blinking = True
            return
        self._blinking = False
        for die, led in self._leds.items():
            held = die < len(holds) and bool(holds[die])
            led.on() if held else led.off()  # on() and off() also stop a blink

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    def close(self) -> None:
        """Release every pin; safe to call twice."""
        self._closed = True
        for b in self._buttons:
            b.button.close()
        for led in self._leds.values():
            led.close()
        self._buttons.clear()
        self._leds.clear()

    def __enter__(self) -> ButtonPanel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        if self._closed:
            return "<ButtonPanel closed>"
        return f"<ButtonPanel {len(self._buttons)} buttons, {len(self._leds)} LEDs>"
