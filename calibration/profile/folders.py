"""Where profiles live: the user's profiles folder, the shipped one, and profile names.

``dicetable calibrate`` saves profiles in the user's profiles folder,
``$XDG_DATA_HOME/dicetable/profiles/<name>.toml`` (default
``~/.local/share/dicetable/profiles``, beside the game store), so that
reinstalling or upgrading dicetable keeps them.  A name is looked up there
first, then among the profiles shipped in ``calibration/profiles/``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from calibration.errors import ProfileError

#: Folder of the profiles shipped with dicetable; an upgrade replaces it, so nothing is saved here.
PACKAGED_PROFILES_DIR = Path(__file__).resolve().parents[1] / "profiles"

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


def user_profiles_dir() -> Path:
    """Where profiles are saved: ``$XDG_DATA_HOME/dicetable/profiles``.

    The default is ``~/.local/share/dicetable/profiles``, beside the game store
    (:func:`table.store.default_db_path`): outside the installed package, so
    ``pip install --upgrade`` keeps the user's calibration, and writable by the
    user who runs the table.  The folder is made when a profile is saved.
    """
    base = os.environ.get("XDG_DATA_HOME", "")  # a relative one is ignored (XDG Base Directory Specification)
    return (Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share") / "dicetable" / "profiles"


def profile_folders() -> tuple[Path, ...]:
    """The folders a profile name is looked up in, in order: the user's, then the shipped one."""
    return (user_profiles_dir(), PACKAGED_PROFILES_DIR)


def check_profile_name(name: str) -> str:
    """Return `name` if it is a plain profile name; raise :class:`ProfileError` otherwise.

    A plain name is 1-64 letters, digits, ``_`` or ``-``, starting with a letter
    or digit: never empty, never a path (``../x``), so a profile is always
    saved as ``<folder>/<name>.toml``.
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ProfileError(
            f"profile name {name!r} is not allowed: use 1-64 letters, digits, '_' or '-', starting with a "
            "letter or digit (e.g. 'kitchen-table'); a name is not a path or a file name"
        )
    return name


def profile_path(name_or_path: str | os.PathLike[str], folder: Path | None = None) -> Path:
    """The TOML file of a profile name, or a path given as is.

    A name is looked up in `folder` when given; else in the user's profiles
    folder, then the shipped one (:func:`profile_folders`); when neither holds
    it, the path is the one it would be saved at in the user's folder.

    Raises
    ------
    ProfileError
        If a name has characters other than letters, digits, ``_`` and ``-``, or a path is a folder.
    """
    text = os.fspath(name_or_path)
    if text.endswith(".toml") or os.sep in text or "/" in text:
        if Path(text).is_dir():
            raise ProfileError(f"profile {text!r} is a folder; give its .toml file or a profile name")
        return Path(text)
    check_profile_name(text)
    if folder is not None:
        return Path(folder) / f"{text}.toml"
    candidates = [d / f"{text}.toml" for d in profile_folders()]
    return next((p for p in candidates if p.is_file()), candidates[0])


def list_profiles(folder: Path | None = None) -> list[str]:
    """Names of the profiles in `folder` (default: the user's and the shipped ones), sorted."""
    folders = (Path(folder),) if folder is not None else profile_folders()
    return sorted({p.stem for d in folders if d.is_dir() for p in d.glob("*.toml")})
