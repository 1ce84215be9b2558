"""The screens and menus as a pure state machine: a state and a press give the next state, what to say and
at most one action for the app.

Screens: ``setup`` (rules and seats of a new game), ``rolloff`` (a throw for who starts), ``game`` (a turn),
``end`` (the scorecards and the analysis of a finished game), with the MENU over any of them, and two views
opened from the menu: ``history`` (round by round) and ``fix`` (set a misread die's value). Nothing here
touches the game or the store: :func:`press` and :func:`choose` return a :class:`Step`, and the app carries
out its :class:`Action` (end the game, start one, pass the press to the turn).

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
    NOTHING_TO_FIX,
    SETUP_TOO_SOON,
)
from table.display.snapshot import Setup
from table.game import TIMER_CHOICES
from table.inputs.commands import HOLD_COMMANDS, Command
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
    #: Open the roll-off (who starts) for the setup's players.
    ROLLOFF = "rolloff"
    #: Pass the press to the roll-off in progress.
    ROLLOFF_PRESS = "rolloff-press"
    #: Correct the die and value of the step's ``fix`` (then the view closes).
    CORRECT = "correct"


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
    #: The fix view: ``(die, value)`` picked (die 0-based, value 1-6), or None when it is closed.
    fix: tuple[int, int] | None = None
    #: The history view: the round shown (1-based; 0: the latest), or None when it is closed.
    history: int | None = None
    #: The game screen shows every player's full scorecard in place of the dice (the menu's "cards"); the
    #: next press but MENU goes back to the dice and does nothing else.
    cards: bool = False


@dataclass(frozen=True)
class Step:
    """The result of a press: the new state, the message line (``""``: none) and what the app does next."""

    screens: Screens
    say: str = ""
    action: Action | None = None
    #: With :attr:`Action.CORRECT`: the ``(die, value)`` to set.
    fix: tuple[int, int] | None = None


def ended(s: Screens, mono: float) -> Screens:
    """The setup shown once a game is left (ended from the menu, or finished) at `mono` (monotonic s)."""
    return replace(
        s, screen="setup", menu_open=False, cards=False, setup=replace(s.setup, field=0), setup_shown_at=mono
    )


def press(
    s: Screens, c: Command, mono: float, *, game_running: bool, dice: tuple[int, ...] = (), rounds: int = 0
) -> Step:
    """The next state after button `c` pressed at `mono` (monotonic s).

    `game_running` says whether a game is in progress (not finished): only then does the menu's
    "new" item ask "End this game?" first. `dice` are the values the fix view can change (the last
    read, corrections included; empty: nothing to fix), `rounds` how many rounds the history has.
    """
    if s.fix is not None:
        return _fix_press(s, c, dice)
    if s.history is not None:
        return _history_press(s, c, rounds)
    if s.screen == "rolloff" and not s.menu_open:  # MENU leaves the roll-off too
        return Step(s, action=Action.ROLLOFF_PRESS)
    if c is Command.MENU:
        return Step(replace(s, menu_open=not s.menu_open, menu_index=0, menu_confirm=False))
    if s.menu_open:
        return _menu(s, c, mono, game_running, dice)
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


def choose(
    s: Screens, item: str, mono: float, *, game_running: bool, seen: bool, not_seen: str, dice: tuple[int, ...] = ()
) -> Step:
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
    return _menu(replace(s, menu_index=ids.index(item)), Command.ROLL, mono, game_running, dice)


def open_fix(s: Screens, dice: tuple[int, ...], die: int = 0) -> Step:
    """Open the fix view on die `die` of `dice` (its value picked), or say there is nothing to fix."""
    if not dice:
        return Step(replace(s, menu_open=False, fix=None), NOTHING_TO_FIX)
    die = min(max(die, 0), len(dice) - 1)
    return Step(replace(s, menu_open=False, history=None, fix=(die, dice[die])))


def fix_tap(s: Screens, dice: tuple[int, ...], *, die: object = None, value: object = None) -> Step:
    """A tap in the page's fix view: pick die `die` (0-based) and/or value `value` (1-6).

    A die or a value that does not exist is said in one line and changes nothing.
    """
    if s.fix is None:
        s = open_fix(s, dice).screens
        if s.fix is None:
            return Step(s, NOTHING_TO_FIX)
    d, v = s.fix
    if die is not None:
        if isinstance(die, bool) or not isinstance(die, int) or not 0 <= die < len(dice):
            return Step(s, f"Pick one of dice 1 to {len(dice)}; there is no die {die!r}.")
        d, v = die, dice[die]
    if value is not None:
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 6:
            return Step(s, f"A die shows 1 to 6; {value!r} cannot be set: pick a value from 1 to 6.")
        v = value
    return Step(replace(s, fix=(d, v)))


def _fix_press(s: Screens, c: Command, dice: tuple[int, ...]) -> Step:
    """The fix view: PREV/NEXT or HOLD n pick the die, ROLL steps its value, SCORE saves, MENU/UNDO cancel."""
    assert s.fix is not None
    if not dice:
        return Step(replace(s, fix=None), NOTHING_TO_FIX)
    d, v = s.fix
    if c in (Command.MENU, Command.UNDO):
        return Step(replace(s, fix=None), "Nothing was changed.")
    if c in (Command.PREV, Command.NEXT):
        d = (d + (1 if c is Command.NEXT else -1)) % len(dice)
        return Step(replace(s, fix=(d, dice[d])))
    if c in HOLD_COMMANDS:
        k = HOLD_COMMANDS.index(c)
        return fix_tap(s, dice, die=k) if k < len(dice) else Step(s, f"There are {len(dice)} dice.")
    if c is Command.ROLL:
        return Step(replace(s, fix=(d, v % 6 + 1)))
    return Step(replace(s, fix=None), action=Action.CORRECT, fix=(d, v))  # SCORE saves


def _history_press(s: Screens, c: Command, rounds: int) -> Step:
    """The history view: PREV/NEXT step through the rounds; MENU, ROLL or UNDO close it."""
    assert s.history is not None
    if c in (Command.PREV, Command.NEXT):
        if rounds < 1:
            return Step(s, "No round has been played yet.")
        now = s.history or rounds
        now = min(max(now + (1 if c is Command.NEXT else -1), 1), rounds)
        return Step(replace(s, history=now))
    if c in (Command.MENU, Command.ROLL, Command.UNDO, Command.SCORE):
        return Step(replace(s, history=None))
    return Step(s)


def _answer_end(s: Screens, yes: bool, mono: float) -> Step:
    """The answer to "End this game?": yes (ROLL/CONFIRM, after the pause) ends it; no keeps it."""
    if yes and mono - s.confirm_asked_at < CONFIRM_PAUSE_S:  # a double press or a burst: still asking;
        return Step(replace(s, confirm_asked_at=mono), CONFIRM_TOO_SOON)  # the pause counts from the last press
    s = replace(s, menu_confirm=False)
    if yes:
        return Step(replace(s, menu_open=False), action=Action.END_GAME)
    return Step(s, "The game goes on: it was not ended.")


def _menu(s: Screens, c: Command, mono: float, game_running: bool, dice: tuple[int, ...] = ()) -> Step:
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
    if item == "history":
        return Step(replace(s, history=0, fix=None, cards=False))
    if item == "fix":
        return open_fix(replace(s, cards=False), dice)
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
        if name == "ruleset" and setup.mode == "scorecard" and setup.ruleset != RULESET_IDS[-1]:
            setup = replace(setup, ruleset=RULESET_IDS[(RULESET_IDS.index(setup.ruleset) + 1) % len(RULESET_IDS)])
        elif name == "joker":
            setup = replace(setup, joker=JOKER_VARIANTS[(JOKER_VARIANTS.index(setup.joker) + 1) % len(JOKER_VARIANTS)])
        elif name == "ruleset" and setup.mode != "scorecard":
            setup = replace(setup, mode="scorecard", ruleset=RULESET_IDS[0])
        elif name == "ruleset" and setup.ruleset == RULESET_IDS[-1]:
            setup = replace(setup, mode="free_roll")  # after the last ruleset: free roll, then round again
        elif name == "timer":
            steps = (None, *TIMER_CHOICES)
            now = steps.index(setup.timer_s) if setup.timer_s in steps else 0
            setup = replace(setup, timer_s=steps[(now + 1) % len(steps)])
        elif name == "rolloff":
            return Step(s, action=Action.ROLLOFF)
        elif name == "players":
            n = len(setup.names) % 8 + 1
            names = (list(setup.names) + [f"Player {k + 1}" for k in range(len(setup.names), n)])[:n]
            setup = replace(setup, names=unique_names(names))
        else:
            return Step(s, action=Action.START_GAME)
    return Step(replace(s, setup=setup))
