"""The table's commands (one per button) and the keyboard map."""

from __future__ import annotations

from enum import StrEnum

from table.errors import UsageError


class Command(StrEnum):
    """What a button, a key or a tap on the page asks for."""

    HOLD_1 = "hold_1"
    """Hold or release die 1."""
    HOLD_2 = "hold_2"
    """Hold or release die 2."""
    HOLD_3 = "hold_3"
    """Hold or release die 3."""
    HOLD_4 = "hold_4"
    """Hold or release die 4."""
    HOLD_5 = "hold_5"
    """Hold or release die 5."""
    ROLL = "roll"
    """ROLL/CONFIRM: throw (synthetic camera), accept a held-back reading, choose in menus."""
    PREV = "prev"
    """Select the previous open box (or menu item, or setup field)."""
    NEXT = "next"
    """Select the next open box (or menu item, or setup field)."""
    SCORE = "score"
    """Write the current dice in the selected box."""
    UNDO = "undo"
    """Take back the last action (a long press on the button)."""
    MENU = "menu"
    """Open or close the menu."""


#: HOLD 1-5, in die order.
HOLD_COMMANDS = (Command.HOLD_1, Command.HOLD_2, Command.HOLD_3, Command.HOLD_4, Command.HOLD_5)

#: Keyboard keys (``KeyboardEvent.key`` names, as the page sees them) -> command.
KEYMAP: dict[str, Command] = {
    "1": Command.HOLD_1,
    "2": Command.HOLD_2,
    "3": Command.HOLD_3,
    "4": Command.HOLD_4,
    "5": Command.HOLD_5,
    " ": Command.ROLL,
    "Enter": Command.ROLL,
    "r": Command.ROLL,
    "ArrowLeft": Command.PREV,
    "ArrowUp": Command.PREV,
    "ArrowRight": Command.NEXT,
    "ArrowDown": Command.NEXT,
    "s": Command.SCORE,
    "u": Command.UNDO,
    "Backspace": Command.UNDO,
    "m": Command.MENU,
    "Escape": Command.MENU,
}


def command_for_key(key: str) -> Command | None:
    """The command a key sends, or None (``KeyboardEvent.key`` names; letters in any case)."""
    return KEYMAP.get(key) or KEYMAP.get(key.lower()) if len(key) == 1 else KEYMAP.get(key)


def parse_command(name: str) -> Command:
    """Return the command called ``name`` (e.g. ``"hold_3"``).

    Raises
    ------
    UsageError
        If no command has that name (the message lists them).
    """
    try:
        return Command(str(name).strip().lower())
    except ValueError:
        raise UsageError(f"unknown command {name!r}; use one of: {', '.join(c.value for c in Command)}") from None
