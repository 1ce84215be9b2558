"""The game store: it opens, passes SQLite's integrity check, is writable, and its disk has room.

The store is opened read-only (:func:`table.store.open_store` with ``readonly=True``): it takes no
lock, so the doctor runs beside a playing table, and a store that is not there is not made.
:func:`store_problem` is also the line ``dicetable play`` puts on the table's screen when it
cannot use the store.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from table.doctor.check import Check, first_line

#: Free space on the store's disk below which a warning is given, in MB (a game is ~100 kB; the
#: journal and the system's own logs need room too).
LOW_SPACE_MB = 200


def existing_folder(path: Path) -> Path:
    """The nearest folder above `path` that exists (where the store's folder would be made)."""
    folder = Path(path).absolute().parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def _free_mb(folder: Path) -> float:
    return shutil.disk_usage(folder).free / 1e6


def _space(mb: float) -> str:
    return f"{mb / 1000:.1f} GB free" if mb >= 1000 else f"{mb:.0f} MB free"


def _fix_owner(where: Path) -> str:
    return f"give the table's user the folder: 'sudo chown -R $USER: {where}' (or --db a path it may write)"


def check_store(db: str | Path, running: str | None = None) -> Check:
    """The store at `db` (see the module docstring); `running` names the dicetable holding it, if any."""
    from table.store import NotAStoreError, StoreCorruptError, StoreError, open_store

    db = Path(db)
    if not db.exists():
        folder = existing_folder(db)
        free = _free_mb(folder)
        if not os.access(folder, os.W_OK | os.X_OK):
            return Check(
                "store",
                "fail",
                f"no store yet at {db}, and it cannot be made there: {folder} is not writable",
                _fix_owner(folder),
            )
        return _with_space(
            Check("store", "ok", f"no store yet at {db}: ok (made at the first game; {_space(free)})"), free, folder
        )
    if db.is_file() and db.stat().st_size == 0:
        return _with_space(
            Check(
                "store",
                "ok",
                f"{db} is empty: ok (the store is made in it at the first game; {_space(_free_mb(db.parent))})",
            ),
            _free_mb(db.parent),
            db,
        )
    try:
        with open_store(db, readonly=True) as store:
            games = len(store.games())
            result = store.conn.execute("PRAGMA integrity_check").fetchall()
    except NotAStoreError as exc:
        return Check("store", "fail", first_line(exc), "give --db the table's store, or leave --db out")
    except StoreCorruptError as exc:
        return Check(
            "store",
            "fail",
            first_line(exc),
            "restart the table ('sudo systemctl restart dicetable'): "
            "it moves a damaged store aside and starts a new one",
        )
    except StoreError as exc:
        return store_problem(db, exc)
    if result != [("ok",)]:
        return Check(
            "store",
            "fail",
            f"{db} failed SQLite's integrity check: {result[0][0]}",
            "restart the table ('sudo systemctl restart dicetable'): it moves a damaged store aside "
            "and starts a new one",
        )
    unwritable = [p for p in (db, db.parent) if not os.access(p, os.W_OK)]
    if unwritable:
        return Check(
            "store",
            "fail",
            f"{db} ({games} games, integrity ok) is not writable: {', '.join(map(str, unwritable))}",
            _fix_owner(db.parent),
        )
    free = _free_mb(db.parent)
    held = f"; in use by the running table ({running})" if running else ""
    return _with_space(
        Check(
            "store",
            "ok",
            f"{db}: {games} game{'s' if games != 1 else ''}, integrity ok, writable, {_space(free)}{held}",
        ),
        free,
        db.parent,
    )


def _with_space(check: Check, free_mb: float, where: Path) -> Check:
    if free_mb >= LOW_SPACE_MB:
        return check
    return Check(
        check.name,
        "warning",
        f"{check.detail}; only {free_mb:.0f} MB free on its disk (under {LOW_SPACE_MB} MB)",
        f"free some space on the disk of {where} (old photos, 'sudo journalctl --vacuum-size=100M')",
    )


def store_problem(db: str | Path, exc: BaseException | str) -> Check:
    """The ``fail`` line for a store that cannot be opened or written (the error `exc` says why)."""
    text = first_line(exc)
    low = text.lower()
    if "in use by" in low:
        return Check(
            "store",
            "fail",
            text,
            "stop the other dicetable first ('sudo systemctl stop dicetable', "
            "or Ctrl-C where it runs), or give another --db",
        )
    if "mounted read-only" in low:  # the disk, not the owner: chown cannot help
        return Check(
            "store",
            "fail",
            f"cannot be written ({text})",
            "remount the disk read-write (Linux makes a failing SD card read-only: check it), or give another --db",
        )
    if "permission" in low or "read-only" in low or "readonly" in low or "not writable" in low:
        return Check(
            "store",
            "fail",
            f"cannot be written ({text})",
            _fix_owner(existing_folder(Path(db)) if not Path(db).exists() else Path(db).parent),
        )
    if "no space" in low or "disk is full" in low or "database or disk is full" in low:
        return Check(
            "store",
            "fail",
            f"its disk is full ({text})",
            "free some space ('sudo journalctl --vacuum-size=100M', old files), then restart the table",
        )
    return Check(
        "store", "fail", f"cannot be used ({text})", "run 'dicetable doctor'; give --db another path to play meanwhile"
    )
