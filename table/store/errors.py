"""Errors raised by the game store (:mod:`table.store`).

Every one is a :class:`~table.errors.DicetableError` and an :class:`OSError`, so
callers may catch either.
"""

from __future__ import annotations

from table.errors import DicetableError


class StoreError(DicetableError, OSError):
    """Raised when the store cannot be opened, read or written."""


class StoreCorruptError(StoreError):
    """Raised when the store file (or a stored event) is not readable as a dicetable store."""


class NotAStoreError(StoreError):
    """Raised when the file is not an SQLite database at all; it is left as it is."""


class UnknownGameError(StoreError, LookupError):
    """Raised when no game has the given id."""


class StoreLockedError(StoreError):
    """Raised when another running dicetable has the store open for writing (its lock is held)."""


class StoreWriteError(StoreError):
    """Raised when the store cannot be written now: no space, a read-only disk or folder, no permission, an I/O error.

    The file itself is fine and is left as it is (never set aside). ``why`` says what is
    wrong (``"the disk is full (12 KiB free)"``) and ``todo`` what to do (``"free some space on it"``);
    see :func:`table.store.faults.write_error`.
    """

    why = ""
    todo = ""


class StoreConflictError(StoreError):
    """Raised when an append does not follow the game's last stored event (two writers)."""
