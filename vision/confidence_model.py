"""A stated confidence that warns: the face reader's probability and what the picture says about the die.

The face reader's probability alone (:mod:`vision.confidence`) states about
99 % for every value it gives, under glare, among clutter or on stacked dice
alike, where the values given are 76-91 % right (``docs/perturbations.md``).
This module states a value's confidence by a logistic model of cheap warnings
that those conditions change and that the reader has at hand (:data:`FEATURES`):

* ``logit_p``: the log-odds of the face reader's probability of the value (the
  only feature that raises the confidence; its weight is kept >= 0, so the
  confidence never falls as the probability rises);
* ``runner_up``: the probability of the second-best class ("not a die" too):
  a small margin between the two best answers;
* ``first_doubt`` and ``second_look``: 1 minus the first look's probability of
  the value, and whether the first look was unsure enough to need a second one
  (:data:`vision.reader_second_look.SECOND_LOOK_BELOW`);
* ``det_doubt``: 1 minus the die detector's score (keys and tiles score lower);
* ``size_off`` and ``aspect_off``: ``|log|`` of the box's long side over the
  median of the photo's other dice, and of its width over its height (dice are one
  size and square from above; a stacked or cocked die's box is bigger, a key's
  is oblong);
* ``glint`` and ``blown``: a pip-sized near-white spot on the face
  (:func:`vision.reader_glints.glint_spots`), and the share of the box blown out
  (every channel >= 245);
* ``flat``: 1 minus the grey spread (95th - 5th percentile) of the box over
  160 levels: a washed-out or dark die;
* ``unknown_share``: the share of the photo's dice that got no value (glare,
  clutter and tilt leave many dice unknown; the valued ones beside them are
  less sure);
* ``overlap``: the largest share of the die's box that another die's box
  covers (dice lie side by side; a die on or against another one overlaps it).
* ``lean``: how far the die's body reaches beyond its top face where a flat
  die shows none, over the leaning verdict's reach
  (:func:`vision.reader_stacked.lean_shares`; a die cocked a little, just
  under it, shows more of a side face than a flat one), 0 without a clean outline;
* ``unclear``: 1 where the top face could not be cut out cleanly (ivory and
  black dice, whose top and side faces are one colour: the cocked and stacked
  dice that get a value are mostly such), 0 where it was or was not looked for
  (fewer than three dice).

Each warning's weight is kept <= 0 (a warning can only lower the confidence).
The model is ``sigmoid(bias + w . features)``, fitted with L2-regularised
Newton steps under those sign constraints (an active set: a weight with the
wrong sign is pinned at 0 and the rest refitted) by
``python -m vision.lab.training.fit_confidence_model`` on DEV and on the
perturbation suite's pictures (another seed than the benchmark's), and stored
under ``"model"`` in ``vision/models/reader_confidence.json``. Without it the
isotonic map of the probability alone is used. The cost: numpy on the die's box,
about 0.1 ms a die given a value.

Conventions: images are BGR ``uint8`` arrays indexed ``(row, col)``; boxes are
``(x, y, w, h)`` in pixels, ``x`` right, ``y`` down.
"""

from __future__ import annotations

import contextlib
import json
import math
import statistics
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import cv2
import numpy as np

from vision.confidence import DEFAULT_MAP_PATH, default_confidence_map
from vision.reader_glints import GLINT_LEVEL, glint_spots
from vision.reader_second_look import SECOND_LOOK_BELOW
from vision.reading import DieReading

__all__ = [
    "FEATURES",
    "ConfidenceModel",
    "fit_confidence_model",
    "die_features",
    "stated_confidences",
    "default_confidence_model",
    "recording",
]

#: The model's inputs, in order; the first raises the confidence, every other one is a warning.
FEATURES: tuple[str, ...] = (
    "logit_p",
    "runner_up",
    "first_doubt",
    "second_look",
    "det_doubt",
    "size_off",
    "aspect_off",
    "glint",
    "blown",
    "flat",
    "unknown_share",
    "overlap",
    "lean",
    "unclear",
)

#: Probabilities are clipped to this before the log-odds (a network's 0.99999 says no more than 0.999).
_P_CLIP: float = 0.999
#: Grey spread (95th - 5th percentile, levels) of a die with clear pips: DEV dice show 120-220.
_SPREAD_LEVELS: float = 160.0
#: The blown share and grey spread are measured on the box resampled to 64 px: a glint worth
#: looking for (0.3 of a pip's radius, a pip about 1/12 of the side) is at least 1/20 of the side across.
_ROI_PX: int = 64
#: Every channel at least this is blown out (:data:`vision.reader_glints.GLINT_LEVEL`).
_BLOWN_LEVEL: int = GLINT_LEVEL
#: ``lean`` is capped here: a die given a value is under 1 (the leaning verdict), a higher share only where
#: another rule gave the value first (a clipped outline), and one outlier should not steer the fit.
_LEAN_CAP: float = 1.5


@dataclass(frozen=True, slots=True)
class ConfidenceModel:
    """``confidence = sigmoid(bias + sum(weights * features))`` over :data:`FEATURES`.

    Raises
    ------
    ValueError
        If the features are not :data:`FEATURES`, a weight is missing, ``logit_p``'s
        weight is negative or a warning's is positive.
    """

    features: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float

    def __post_init__(self) -> None:
        if tuple(self.features) != FEATURES or len(self.weights) != len(FEATURES):
            raise ValueError(f"a confidence model needs one weight for each of {', '.join(FEATURES)}")
        if self.weights[0] < 0 or any(w > 0 for w in self.weights[1:]):
            raise ValueError("logit_p's weight must be >= 0 and every warning's <= 0")

    def __call__(self, features: np.ndarray) -> np.ndarray:
        """Confidence of each row of `features` (shape (N, len(FEATURES)) or (len(FEATURES),))."""
        z = self.bias + np.asarray(features, np.float64) @ np.asarray(self.weights)
        return 1.0 / (1.0 + np.exp(-z))

    def to_json(self) -> dict:
        """``{"features": [...], "weights": [...], "bias": b}``, rounded to 4 decimals."""
        return {
            "features": list(self.features),
            "weights": [round(w, 4) for w in self.weights],
            "bias": round(self.bias, 4),
        }


def fit_confidence_model(features: np.ndarray, right: Sequence[bool], *, l2: float = 1.0) -> ConfidenceModel:
    """Fit a :class:`ConfidenceModel` by regularised logistic regression under the sign constraints.

    Parameters
    ----------
    features : ndarray of shape (N, len(FEATURES))
        One row per value given (:func:`die_features`).
    right : sequence of N bool
        Whether each value was right.
    l2 : float, optional
        Ridge penalty on the weights (not the bias): with a few hundred wrong
        values, 1.0 keeps a weight from chasing a handful of them.

    Returns
    -------
    ConfidenceModel

    Raises
    ------
    ValueError
        On a shape mismatch or no rows.
    """
    x = np.asarray(features, np.float64)
    y = np.asarray(right, np.float64)
    if x.ndim != 2 or x.shape[1] != len(FEATURES) or len(x) != len(y) or len(x) == 0:
        raise ValueError(f"need (N, {len(FEATURES)}) features and N outcomes, got {x.shape} and {y.shape}")
    free = np.ones(len(FEATURES), bool)
    sign = np.array([1.0] + [-1.0] * (len(FEATURES) - 1))
    for _ in range(len(FEATURES) + 1):  # active set: pin a wrong-signed weight at 0, refit the rest
        w = _newton(x[:, free], y, l2)
        full = np.zeros(len(FEATURES) + 1)
        full[0] = w[0]
        full[1:][free] = w[1:]
        wrong = free & (full[1:] * sign < 0)
        if not wrong.any():
            break
        free &= ~wrong
    return ConfidenceModel(FEATURES, tuple(float(v) for v in full[1:]), float(full[0]))


def _newton(x: np.ndarray, y: np.ndarray, l2: float, steps: int = 50) -> np.ndarray:
    """Bias and weights of an L2-regularised logistic regression (Newton's method); the bias is not penalised."""
    a = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(a.shape[1])
    w[0] = np.log((y.sum() + 1) / (len(y) - y.sum() + 1))
    pen = np.full(a.shape[1], l2)
    pen[0] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(a @ w)))
        grad = a.T @ (p - y) + pen * w
        hess = (a * (p * (1 - p))[:, None]).T @ a + np.diag(pen + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def die_features(
    image: np.ndarray,
    box: tuple[int, int, int, int],
    probs: np.ndarray,
    first_look: np.ndarray,
    value: int,
    detector_score: float,
    median_side: float,
    unknown_share: float,
    overlap: float = 0.0,
    glint_count: int | None = None,
    lean: float | None = 0.0,
) -> np.ndarray:
    """The :data:`FEATURES` of one die given `value`, shape (len(FEATURES),), float64.

    Parameters
    ----------
    image : ndarray of shape (H, W, 3), dtype uint8
        The photo, BGR.
    box : (x, y, w, h)
        The die's box, px.
    probs, first_look : ndarray of shape (7,)
        The face reader's final probabilities and its first look's.
    value : int
        The value given, 1-6.
    detector_score : float
        The die detector's score of the box.
    median_side : float
        Median long side of the photo's other dice, px (0: the die is alone).
    unknown_share : float
        Share of the photo's dice that got no value.
    overlap : float, optional
        Largest share of `box` inside another die's box (:func:`_overlaps`).
    glint_count : int, optional
        How many glint spots the box holds, when already found
        (:func:`vision.reader_glints.glint_spots` on `image` and `box`); None: looked for here.
    lean : float or None, optional
        :func:`vision.reader_stacked.lean_shares`' share for the die; None: its top face was looked
        for and not cut out cleanly (``unclear``).
    """
    p = min(max(float(probs[value]), 1.0 - _P_CLIP), _P_CLIP)
    runner_up = max(float(q) for k, q in enumerate(probs) if k != value)
    first = float(first_look[value])
    x, y, w, h = (int(v) for v in box)
    side = max(w, h, 1)
    size_off = abs(math.log(side / median_side)) if median_side > 0 else 0.0
    aspect_off = abs(math.log(max(w, 1) / max(h, 1)))
    roi = image[max(0, y) : y + h, max(0, x) : x + w]
    if roi.size and side > _ROI_PX:  # shares and percentiles need no more pixels than this (8 us; a copy: 33)
        roi = cv2.resize(roi, (min(roi.shape[1], _ROI_PX), min(roi.shape[0], _ROI_PX)), interpolation=cv2.INTER_NEAREST)
    blown = flat = 0.0
    if roi.size:  # OpenCV's inRange and histogram: numpy's min over channels and percentile cost 0.8 ms a die
        n = roi.shape[0] * roi.shape[1]
        blown = cv2.countNonZero(cv2.inRange(roi, (_BLOWN_LEVEL,) * 3, (255,) * 3)) / n
        grey = cv2.cvtColor(roi, cv2.COLOR_BGR2GRAY)
        cum = cv2.calcHist([grey], [0], None, [256], [0, 256]).ravel().cumsum()
        lo, hi = np.searchsorted(cum, (0.05 * n, 0.95 * n))
        flat = 1.0 - min(1.0, float(hi - lo) / _SPREAD_LEVELS)
    # a glint is made of blown-out pixels (GLINT_LEVEL == _BLOWN_LEVEL): without any, none is looked for
    if blown > 0 and glint_count is None:
        glint_count = len(glint_spots(image, box))
    glint = 1.0 if blown > 0 and glint_count else 0.0
    return np.array(
        [
            math.log(p / (1 - p)),
            runner_up,
            1.0 - first,
            float(max(float(q) for q in first_look[1:]) < SECOND_LOOK_BELOW),
            1.0 - float(detector_score),
            size_off,
            aspect_off,
            glint,
            blown,
            flat,
            unknown_share,
            overlap,
            min(lean, _LEAN_CAP) if lean is not None else 0.0,
            1.0 if lean is None else 0.0,
        ]
    )


_RECORDER: list | None = None


@contextlib.contextmanager
def recording() -> Iterator[list]:
    """Collect ``(box, value, features)`` of every die given a value while open (for fitting the model)."""
    global _RECORDER
    previous, _RECORDER = _RECORDER, []
    try:
        yield _RECORDER
    finally:
        _RECORDER = previous


def stated_confidences(
    image: np.ndarray,
    dice: list[DieReading],
    scores: Sequence[float],
    probs: Sequence[np.ndarray],
    first_looks: Sequence[np.ndarray],
    glint_counts: Sequence[int | None] | None = None,
    needed: Sequence[bool] | None = None,
    leans: Sequence[float | None] | None = None,
) -> list[DieReading]:
    """`dice` with each value's confidence stated by the packaged model (or the map, without one).

    `dice`, `scores` (detector), `probs` and `first_looks` (face reader) are
    aligned; unknown dice are returned as they are. `glint_counts`: each die's
    glint spots where already found (:func:`die_features`); `needed`: False
    for a die the reader drops, returned as it is too (the other dice's
    features still count it; every die is stated while :func:`recording`); `leans`: each die's
    :func:`vision.reader_stacked.lean_shares` (None: its top face unclear; default 0 for all).
    """
    model = default_confidence_model()
    if model is None and _RECORDER is None:
        cmap = default_confidence_map()
        return [d if d.value is None else replace(d, confidence=cmap(d.confidence)) for d in dice]
    sides = [max(d.box[2], d.box[3]) for d in dice]
    unknown_share = sum(d.value is None for d in dice) / len(dice) if dice else 0.0
    glint_counts = glint_counts or [None] * len(dice)
    needed = needed if needed is not None and _RECORDER is None else [True] * len(dice)
    leans = leans if leans is not None else [0.0] * len(dice)
    out = []
    for k, (d, score, p, first, overlap, glint_count, need, lean) in enumerate(
        zip(dice, scores, probs, first_looks, _overlaps([d.box for d in dice]), glint_counts, needed, leans)
    ):
        if d.value is None or not need:
            out.append(d)
            continue
        others = sides[:k] + sides[k + 1 :]
        median_side = float(statistics.median(others)) if others else 0.0  # np.median: 50 us a call
        f = die_features(image, d.box, p, first, d.value, score, median_side, unknown_share, overlap, glint_count, lean)
        if _RECORDER is not None:
            _RECORDER.append((d.box, d.value, f))
        conf = float(model(f)) if model is not None else default_confidence_map()(d.confidence)
        out.append(replace(d, confidence=conf))
    return out


def _overlaps(boxes: list[tuple[int, int, int, int]]) -> list[float]:
    """For each box, the largest share of its area inside another box of `boxes`."""
    b = np.asarray(boxes, np.float64).reshape(-1, 4)
    x0, y0, x1, y1 = b[:, 0], b[:, 1], b[:, 0] + b[:, 2], b[:, 1] + b[:, 3]
    iw = np.clip(np.minimum(x1[:, None], x1[None]) - np.maximum(x0[:, None], x0[None]), 0, None)
    ih = np.clip(np.minimum(y1[:, None], y1[None]) - np.maximum(y0[:, None], y0[None]), 0, None)
    share = iw * ih / np.maximum(b[:, 2] * b[:, 3], 1.0)[:, None]
    np.fill_diagonal(share, 0.0)
    return share.max(axis=1).tolist() if len(b) > 1 else [0.0] * len(b)


@lru_cache(maxsize=1)
def default_confidence_model() -> ConfidenceModel | None:
    """The packaged model (``"model"`` in ``vision/models/reader_confidence.json``), None without one.

    Raises
    ------
    ValueError
        If the entry is there but malformed (refit it with
        ``python -m vision.lab.training.fit_confidence_model``).
    """
    if not DEFAULT_MAP_PATH.is_file():
        return None
    try:
        data = json.loads(DEFAULT_MAP_PATH.read_text(encoding="utf-8")).get("model")
        if data is None:
            return None
        return ConfidenceModel(tuple(data["features"]), tuple(data["weights"]), float(data["bias"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(
            f"confidence model in {str(DEFAULT_MAP_PATH)!r} is malformed ({exc}); refit it with "
            "'python -m vision.lab.training.fit_confidence_model'"
        ) from None
