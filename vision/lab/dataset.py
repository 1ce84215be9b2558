"""Labelled photo sets: ``labels.json`` read and checked into :class:`LabelledImage` items.

A dataset is a folder with ``labels.json`` in the format of
``../shared/dice-images`` (``{"images": [{"file", "dice": [{"value", "box"}]}]}``,
boxes ``(x, y, w, h)`` in image pixels; an entry may give the photo's
``width`` and ``height``). :func:`load_dataset` refuses a malformed file with
a :class:`vision.errors.DatasetError` that names the entry and says what to fix.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path, PurePath

import numpy as np

from vision.errors import DatasetError

__all__ = ["LabelledDie", "LabelledImage", "load_dataset", "check_boxes_in_photo", "DEFAULT_DEV_DIR"]

#: The DEV set (``../shared/dice-images/dev`` beside a source checkout): the
#: labelled photos the reader is tuned and the networks trained on.
DEFAULT_DEV_DIR: Path = Path(__file__).resolve().parents[2] / ".." / "shared" / "dice-images" / "dev"


@dataclass(frozen=True, slots=True)
class LabelledDie:
    """One labelled die: face value 1-6 and ``(x, y, w, h)`` box in image pixels."""

    value: int
    box: tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class LabelledImage:
    """One labelled photo: its path and its dice.

    ``size`` is the ``(width, height)`` in pixels that labels.json gives for
    it (None when it gives none); ``entry`` its index in the ``images`` list
    of labels.json (None when it did not come from one).
    """

    path: Path
    dice: tuple[LabelledDie, ...]
    size: tuple[int, int] | None = None
    entry: int | None = None

    @property
    def source(self) -> str:
        """The file-name prefix before the first ``_`` (the photo's source)."""
        name = self.path.name
        return name.split("_", 1)[0] if "_" in name else "(none)"


def load_dataset(folder: str | Path) -> list[LabelledImage]:
    """Read ``labels.json`` of a dataset folder.

    Parameters
    ----------
    folder : str or Path
        Folder holding ``labels.json`` and the photos it names.

    Returns
    -------
    list of LabelledImage
        In the order of ``labels.json``.

    Raises
    ------
    DatasetError
        If the folder or ``labels.json`` is missing, is not valid JSON (or is
        nested too deeply to parse), or lists no images; or an entry lacks ``file``, names a photo outside the
        folder, one that is not there or one named before, lacks a ``dice``
        list, gives ``width``/``height`` that are not whole numbers, or has a
        die without a value 1-6 (a whole number: not ``true``, ``"5"`` or
        ``5.0``) and a box of 4 numbers with width and height above 0.
    """
    root = Path(folder)
    if not root.is_dir():
        raise DatasetError(f"dataset {str(folder)!r} is not a folder; give a folder holding labels.json and its photos")
    labels_path = root / "labels.json"
    if not labels_path.is_file():
        raise DatasetError(
            f"no labels.json in {str(folder)!r}; a dataset folder needs labels.json "
            '({"images": [{"file": ..., "dice": [{"value": 1-6, "box": [x, y, w, h]}]}]})'
        )
    try:
        data = json.loads(labels_path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{str(labels_path)!r} is not valid JSON: {exc}") from exc
    except RecursionError:  # lists or objects nested deeper than Python's recursion limit (about 1,000)
        raise DatasetError(
            f"{str(labels_path)!r} is nested too deeply to be labels; give "
            '{"images": [{"file": ..., "dice": [{"value": 1-6, "box": [x, y, w, h]}]}]}'
        ) from None
    if isinstance(data, dict) and isinstance(data.get("crops"), list) and "images" not in data:
        raise DatasetError(  # DEV's single/: one die a crop, each in a folder named by its value
            f"{str(labels_path)!r} lists single-die crops, not labelled photos; give the folder of whole photos "
            f"(e.g. {str(labels_path.parent.parent)!r}), or read the crops with benchmarks/close_ups.py"
        )
    if not isinstance(data, dict) or not isinstance(data.get("images"), list):
        raise DatasetError(f'{str(labels_path)!r} must be an object with an "images" list')
    out = []
    first_entry: dict[str, int] = {}  # each photo's normalised "file" -> the entry that named it first
    for i, entry in enumerate(data["images"]):
        where = f"{str(labels_path)!r}: images[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
            raise DatasetError(f'{where} must be an object with a "file" name')
        name = _photo_name(entry["file"], root, where)
        if name in first_entry:
            raise DatasetError(
                f"{where} names the photo {entry['file']!r} again (images[{first_entry[name]}] "
                "names it first); list each photo once, with all its dice"
            )
        first_entry[name] = i
        dice_list = entry.get("dice")
        if not isinstance(dice_list, list):
            given = 'has no "dice"' if "dice" not in entry else f'has "dice": {_short(dice_list)}'
            raise DatasetError(
                f'{where} ({entry["file"]!r}) {given}; every image entry needs a "dice" list '
                "([] for a photo with no dice)"
            )
        dice = tuple(_labelled_die(d, f"{where}.dice[{j}]") for j, d in enumerate(dice_list))
        out.append(LabelledImage(root / entry["file"], dice, _labelled_size(entry, where), i))
    if not out:
        raise DatasetError(
            f'{str(labels_path)!r} lists no images; add entries to its "images" list '
            '({"file": ..., "dice": [{"value": 1-6, "box": [x, y, w, h]}]})'
        )
    for item in out:  # after every entry is read: a malformed entry is named before a missing photo
        if not item.path.is_file():
            i, file = item.entry, data["images"][item.entry]["file"]
            if item.path.is_dir():
                raise DatasetError(
                    f"{str(labels_path)!r}: images[{i}] names {file!r}, which is a folder; "
                    f'"file" must name a photo in {str(folder)!r}'
                )
            raise DatasetError(
                f"{str(labels_path)!r}: images[{i}] names the photo {file!r}, which is not in "
                f'{str(folder)!r}; put the photo there or correct its "file"'
            )
    return out


def _short(value: object, limit: int = 40) -> str:
    """``repr``-like JSON text of `value`, cut to about `limit` characters (a message quotes what it refuses)."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _photo_name(file: str, root: Path, where: str) -> str:
    """`file` (a labels.json ``file``) normalised; DatasetError if it does not name a file inside `root`.

    Checked on the name alone: a photo inside the folder may be a symbolic link
    to one elsewhere.
    """
    name = os.path.normpath(file) if file else ""
    if not name or name == "." or PurePath(file).is_absolute() or name == ".." or name.startswith(".." + os.sep):
        raise DatasetError(
            f'{where} has "file" {file!r}; "file" must name a photo inside {str(root)!r} by its path '
            'relative to that folder (not absolute, no ".." out of it)'
        )
    return name


def _is_number(v: object) -> bool:
    """Whether `v` is a finite JSON number (``true``/``false`` are not numbers)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v)


def _labelled_die(d: object, where: str) -> LabelledDie:
    """One ``dice`` item of labels.json as a LabelledDie; DatasetError naming `where` if malformed."""
    if not isinstance(d, dict):
        raise DatasetError(f'{where} is {_short(d)}; each die must be {{"value": 1-6, "box": [x, y, w, h]}}')
    value = d.get("value")
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 6:
        given = 'has no "value"' if "value" not in d else f'has "value" {_short(value)}'
        raise DatasetError(f'{where} {given}; need a value 1-6, a whole number (not true, "5" or 5.0)')
    box = d.get("box")
    if not isinstance(box, list) or len(box) != 4 or not all(_is_number(v) for v in box):
        given = 'has no "box"' if "box" not in d else f'has "box" {_short(box)}'
        raise DatasetError(f"{where} {given}; need a box [x, y, w, h]: 4 numbers, in pixels of the photo")
    x, y, w, h = (int(round(float(v))) for v in box)
    if w < 1 or h < 1:
        raise DatasetError(
            f'{where} has "box" {_short(box)}, {w} px wide and {h} px high; '
            "need a box [x, y, w, h] with width and height of at least 1 px"
        )
    return LabelledDie(value, (x, y, w, h))


def _labelled_size(entry: dict, where: str) -> tuple[int, int] | None:
    """An entry's ``(width, height)`` when it gives them (both whole numbers above 0), else None."""
    if "width" not in entry and "height" not in entry:
        return None
    w, h = entry.get("width"), entry.get("height")
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (w, h)):
        raise DatasetError(
            f'{where} has "width" {_short(w)} and "height" {_short(h)}; give both, the photo\'s '
            "size in pixels (whole numbers), or neither"
        )
    return w, h


def check_boxes_in_photo(item: LabelledImage, shape: tuple[int, ...], labels: Path) -> None:
    """DatasetError when a labelled box lies wholly outside its photo (boxes are clipped to it: README)."""
    height, width = shape[:2]
    for k, die in enumerate(item.dice):
        x, y, w, h = die.box
        if x >= width or y >= height or x + w <= 0 or y + h <= 0:
            raise DatasetError(
                f"{str(labels)!r}: images[{item.entry}] dice[{k}] has the box {list(die.box)}, outside the "
                f"{width}x{height} px photo {item.path.name!r}; correct the box (x, y, w, h in the photo's pixels)"
            )
