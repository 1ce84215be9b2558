"""Calibrated confidence: what the reader's stated confidence means in observed accuracy.

The face reader's probability of the value it names is not the chance that a
reported value is right: the reader reports a value only when the pip finder
agrees (:mod:`vision.reader`), which removes most wrong answers, and small
networks are often over- or under-confident anyway. This module maps the raw
probability of a *reported* value to the accuracy observed for reported values
with that raw probability on photos the networks were not trained on (each
DEV fold read by networks trained without it, so every DEV die counts once),
by isotonic regression (pool-adjacent-violators; Zadrozny
and Elkan, "Transforming classifier scores into accurate multiclass
probability estimates", KDD 2002), each pooled block smoothed towards 1/2 by
one right and one wrong pseudo-observation (Laplace) so that no block claims
certainty from a few dice.

The map is fitted by ``python -m vision.lab.training.fit_confidence`` and shipped as
``vision/models/reader_confidence.json``; without that file the raw
probability is used as it is. When that file also holds a ``"model"``, the
reader states confidence by it instead (:mod:`vision.confidence_model`: the
probability and the die's warnings, fitted on the perturbation suite too).

With few wrong values a curve is noise. Refitted on 2026-12-02 for the mirrored
view (both folds' twins; 893 held-out values, 6 wrong), isotonic regression
found four blocks (raw 0.79 -> 0.83 up to 0.98 -> 0.996), but fitted on one
fold's pairs and scored on the other's it did worse than one block (Brier
score 0.0103 against 0.0090, and 0.0045 against 0.0044). The shipped map is
the one block of the earlier fit: every reported value stated 99.23 % right,
against 99.33 % observed on those 893 held-out values. Refits now pool blocks
of fewer than 100 values (``fit_isotonic(min_block=)``, ``fit_confidence
--min-block``): cross-fitted so, the curve scores as one block does (0.0091
and 0.0044).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

__all__ = ["ConfidenceMap", "fit_isotonic", "default_confidence_map", "DEFAULT_MAP_PATH"]

DEFAULT_MAP_PATH = Path(__file__).resolve().parent / "models" / "reader_confidence.json"


@dataclass(frozen=True, slots=True)
class ConfidenceMap:
    """A monotone map from raw probability to calibrated confidence, linear between knots.

    Parameters
    ----------
    raw : tuple of float
        Increasing raw probabilities in ``[0, 1]`` (knots).
    calibrated : tuple of float
        Non-decreasing calibrated confidences in ``[0, 1]`` at those knots.

    Raises
    ------
    ValueError
        If the knots are empty, of different lengths, out of ``[0, 1]``, not
        increasing (`raw`) or decreasing (`calibrated`).
    """

    raw: tuple[float, ...]
    calibrated: tuple[float, ...]

    def __post_init__(self) -> None:
        r, c = np.asarray(self.raw, np.float64), np.asarray(self.calibrated, np.float64)
        if len(r) == 0 or len(r) != len(c):
            raise ValueError(
                f"a confidence map needs as many raw as calibrated knots (at least one), got {len(r)} and {len(c)}"
            )
        if r.min() < 0 or r.max() > 1 or c.min() < 0 or c.max() > 1:
            raise ValueError("confidence-map knots must lie in [0, 1]")
        if np.any(np.diff(r) <= 0) or np.any(np.diff(c) < 0):
            raise ValueError("confidence-map raw knots must increase and calibrated knots must not decrease")

    def __call__(self, probability: float) -> float:
        """Calibrated confidence of one raw probability (clamped to the end knots)."""
        return float(np.interp(float(probability), self.raw, self.calibrated))

    @classmethod
    def identity(cls) -> ConfidenceMap:
        """The map that changes nothing."""
        return cls((0.0, 1.0), (0.0, 1.0))

    def to_json(self) -> dict:
        """Plain JSON types: ``{"raw": [...], "calibrated": [...]}``."""
        return {"raw": [round(x, 4) for x in self.raw], "calibrated": [round(x, 4) for x in self.calibrated]}


def fit_isotonic(probabilities: Sequence[float], right: Sequence[bool], min_block: int = 1) -> ConfidenceMap:
    """Fit a :class:`ConfidenceMap` to observed outcomes (pool-adjacent-violators, Laplace-smoothed).

    Parameters
    ----------
    probabilities : sequence of float
        Raw probability of each reported value, in ``[0, 1]``.
    right : sequence of bool
        Whether each reported value was right.
    min_block : int, optional
        Fewest outcomes in a block: a smaller block is pooled with its smaller
        neighbour until none is left (pooling neighbours keeps the curve
        increasing). With few wrong values, plain isotonic regression draws steps
        from a handful of them: refitted on DEV's held-out pairs it lost to one
        block on the other fold (see the module text).

    Returns
    -------
    ConfidenceMap
        Knots at the mean raw probability of each pooled block.

    Raises
    ------
    ValueError
        If the sequences differ in length or are empty, or `min_block` is under 1.
    """
    if min_block < 1:
        raise ValueError(f"min_block must be 1 or more, got {min_block}")
    p = np.asarray(probabilities, np.float64)
    y = np.asarray(right, np.float64)
    if len(p) != len(y) or len(p) == 0:
        raise ValueError(f"need as many outcomes as probabilities (at least one), got {len(p)} and {len(y)}")
    # one block per distinct raw probability: [sum of right, count, sum of p]
    blocks: list[list[float]] = []
    for value in np.unique(p):
        sel = p == value
        blocks.append([float(y[sel].sum()), float(sel.sum()), float(p[sel].sum())])
    pooled: list[list[float]] = []
    for b in blocks:  # pool adjacent violators (ties pooled too, so long runs of right answers form one block)
        pooled.append(list(b))
        while len(pooled) > 1 and pooled[-2][0] / pooled[-2][1] >= pooled[-1][0] / pooled[-1][1]:
            last = pooled.pop()
            for k in range(3):
                pooled[-1][k] += last[k]
    blocks = pooled
    while len(blocks) > 1:  # pool blocks under min_block with their smaller neighbour
        i = min(range(len(blocks)), key=lambda k: blocks[k][1])
        if blocks[i][1] >= min_block:
            break
        j = i + 1 if i == 0 else i - 1 if i == len(blocks) - 1 else min(i - 1, i + 1, key=lambda k: blocks[k][1])
        lo, hi = min(i, j), max(i, j)
        blocks[lo : hi + 1] = [[blocks[lo][k] + blocks[hi][k] for k in range(3)]]
    raw = [b[2] / b[1] for b in blocks]
    cal = [(b[0] + 1) / (b[1] + 2) for b in blocks]
    # distinct, increasing raw knots
    out_r, out_c = [], []
    for r, c in zip(raw, cal):
        if out_r and r <= out_r[-1]:
            out_c[-1] = max(out_c[-1], c)
            continue
        out_r.append(float(min(max(r, 0.0), 1.0)))
        out_c.append(float(c))
    return ConfidenceMap(tuple(out_r), tuple(np.maximum.accumulate(out_c).tolist()))


@lru_cache(maxsize=1)
def default_confidence_map() -> ConfidenceMap:
    """The packaged map (``vision/models/reader_confidence.json``), or the identity when it is absent.

    Raises
    ------
    ValueError
        If the file is there but malformed (reinstall, or refit with
        ``python -m vision.lab.training.fit_confidence``).
    """
    if not DEFAULT_MAP_PATH.is_file():
        return ConfidenceMap.identity()
    try:
        data = json.loads(DEFAULT_MAP_PATH.read_text(encoding="utf-8"))
        return ConfidenceMap(tuple(data["map"]["raw"]), tuple(data["map"]["calibrated"]))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(
            f"confidence map {str(DEFAULT_MAP_PATH)!r} is malformed ({exc}); reinstall dicetable or "
            "refit it with 'python -m vision.lab.training.fit_confidence'"
        ) from None
