"""Measuring the pip reader on a labelled photo set (``dicetable eval``): reading and scoring.

A dataset is a folder with ``labels.json`` (read by :mod:`vision.lab.dataset`,
whose names are importable from here too). Each photo is read, the dice read are
matched to the labelled dice, and every labelled die is counted as *correct*,
*wrong value* (a value given and wrong: a silent error), *unknown* (found, no
value: the reader abstained) or *missed*; every die read that matches no label
is an *extra* (a silent error too when it was given a value).

Matching: a read die and a labelled die may pair when their boxes overlap with
IoU >= 0.5 or the read box's centre lies inside the labelled box; pairs are
taken greedily by IoU, highest first, each die at most once.

The text report, ``metrics.json`` and contact sheet are written by
:mod:`vision.lab.report` (its public names are importable from here too).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from vision.detect import box_iou
from vision.errors import DatasetError, ImageLoadError
from vision.images import load_image
from vision.lab.dataset import DEFAULT_DEV_DIR, LabelledDie, LabelledImage, check_boxes_in_photo, load_dataset
from vision.lab.report import format_report, format_summary, write_report
from vision.reading import DieReading, ImageReading

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


#: Column names of the confusion matrix after the six face values.
UNKNOWN, MISSED = "unknown", "missed"


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
        bins = reliability_bins(
            [min(max(o.confidence, 0.0), 1.0) for o in scored],
            [o.kind == "correct" for o in scored],
            n_bins=n_bins,
            span=span,
        )
        dice = sum(b.count for b in bins)
        return {
            "dice": dice,
            "ece": expected_calibration_error(bins) if dice else None,
            "bins": [b.to_json() for b in bins],
            "counted": "dice given a value and matched to a labelled die (correct + wrong)",
        }

    def to_json(self) -> dict:
        """Everything as plain JSON types (the ``metrics.json`` of ``--report``)."""
        from vision.lab.eval_reasons import silent_errors, unknown_reasons

        return {
            "dataset": str(self.dataset),
            "reliability": self.reliability(),
            "overall": self.metrics(),
            "unknown_reasons": unknown_reasons(self),
            "silent_errors": silent_errors(self),
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
                        {
                            "kind": o.kind,
                            "truth": o.truth,
                            "read": o.read,
                            "box": list(o.box),
                            "confidence": round(o.confidence, 4),
                            "reason": o.reason,
                        }
                        for o in im.outcomes
                    ],
                }
                for im in self.images
            ],
        }


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
    inside = (
        (cx[:, None] >= t[None, :, 0])
        & (cx[:, None] <= t[None, :, 0] + t[None, :, 2])
        & (cy[:, None] >= t[None, :, 1])
        & (cy[:, None] <= t[None, :, 1] + t[None, :, 3])
    )
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
            raise DatasetError(
                f"no photo of {str(dataset)!r} is in the selection asked for (e.g. the fold); "
                "check the dataset and the selection"
            )
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
        check_boxes_in_photo(item, image.shape, labels)
        t0, c0 = time.perf_counter(), time.process_time()
        reading = read(image)
        ms = (time.perf_counter() - t0) * 1000.0
        cpu_ms = (time.process_time() - c0) * 1000.0
        result.images.append(score_image(reading, item, ms, cpu_ms))
        if progress is not None:
            progress(k + 1, len(items), item.path)
    return result
