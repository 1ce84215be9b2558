"""The setup's seats: names and bot levels, checked before a game starts (no state of their own)."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from table.errors import UsageError
from table.rules import JOKER_VARIANTS, RULESET_IDS

#: Longest player name, characters (the scorecard's column).
MAX_NAME_CHARS = 40

#: Characters that reorder the text around them (Unicode's bidirectional embeddings, overrides and
#: isolates, and the marks): in a name they would turn the scorecard's other text round.
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a player's name, or None if it can.

    Refused: an empty name, spaces around it, more than :data:`MAX_NAME_CHARS` characters, control
    characters (NUL, tab, newline... Unicode category Cc), line and paragraph separators, lone
    surrogates (no UTF-8 text holds one: the page's state could not be sent), unassigned and
    private-use code points, and :data:`BIDI_CONTROLS`. Joiners (emoji sequences) are kept.
    """
    if not name or name != name.strip() or len(name) > MAX_NAME_CHARS:
        return f"give 1-{MAX_NAME_CHARS} characters, without spaces around them"
    for ch in name:
        kind = unicodedata.category(ch)
        what = (
            "a control character"
            if kind == "Cc"
            else "half of a character (a lone surrogate)"
            if kind == "Cs"
            else "a character that reverses the text around it"
            if ch in BIDI_CONTROLS
            else "a line break"
            if kind in ("Zl", "Zp")
            else "an unassigned character"
            if kind in ("Cn", "Co")
            else None
        )
        if what:
            return f"it holds {what}, U+{ord(ch):04X}; type the name with letters, digits, spaces and punctuation"
    return None


def unique_names(names: Sequence[str]) -> list[str]:
    """`names` with a repeated name (any case) numbered: ``["Ann", "ann"]`` -> ``["Ann", "ann 2"]``."""
    out: list[str] = []
    for n in names:
        base, k = n, 2
        while n.casefold() in (o.casefold() for o in out):
            n, k = f"{base} {k}", k + 1
        out.append(n)
    return out


def split_seats(entries: Sequence[str]) -> tuple[list[str], list[str]]:
    """Names and bot levels of the setup's seats: ``["Ann", "HAL:optimal"]`` -> ``(["Ann", "HAL"], ["", "optimal"])``.

    Raises
    ------
    UsageError
        If an entry names an unknown bot level.
    """
    from table.app.bots import split_seat

    names, bots = [], []
    for entry in entries:
        try:
            name, level = split_seat(entry)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        names.append(name)
        bots.append(level)
    return names, bots


def check_setup(ruleset: str, joker: str, names: Sequence[str], *, names_example: str = "") -> None:
    """Check the rules and player names of a new game (``NAME:LEVEL`` seats a bot).

    `names_example` ends the message for a wrong number of names (the command line gives
    ``'e.g. --players "Ann,Bo"'``; the page, which has its own buttons, gives none).

    Raises
    ------
    UsageError
        If the ruleset, joker or a bot level is unknown, or the names are not 1-8 different names
        of 1-40 characters each without control or bidirectional characters (:func:`name_problem`).
    """
    names, _ = split_seats(names)
    if ruleset not in RULESET_IDS:
        raise UsageError(f"unknown ruleset {ruleset!r}; choose one of: {', '.join(RULESET_IDS)}")
    if joker not in JOKER_VARIANTS:
        raise UsageError(f"unknown joker variant {joker!r}; choose one of: {', '.join(JOKER_VARIANTS)}")
    if not 1 <= len(names) <= 8:
        example = f", {names_example}" if names_example else ""
        raise UsageError(f"{len(names)} players given; give 1 to 8 names{example}")
    seen: set[str] = set()
    for n in names:
        problem = name_problem(n)
        if problem:
            shown = repr(n) if len(n) <= 60 else repr(n[:60]) + "..."  # repr escapes what cannot be shown
            raise UsageError(f"player name {shown} cannot be used: {problem}")
        if n.casefold() in seen:
            raise UsageError(f"two players are called {n!r}; give each player a different name")
        seen.add(n.casefold())
