"""The writer's lock of a store: one process at a time writes it.

A writable store holds an exclusive advisory lock (``fcntl.flock``) on
``NAME.lock`` beside it (:func:`~table.store.paths.lock_path`) for as long as it
is open, with the writer's pid in the file for the message a second writer gets
(:class:`~table.store.errors.StoreLockedError`). The operating system drops the
lock when the process ends, however it ends: a crash or a pulled plug never
leaves the store locked. Readers take no lock.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import BinaryIO

from table.store.errors import StoreLockedError
from table.store.faults import write_error
from table.store.paths import lock_path


def store_holder(path: str | os.PathLike[str]) -> str | None:
    """Who holds the writer's lock of the store at `path` (``"another dicetable (pid N)"``), or None.

    None also where there is no lock file yet or no ``flock``. Takes no lock that
    outlives the call; :class:`~table.store.Store` still raises :class:`StoreLockedError`
    if a writer takes the lock between this look and its own open.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return None
    try:
        fd = os.open(lock_path(path), os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return None
    except BlockingIOError:
        return holder_text(fd)
    except OSError:
        return None
    finally:
        os.close(fd)  # drops the lock if it was taken


def holder_text(fd: int) -> str:
    """The writer named by the pid in the lock file open as `fd`."""
    pid = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    return f"another dicetable (pid {pid})" if pid.isdigit() else "another dicetable"


class WriterLock:
    """The writer's lock of the store at `store_path`, held while `file` is open (see :func:`take_lock`).

    `made` says whether this lock made the lock file (then :meth:`release` may remove it).
    """

    def __init__(self, store_path: Path, file: BinaryIO, made: bool) -> None:
        self.store_path = store_path
        self.file = file  # closed (with its lock) by release() or, unreleased, by the GC
        self.made = made

    def release(self, *, remove: bool = False) -> None:
        """Release the lock (closing the file drops it); idempotent.

        With `remove`, a lock file this lock made is deleted first (a failed
        open leaves nothing beside a file that is not ours).
        """
        if self.file.closed:
            return
        if remove and self.made:
            try:
                lock_path(self.store_path).unlink(missing_ok=True)
            except OSError:  # a folder gone read-only: the lock file stays, unlocked (harmless)
                pass
        self.file.close()


def take_lock(store_path: Path) -> WriterLock | None:
    """Take the writer's lock of the store at `store_path` and write our pid in it.

    Returns None where the platform or file system has no ``flock`` (not POSIX,
    some network shares): the store is then used unlocked, as before the lock existed.

    Raises
    ------
    StoreLockedError
        When another writer holds the lock (after a moment's wait: see below).
    StoreWriteError
        When the lock file cannot be made (a folder that is not writable, a full disk).
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX; the table runs on Linux
        return None
    where = lock_path(store_path)
    made = not where.exists()
    try:
        fd = os.open(where, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:  # a read-only or full folder: the store beside it is left as it is
        raise write_error(
            store_path, exc, f"cannot make the lock file {str(where)!r} of the game store ({exc.strerror})"
        ) from None
    try:
        for wait_s in (0.02, 0.05, 0.1, None):  # a moment's hold (store_holder looking) is not a writer
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if wait_s is None:
                    raise
                time.sleep(wait_s)
        if os.fstat(fd).st_ino != os.stat(where).st_ino:  # removed by a writer that failed to open
            os.close(fd)
            return take_lock(store_path)
    except BlockingIOError:
        who = holder_text(fd)
        os.close(fd)
        raise StoreLockedError(
            f"the game store {str(store_path)!r} is in use by {who}: stop it first "
            "('sudo systemctl stop dicetable', or Ctrl-C where it runs) or give another --db"
        ) from None
    except FileNotFoundError:  # removed by a writer that failed to open: take a new one
        os.close(fd)
        return take_lock(store_path)
    except OSError:  # no locks on this file system: go on unlocked
        os.close(fd)
        return None
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    except OSError:
        pass  # the pid is only for the message; the lock is what counts
    return WriterLock(store_path, os.fdopen(fd, "r+b", buffering=0), made)
