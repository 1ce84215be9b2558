"""Where the game store lives: the table's own file, ``$DICETABLE_DB``, and the lock file beside a store."""

from __future__ import annotations

import os
from pathlib import Path

#: Environment variable naming the store file.
DB_ENV = "DICETABLE_DB"


def own_db_path() -> Path:
    """The table's own store: ``$XDG_DATA_HOME/dicetable/games.sqlite3``.

    The default is ``~/.local/share/dicetable/games.sqlite3``; a relative
    ``$XDG_DATA_HOME`` is ignored, as the XDG Base Directory Specification
    says. This is where the table keeps its games when no path is named.
    """
    base = os.environ.get("XDG_DATA_HOME", "")
    return (Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share") / "dicetable" / "games.sqlite3"


def default_db_path() -> Path:
    """Where the store lives: ``$DICETABLE_DB``, else :func:`own_db_path`; the folder is made on open."""
    env = os.environ.get(DB_ENV)
    if env:
        return Path(env).expanduser()
    return own_db_path()


def lock_path(path: str | os.PathLike[str]) -> Path:
    """The lock file of the store at ``path``: ``NAME.lock`` beside it (see :mod:`table.store.lock`).

    Symbolic links are followed first, so that every path to one store shares one lock.
    """
    path = Path(path).resolve()
    return path.with_name(path.name + ".lock")
