"""Game events: everything that happens at the table, as small JSON-able values.

The state of a game is the fold of its events (:func:`table.game.apply.fold`).
Events are produced by :func:`table.game.commands.decide` from validated
commands, stored one row each by :mod:`table.store`, and never change.  Each
event carries the time ``at`` (seconds since the Unix epoch, UTC) given by the
caller: the engine reads no clock.

Every event has one JSON text form that round-trips::

    >>> e = HoldsChanged(at=1.5, holds=(True, False, False, True, False))
    >>> event_from_json(event_to_json(e)) == e
    True
"""

from __future__ import annotations

import json
import math
from dataclasses import MISSING, dataclass, fields
from enum import StrEnum
from typing import Any, ClassVar

from table.game.errors import EventError


class GameMode(StrEnum):
    """What kind of game is kept."""

    SCORECARD = "scorecard"
    """A scoresheet game of one ruleset (five dice, scorecards, turns)."""
    FREE_ROLL = "free_roll"
    """Free rolling for other board games: any number of dice, no scorecard."""


class DiceSource(StrEnum):
    """Where a roll's values came from."""

    CAMERA = "camera"
    """Read by the camera (vision)."""
    TYPED = "typed"
    """Typed in by hand (keyboard, touch screen, command line)."""
    VIRTUAL = "virtual"
    """Rolled on screen by the app (a random source) for a bot's turn; never camera-read."""


class EndReason(StrEnum):
    """Why a game ended."""

    FINISHED = "finished"
    """Every card is full (or a free-roll session was closed)."""
    ABANDONED = "abandoned"
    """A scorecard game was stopped before every card was full."""


class ScoreCause(StrEnum):
    """Who chose the box of a :class:`BoxScored`."""

    PLAYER = "player"
    """The player chose it."""
    TIMER = "timer"
    """The turn timer ran out; the engine chose the open box worth the most."""


@dataclass(frozen=True, slots=True)
class GameStarted:
    """A game began.

    Parameters
    ----------
    at : float
        Time, in seconds since the Unix epoch.
    ruleset : str
        Ruleset id (``yahtzee``, ``yacht``, ``chaser``, ``yatzy``, ``generala``);
        empty for a free-roll game.
    joker : str
        Yahtzee joker variant (``forced``, ``free``, ``free_choice``); only
        Yahtzee uses it.
    players : tuple of str
        Player names in seating order (1 to 8; 0 to 8 in free-roll mode).
    first_player : int
        Index into ``players`` of who plays first.
    timer_s : int or None
        Turn timer in seconds (30, 45, 60, 90 or 600), or None for no timer.
    mode : GameMode
        Scorecard game or free rolling.
    bots : tuple of str
        Computer players: one entry per seat, ``""`` for a person or the bot's
        level (``easy``, ``medium``, ``optimal``); empty when every seat is a person.
    """

    kind: ClassVar[str] = "game_started"
    at: float
    ruleset: str
    joker: str
    players: tuple[str, ...]
    first_player: int = 0
    timer_s: int | None = None
    mode: GameMode = GameMode.SCORECARD
    bots: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DiceRead:
    """A roll was read: the values of all the dice in the tray, in die order.

    Parameters
    ----------
    at : float
        Time, in seconds since the Unix epoch.
    values : tuple of int
        Face values 1..6, one per die (five in a scorecard game; dice
        positions are stable, so index ``i`` is the same die on every read).
    roll : int
        Roll number in the turn, 1..3 (always 1 in free-roll mode).
    source : DiceSource
        Camera, typed, or virtual (rolled on screen; only for a bot's turn).
    """

    kind: ClassVar[str] = "dice_read"
    at: float
    values: tuple[int, ...]
    roll: int
    source: DiceSource = DiceSource.TYPED


@dataclass(frozen=True, slots=True)
class HoldsChanged:
    """The player changed which dice are held (not binding) before a re-roll.

    ``holds`` has one bool per die: True means held (kept out of the re-roll).
    """

    kind: ClassVar[str] = "holds_changed"
    at: float
    holds: tuple[bool, ...]


@dataclass(frozen=True, slots=True)
class DieCorrected:
    """A misread die was corrected by hand.

    Parameters
    ----------
    at : float
        Time, in seconds since the Unix epoch.
    die : int
        Index of the die in the last read (0-based).
    was : int
        The value that had been read.
    value : int
        The corrected value, 1..6.
    by : str
        Who made the correction (a player name, "referee", ...).
    """

    kind: ClassVar[str] = "die_corrected"
    at: float
    die: int
    was: int
    value: int
    by: str


@dataclass(frozen=True, slots=True)
class BoxScored:
    """A box was written on the current player's card (0 points is a scratch).

    ``points`` and ``yahtzee_bonus`` are what the rules gave when the event
    was decided; they are kept for reading the log, and :func:`apply`
    checks them against the rules.
    """

    kind: ClassVar[str] = "box_scored"
    at: float
    player: int
    box: str
    dice: tuple[int, ...]
    roll: int
    points: int
    yahtzee_bonus: int = 0
    cause: ScoreCause = ScoreCause.PLAYER


@dataclass(frozen=True, slots=True)
class Undone:
    """The last action was taken back (a read, a hold change, a correction or the last scored box)."""

    kind: ClassVar[str] = "undone"
    at: float
    by: str = ""


@dataclass(frozen=True, slots=True)
class TimerExpired:
    """The turn timer ran out for ``player``.

    When ``rolled`` is False only a warning was given (no roll yet); when True
    a :class:`BoxScored` with ``cause="timer"`` follows in the same commit.
    """

    kind: ClassVar[str] = "timer_expired"
    at: float
    player: int
    rolled: bool


@dataclass(frozen=True, slots=True)
class GameEnded:
    """A game was closed by hand (a free-roll session, or a game abandoned)."""

    kind: ClassVar[str] = "game_ended"
    at: float
    reason: EndReason
    by: str = ""


Event = GameStarted | DiceRead | HoldsChanged | DieCorrected | BoxScored | Undone | TimerExpired | GameEnded

#: Event classes by their ``kind`` (the ``"type"`` of the JSON form).
EVENT_TYPES: dict[str, type] = {
    cls.kind: cls
    for cls in (GameStarted, DiceRead, HoldsChanged, DieCorrected, BoxScored, Undone, TimerExpired, GameEnded)
}


def _bad(kind: str, name: str, value: object, want: str) -> EventError:
    return EventError(f"event {kind!r}: field {name!r} must be {want}, got {value!r}")


def _int(kind: str, name: str, v: object) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise _bad(kind, name, v, "a whole number")
    return v


def _float(kind: str, name: str, v: object) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise _bad(kind, name, v, "a finite number of seconds")
    return float(v)


def _str(kind: str, name: str, v: object) -> str:
    if not isinstance(v, str):
        raise _bad(kind, name, v, "text")
    return v


def _bool(kind: str, name: str, v: object) -> bool:
    if not isinstance(v, bool):
        raise _bad(kind, name, v, "true or false")
    return v


def _tuple(conv: Any) -> Any:
    def convert(kind: str, name: str, v: object) -> tuple[Any, ...]:
        if not isinstance(v, (list, tuple)):
            raise _bad(kind, name, v, "a list")
        return tuple(conv(kind, name, item) for item in v)

    return convert


def _optional(conv: Any) -> Any:
    def convert(kind: str, name: str, v: object) -> Any:
        return None if v is None else conv(kind, name, v)

    return convert


def _enum(enum: type[StrEnum]) -> Any:
    def convert(kind: str, name: str, v: object) -> Any:
        if isinstance(v, str):  # a JSON value of another kind is never a member
            try:
                return enum(v)
            except ValueError:
                pass
        raise _bad(kind, name, v, "one of " + ", ".join(repr(m.value) for m in enum))

    return convert


#: Decoders by annotation text (annotations are strings under PEP 563).
_CONVERTERS: dict[str, Any] = {
    "float": _float,
    "int": _int,
    "str": _str,
    "bool": _bool,
    "int | None": _optional(_int),
    "tuple[int, ...]": _tuple(_int),
    "tuple[bool, ...]": _tuple(_bool),
    "tuple[str, ...]": _tuple(_str),
    "GameMode": _enum(GameMode),
    "DiceSource": _enum(DiceSource),
    "EndReason": _enum(EndReason),
    "ScoreCause": _enum(ScoreCause),
}


def event_to_dict(event: Event) -> dict[str, Any]:
    """Return the JSON-able dict of ``event``: ``{"type": kind, field: value, ...}``."""
    out: dict[str, Any] = {"type": event.kind}
    for f in fields(event):
        value = getattr(event, f.name)
        if f.name == "bots" and not value:
            continue  # games without bots keep the text form they always had
        out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


def event_from_dict(data: object) -> Event:
    """Rebuild an event from :func:`event_to_dict`'s form.

    Raises
    ------
    EventError
        If the type is unknown, a field is missing or extra, or has the wrong type.
    """
    if not isinstance(data, dict):
        raise EventError(f"an event must be a JSON object, got {data!r}")
    kind = data.get("type")
    cls = EVENT_TYPES.get(kind)  # type: ignore[arg-type]
    if cls is None:
        raise EventError(f"unknown event type {kind!r}; known types: {', '.join(sorted(EVENT_TYPES))}")
    known = {f.name: f for f in fields(cls)}
    extra = set(data) - set(known) - {"type"}
    if extra:
        raise EventError(f"event {kind!r} has unknown fields {sorted(extra)}")
    kwargs: dict[str, Any] = {}
    for name, f in known.items():
        if name not in data:
            if f.default is MISSING and f.default_factory is MISSING:
                raise EventError(f"event {kind!r} lacks field {name!r}")
            continue
        kwargs[name] = _CONVERTERS[str(f.type)](kind, name, data[name])
    return cls(**kwargs)  # type: ignore[no-any-return]


def event_to_json(event: Event) -> str:
    """Return the compact JSON text of ``event`` (keys sorted; round-trips)."""
    return json.dumps(event_to_dict(event), separators=(",", ":"), sort_keys=True, allow_nan=False)


def event_from_json(text: str | bytes) -> Event:
    """Parse the JSON text made by :func:`event_to_json`.

    Raises
    ------
    EventError
        If the text is not JSON or not a valid event.
    """
    try:
        data = json.loads(text)
    except (ValueError, TypeError) as exc:
        raise EventError(f"stored event is not valid JSON ({exc}): {text[:80]!r}") from None
    return event_from_dict(data)
