"""Errors raised by :mod:`table.game`.

Every error derives from :class:`table.errors.DicetableError` and from
:class:`ValueError`, so callers may catch either.  "Cannot read it"
(:class:`InvalidCommandError`) is kept apart from "not allowed now"
(:class:`IllegalCommandError`); :class:`EventError` means a stored event
cannot be decoded or does not fit the game it is applied to.
"""

from __future__ import annotations

from table.errors import DicetableError


class GameError(DicetableError, ValueError):
    """Root of every error raised by :mod:`table.game`."""


class InvalidCommandError(GameError):
    """Raised when a command's values cannot be used (bad dice, unknown box, bad timer)."""


class IllegalCommandError(GameError):
    """Raised when the rules or the game's phase forbid a command now."""


class EventError(GameError):
    """Raised when an event cannot be decoded, or does not fit the state it is applied to."""
