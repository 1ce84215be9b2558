"""The GPIO pin map: which BCM pin each button and hold LED uses (``pins.toml``)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from table.errors import UsageError
from table.inputs.commands import HOLD_COMMANDS, Command

#: Debounce window, in seconds.
DEBOUNCE_S = 0.03
#: Shortest press of UNDO that undoes, in seconds.
LONG_PRESS_S = 0.8


class PinConflictError(UsageError):
    """Raised when two buttons or LEDs are given the same GPIO pin, or a pin is out of range."""


@dataclass(frozen=True, slots=True)
class PinMap:
    """Where the buttons and hold LEDs are wired.

    Parameters
    ----------
    buttons : dict of Command to int
        BCM GPIO number of each button (pressed pulls the pin to ground).
    leds : dict of int to int
        Die index (0-4) -> BCM GPIO number of its hold LED.
    debounce_s : float
        Edges closer than this to the last accepted edge are ignored, in seconds.
    long_press_s : float
        UNDO must be held at least this long, in seconds.

    Raises
    ------
    PinConflictError
        If a pin is used twice or is not 0-27.
    """

    buttons: dict[Command, int]
    leds: dict[int, int] = field(default_factory=dict)
    debounce_s: float = DEBOUNCE_S
    long_press_s: float = LONG_PRESS_S

    def __post_init__(self) -> None:
        seen: dict[int, str] = {}
        named = [(c.value, p) for c, p in self.buttons.items()] + [(f"LED {d + 1}", p) for d, p in self.leds.items()]
        for name, pin in named:
            if not is_bcm_pin(pin):
                raise PinConflictError(f"{name!r} is set to pin {pin!r}; give a BCM GPIO number 0-27")
            if pin in seen:
                raise PinConflictError(
                    f"GPIO{pin} is set for both {seen[pin]!r} and {name!r}; give each button and LED its own pin"
                )
            seen[pin] = name
        if not 0 <= self.debounce_s <= 0.5:
            raise UsageError(f"debounce_s must be 0-0.5 s, got {self.debounce_s!r}")
        if not 0.2 <= self.long_press_s <= 5:
            raise UsageError(f"long_press_s must be 0.2-5 s, got {self.long_press_s!r}")


#: The default wiring (the same as ``firmware_config/pins.toml``; a test keeps them equal).
DEFAULT_BUTTONS: dict[Command, int] = {
    Command.HOLD_1: 5,
    Command.HOLD_2: 6,
    Command.HOLD_3: 13,
    Command.HOLD_4: 19,
    Command.HOLD_5: 26,
    Command.ROLL: 17,
    Command.PREV: 27,
    Command.NEXT: 22,
    Command.SCORE: 23,
    Command.UNDO: 24,
    Command.MENU: 25,
}
#: Die index -> hold LED pin of the default wiring.
DEFAULT_LEDS: dict[int, int] = {0: 12, 1: 16, 2: 20, 3: 21, 4: 18}


def default_pin_map() -> PinMap:
    """The default wiring (``firmware_config/pins.toml``)."""
    return PinMap(dict(DEFAULT_BUTTONS), dict(DEFAULT_LEDS))


def is_bcm_pin(value: object) -> bool:
    """Whether `value` is a GPIO pin of the Raspberry Pi's header: a BCM number 0-27 (an int, not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 27


def default_pins_path() -> Path:
    """``firmware_config/pins.toml`` of this checkout (the default wiring)."""
    return Path(__file__).resolve().parents[2] / "firmware_config" / "pins.toml"


#: What a complete ``pins.toml`` holds, told when a file lacks something (one line, as errors are).
PINS_TOML_LAYOUT = (
    "the file needs [buttons] with "
    + ", ".join(c.value for c in Command)
    + " and [leds] with hold_1 to hold_5, each = a BCM GPIO number (e.g. roll = 17); "
    "[timing] debounce_s and long_press_s are optional; copy firmware_config/pins.toml and edit it"
)
_TIMING_KEYS = ("debounce_s", "long_press_s")


def load_pin_map(path: str | Path | None = None) -> PinMap:
    """Read a pin map from a ``pins.toml`` file.

    With no `path`, :func:`default_pins_path` is read when it exists (a checkout),
    else the built-in :func:`default_pin_map` is used (an installed package).

    The file must have a ``[buttons]`` table naming every button and a ``[leds]`` table
    naming every hold LED (``hold_1`` to ``hold_5``), each set to a BCM GPIO number
    0-27; ``[timing]`` (``debounce_s``, ``long_press_s``, in seconds) is optional.

    Raises
    ------
    UsageError
        If the file is missing or a folder, not TOML, lacks a table or a button or LED,
        names an unknown table, button, LED or timing key, gives a value of the wrong
        type or range, or reuses a pin; the message names the file and the key.
    """
    if path is None and not default_pins_path().is_file():
        return default_pin_map()
    p = Path(path) if path is not None else default_pins_path()
    if p.is_dir():
        raise UsageError(f"pin map {str(p)!r} is a folder; give --pins the pins.toml file")
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8-sig"))  # a byte-order mark (Windows editors) is fine
    except FileNotFoundError:
        raise UsageError(
            f"pin map {str(p)!r} does not exist; give --pins FILE or copy firmware_config/pins.toml"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"pin map {str(p)!r} is not valid TOML ({exc}); fix the line it names") from None
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        raise UsageError(f"pin map {str(p)!r} is not UTF-8 text (line {line}); save it as UTF-8") from None
    for key in data:
        if key not in ("buttons", "leds", "timing"):
            raise UsageError(f"{p}: unknown table {key!r}; use [buttons], [leds] and [timing]")
    buttons: dict[Command, int] = {}
    for name, pin in _table(p, data, "buttons").items():
        if name not in [c.value for c in Command]:
            raise UsageError(f"{p}: unknown button {name!r}; use: {', '.join(c.value for c in Command)}")
        buttons[Command(name)] = _pin(p, "buttons", name, pin)
    _require(p, "buttons", [c.value for c in Command if c not in buttons])
    leds: dict[int, int] = {}
    for name, pin in _table(p, data, "leds").items():
        if name not in [c.value for c in HOLD_COMMANDS]:
            raise UsageError(f"{p}: unknown LED {name!r}; use hold_1 to hold_5")
        leds[int(name[-1]) - 1] = _pin(p, "leds", name, pin)
    _require(p, "leds", [c.value for i, c in enumerate(HOLD_COMMANDS) if i not in leds])
    timing = _table(p, data, "timing", required=False)
    for name, value in timing.items():
        if name not in _TIMING_KEYS:
            raise UsageError(f"{p}: unknown timing {name!r}; use {' and '.join(_TIMING_KEYS)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UsageError(
                f"{p}: [timing] {name} = {value!r} is not a number; give seconds, e.g. "
                f"{name} = {DEBOUNCE_S if name == 'debounce_s' else LONG_PRESS_S}"
            )
    try:
        return PinMap(
            buttons, leds, float(timing.get("debounce_s", DEBOUNCE_S)), float(timing.get("long_press_s", LONG_PRESS_S))
        )
    except UsageError as exc:
        raise type(exc)(f"{p}: {exc}") from None


def _table(p: Path, data: dict[str, object], key: str, *, required: bool = True) -> dict[str, object]:
    """``data[key]`` of pins.toml `p`, which must be a table; raises UsageError naming the file."""
    if key not in data:
        if not required:
            return {}
        what = "button" if key == "buttons" else "hold LED"
        raise UsageError(f"{p}: no [{key}] table, so no {what} would be wired; {PINS_TOML_LAYOUT}")
    value = data[key]
    if not isinstance(value, dict):
        raise UsageError(
            f"{p}: {key} = {value!r} is not a table; write a [{key}] line followed by "
            f"{'name = seconds' if key == 'timing' else 'name = GPIO number'} lines; {PINS_TOML_LAYOUT}"
        )
    return value


def _pin(p: Path, table: str, name: str, pin: object) -> int:
    """Check one ``name = pin`` line of pins.toml `p`; raises UsageError naming the file and key."""
    if not is_bcm_pin(pin):
        raise UsageError(f"{p}: [{table}] {name} = {pin!r}; give a BCM GPIO number 0-27")
    return pin


def _require(p: Path, table: str, missing: list[str]) -> None:
    """Refuse pins.toml `p` when its [table] lacks the `missing` keys."""
    if missing:
        raise UsageError(
            f"{p}: [{table}] lacks {', '.join(missing)}, so {'it' if len(missing) == 1 else 'they'} "
            f"would not be wired; give each a GPIO pin (a free unconnected pin will do); "
            f"{PINS_TOML_LAYOUT}"
        )
