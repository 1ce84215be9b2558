"""Inputs: GPIO buttons, keys and page taps, all turned into :class:`Command` values.

Inputs never touch the game: they send commands to a callback (the app, which
turns them into game commands).  Buttons go through gpiozero
(:class:`ButtonPanel`, wired as ``firmware_config/pins.toml`` says), keys through
:data:`KEYMAP` (the page uses the same map), taps on the page send the command
names over the WebSocket.

Example
-------
>>> from gpiozero.pins.mock import MockFactory                  # doctest: +SKIP
>>> pins = MockFactory()
>>> seen = []
>>> with ButtonPanel({"roll": 17}, on_command=seen.append, pin_factory=pins):
...     pins.pin(17).drive_low(); pins.pin(17).drive_high()
>>> seen
[<Command.ROLL: 'roll'>]
"""

from table.inputs.buttons import ButtonPanel
from table.inputs.commands import HOLD_COMMANDS, KEYMAP, Command, command_for_key, parse_command
from table.inputs.pins import PinConflictError, PinMap, default_pin_map, default_pins_path, load_pin_map

__all__ = [
    "HOLD_COMMANDS",
    "KEYMAP",
    "ButtonPanel",
    "Command",
    "PinConflictError",
    "PinMap",
    "command_for_key",
    "default_pin_map",
    "default_pins_path",
    "load_pin_map",
    "parse_command",
]
