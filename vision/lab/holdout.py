"""The oblique evaluation slice of the TRAIN set (issue 37, item 2): photos no trainer may read.

``../shared/dice-images/train`` holds the only oblique real photos the project
has: the matteop65 webcam photos (``matteo_``, strongly oblique, ivory dice)
and two kinds of Rune55 phone photos. A fixed slice of each of these kinds is
held out from training and read by ``benchmarks/oblique.py`` instead:

- a photo is in the slice when its ``notes`` in ``labels.json`` begin with one
  of :data:`HOLDOUT_KINDS`'s texts and the first 8 hex digits of the SHA-1 of
  its file name, mod 100, are under :data:`HOLDOUT_PERCENT` (stable, and blind
  to what the photo shows);
- the slice is committed as names only in ``benchmarks/oblique_holdout.txt``
  (:data:`HOLDOUT_FILE`); every reader of TRAIN photos for training
  (:func:`vision.lab.training.data.build_samples`,
  :func:`vision.lab.training.detect_data.build_cache` and its ``load_cache``)
  drops them with :func:`without_held_out`.

The packaged networks were trained before this slice existed, so they have
seen these photos: their numbers on it are optimistic (``docs/oblique.md``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

__all__ = [
    "HOLDOUT_KINDS",
    "HOLDOUT_PERCENT",
    "HOLDOUT_FILE",
    "holdout_kind",
    "select_holdout",
    "held_out_names",
    "is_held_out",
    "without_held_out",
]

#: Set name -> the text that a TRAIN photo's ``notes`` begin with (dice-images README, "Sources (train)").
HOLDOUT_KINDS: dict[str, str] = {
    "matteo": "Oblique webcam photo",  # box_kind "pips": the upper face's pip pattern only
    "rune_phone": "Rune55 colour phone photo of dice trays",  # box_kind "die"
    "rune_white": "Rune55 phone photo on a white surface",  # box_kind "face": the face most turned to the camera
}

#: Share of each kind held out, percent (12 %: 41 matteo, 9 tray and 20 white-paper photos of 389, 92, 177).
HOLDOUT_PERCENT: int = 12

#: The committed list: one file name per line, ``#`` comment lines name the set.
HOLDOUT_FILE: Path = Path(__file__).resolve().parents[2] / "benchmarks" / "oblique_holdout.txt"


def holdout_kind(entry: dict) -> str | None:
    """The set of :data:`HOLDOUT_KINDS` a ``labels.json`` entry's notes name, or None."""
    notes = str(entry.get("notes", ""))
    return next((k for k, text in HOLDOUT_KINDS.items() if notes.startswith(text)), None)


def _bucket(name: str) -> int:
    return int(hashlib.sha1(name.encode("utf-8")).hexdigest()[:8], 16) % 100


def select_holdout(entries: Iterable[dict]) -> dict[str, list[str]]:
    """Apply the rule above to ``labels.json`` entries: set name -> held-out file names, in file order."""
    out: dict[str, list[str]] = {k: [] for k in HOLDOUT_KINDS}
    for entry in entries:
        kind = holdout_kind(entry)
        if kind is not None and _bucket(entry["file"]) < HOLDOUT_PERCENT:
            out[kind].append(entry["file"])
    return out


@lru_cache(maxsize=4)
def held_out_names(path: Path = HOLDOUT_FILE) -> frozenset[str]:
    """File names in the committed hold-out list.

    Raises
    ------
    FileNotFoundError
        If the list is missing (training must not run without it).
    """
    if not Path(path).is_file():
        raise FileNotFoundError(f"the oblique hold-out list {str(path)!r} is missing: restore it with git checkout")
    lines = (line.strip() for line in Path(path).read_text(encoding="utf-8").splitlines())
    return frozenset(line for line in lines if line and not line.startswith("#"))


def is_held_out(name: str) -> bool:
    """Whether photo `name` (a file name, no folder) is in the hold-out list."""
    return Path(name).name in held_out_names()


def without_held_out(entries: Iterable[dict]) -> list[dict]:
    """``labels.json`` entries less the held-out photos (the filter every trainer applies)."""
    return [e for e in entries if not is_held_out(e["file"])]
