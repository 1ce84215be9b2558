"""What training writes beside its results: cache files written atomically, the command line, source hashes."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

__all__ = ["recorded_command", "save_npz_atomically", "source_hash"]


def save_npz_atomically(path: Path, **arrays: np.ndarray) -> None:
    """Write a cache file so that no reader ever sees it half written.

    Two trainers started together (a held-out twin and the shipped model) build
    the same cache; the second used to load the first's file while it was
    still being written (``BadZipFile``). The arrays go to a temporary file in
    the same folder, renamed over `path` when complete (``os.replace`` is
    atomic on one file system).

    Parameters
    ----------
    path : Path
        The ``.npz`` file to write; its folder must exist.
    **arrays : ndarray
        Named arrays, as for :func:`numpy.savez`.
    """
    path = Path(path)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def recorded_command(module: str, argv: list[str] | None) -> str:
    """The command line that ran a trainer, for its model's JSON (key ``command``).

    Parameters
    ----------
    module : str
        The trainer's module, e.g. ``"vision.lab.training.train_face"``.
    argv : list of str or None
        The arguments given to its ``main``; None means the process's own (``sys.argv[1:]``).

    Returns
    -------
    str
        ``python -m MODULE ARGS``.
    """
    import sys

    return f"python -m {module} " + " ".join(sys.argv[1:] if argv is None else argv)


def source_hash(*paths: str | Path) -> str:
    """Short hash of source files, so that caches of drawn or rendered crops follow code changes.

    Parameters
    ----------
    *paths : str or Path
        The files, hashed in the order given.

    Returns
    -------
    str
        The first 8 hex digits of their SHA-1.
    """
    h = hashlib.sha1()
    for path in paths:
        h.update(Path(path).read_bytes())
    return h.hexdigest()[:8]
