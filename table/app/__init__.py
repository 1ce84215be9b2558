"""The table app: wires camera, screens, game, store and display; decides nothing itself.

- :mod:`.core`: :class:`TableApp`, the worker thread that owns the store and applies everything in order.
- :mod:`.screens`: the screens and menus as a pure state machine (a press and a state give the next state);
  :mod:`.presses` steps it for each press and does what it says.
- :mod:`.turn`: the turn's orchestration: presses and the camera's roll events into game commands.
- :mod:`.publish`: the page's snapshot after each change, and the finished game's analysis.
- :mod:`.texts`: what the table says (messages and camera advice).
- :mod:`.session`: a game's events written to the store and folded into its state.
- :mod:`.bots`: the bot seats; :mod:`.camera`: the camera thread; :mod:`.seats`: setup checks;
  :mod:`.dice_slots`: which die is which between throws.
"""

from table.app.core import TableApp
from table.app.dice_slots import assign_slots
from table.app.texts import (
    ACTING_COMMANDS,
    ADVICE,
    CONFIRM_END,
    CONFIRM_PAUSE_S,
    CONFIRM_TOO_SOON,
    END_VIEWS,
    MENU_CLOSED,
    MENU_ITEMS,
    NOT_SEEN,
    ROLLING_S,
    SETUP_TOO_SOON,
)

__all__ = [
    "ACTING_COMMANDS",
    "ADVICE",
    "CONFIRM_END",
    "CONFIRM_PAUSE_S",
    "CONFIRM_TOO_SOON",
    "END_VIEWS",
    "MENU_CLOSED",
    "MENU_ITEMS",
    "NOT_SEEN",
    "ROLLING_S",
    "SETUP_TOO_SOON",
    "TableApp",
    "assign_slots",
]
