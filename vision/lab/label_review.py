"""Reviewed labels: corrections to a dataset's ``labels.json``, kept beside the project.

A labelled set has label errors, and a reader that is right where a label is
wrong is counted as silently wrong. Test sets are re-labelled after review
for this reason (Beyer et al., "Are we done with ImageNet?", 2020: the
"ReaL" labels; Northcutt et al., "Pervasive Label Errors in Test Sets
Destabilize Machine Learning Benchmarks", NeurIPS 2021). ``dicetable eval
--label-review FILE`` reports the measure with the labels as given *and*
with the reviewed ones, side by side; the dataset itself is never changed,
and the given labels stay the official measure.

A review file is JSON::

    {"dataset": "...", "how": "...",
     "changes": [{"file": "photo.jpg", "box": [x, y, w, h], "labelled": 2, "value": 3, "why": "..."}]}

Each change names a photo of the dataset and a die's box in its pixels:

* ``"labelled": V`` (1-6): the labelled die with that box (IoU at least
  :data:`SAME_BOX_IOU`) is labelled V, and should be ``value``;
* ``"labelled": null``: a die that is not labelled at all, at that box
  (overlapping no labelled die), showing ``value``.

``why`` says what a person sees there. A change that no longer fits the
labels (the die was relabelled or moved) is an error, so a stale review is
never applied silently.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

import numpy as np

from vision.detect import box_iou
from vision.errors import DatasetError
from vision.lab.dataset import LabelledDie

__all__ = ["LabelChange", "LabelReview", "load_label_review", "SAME_BOX_IOU"]

#: Least IoU between a change's box and the labelled box it corrects.
SAME_BOX_IOU: float = 0.9
#: Largest IoU between an added die's box and any labelled die's box (or another added one).
NEW_BOX_IOU: float = 0.1
#: Box coordinates (px) must be under this: no photo is that big, and Python's big integers are refused.
MAX_PX: int = 100_000


@dataclass(frozen=True, slots=True)
class LabelChange:
    """One reviewed correction: `file`'s die at `box` (x, y, w, h px) is `value`; `labelled` None: not labelled."""

    file: str
    box: tuple[int, int, int, int]
    labelled: int | None
    value: int
    why: str


@dataclass(frozen=True, slots=True)
class LabelReview:
    """A review file: its path and changes."""

    path: Path
    changes: tuple[LabelChange, ...]

    def apply(self, items: list, root: str | Path) -> list:
        """The labelled images with the changes made.

        Parameters
        ----------
        items : list of vision.lab.dataset.LabelledImage
            The whole dataset as :func:`vision.lab.dataset.load_dataset` read it.
        root : str or Path
            Its folder (the one given to ``load_dataset``): a change's ``file`` is the photo's
            name relative to it, as in labels.json.

        Returns
        -------
        list of vision.lab.dataset.LabelledImage
            Same order; an image without changes is the same object.

        Raises
        ------
        DatasetError
            If a change names a photo that is not in the dataset (the review of another set, or a
            photo renamed since), a die the labels no longer have (no labelled box at IoU
            >= :data:`SAME_BOX_IOU`, or one labelled another value than ``labelled``), adds a die
            where one is labelled or outside the photo, or touches a die another change touches
            (the same labelled die, or added boxes that overlap); the message names the change.
        """
        by_file: dict[str, list[tuple[int, LabelChange]]] = {}
        for k, change in enumerate(self.changes):
            by_file.setdefault(change.file, []).append((k, change))
        names = {PurePosixPath(*item.path.relative_to(Path(root)).parts).as_posix() for item in items}
        for file, changes in by_file.items():
            if file not in names:
                raise DatasetError(
                    f"{str(self.path)!r}: changes[{changes[0][0]}] names the photo {file!r}, which "
                    f"is not in the dataset {str(root)!r}; is it the review of another set, or was "
                    "the photo renamed? Review it again"
                )
        out = []
        for item in items:
            changes = by_file.get(PurePosixPath(*item.path.relative_to(Path(root)).parts).as_posix())
            if not changes:
                out.append(item)
                continue
            dice = list(item.dice)
            boxes = np.asarray([d.box for d in item.dice], np.float64).reshape(-1, 4)
            touched: dict[int, int] = {}  # labelled die -> the change that corrects it
            added: list[tuple[int, LabelChange]] = []
            for k, change in changes:
                where = f"{str(self.path)!r}: changes[{k}] ({change.file}, box {list(change.box)})"
                iou = box_iou(np.asarray([change.box], np.float64), boxes)[0] if len(boxes) else np.zeros(0)
                if change.labelled is None:
                    if len(iou) and float(iou.max()) > NEW_BOX_IOU:
                        raise DatasetError(
                            f"{where} adds a die where labels.json has one (IoU "
                            f"{float(iou.max()):.2f}); the labels changed since the review: review it again"
                        )
                    x, y, w, h = change.box
                    if item.size is not None and (x < 0 or y < 0 or x + w > item.size[0] or y + h > item.size[1]):
                        raise DatasetError(
                            f"{where} adds a die outside the {item.size[0]}x{item.size[1]} px photo; "
                            "give its box in the photo's pixels"
                        )
                    for k2, other in added:
                        if (
                            float(
                                box_iou(np.asarray([change.box], np.float64), np.asarray([other.box], np.float64))[0, 0]
                            )
                            > NEW_BOX_IOU
                        ):
                            raise DatasetError(f"{where} adds the die that changes[{k2}] adds; list each die once")
                    added.append((k, change))
                    dice.append(LabelledDie(change.value, change.box))
                    continue
                j = int(np.argmax(iou)) if len(iou) else -1
                if j < 0 or float(iou[j]) < SAME_BOX_IOU:
                    raise DatasetError(
                        f"{where}: labels.json has no die with that box; the labels changed since "
                        "the review: review it again"
                    )
                if j in touched:
                    raise DatasetError(
                        f"{where} corrects the die that changes[{touched[j]}] corrects; list each die once"
                    )
                if item.dice[j].value != change.labelled:
                    raise DatasetError(
                        f"{where} corrects a die labelled {change.labelled}, but labels.json now "
                        f"says {item.dice[j].value}; review it again"
                    )
                touched[j] = k
                dice[j] = LabelledDie(change.value, item.dice[j].box)
            out.append(replace(item, dice=tuple(dice)))
        return out


def load_label_review(path: str | Path) -> LabelReview:
    """Read a review file (see the module text).

    Raises
    ------
    DatasetError
        If the file is missing or not valid JSON, or a change lacks a ``file`` name, a ``box`` of 4
        whole numbers with width and height above 0, a ``labelled`` value 1-6 or null, a ``value``
        1-6 that differs from it, or a ``why``.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise DatasetError(
            f"no label review {str(path)!r}; give the JSON file of reviewed labels "
            "(e.g. benchmarks/dev_label_review.json)"
        ) from None
    except RecursionError:  # lists or objects nested deeper than Python's recursion limit (about 1,000)
        raise DatasetError(
            f'label review {str(path)!r} is nested too deeply to be one; give {{"changes": [{{"file": ..., '
            '"box": [x, y, w, h], "labelled": 1-6 or null, "value": 1-6, "why": ...}]}'
        ) from None
    except (OSError, ValueError) as exc:  # ValueError: bad JSON, UTF-8 or a huge number
        raise DatasetError(f"label review {str(path)!r} cannot be read as JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("changes"), list):
        raise DatasetError(f'label review {str(path)!r} must be an object with a "changes" list')
    changes = []
    for k, c in enumerate(data["changes"]):
        where = f"{str(path)!r}: changes[{k}]"
        if not isinstance(c, dict):
            raise DatasetError(f"{where} must be an object")
        box = c.get("box")
        file = c.get("file")
        if not isinstance(file, str) or not _is_relative_name(file):
            raise DatasetError(
                f'{where} needs a "file": the photo\'s name in the dataset folder, as labels.json '
                'gives it (e.g. "photo.jpg" or "sub/photo.jpg")'
            )
        if not (
            isinstance(box, list)
            and len(box) == 4
            and all(_is_int(v) and abs(v) < MAX_PX for v in box)
            and box[2] > 0
            and box[3] > 0
        ):
            raise DatasetError(f'{where} needs a "box": [x, y, w, h], whole pixels, w and h above 0')
        labelled, value = c.get("labelled", "missing"), c.get("value")
        if not (labelled is None or _is_face(labelled)):
            raise DatasetError(
                f'{where} needs "labelled": the value labels.json gives (1-6), or null for a die it does not label'
            )
        if not _is_face(value) or value == labelled:
            raise DatasetError(f'{where} needs "value": the face value seen (1-6), other than "labelled"')
        if not isinstance(c.get("why"), str) or not c["why"].strip():
            raise DatasetError(f'{where} needs "why": what a person sees on the photo')
        changes.append(LabelChange(posixpath.normpath(file), tuple(box), labelled, value, c["why"]))
    return LabelReview(path, tuple(changes))


def _is_relative_name(file: str) -> bool:
    """Whether `file` names a file inside a folder: relative, no ``..``, not empty (``/`` separates folders)."""
    norm = posixpath.normpath(file) if file else ""
    return (
        bool(file)
        and "\\" not in file
        and not posixpath.isabs(norm)
        and norm != "."
        and ".." not in PurePosixPath(norm).parts
    )


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_face(v: object) -> bool:
    return _is_int(v) and 1 <= v <= 6
