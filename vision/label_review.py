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
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from vision.detect import box_iou
from vision.errors import DatasetError

__all__ = ["LabelChange", "LabelReview", "load_label_review", "SAME_BOX_IOU"]

#: Least IoU between a change's box and the labelled box it corrects.
SAME_BOX_IOU: float = 0.9
#: Largest IoU between an added die's box and any labelled die's box.
NEW_BOX_IOU: float = 0.1


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

    def apply(self, items: list) -> list:
        """The labelled images with the changes made.

        Parameters
        ----------
        items : list of vision.evaluate.LabelledImage
            The dataset as :func:`vision.evaluate.load_dataset` read it (all of it or a selection; changes
            to photos not in it are skipped).

        Returns
        -------
        list of vision.evaluate.LabelledImage
            Same order; an image without changes is the same object.

        Raises
        ------
        DatasetError
            If a change names a die the labels no longer have (no labelled box at IoU
            >= :data:`SAME_BOX_IOU`, or one labelled another value than ``labelled``), or adds a die
            where one is labelled; the message names the change and says to review it again.
        """
        from vision.evaluate import LabelledDie

        by_file: dict[str, list[tuple[int, LabelChange]]] = {}
        for k, change in enumerate(self.changes):
            by_file.setdefault(change.file, []).append((k, change))
        out = []
        for item in items:
            changes = by_file.get(item.path.name)
            if not changes:
                out.append(item)
                continue
            dice = list(item.dice)
            boxes = np.asarray([d.box for d in item.dice], np.float64).reshape(-1, 4)
            for k, change in changes:
                where = f"{str(self.path)!r}: changes[{k}] ({change.file}, box {list(change.box)})"
                iou = box_iou(np.asarray([change.box], np.float64), boxes)[0] if len(boxes) else np.zeros(0)
                if change.labelled is None:
                    if len(iou) and float(iou.max()) > NEW_BOX_IOU:
                        raise DatasetError(f"{where} adds a die where labels.json has one (IoU "
                                           f"{float(iou.max()):.2f}); the labels changed since the review: review it again")
                    dice.append(LabelledDie(change.value, change.box))
                    continue
                j = int(np.argmax(iou)) if len(iou) else -1
                if j < 0 or float(iou[j]) < SAME_BOX_IOU:
                    raise DatasetError(f"{where}: labels.json has no die with that box; the labels changed since "
                                       "the review: review it again")
                if item.dice[j].value != change.labelled:
                    raise DatasetError(f"{where} corrects a die labelled {change.labelled}, but labels.json now "
                                       f"says {item.dice[j].value}; review it again")
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
        raise DatasetError(f"no label review {str(path)!r}; give the JSON file of reviewed labels "
                           "(e.g. benchmarks/dev_label_review.json)") from None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DatasetError(f"label review {str(path)!r} cannot be read as JSON: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("changes"), list):
        raise DatasetError(f'label review {str(path)!r} must be an object with a "changes" list')
    changes = []
    for k, c in enumerate(data["changes"]):
        where = f"{str(path)!r}: changes[{k}]"
        if not isinstance(c, dict):
            raise DatasetError(f"{where} must be an object")
        box = c.get("box")
        if not isinstance(c.get("file"), str) or not c["file"]:
            raise DatasetError(f'{where} needs a "file": the photo\'s name in the dataset folder')
        if not (isinstance(box, list) and len(box) == 4 and all(_is_int(v) for v in box) and box[2] > 0
                and box[3] > 0):
            raise DatasetError(f'{where} needs a "box": [x, y, w, h], whole pixels, w and h above 0')
        labelled, value = c.get("labelled", "missing"), c.get("value")
        if not (labelled is None or _is_face(labelled)):
            raise DatasetError(f'{where} needs "labelled": the value labels.json gives (1-6), or null for a die '
                               "it does not label")
        if not _is_face(value) or value == labelled:
            raise DatasetError(f'{where} needs "value": the face value seen (1-6), other than "labelled"')
        if not isinstance(c.get("why"), str) or not c["why"].strip():
            raise DatasetError(f'{where} needs "why": what a person sees on the photo')
        changes.append(LabelChange(c["file"], tuple(box), labelled, value, c["why"]))
    return LabelReview(path, tuple(changes))


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_face(v: object) -> bool:
    return _is_int(v) and 1 <= v <= 6
