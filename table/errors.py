"""Errors raised by the ``table`` package.

Every error derives from :class:`DicetableError` and from the builtin it most
resembles, so callers may catch either.  Messages say what was given, what is
allowed and what to do.
"""


class DicetableError(Exception):
    """Root of every error the dicetable ``table`` package raises on purpose."""


class UsageError(DicetableError, ValueError):
    """Raised when a command-line argument or input file cannot be used."""
