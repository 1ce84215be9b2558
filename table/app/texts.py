"""What the table says: menu items, messages, camera advice, and the pauses that go with them."""

from __future__ import annotations

from table.inputs.commands import HOLD_COMMANDS, Command

#: Menu items, in order.
MENU_ITEMS = (
    ("resume", "Back to the game"),
    ("hints", "Hints on/off"),
    ("history", "History: round by round"),
    ("fix", "Fix a misread die"),
    ("cards", "Scorecards: every player's full card"),
    ("new", "New game: end this one, set up players and rules"),
)
#: Said when the game screen shows every player's full card (the menu's "cards" item).
CARDS_SHOWN = "Every player's full scorecard. Any button: back to the dice."
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
SETUP_TOO_SOON = (
    "Too quick (a double press?): the setup for a new game is shown; wait a moment, then press to change it"
)

#: Said when the fix view is asked for with no dice on the table.
NOTHING_TO_FIX = "Nothing to fix yet: roll the dice first, then open the MENU's fix."
#: How the fix view is used (the page shows it beside the dice).
FIX_HELP = "Fix a die: PREV/NEXT or HOLD 1-5 pick it, ROLL/CONFIRM steps its value, SCORE saves, MENU cancels."
#: How the history view is used.
HISTORY_HELP = "PREV/NEXT: the round before or after; MENU or ROLL/CONFIRM: back."

#: Views of the end screen that PREV/NEXT switch between (side by side on a wide enough screen).
END_VIEWS = ("card", "analysis")

#: Camera warnings and what to do about them (kind -> text).
ADVICE = {
    "leaning": "A die is leaning on the wall or another die: re-roll it.",
    "stacked": "A die is lying on another: separate them and re-roll.",
    "unreadable": "Some dice could not be read: lay them flat, apart, and re-roll them.",
    "held-changed": "A held die changed: turn it back as it was, or UNDO if it was misread.",
    "unmoved": "A die did not move since the last roll: re-roll it, or press CONFIRM to use this reading.",
    "moved": "The dice moved after they were read: the reading shown stands.",
    "camera-lost": "Camera lost: check the camera cable. Trying again...",
    "recalibrate": "The camera moved: run 'dicetable calibrate' again.",
    "count": "Not all five dice were found: put every die in the tray.",
    "no-rolls": "All 3 rolls are used: choose a box with PREV/NEXT and press SCORE.",
}
