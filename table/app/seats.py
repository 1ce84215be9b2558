"""The setup's seats: names and bot levels, checked before a game starts (no state of their own)."""

from __future__ import annotations

from collections.abc import Sequence

from table.errors import UsageError
from table.rules import JOKER_VARIANTS, RULESET_IDS


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
        of 1-40 characters.
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
        if not n or n != n.strip() or len(n) > 40:
            raise UsageError(f"player name {n!r} cannot be used; give 1-40 characters")
        if n.casefold() in seen:
            raise UsageError(f"two players are called {n!r}; give each player a different name")
        seen.add(n.casefold())
