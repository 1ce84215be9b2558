"""The screens and menus as a pure state machine: a state and a press give the next state, what to say and
at most one action for the app.

Screens: ``setup`` (rules and seats of a new game), ``game`` (a turn), ``end`` (the scorecards and the
analysis of a finished game), with the MENU over any of them. Nothing here touches the game or the store:
:func:`press` and :func:`choose` return a :class:`Step`, and the app carries out its :class:`Action`
(end the game, start one, pass the press to the turn).

Double presses: a finger's double press, or a double tap, lands 0.1-0.3 s apart, so the ROLL/CONFIRM that
ends a game, and the first one taken on a setup brought by a ROLL/CONFIRM, must come at least
:data:`~table.app.texts.CONFIRM_PAUSE_S` after the press before it.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field, replace

from table.app.seats import unique_names
from table.app.texts import (
    CARDS_SHOWN,
    CONFIRM_PAUSE_S,
    CONFIRM_TOO_SOON,
    END_VIEWS,
    MENU_CLOSED,
    MENU_ITEMS,
    SETUP_TOO_SOON,
)
from table.display.snapshot import Setup
from table.inputs.commands import Command
from table.rules import JOKER_VARIANTS, RULESET_IDS


class Action(enum.Enum):
    """What the app does after a :class:`Step` (the screens cannot do it themselves)."""

    #: Pass the press to the turn in progress (the game screen, no menu over it).
    GAME = "game"
    #: Take back the last action of the game (UNDO on the end screen).
    UNDO = "undo"
    #: End the running game (an ``EndGame`` event), then show :func:`ended`'s setup; a finished game
    #: or none is only left.
    END_GAME = "end-game"
    #: Leave the finished game for the setup shown in the step's state.
    LEAVE_GAME = "leave-game"
    #: Start a game with the step's setup.
    START_GAME = "start-game"


@dataclass(frozen=True)
class Screens:
    """What the screens show: the screen, the menu over it, the setup's choices, the end screen's view.

    `confirm_asked_at` and `setup_shown_at` are :func:`time.monotonic` seconds: when the last
    ROLL/CONFIRM asked "End this game?" (or was refused as too soon), and when the one that brought the
    setup came. `setup` is never changed in place here: a step holds a new one.
    """

    screen: str = "setup"
    setup: Setup = field(default_factory=Setup)
    menu_open: bool = False
    menu_index: int = 0
    #: The menu's "new" item was chosen during a game: ROLL/CONFIRM ends it, any other button keeps it.
    menu_confirm: bool = False
    confirm_asked_at: float = -math.inf
    setup_shown_at: float = -math.inf
    end_view: str = END_VIEWS[0]
    hints: bool = False
    #: The game screen shows every player's full scorecard in place of the dice (the menu's "cards"); the
    #: next press but MENU goes back to the dice and does nothing else.
    cards: bool = False


@dataclass(frozen=True)
class Step:
    """The result of a press: the new state, the message line (``""``: none) and what the app does next."""

    screens: Screens
    say: str = ""
    action: Action | None = None


def ended(s: Screens, mono: float) -> Screens:
    """The setup shown once a game is left (ended from the menu, or finished) at `mono` (monotonic s)."""
    return replace(
        s, screen="setup", menu_open=False, cards=False, setup=replace(s.setup, field=0), setup_shown_at=mono
    )


def press(s: Screens, c: Command, mono: float, *, game_running: bool) -> Step:
    """The next state after button `c` pressed at `mono` (monotonic s).

    `game_running` says whether a game is in progress (not finished): only then does the menu's
    "new" item ask "End this game?" first.
    """
    if c is Command.MENU:
        return Step(replace(s, menu_open=not s.menu_open, menu_index=0, menu_confirm=False))
    if s.menu_open:
        return _menu(s, c, mono, game_running)
    if s.screen == "setup":
        return _setup_press(s, c, mono)
    if s.screen == "end":
        if c is Command.ROLL:  # a double press must neither start the next game nor change its rules
            return Step(ended(s, mono), action=Action.LEAVE_GAME)
        if c is Command.UNDO:
            return Step(s, action=Action.UNDO)
        if c in (Command.PREV, Command.NEXT):  # scorecards <-> analysis where they do not fit side by side
            return Step(replace(s, end_view=END_VIEWS[(END_VIEWS.index(s.end_view) + 1) % len(END_VIEWS)]))
        return Step(s)
    if s.cards:  # the cards hide the dice and boxes: this press only brings them back
        return Step(replace(s, cards=False))
    return Step(s, action=Action.GAME)


def choose(s: Screens, item: str, mono: float, *, game_running: bool, seen: bool, not_seen: str) -> Step:
    """A tap on the menu's item `item` at `mono`: as PREV/NEXT to it, then ROLL/CONFIRM.

    `seen` says whether the tapping page had drawn what the table shows now; if not, the tap is not
    taken and `not_seen` is said. While the table asks "End this game?", a tap on "new" answers yes,
    any other item no ("resume" also closes the menu).
    """
    ids = [i for i, _ in MENU_ITEMS]
    if item not in ids:  # not echoed: the message is on every screen
        return Step(s, f"No such menu item; the menu has: {', '.join(ids)}.")
    if not s.menu_open:
        return Step(s, MENU_CLOSED)
    if not seen:
        return Step(s, not_seen)
    if s.menu_confirm:
        step = _answer_end(s, item == "new", mono)
        if item == "resume":
            step = replace(step, screens=replace(step.screens, menu_open=False))
        return step
    return _menu(replace(s, menu_index=ids.index(item)), Command.ROLL, mono, game_running)


def _answer_end(s: Screens, yes: bool, mono: float) -> Step:
    """The answer to "End this game?": yes (ROLL/CONFIRM, after the pause) ends it; no keeps it."""
    if yes and mono - s.confirm_asked_at < CONFIRM_PAUSE_S:  # a double press or a burst: still asking;
        return Step(replace(s, confirm_asked_at=mono), CONFIRM_TOO_SOON)  # the pause counts from the last press
    s = replace(s, menu_confirm=False)
    if yes:
        return Step(replace(s, menu_open=False), action=Action.END_GAME)
    return Step(s, "The game goes on: it was not ended.")


def _menu(s: Screens, c: Command, mono: float, game_running: bool) -> Step:
    if s.menu_confirm:  # ending the game waits for ROLL/CONFIRM; any other button keeps it
        return _answer_end(s, c is Command.ROLL, mono)
    if c is Command.PREV:
        return Step(replace(s, menu_index=(s.menu_index - 1) % len(MENU_ITEMS)))
    if c is Command.NEXT:
        return Step(replace(s, menu_index=(s.menu_index + 1) % len(MENU_ITEMS)))
    if c not in (Command.ROLL, Command.SCORE):
        return Step(s)
    item = MENU_ITEMS[s.menu_index][0]
    if item == "new" and game_running:  # a running game is ended only once confirmed; the menu stays open
        return Step(replace(s, menu_confirm=True, confirm_asked_at=mono))
    s = replace(s, menu_open=False)
    if item == "hints":
        return Step(replace(s, hints=not s.hints))
    if item == "cards":
        return Step(replace(s, cards=s.screen == "game"), CARDS_SHOWN if s.screen == "game" else "")
    if item == "new":
        return Step(s, action=Action.END_GAME)
    return Step(s)


def _setup_press(s: Screens, c: Command, mono: float) -> Step:
    if c in (Command.ROLL, Command.SCORE) and mono - s.setup_shown_at < CONFIRM_PAUSE_S:
        # the second press of a double press that brought the setup; the pause counts from the last press
        return Step(replace(s, setup_shown_at=max(s.setup_shown_at, mono)), SETUP_TOO_SOON)
    if c in (Command.PREV, Command.NEXT):
        s = replace(s, setup_shown_at=-math.inf)  # moving between the fields: the setup is being looked at
    setup = s.setup
    if c is Command.PREV:
        setup = replace(setup, field=(setup.field - 1) % len(Setup.FIELDS))
    elif c is Command.NEXT:
        setup = replace(setup, field=(setup.field + 1) % len(Setup.FIELDS))
    elif c in (Command.ROLL, Command.SCORE):
        name = Setup.FIELDS[setup.field]
        if name == "ruleset":
            setup = replace(setup, ruleset=RULESET_IDS[(RULESET_IDS.index(setup.ruleset) + 1) % len(RULESET_IDS)])
        elif name == "joker":
            setup = replace(setup, joker=JOKER_VARIANTS[(JOKER_VARIANTS.index(setup.joker) + 1) % len(JOKER_VARIANTS)])
        elif name == "players":
            n = len(setup.names) % 8 + 1
            names = (list(setup.names) + [f"Player {k + 1}" for k in range(len(setup.names), n)])[:n]
            setup = replace(setup, names=unique_names(names))
        else:
            return Step(s, action=Action.START_GAME)
    return Step(replace(s, setup=setup))
