"""Errors raised by :mod:`table.strategy`.

Each derives from :class:`table.errors.DicetableError` and the builtin it most
resembles, so the command line reports it as one line with exit status 2.
"""

from table.errors import DicetableError


class StrategyError(DicetableError):
    """Root of the errors :mod:`table.strategy` raises on purpose."""


class UnknownVariantError(StrategyError, ValueError):
    """Raised when a solver variant (joker rule) is not one the ruleset has."""


class StaleTablesError(StrategyError, OSError):
    """Raised when a table file exists but was built for other rules or another version."""


class IllegalAdviceRequestError(StrategyError, ValueError):
    """Raised when advice is asked for an impossible position (full card, roll out of range)."""
