"""GPIO: the pin factory gpiozero uses (lgpio on a Pi 5), and every pin of ``pins.toml`` free.

Each pin is opened as the table opens it (a button with its pull-up, an LED) and closed again.
:func:`gpio_problem` is also the line ``dicetable play`` puts on the table's screen when the
buttons cannot be used.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from table.doctor.check import REINSTALL, Check, first_line

#: What to do when the user may not open the GPIO chip.
GROUP_FIX = (
    "add the table's user to the 'gpio' group ('sudo usermod -a -G gpio $USER'), then log out and in "
    "(the installer does this)"
)


def factory_name(factory: Any) -> str:
    """gpiozero's short name of a pin factory: ``lgpio``, ``rpigpio``, ``pigpio``, ``native``, ``mock``."""
    name = type(factory).__name__
    return (name[: -len("Factory")] if name.endswith("Factory") else name).lower()


def default_factory() -> tuple[Any, bool]:
    """gpiozero's pin factory and whether it was made here (then the caller closes it).

    Raises
    ------
    gpiozero.BadPinFactory
        If no pin library works here (not a Pi, or lgpio missing on one).
    ImportError
        If gpiozero is not installed.
    """
    from gpiozero import Device

    if Device.pin_factory is not None:
        return Device.pin_factory, False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gpiozero warns of each library it falls back from
        return Device._default_pin_factory(), True  # what gpiozero picks at its first device


def check_gpio(
    pins: str | Path | None, board: str | None, *, pin_factory: Any = None, running: str | None = None
) -> Check:
    """The pin factory and the pins of `pins` (default ``firmware_config/pins.toml``).

    Parameters
    ----------
    pins : path or None
        The pin map, as ``play --pins`` takes it.
    board : str or None
        The Pi's model; None off a Pi.
    pin_factory : gpiozero pin factory, optional
        Tests pass ``gpiozero.pins.mock.MockFactory()``; default gpiozero's own choice.
    running : str or None
        The dicetable holding the game store, if any: its pins are in use, as they should be.
    """
    from table.errors import UsageError
    from table.inputs import load_pin_map

    try:
        pin_map = load_pin_map(pins)
    except UsageError as exc:
        return Check("gpio", "fail", str(exc), "fix the file it names, or copy firmware_config/pins.toml")
    owned = False
    factory = pin_factory
    if factory is None:
        try:
            factory, owned = default_factory()
        except Exception as exc:  # noqa: BLE001 - BadPinFactory, ImportError
            return gpio_problem(exc, board, name="gpio")
    try:
        return _check_pins(pin_map, factory, board, running)
    finally:
        if owned:
            try:
                factory.close()
            except Exception:  # noqa: BLE001 - closing must not hide what was found
                pass


def _check_pins(pin_map: Any, factory: Any, board: str | None, running: str | None) -> Check:
    from gpiozero import LED, Button

    name = factory_name(factory)
    wanted = [(c.value, pin, True) for c, pin in pin_map.buttons.items()]
    wanted += [(f"LED {die + 1}", pin, False) for die, pin in pin_map.leds.items()]
    busy, why = [], ""
    for label, pin, is_button in wanted:
        try:
            device = (
                Button(pin, pull_up=True, bounce_time=None, pin_factory=factory)
                if is_button
                else LED(pin, pin_factory=factory)
            )
        except Exception as exc:  # noqa: BLE001 - GPIOPinInUse, lgpio's 'GPIO busy', permission errors
            busy.append(f"GPIO{pin} ({label})")
            why = why or first_line(exc)
            continue
        device.close()
    if busy and running and len(busy) == len(wanted):
        return Check(
            "gpio", "ok", f"{name} pin factory; all {len(wanted)} pins in use by the running table ({running})"
        )
    if busy:
        problem = gpio_problem(why, board, name="gpio")
        return Check(
            "gpio",
            "fail",
            f"{name} pin factory; {len(busy)} of {len(wanted)} pins cannot be opened: {', '.join(busy)} ({why})",
            problem.fix,
        )
    if board is not None and "Pi 5" in board and name != "lgpio":
        return Check(
            "gpio",
            "warning",
            f"{name} pin factory on a {board}: only lgpio drives a Pi 5's pins",
            f"'sudo apt install python3-lgpio', then {REINSTALL}",
        )
    return Check(
        "gpio",
        "ok",
        f"{name} pin factory; all {len(wanted)} pins of the pin map free "
        f"({len(pin_map.buttons)} buttons, {len(pin_map.leds)} LEDs)",
    )


def gpio_problem(exc: BaseException | str, board: str | None, *, name: str = "buttons") -> Check:
    """The ``fail`` (or, off a Pi, ``skipped``) line for GPIO that cannot be used."""
    text = first_line(exc)
    if "gpiozero is not installed" in text or (isinstance(exc, ImportError) and getattr(exc, "name", "") == "gpiozero"):
        return Check(name, "fail", f"gpiozero is missing ({text})", REINSTALL)
    if "pin factory" in text.lower() or ("lgpio" in text.lower() and "No module" in text):
        if board is None:
            return Check(
                name,
                "skipped" if name == "gpio" else "fail",
                "not a Pi: no GPIO here" + (": skipped" if name == "gpio" else " for the buttons"),
                "" if name == "gpio" else "play with --no-buttons, and use the keyboard or the page",
            )
        return Check(
            name,
            "fail",
            f"no GPIO library works on this {board} ({text})",
            f"{REINSTALL} (it installs python3-lgpio and puts the user in the 'gpio' group), then log out and in",
        )
    if "ermission" in text or "EACCES" in text:
        return Check(name, "fail", f"the GPIO pins may not be opened by this user ({text})", GROUP_FIX)
    if "in use" in text or "busy" in text.lower():
        return Check(
            name,
            "fail",
            f"another program holds the GPIO pins ({text})",
            "stop it (another dicetable: 'sudo systemctl stop dicetable'), or give --pins free pins",
        )
    return Check(
        name,
        "fail",
        f"the GPIO pins cannot be opened ({text})",
        "check the wiring against firmware_config/pins.toml; run 'dicetable doctor'",
    )
