"""Buttons through gpiozero's MockFactory: press, long press, chatter (fake clock), LEDs; keys; pin maps."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("gpiozero", reason="gpiozero is not installed: pip install .")
from gpiozero.pins.mock import MockFactory  # noqa: E402

from table.errors import UsageError  # noqa: E402
from table.inputs import (  # noqa: E402
    ButtonPanel,
    Command,
    PinConflictError,
    PinMap,
    command_for_key,
    load_pin_map,
    parse_command,
)
from table.inputs.pins import DEFAULT_BUTTONS, DEFAULT_LEDS  # noqa: E402


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t

    def advance(self, s: float) -> None:
        self.t += s


@pytest.fixture
def pins():
    factory = MockFactory()
    yield factory
    factory.reset()


@pytest.fixture
def clock():
    return Clock()


def make_panel(pins, clock, seen, **kw):
    return ButtonPanel(load_pin_map(), on_command=seen.append, pin_factory=pins, clock=clock, **kw)


def tap(pins, clock, gpio, hold_s=0.1):
    pins.pin(gpio).drive_low()
    clock.advance(hold_s)
    pins.pin(gpio).drive_high()
    clock.advance(0.2)


def test_inputs_roll_button_sends_roll(pins, clock):
    seen = []
    with make_panel(pins, clock, seen):
        pins.pin(17).drive_low()  # pressed: pulled up, switch to ground
        assert seen == [Command.ROLL]  # sent on the press, not the release
        clock.advance(0.1)
        pins.pin(17).drive_high()
    assert seen == [Command.ROLL]


def test_inputs_every_button_sends_its_command(pins, clock):
    seen = []
    pin_map = load_pin_map()
    with make_panel(pins, clock, seen):
        for command, gpio in pin_map.buttons.items():
            tap(pins, clock, gpio, hold_s=1.0 if command is Command.UNDO else 0.1)
    assert seen == list(pin_map.buttons)


def test_inputs_chatter_within_debounce_is_one_press(pins, clock):
    seen = []
    with make_panel(pins, clock, seen):
        pin = pins.pin(27)  # PREV
        for _ in range(6):  # contact bounce: 1 ms edges for 12 ms
            pin.drive_low()
            clock.advance(0.001)
            pin.drive_high()
            clock.advance(0.001)
        pin.drive_low()
        clock.advance(0.2)
        pin.drive_high()  # the real release
        clock.advance(0.004)
        pin.drive_low()  # release bounce
        clock.advance(0.002)
        pin.drive_high()
    assert seen == [Command.PREV]


def test_inputs_presses_apart_beyond_debounce_all_count(pins, clock):
    seen = []
    with make_panel(pins, clock, seen):
        for _ in range(3):
            tap(pins, clock, 22, hold_s=0.05)  # NEXT, 50 ms presses 200 ms apart
    assert seen == [Command.NEXT] * 3


def test_inputs_undo_needs_a_long_press(pins, clock):
    seen, short = [], []
    with make_panel(pins, clock, seen, on_short_undo=lambda: short.append(1)) as panel:
        tap(pins, clock, 24, hold_s=0.3)
        assert seen == [] and short == [1]
        tap(pins, clock, 24, hold_s=panel.pin_map.long_press_s + 0.01)
    assert seen == [Command.UNDO] and short == [1]


def test_inputs_hold_leds_follow_holds(pins, clock):
    with make_panel(pins, clock, []) as panel:
        panel.set_holds((True, False, True, False, False))
        assert [pins.pin(g).state for g in (12, 16, 20, 21, 18)] == [True, False, True, False, False]
        panel.set_holds(())
        assert not any(pins.pin(g).state for g in (12, 16, 20, 21, 18))


def test_inputs_a_failing_command_does_not_stop_the_panel(pins, clock):
    seen = []

    def flaky(c):
        seen.append(c)
        if len(seen) == 1:
            raise RuntimeError("refused")

    with ButtonPanel(load_pin_map(), on_command=flaky, pin_factory=pins, clock=clock):
        tap(pins, clock, 17)
        tap(pins, clock, 17)
    assert seen == [Command.ROLL, Command.ROLL]


def test_inputs_panel_close_releases_pins_and_repr(pins, clock):
    panel = make_panel(pins, clock, [])
    assert repr(panel) == "<ButtonPanel 11 buttons, 5 LEDs>"
    panel.close()
    panel.close()
    assert repr(panel) == "<ButtonPanel closed>" and panel.closed
    again = make_panel(pins, clock, [])  # the pins are free again
    again.close()


def test_inputs_pin_map_rejects_a_pin_used_twice():
    with pytest.raises(PinConflictError, match="GPIO17 is set for both 'roll' and 'hold_3'"):
        PinMap({Command.ROLL: 17, Command.HOLD_3: 17})
    with pytest.raises(PinConflictError, match="give a BCM GPIO number 0-27"):
        PinMap({Command.ROLL: 40})


def test_inputs_pin_map_file_errors(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        load_pin_map(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[buttons]\nfire = 4\n")
    with pytest.raises(UsageError, match="unknown button 'fire'"):
        load_pin_map(bad)
    bad.write_text("[buttons\n")
    with pytest.raises(UsageError, match="not valid TOML"):
        load_pin_map(bad)
    bad.write_bytes(FULL_PINS.encode("utf-8") + b"# Gr\xfcn\n")  # saved as Latin-1 by an old editor
    with pytest.raises(UsageError, match=r"bad.toml' is not UTF-8 text \(line 19\); save it as UTF-8"):
        load_pin_map(bad)
    bom = tmp_path / "bom.toml"
    bom.write_bytes(b"\xef\xbb\xbf" + FULL_PINS.encode("utf-8"))  # UTF-8 with a byte-order mark (Notepad)
    assert load_pin_map(bom) == PinMap(DEFAULT_BUTTONS, DEFAULT_LEDS)
    twice = tmp_path / "my-wiring.toml"
    twice.write_text(FULL_PINS.replace("hold_5 = 18", "hold_5 = 17"))
    with pytest.raises(PinConflictError) as conflict:
        load_pin_map(twice)
    assert str(conflict.value).startswith(f"{twice}: GPIO17 is set for both") and "pins.toml" not in str(conflict.value)
    ok = tmp_path / "ok.toml"
    ok.write_text(
        FULL_PINS.replace("roll = 17", "roll = 4").replace("hold_5 = 18", "hold_5 = 7")
        + "[timing]\nlong_press_s = 1.5\n"
    )
    want = PinMap({**DEFAULT_BUTTONS, Command.ROLL: 4}, {**DEFAULT_LEDS, 4: 7}, long_press_s=1.5)
    assert load_pin_map(ok) == want


#: A complete pins.toml with the default wiring and no [timing] table.
FULL_PINS = (
    "[buttons]\n"
    + "".join(f"{c.value} = {p}\n" for c, p in DEFAULT_BUTTONS.items())
    + "[leds]\n"
    + "".join(f"hold_{d + 1} = {p}\n" for d, p in DEFAULT_LEDS.items())
)


def test_inputs_full_pin_map_without_timing_is_the_default(tmp_path):
    ok = tmp_path / "pins.toml"
    ok.write_text(FULL_PINS)
    assert load_pin_map(ok) == PinMap(dict(DEFAULT_BUTTONS), dict(DEFAULT_LEDS))


@pytest.mark.parametrize(
    "text, said",
    [
        ("", r"no \[buttons\] table, so no button would be wired; the file needs \[buttons\] with hold_1, "),
        (
            FULL_PINS.replace("[buttons]", "[button]"),
            r"unknown table 'button'; use \[buttons\], \[leds\] and \[timing\]",
        ),
        (
            FULL_PINS.replace("menu = 25\n", ""),
            r"\[buttons\] lacks menu, so it would not be wired; give each a GPIO pin",
        ),
        (FULL_PINS.replace("roll = 17\n", "").replace("undo = 24\n", ""), r"\[buttons\] lacks roll, undo, so they"),
        (FULL_PINS.split("[leds]")[0], r"no \[leds\] table, so no hold LED would be wired"),
        (FULL_PINS.replace("hold_3 = 20\n", ""), r"\[leds\] lacks hold_3, so it would not be wired"),
        (FULL_PINS + "[timing]\ndebounce = 0.1\n", "unknown timing 'debounce'; use debounce_s and long_press_s"),
    ],
)
def test_regression_pin_map_missing_or_mistyped_table_or_button_is_refused(tmp_path, text, said):
    bad = tmp_path / "typo.toml"
    bad.write_text(text)
    with pytest.raises(UsageError, match=f"^{re.escape(str(bad))}: {said}"):
        load_pin_map(bad)


@pytest.mark.parametrize(
    "text, said",
    [
        ("buttons = 5\n", r"buttons = 5 is not a table; write a \[buttons\] line followed by name = GPIO number lines"),
        (FULL_PINS.replace("roll = 17", 'roll = "17"'), r"\[buttons\] roll = '17'; give a BCM GPIO number 0-27"),
        (FULL_PINS.replace("roll = 17", "roll = true"), r"\[buttons\] roll = True; give a BCM GPIO number 0-27"),
        (FULL_PINS.replace("hold_1 = 12", "hold_1 = 40"), r"\[leds\] hold_1 = 40; give a BCM GPIO number 0-27"),
        ("timing = 5\n" + FULL_PINS, r"timing = 5 is not a table; write a \[timing\] line followed by name = seconds"),
        (
            FULL_PINS + '[timing]\ndebounce_s = "x"\n',
            r"\[timing\] debounce_s = 'x' is not a number; give seconds, e.g. debounce_s = 0.03",
        ),
        (FULL_PINS + "[timing]\nlong_press_s = 9\n", r"long_press_s must be 0.2-5 s, got 9.0"),
    ],
)
def test_regression_pin_map_bad_value_names_the_file_and_key(tmp_path, text, said):
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    with pytest.raises(UsageError, match=f"^{re.escape(str(bad))}: {said}"):
        load_pin_map(bad)


@pytest.mark.parametrize(
    "key, command",
    [
        ("1", Command.HOLD_1),
        ("5", Command.HOLD_5),
        (" ", Command.ROLL),
        ("Enter", Command.ROLL),
        ("ArrowLeft", Command.PREV),
        ("ArrowRight", Command.NEXT),
        ("S", Command.SCORE),
        ("u", Command.UNDO),
        ("Escape", Command.MENU),
        ("x", None),
        ("F1", None),
    ],
)
def test_inputs_keys(key, command):
    assert command_for_key(key) is command


def test_inputs_parse_command():
    assert parse_command(" HOLD_3 ") is Command.HOLD_3
    with pytest.raises(UsageError, match="unknown command 'fly'; use one of: hold_1"):
        parse_command("fly")


def test_a_folder_given_as_the_pin_map_is_said_plainly(tmp_path):
    with pytest.raises(UsageError, match="is a folder; give --pins the pins.toml file"):
        load_pin_map(tmp_path)


class Later:
    """A ``schedule`` that keeps the calls for the test to run (the debounce's look when its window closes)."""

    def __init__(self):
        self.due = []

    def __call__(self, delay_s, fn):
        self.due.append((delay_s, fn))

    def run(self):
        due, self.due = self.due, []
        for _, fn in due:
            fn()


@pytest.mark.parametrize("tap_s", [0.005, 0.02])
def test_regression_a_tap_shorter_than_the_debounce_does_not_lose_the_next_press(pins, clock, tap_s):
    """After a tap shorter than debounce_s its release was taken for bounce: the button stayed 'pressed',
    and the next press, seen as no change, was lost."""
    seen = []
    later = Later()
    with make_panel(pins, clock, seen, schedule=later) as panel:
        assert tap_s < panel.pin_map.debounce_s
        for _ in range(2):
            pins.pin(17).drive_low()  # ROLL: a quick tap
            clock.advance(tap_s)
            pins.pin(17).drive_high()
            clock.advance(panel.pin_map.debounce_s - tap_s)
            later.run()  # the debounce window has closed, with the line up
            clock.advance(0.2)
        tap(pins, clock, 17, hold_s=0.1)
    assert seen == [Command.ROLL] * 3


def test_a_quick_tap_of_undo_is_a_short_undo_and_bounce_inside_a_press_is_not_a_release(pins, clock):
    seen, short = [], []
    later = Later()
    with make_panel(pins, clock, seen, on_short_undo=lambda: short.append(1), schedule=later) as panel:
        pin = pins.pin(24)  # UNDO
        pin.drive_low()
        clock.advance(0.01)
        pin.drive_high()  # released inside the window
        clock.advance(panel.pin_map.debounce_s)
        later.run()
        assert short == [1] and seen == []
        pin.drive_low()  # a long press whose contact bounces once at the start
        clock.advance(0.002)
        pin.drive_high()
        clock.advance(0.002)
        pin.drive_low()
        clock.advance(panel.pin_map.debounce_s)
        later.run()  # the line is down again when the window closes: still pressed
        clock.advance(panel.pin_map.long_press_s + 0.01)
        pin.drive_high()
    assert seen == [Command.UNDO] and short == [1]


def test_the_debounce_looks_again_on_a_timer_by_default(pins):
    """With the real clock and timer: a 5 ms tap, then a press 100 ms later, both count."""
    import time

    seen = []
    with ButtonPanel(load_pin_map(), on_command=seen.append, pin_factory=pins) as panel:
        assert panel.pin_map.debounce_s > 0.005
        pins.pin(17).drive_low()
        time.sleep(0.005)
        pins.pin(17).drive_high()
        time.sleep(panel.pin_map.debounce_s + 0.1)
        pins.pin(17).drive_low()
        time.sleep(0.05)
        pins.pin(17).drive_high()
    assert seen == [Command.ROLL, Command.ROLL]
