"""Measuring the pip reader on a labelled photo set (``dicetable eval``).

A dataset is a folder with ``labels.json`` in the format of
``../shared/dice-images`` (``{"images": [{"file", "dice": [{"value", "box"}]}]}``,
boxes ``(x, y, w, h)`` in image pixels). Each photo is read, the dice read are
matched to the labelled dice, and every labelled die is counted as *correct*,
*wrong value* (a value given and wrong: a silent error), *unknown* (found, no
value: the reader abstained) or *missed*; every die read that matches no label
is an *extra* (a silent error too when it was given a value).

Matching: a read die and a labelled die may pair when their boxes overlap with
IoU >= 0.5 or the read box's centre lies inside the labelled box; pairs are
taken greedily by IoU, highest first, each die at most once.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePath

import cv2
import numpy as np

from vision.detect import box_iou
from vision.errors import DatasetError, ImageLoadError
from vision.images import load_image, output_folder, save_image, write_output
from vision.reading import DieReading, ImageReading, UnknownReason, short_reason

__all__ = [
    "LabelledDie",
    "LabelledImage",
    "DieOutcome",
    "ImageResult",
    "EvalResult",
    "load_dataset",
    "match_dice",
    "score_image",
    "rescore",
    "evaluate",
    "format_summary",
    "format_report",
    "write_report",
    "DEFAULT_DEV_DIR",
]

#: The DEV set (``../shared/dice-images/dev`` beside a source checkout): the
#: labelled photos the reader is tuned and the networks trained on.
DEFAULT_DEV_DIR: Path = Path(__file__).resolve().parents[2] / ".." / "shared" / "dice-images" / "dev"

#: Column names of the confusion matrix after the six face values.
UNKNOWN, MISSED = "unknown", "missed"


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


@dataclass(frozen=True, slots=True)
class DieOutcome:
    """How one labelled die, or one extra die read, came out.

    ``kind`` is ``"correct"``, ``"wrong"``, ``"unknown"``, ``"missed"`` or ``"extra"``;
    ``truth`` is the labelled value (``None`` for extras), ``read`` the value read
    (``None`` when unknown or missed), ``box`` the labelled box (the read box for extras).
    """

    kind: str
    truth: int | None
    read: int | None
    box: tuple[int, int, int, int]
    confidence: float = 0.0
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class ImageResult:
    """The outcome of one photo: every labelled die's, every extra's, and the reading time."""

    path: Path
    source: str
    outcomes: tuple[DieOutcome, ...]
    problems: tuple[str, ...]
    ms: float
    cpu_ms: float = 0.0
    #: The reading scored (kept so that :func:`rescore` can score it against other labels).
    reading: ImageReading | None = field(default=None, compare=False, repr=False)

    @property
    def exact(self) -> bool:
        """True when every labelled die was read right and nothing extra was found."""
        return all(o.kind == "correct" for o in self.outcomes)


@dataclass
class EvalResult:
    """All image results of one evaluation, with the summary numbers."""

    dataset: Path
    images: list[ImageResult] = field(default_factory=list)

    def counts(self, images: list[ImageResult] | None = None) -> dict[str, int]:
        """Counts of each outcome kind, plus ``labelled``, ``extra_valued`` and ``images``."""
        imgs = self.images if images is None else images
        c = {k: 0 for k in ("correct", "wrong", "unknown", "missed", "extra", "extra_valued")}
        for im in imgs:
            for o in im.outcomes:
                c[o.kind] += 1
                if o.kind == "extra" and o.read is not None:
                    c["extra_valued"] += 1
        c["labelled"] = c["correct"] + c["wrong"] + c["unknown"] + c["missed"]
        c["images"] = len(imgs)
        c["exact_images"] = sum(im.exact for im in imgs)
        return c

    def metrics(self, images: list[ImageResult] | None = None) -> dict[str, float | int | None]:
        """Accuracy, silent-error rate, exact-image rate and timing for `images` (default all).

        A rate whose denominator is 0 (no labelled dice, no images) is None
        (``null`` in JSON, ``n/a`` in the report), not 0 or a share of nothing.
        """
        imgs = self.images if images is None else images
        c = self.counts(imgs)
        n = c["labelled"]
        ms = [im.ms for im in imgs]
        cpu = [im.cpu_ms for im in imgs]
        return {
            **c,
            "accuracy": c["correct"] / n if n else None,
            "silent_error_rate": (c["wrong"] + c["extra_valued"]) / n if n else None,
            "exact_image_rate": c["exact_images"] / c["images"] if c["images"] else None,
            "median_ms": float(statistics.median(ms)) if ms else 0.0,
            "p95_ms": float(np.percentile(ms, 95)) if ms else 0.0,
            "median_cpu_ms": float(statistics.median(cpu)) if cpu else 0.0,
            "p95_cpu_ms": float(np.percentile(cpu, 95)) if cpu else 0.0,
        }

    def by_source(self) -> dict[str, dict[str, float | int | None]]:
        """:meth:`metrics` for each source (file-name prefix), sorted by name."""
        sources = sorted({im.source for im in self.images})
        return {s: self.metrics([im for im in self.images if im.source == s]) for s in sources}

    def by_face(self) -> dict[int, dict[str, int | float | None]]:
        """Per true face value: labelled, correct, wrong, unknown, missed and accuracy (None with no such dice)."""
        out: dict[int, dict[str, int | float | None]] = {}
        for v in range(1, 7):
            c = {"labelled": 0, "correct": 0, "wrong": 0, "unknown": 0, "missed": 0}
            for im in self.images:
                for o in im.outcomes:
                    if o.truth == v:
                        c["labelled"] += 1
                        c[o.kind] += 1
            out[v] = {**c, "accuracy": c["correct"] / c["labelled"] if c["labelled"] else None}
        return out

    def confusion(self) -> np.ndarray:
        """Confusion matrix, shape (6, 8), int: rows true 1..6; columns read 1..6, unknown, missed."""
        m = np.zeros((6, 8), np.int64)
        for im in self.images:
            for o in im.outcomes:
                if o.truth is None:
                    continue
                col = {"missed": 7, "unknown": 6}.get(o.kind, (o.read or 0) - 1)
                m[o.truth - 1, col] += 1
        return m

    def reliability(self, n_bins: int = 10, span: tuple[float, float] = (0.0, 1.0)) -> dict:
        """Calibration of the stated confidence over the dice given a value and matched to a label.

        `span` narrows the bins to part of ``[0, 1]`` (see
        :func:`vision.lab.reliability.reliability_bins`); ``dice`` then counts only those in it.

        Returns
        -------
        dict
            ``dice`` (how many), ``bins`` (``n_bins`` of ``lo``, ``hi``, ``count``,
            ``mean_confidence``, ``accuracy``), ``ece`` (expected calibration error,
            0-1; None when ``dice`` is 0); see :mod:`vision.lab.reliability`.
        """
        from vision.lab.reliability import expected_calibration_error, reliability_bins

        scored = [o for im in self.images for o in im.outcomes if o.kind in ("correct", "wrong")]
        bins = reliability_bins([min(max(o.confidence, 0.0), 1.0) for o in scored],
                                [o.kind == "correct" for o in scored], n_bins=n_bins, span=span)
        dice = sum(b.count for b in bins)
        return {"dice": dice, "ece": expected_calibration_error(bins) if dice else None,
                "bins": [b.to_json() for b in bins],
                "counted": "dice given a value and matched to a labelled die (correct + wrong)"}

    def to_json(self) -> dict:
        """Everything as plain JSON types (the ``metrics.json`` of ``--report``)."""
        return {
            "dataset": str(self.dataset),
            "reliability": self.reliability(),
            "overall": self.metrics(),
            "by_source": self.by_source(),
            "by_face": {str(k): v for k, v in self.by_face().items()},
            "confusion": {
                "rows": "true face 1..6",
                "columns": ["1", "2", "3", "4", "5", "6", UNKNOWN, MISSED],
                "counts": self.confusion().tolist(),
            },
            "silent_error_rate_denominator": "labelled dice",
            "images": [
                {
                    "image": str(im.path),
                    "ms": round(im.ms, 2),
                    "cpu_ms": round(im.cpu_ms, 2),
                    "exact": im.exact,
                    "problems": list(im.problems),
                    "outcomes": [
                        {"kind": o.kind, "truth": o.truth, "read": o.read, "box": list(o.box),
                         "confidence": round(o.confidence, 4), "reason": o.reason}
                        for o in im.outcomes
                    ],
                }
                for im in self.images
            ],
        }


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
        If the folder or ``labels.json`` is missing, is not valid JSON, or
        lists no images; or an entry lacks ``file``, names a photo outside the
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
            raise DatasetError(f"{where} names the photo {entry['file']!r} again (images[{first_entry[name]}] "
                               "names it first); list each photo once, with all its dice")
        first_entry[name] = i
        dice_list = entry.get("dice")
        if not isinstance(dice_list, list):
            given = 'has no "dice"' if "dice" not in entry else f'has "dice": {_short(dice_list)}'
            raise DatasetError(f'{where} ({entry["file"]!r}) {given}; every image entry needs a "dice" list '
                               '([] for a photo with no dice)')
        dice = tuple(_labelled_die(d, f"{where}.dice[{j}]") for j, d in enumerate(dice_list))
        out.append(LabelledImage(root / entry["file"], dice, _labelled_size(entry, where), i))
    if not out:
        raise DatasetError(f'{str(labels_path)!r} lists no images; add entries to its "images" list '
                           '({"file": ..., "dice": [{"value": 1-6, "box": [x, y, w, h]}]})')
    for item in out:  # after every entry is read: a malformed entry is named before a missing photo
        if not item.path.is_file():
            i, file = item.entry, data["images"][item.entry]["file"]
            if item.path.is_dir():
                raise DatasetError(f"{str(labels_path)!r}: images[{i}] names {file!r}, which is a folder; "
                                   f'"file" must name a photo in {str(folder)!r}')
            raise DatasetError(f"{str(labels_path)!r}: images[{i}] names the photo {file!r}, which is not in "
                               f'{str(folder)!r}; put the photo there or correct its "file"')
    return out


def _short(value: object, limit: int = 40) -> str:
    """``repr``-like JSON text of `value`, cut to about `limit` characters (a message quotes what it refuses)."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _photo_name(file: str, root: Path, where: str) -> str:
    """`file` (a labels.json ``file``) normalised; DatasetError if it does not name a file inside `root`.

    Checked on the name alone: a photo inside the folder may be a symbolic link
    to one elsewhere.
    """
    name = os.path.normpath(file) if file else ""
    if not name or name == "." or PurePath(file).is_absolute() or name == ".." or name.startswith(".." + os.sep):
        raise DatasetError(f'{where} has "file" {file!r}; "file" must name a photo inside {str(root)!r} by its path '
                           'relative to that folder (not absolute, no ".." out of it)')
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
        raise DatasetError(f'{where} has "box" {_short(box)}, {w} px wide and {h} px high; '
                           "need a box [x, y, w, h] with width and height of at least 1 px")
    return LabelledDie(value, (x, y, w, h))


def _labelled_size(entry: dict, where: str) -> tuple[int, int] | None:
    """An entry's ``(width, height)`` when it gives them (both whole numbers above 0), else None."""
    if "width" not in entry and "height" not in entry:
        return None
    w, h = entry.get("width"), entry.get("height")
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (w, h)):
        raise DatasetError(f'{where} has "width" {_short(w)} and "height" {_short(h)}; give both, the photo\'s '
                           "size in pixels (whole numbers), or neither")
    return w, h


def match_dice(read_boxes, true_boxes, *, min_iou: float = 0.5) -> list[tuple[int, int]]:
    """Pair read boxes with labelled boxes.

    Parameters
    ----------
    read_boxes : array_like of shape (N, 4)
        ``(x, y, w, h)`` boxes of the dice read.
    true_boxes : array_like of shape (M, 4)
        ``(x, y, w, h)`` boxes of the labelled dice.
    min_iou : float, optional
        Least IoU for a pair, unless the read box's centre is inside the labelled box.

    Returns
    -------
    list of (int, int)
        ``(read index, labelled index)`` pairs, each index at most once, taken
        greedily by IoU (highest first).
    """
    r = np.asarray(read_boxes, np.float64).reshape(-1, 4)
    t = np.asarray(true_boxes, np.float64).reshape(-1, 4)
    if len(r) == 0 or len(t) == 0:
        return []
    iou = box_iou(r, t)
    cx, cy = r[:, 0] + r[:, 2] / 2, r[:, 1] + r[:, 3] / 2
    inside = ((cx[:, None] >= t[None, :, 0]) & (cx[:, None] <= t[None, :, 0] + t[None, :, 2])
              & (cy[:, None] >= t[None, :, 1]) & (cy[:, None] <= t[None, :, 1] + t[None, :, 3]))
    ok = (iou >= min_iou) | inside
    pairs = sorted(((iou[i, j], i, j) for i, j in zip(*np.nonzero(ok))), reverse=True)
    used_r, used_t, out = set(), set(), []
    for _, i, j in pairs:
        if i not in used_r and j not in used_t:
            used_r.add(i)
            used_t.add(j)
            out.append((int(i), int(j)))
    return out


def score_image(reading: ImageReading, truth: LabelledImage, ms: float = 0.0, cpu_ms: float = 0.0) -> ImageResult:
    """Compare one reading with its labels; see the module text for the outcome kinds."""
    dice = list(reading.dice)
    pairs = match_dice([d.box for d in dice], [t.box for t in truth.dice])
    by_true = {j: i for i, j in pairs}
    outcomes: list[DieOutcome] = []
    for j, t in enumerate(truth.dice):
        if j not in by_true:
            outcomes.append(DieOutcome("missed", t.value, None, t.box))
            continue
        d: DieReading = dice[by_true[j]]
        kind = "unknown" if d.value is None else ("correct" if d.value == t.value else "wrong")
        outcomes.append(DieOutcome(kind, t.value, d.value, t.box, d.confidence, d.reason))
    matched = {i for i, _ in pairs}
    for i, d in enumerate(dice):
        if i not in matched:
            outcomes.append(DieOutcome("extra", None, d.value, d.box, d.confidence, d.reason))
    return ImageResult(truth.path, truth.source, tuple(outcomes), tuple(reading.problems), ms, cpu_ms, reading)


def rescore(result: EvalResult, items: list[LabelledImage]) -> EvalResult:
    """The readings of `result` scored again against other labels of the same photos (reviewed ones).

    Parameters
    ----------
    result : EvalResult
        From :func:`evaluate` (its images keep their readings).
    items : list of LabelledImage
        Labels for (at least) every photo of `result`, e.g.
        :meth:`vision.lab.label_review.LabelReview.apply` of the dataset.

    Returns
    -------
    EvalResult
        Same photos, order, readings and times; outcomes by the new labels.

    Raises
    ------
    ValueError
        If a photo of `result` has no reading kept or is not among `items`.
    """
    by_path = {item.path: item for item in items}
    out = EvalResult(result.dataset)
    for im in result.images:
        if im.reading is None or im.path not in by_path:
            raise ValueError(f"cannot score {str(im.path)!r} again: its reading was not kept or it has no labels")
        out.images.append(score_image(im.reading, by_path[im.path], im.ms, im.cpu_ms))
    return out


def evaluate(
    dataset: str | Path,
    read: Callable[[np.ndarray], ImageReading],
    *,
    progress: Callable[[int, int, Path], None] | None = None,
    keep: Callable[[str], bool] | None = None,
) -> EvalResult:
    """Read every photo of a labelled dataset (or those `keep` picks) and score the readings.

    Parameters
    ----------
    dataset : str or Path
        Dataset folder (see :func:`load_dataset`).
    read : callable
        ``read(image_bgr) -> ImageReading``; only this call is timed, in ms, by the
        wall clock and by this process's CPU time (which other busy processes on
        the machine do not inflate, as long as ``read`` uses one thread).
    progress : callable, optional
        Called as ``progress(done, total, path)`` after each photo.
    keep : callable, optional
        ``keep(file_name) -> bool``: read only the photos it keeps (e.g. one
        DEV fold, :func:`vision.lab.training.data.dev_fold`); default all.

    Returns
    -------
    EvalResult

    Raises
    ------
    DatasetError
        If the dataset is malformed (see :func:`load_dataset`), a photo is not
        the size (``width``, ``height``) its entry gives, or `keep` keeps none
        of its photos.
    ImageLoadError
        If a photo named in ``labels.json`` cannot be read as an image (the
        message names its entry).
    """
    items = load_dataset(dataset)
    if keep is not None:
        items = [item for item in items if keep(item.path.name)]
        if not items:
            raise DatasetError(f"no photo of {str(dataset)!r} is in the selection asked for (e.g. the fold); "
                               "check the dataset and the selection")
    result = EvalResult(Path(dataset))
    labels = Path(dataset) / "labels.json"
    for k, item in enumerate(items):
        try:
            image = load_image(item.path)
        except ImageLoadError as exc:
            raise ImageLoadError(f"{str(labels)!r}: images[{item.entry}]: {exc}") from exc
        if item.size is not None and item.size != (image.shape[1], image.shape[0]):
            raise DatasetError(
                f"{str(labels)!r}: images[{item.entry}] gives {item.path.name!r} as {item.size[0]}x{item.size[1]} px "
                f"but the photo is {image.shape[1]}x{image.shape[0]} px, so its boxes were drawn on another size of "
                'it; correct "width", "height" and the boxes, or leave both out if the boxes are right'
            )
        t0, c0 = time.perf_counter(), time.process_time()
        reading = read(image)
        ms = (time.perf_counter() - t0) * 1000.0
        cpu_ms = (time.process_time() - c0) * 1000.0
        result.images.append(score_image(reading, item, ms, cpu_ms))
        if progress is not None:
            progress(k + 1, len(items), item.path)
    return result


def _pct(x: float | None, digits: int = 1) -> str:
    """`x` (a share) as a percentage; ``n/a`` for None (a rate of nothing)."""
    return "n/a" if x is None else f"{100.0 * x:.{digits}f}%"


def format_summary(result: EvalResult) -> list[str]:
    """The summary lines of the report: counts, accuracy, silent-error and exact-image rates."""
    m = result.metrics()
    return [
        f"dataset: {result.dataset}  ({m['images']} images, {m['labelled']} labelled dice)",
        f"dice correct {m['correct']}, wrong value {m['wrong']}, unknown {m['unknown']}, "
        f"missed {m['missed']}, extra {m['extra']} ({m['extra_valued']} given a value)",
        f"per-die accuracy: {_pct(m['accuracy'])} (correct / labelled dice)",
        # two decimals: the target is 0.5 %, and 5 of 947 (0.53 %) must not print as 0.5 %
        f"silent-error rate: {_pct(m['silent_error_rate'], 2)} "
        f"((wrong value + extras given a value) / {m['labelled']} labelled dice)",
        f"exact-image rate: {_pct(m['exact_image_rate'])} ({m['exact_images']} of {m['images']} images "
        "with every die right and nothing extra)",
    ]


def format_report(result: EvalResult) -> str:
    """The text report of ``dicetable eval``."""
    m = result.metrics()
    lines = [
        *format_summary(result),
        f"time per image (read_image, one OpenCV thread): median {m['median_ms']:.1f} ms, p95 {m['p95_ms']:.1f} ms "
        f"wall clock; CPU time median {m['median_cpu_ms']:.1f} ms, p95 {m['p95_cpu_ms']:.1f} ms",
        _calibration_line(result.reliability()),
        "",
        "confusion (rows: true face; columns: read)",
        "true      1     2     3     4     5     6  unknown  missed",
    ]
    for v, row in enumerate(result.confusion(), start=1):
        lines.append(f"   {v}  " + " ".join(f"{n:5d}" for n in row[:6]) + f"  {row[6]:7d}  {row[7]:6d}")
    lines += ["", "by source:", "source     images  dice  accuracy  silent  unknown  missed  extra  median ms"]
    for s, sm in result.by_source().items():
        lines.append(
            f"{s:<10} {sm['images']:6d} {sm['labelled']:5d}  {_pct(sm['accuracy']):>8}  "
            f"{_pct(sm['silent_error_rate'], 2):>6}  {sm['unknown']:7d}  {sm['missed']:6d}  {sm['extra']:5d}  "
            f"{sm['median_ms']:9.1f}"
        )
    lines += ["", "by true face:", "face  dice  accuracy  wrong  unknown  missed"]
    for v, fm in result.by_face().items():
        lines.append(
            f"   {v}  {fm['labelled']:4d}  {_pct(fm['accuracy']):>8}  {fm['wrong']:5d}  {fm['unknown']:7d}  "
            f"{fm['missed']:6d}"
        )
    return "\n".join(lines)


def _calibration_line(rel: dict) -> str:
    filled = [b for b in rel["bins"] if b["count"]]
    worst = max(filled, key=lambda b: abs(b["accuracy"] - b["mean_confidence"]), default=None)
    tail = ""
    if worst is not None:
        tail = (f"; worst bin {worst['lo']:.1f}-{worst['hi']:.1f}: stated {_pct(worst['mean_confidence'])}, "
                f"observed {_pct(worst['accuracy'])} ({worst['count']} dice)")
    return f"calibration: ECE {_pct(rel['ece'])} over {rel['dice']} dice given a value{tail}"


def write_report(result: EvalResult, out_dir: str | Path, *, tile: int = 96, columns: int = 12,
                 extra: dict | None = None) -> list[Path]:
    """Write ``metrics.json``, ``reliability.png``, ``failures.png`` (contact sheet) and annotated failure images.

    Parameters
    ----------
    result : EvalResult
        From :func:`evaluate`.
    out_dir : str or Path
        Folder to write into (created; see :func:`vision.images.output_folder`,
        which a caller can call first to check it before the evaluation).
    tile : int, optional
        Side of each contact-sheet crop, px.
    columns : int, optional
        Crops per contact-sheet row.
    extra : dict, optional
        More keys for ``metrics.json`` (``dicetable eval --label-review`` adds ``reviewed_labels``).

    Returns
    -------
    list of Path
        The files written.

    Raises
    ------
    vision.errors.OutputError
        If `out_dir` is a file or a file cannot be written (the message says why).
    """
    from vision.annotate import annotate_outcomes

    out = output_folder(out_dir, "report")
    written = [out / "metrics.json"]
    write_output(written[0], (json.dumps({**result.to_json(), **(extra or {})}, indent=1) + "\n").encode())
    from vision.lab.reliability import ReliabilityBin, draw_reliability

    rel = result.reliability()
    bins = [ReliabilityBin(**b) for b in rel["bins"]]
    plot = draw_reliability(bins, title=f"Reliability: {result.dataset.name}", ece=rel["ece"])
    if rel["dice"] and bins[-1].count > 0.5 * rel["dice"]:  # most dice in the top bin: add a zoom on it
        zoom = result.reliability(span=(bins[-1].lo, 1.0))
        plot = np.hstack([plot, draw_reliability([ReliabilityBin(**b) for b in zoom["bins"]], span=(bins[-1].lo, 1.0),
                                                 title=f"zoom on {bins[-1].lo:.1f}-1.0", ece=zoom["ece"])])
    written.append(save_image(out / "reliability.png", plot))
    tiles = []
    fail_dir = out / "failures"
    for im in result.images:
        bad = [o for o in im.outcomes if o.kind != "correct"]
        if not bad:
            continue
        image = load_image(im.path)
        for o in bad:
            tiles.append(_failure_tile(image, o, tile, im.path.name))
        output_folder(fail_dir, "report's failures")
        written.append(save_image(fail_dir / (im.path.stem + ".jpg"), annotate_outcomes(image, im.outcomes)))
    if tiles:
        rows = [tiles[i:i + columns] for i in range(0, len(tiles), columns)]
        rows[-1] = rows[-1] + [np.zeros_like(tiles[0])] * (columns - len(rows[-1]))
        sheet = np.vstack([np.hstack(r) for r in rows] + [_legend(columns * tile)])
        written.append(save_image(out / "failures.png", sheet))
    return written


_KIND_COLOURS = {
    "wrong": (0, 0, 255), "unknown": (0, 200, 255), "missed": (255, 0, 255), "extra": (255, 128, 0),
}


def _legend(width: int) -> np.ndarray:
    """A strip explaining the contact sheet's labels, `width` px wide, BGR ``uint8``."""
    strip = np.zeros((34, width, 3), np.uint8)
    x = 4
    for kind, colour in _KIND_COLOURS.items():
        cv2.putText(strip, kind, (x, 13), cv2.FONT_HERSHEY_SIMPLEX, 0.4, colour, 1, cv2.LINE_AA)
        x += cv2.getTextSize(kind, cv2.FONT_HERSHEY_SIMPLEX, 0.4, 1)[0][0] + 12
    reasons = ", ".join(f"{reason.short} = {str(reason)}" for reason in UnknownReason)
    cv2.putText(strip, "t = labelled value, r = value read (? none, - no die labelled)", (x + 8, 13),
                cv2.FONT_HERSHEY_SIMPLEX, 0.4, (220, 220, 220), 1, cv2.LINE_AA)
    cv2.putText(strip, f"why unknown: {reasons}", (4, 28), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (220, 220, 220), 1,
                cv2.LINE_AA)
    return strip


def _fit_left(text: str, width: int, scale: float) -> str:
    """`text`, its start cut off (marked ``..``) until it fits `width` px at `scale`: photo names differ at the end."""
    def fits(t: str) -> bool:
        return cv2.getTextSize(t, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)[0][0] <= width

    if fits(text):
        return text
    for k in range(1, len(text)):
        if fits(".." + text[k:]):
            return ".." + text[k:]
    return ""


def _failure_tile(image: np.ndarray, o: DieOutcome, tile: int, name: str) -> np.ndarray:
    x, y, w, h = o.box
    side = max(w, h) * 1.4
    cx, cy = x + w / 2, y + h / 2
    x1, y1 = int(round(cx - side / 2)), int(round(cy - side / 2))
    s = max(2, int(round(side)))
    padded = cv2.copyMakeBorder(image, s, s, s, s, cv2.BORDER_CONSTANT, value=(0, 0, 0))
    crop = padded[y1 + s:y1 + 2 * s, x1 + s:x1 + 2 * s]
    crop = cv2.resize(crop, (tile, tile - 24), interpolation=cv2.INTER_AREA)
    label = np.zeros((24, tile, 3), np.uint8)
    colour = _KIND_COLOURS.get(o.kind, (255, 255, 255))
    truth = "-" if o.truth is None else str(o.truth)
    read = "?" if o.read is None else str(o.read)
    text = f"{o.kind} t{truth} r{read}"
    if o.read is None and o.reason:  # why the reader said unknown
        text += " " + short_reason(o.reason)
    cv2.putText(label, text, (2, 10), cv2.FONT_HERSHEY_SIMPLEX, 0.33, colour, 1, cv2.LINE_AA)
    cv2.putText(label, _fit_left(name, tile - 4, 0.28), (2, 21), cv2.FONT_HERSHEY_SIMPLEX, 0.28, (200, 200, 200), 1,
                cv2.LINE_AA)
    out = np.vstack([crop, label])
    cv2.rectangle(out, (0, 0), (tile - 1, tile - 1), colour, 1)
    return out
