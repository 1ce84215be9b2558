"""Errors raised by :mod:`table.rules`.

Each error derives from :class:`table.errors.DicetableError` and from
:class:`ValueError`, so callers may catch either.  "Cannot read it"
(:class:`InvalidDiceError`, :class:`UnknownBoxError`, ...) is kept apart from
"not allowed now" (:class:`IllegalScoreError`).
"""

from __future__ import annotations

from table.errors import DicetableError


class RulesError(DicetableError, ValueError):
    """Root of every error raised by :mod:`table.rules`."""


class UnknownRulesetError(RulesError):
    """Raised when a ruleset id is not one of :data:`table.rules.RULESET_IDS`."""


class UnknownJokerError(RulesError):
    """Raised when a joker variant is not one of :data:`table.rules.JOKER_VARIANTS`."""


class InvalidDiceError(RulesError):
    """Raised when dice are not exactly five faces from 1 to 6."""


class InvalidRollError(RulesError):
    """Raised when a roll (throw) number is not 1, 2 or 3."""


class UnknownBoxError(RulesError):
    """Raised when a box id is not on the ruleset's scorecard."""


class InvalidCardError(RulesError):
    """Raised when a scorecard holds impossible points or bonuses."""


class IllegalScoreError(RulesError):
    """Raised when the rules forbid scoring this box now (filled, or joker rules)."""
