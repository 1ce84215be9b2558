"""Telling a damaged store from one that cannot be written now, and saying what to do about it.

SQLite raises both as :class:`sqlite3.OperationalError` or :class:`sqlite3.DatabaseError`; its
result code tells them apart (https://www.sqlite.org/rescode.html). Only ``SQLITE_CORRUPT`` and
``SQLITE_NOTADB`` (or a failed integrity check) mean the file is damaged. ``SQLITE_FULL``,
``SQLITE_IOERR`` (on a full disk the first one seen at open is ``SQLITE_IOERR_SHMSIZE``: the
32 KiB ``-shm`` file cannot grow), ``SQLITE_READONLY``, ``SQLITE_CANTOPEN``, ``SQLITE_PERM`` and
the rest mean the disk, the folder or the permissions are at fault: the file is fine, and setting
it aside would hide an unfinished game. The disk itself (``statvfs``, ``access``) then says which.
"""

from __future__ import annotations

import errno
import os
import shlex
import sqlite3
from pathlib import Path

from table.store.errors import StoreCorruptError, StoreError, StoreWriteError

#: Primary result codes that mean the file is damaged (or not a database at all).
CORRUPTION = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
#: Below this many bytes free the disk counts as full: a new ``-shm`` file needs 32 KiB, a WAL frame 4 KiB.
LOW_SPACE = 64 * 1024


def code_of(exc: BaseException) -> int | None:
    """The primary SQLite result code of `exc` (``SQLITE_FULL`` = 13, ...), or None if SQLite gave none."""
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else int(code) & 0xFF


def is_corruption(exc: BaseException) -> bool:
    """Whether `exc` says the file is damaged or not a database (``SQLITE_CORRUPT``, ``SQLITE_NOTADB``)."""
    return code_of(exc) in CORRUPTION


def _free_bytes(st: os.statvfs_result) -> int:
    """Bytes this process may still write: root also gets the blocks reserved for it."""
    root = getattr(os, "geteuid", lambda: -1)() == 0
    return (st.f_bfree if root else st.f_bavail) * st.f_frsize


def diagnose(path: Path, exc: BaseException | None = None) -> tuple[str, str]:
    """Why the store at `path` cannot be opened or written, and what to do: ``(why, todo)``.

    `exc` is the SQLite or OS error seen (its code or errno is used when the disk says nothing).
    """
    folder = path.parent if str(path.parent) else Path(".")
    code = code_of(exc) if exc is not None else None
    err = getattr(exc, "errno", None) if isinstance(exc, OSError) else None
    try:
        st: os.statvfs_result | None = os.statvfs(folder)
    except (OSError, AttributeError):
        st = None
    elsewhere = "or give another --db path"
    if (st is not None and st.f_flag & getattr(os, "ST_RDONLY", 1)) or err == errno.EROFS:
        return (
            f"the disk holding {str(folder)!r} is mounted read-only",
            f"remount it read-write (Linux makes a failing SD card read-only: check it) {elsewhere}",
        )
    sides = [Path(f"{path}{side}") for side in ("-wal", "-shm")]  # an -shm made by another user stops writes too
    unwritable = [p for p in (folder, path, *sides) if p.exists() and not os.access(p, os.W_OK)]
    if unwritable:
        what = "the folder" if unwritable[0] == folder else "the file"
        return (
            f"{what} {str(unwritable[0])!r} is read-only for this user",
            f"fix its permissions (e.g. sudo chown -R $USER {shlex.quote(str(folder))}) {elsewhere}",
        )
    if err == errno.ENOENT:  # a folder that cannot be made, or one where no file can be (/proc)
        where = "takes no new files" if folder.is_dir() else "does not exist and cannot be made"
        return (
            f"its folder {str(folder)!r} {where}",
            "give a --db path in a folder you can write to",
        )
    # a pseudo file system (/proc, /sys) has no blocks at all: it is not full, it is no place for a store
    low = st is not None and st.f_blocks > 0 and _free_bytes(st) < LOW_SPACE
    if low or code == sqlite3.SQLITE_FULL or err == errno.ENOSPC:
        free = f" ({_free_bytes(st) // 1024} KiB free)" if low and st is not None else ""
        return f"the disk is full{free}", "free some space on it"
    if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM) or err in (errno.EACCES, errno.EPERM):
        return "it is read-only", f"make it writable {elsewhere}"
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return "another program holds it locked", "close that program"
    if code == sqlite3.SQLITE_CANTOPEN:
        return "it cannot be opened", f"check that its folder exists and can be written {elsewhere}"
    return (
        f"a disk error ({exc})" if exc is not None else "a disk error",
        "check the disk or SD card (it may be failing or full) and copy the store somewhere safe",
    )


def write_error(path: Path, exc: BaseException, doing: str, after: str = "") -> StoreWriteError:
    """The :class:`StoreWriteError` for `exc` seen while `doing` (``"could not store the new game in 'PATH'"``).

    Its message is ``"DOING: WHY; TODO"`` then `after`.
    """
    why, todo = diagnose(path, exc)
    out = StoreWriteError(f"{doing}: {why}; {todo}{after}")
    out.why, out.todo = why, todo
    return out


def open_error(path: Path, exc: sqlite3.Error, *, readonly: bool) -> StoreError:
    """What an SQLite error at open means: :class:`StoreCorruptError` only for a damaged file.

    A writer gets :class:`StoreWriteError` (the file is left as it is); a reader a
    :class:`StoreError` that says why the file could not be read.
    """
    where = f"game store {str(path)!r}"
    if is_corruption(exc):
        return StoreCorruptError(f"{where} is damaged or not a database ({exc})")
    if not readonly:
        return write_error(path, exc, f"cannot open the {where} for writing", "; the store was left as it is")
    why, todo = diagnose(path, exc)
    return StoreError(f"cannot read the {where}: {why}; {todo}")
