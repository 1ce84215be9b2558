"""Calibration of the reader's stated confidence: reliability bins, ECE and the plot.

For every die given a value and matched to a labelled die, the reader's stated
confidence (:attr:`vision.reading.DieReading.confidence`, the probability of the
value it named) is paired with whether that value is right. Binned into equal
confidence bins, a calibrated reader's accuracy in each bin equals the bin's
mean confidence (the diagonal of the plot). The expected calibration error is

.. math:: \\mathrm{ECE} = \\sum_b \\frac{n_b}{N} \\left| \\mathrm{acc}_b - \\mathrm{conf}_b \\right|

References
----------
.. [1] C. Guo, G. Pleiss, Y. Sun, K. Q. Weinberger, "On Calibration of Modern
   Neural Networks", ICML 2017 (reliability diagrams, ECE).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

__all__ = ["ReliabilityBin", "reliability_bins", "expected_calibration_error", "draw_reliability"]


@dataclass(frozen=True, slots=True)
class ReliabilityBin:
    """One confidence bin ``[lo, hi)`` (the last one includes 1.0).

    Parameters
    ----------
    lo, hi : float
        Bin edges, stated confidence in ``[0, 1]``.
    count : int
        Dice whose stated confidence falls in the bin.
    mean_confidence : float
        Their mean stated confidence (0 when empty).
    accuracy : float
        Share of them whose value is right (0 when empty).
    """

    lo: float
    hi: float
    count: int
    mean_confidence: float
    accuracy: float

    def to_json(self) -> dict:
        """Plain JSON form (rounded to 4 decimals)."""
        return {
            "lo": round(self.lo, 4),
            "hi": round(self.hi, 4),
            "count": self.count,
            "mean_confidence": round(self.mean_confidence, 4),
            "accuracy": round(self.accuracy, 4),
        }


def reliability_bins(
    confidence: Sequence[float], correct: Sequence[bool], *, n_bins: int = 10, span: tuple[float, float] = (0.0, 1.0)
) -> tuple[ReliabilityBin, ...]:
    """Bin stated confidences into `n_bins` equal bins over `span` (default ``[0, 1]``).

    Parameters
    ----------
    confidence : sequence of float, length N
        Stated confidence of each die given a value, in ``[0, 1]``.
    correct : sequence of bool, length N
        Whether each of those values is right.
    n_bins : int, optional
        Number of equal-width bins, at least 1.
    span : tuple of 2 float, optional
        ``(lo, hi)`` range to bin, ``0 <= lo < hi <= 1``; confidences outside it
        are left out (a zoom on part of the range).

    Returns
    -------
    tuple of ReliabilityBin
        `n_bins` bins from low to high confidence (empty ones included).

    Raises
    ------
    ValueError
        If the lengths differ, a confidence is outside ``[0, 1]`` or `n_bins` < 1.
    """
    conf = np.asarray(confidence, np.float64).reshape(-1)
    ok = np.asarray(correct, bool).reshape(-1)
    if conf.shape != ok.shape:
        raise ValueError(f"confidence and correct must have the same length, got {conf.size} and {ok.size}")
    if conf.size and (conf.min() < 0.0 or conf.max() > 1.0 or not np.isfinite(conf).all()):
        raise ValueError(f"confidences must be in [0, 1], got values from {conf.min()!r} to {conf.max()!r}")
    if n_bins < 1:
        raise ValueError(f"n_bins must be at least 1, got {n_bins!r}")
    lo, hi = (float(v) for v in span)
    if not 0.0 <= lo < hi <= 1.0:
        raise ValueError(f"span must be (lo, hi) with 0 <= lo < hi <= 1, got {span!r}")
    inside = (conf >= lo) & (conf <= hi)
    conf, ok = conf[inside], ok[inside]
    idx = np.minimum(((conf - lo) / (hi - lo) * n_bins).astype(np.int64), n_bins - 1)
    out = []
    for b in range(n_bins):
        sel = idx == b
        n = int(sel.sum())
        out.append(
            ReliabilityBin(
                lo + (hi - lo) * b / n_bins,
                lo + (hi - lo) * (b + 1) / n_bins,
                n,
                float(conf[sel].mean()) if n else 0.0,
                float(ok[sel].mean()) if n else 0.0,
            )
        )
    return tuple(out)


def expected_calibration_error(bins: Sequence[ReliabilityBin]) -> float:
    """ECE of `bins`: count-weighted mean of ``|accuracy - mean confidence|`` (0 when empty)."""
    total = sum(b.count for b in bins)
    if not total:
        return 0.0
    return float(sum(b.count * abs(b.accuracy - b.mean_confidence) for b in bins) / total)


_INK = (40, 40, 40)
_GRID = (225, 225, 225)
_BAR = (200, 140, 60)  # BGR: blue
_GAP = (80, 80, 230)  # BGR: red
_FONT = cv2.FONT_HERSHEY_SIMPLEX


def _text(img, s, xy, scale=0.45, colour=_INK, thick=1, anchor="left"):
    (tw, th), _ = cv2.getTextSize(s, _FONT, scale, thick)
    x, y = xy
    if anchor == "centre":
        x -= tw // 2
    elif anchor == "right":
        x -= tw
    cv2.putText(img, s, (int(x), int(y)), _FONT, scale, colour, thick, cv2.LINE_AA)


#: A diagram narrower than this (px) is drawn as a grid's tile: a short subtitle and no legend.
COMPACT_BELOW_PX: int = 600


def draw_reliability(
    bins: Sequence[ReliabilityBin],
    *,
    title: str = "Reliability of stated confidence",
    size: tuple[int, int] = (720, 640),
    span: tuple[float, float] = (0.0, 1.0),
    ece: float | None = None,
) -> np.ndarray:
    """Draw a reliability diagram with OpenCV.

    Bars show each bin's observed accuracy; a dot marks (mean stated confidence,
    accuracy) with its area proportional to the bin's count; the red part of a bar
    is the gap to the diagonal (perfect calibration). A strip below gives each
    bin's count.

    Parameters
    ----------
    bins : sequence of ReliabilityBin
        From :func:`reliability_bins`.
    title : str, optional
        First line of the title; the second gives N and the ECE.
    size : tuple of 2 int, optional
        ``(width, height)`` of the picture in pixels.
    span : tuple of 2 float, optional
        Range of both axes (a zoom, as for :func:`reliability_bins`); accuracies
        below it are drawn at its bottom.
    ece : float, optional
        The ECE to print (a fraction); default: worked out from `bins`. Give
        it when `bins` were rounded (read back from JSON), so the plot says
        what the text report says.

    Returns
    -------
    ndarray of shape (height, width, 3), dtype uint8
        The plot, BGR, on white.
    """
    W, H = size
    img = np.full((H, W, 3), 255, np.uint8)
    left, right, top = 80, W - 30, 96
    strip_h = 60
    bottom = H - 70 - strip_h
    pw, ph = right - left, bottom - top

    s_lo, s_hi = span

    def px(c: float) -> int:
        return int(round(left + (c - s_lo) / (s_hi - s_lo) * pw))

    def py(a: float) -> int:
        return int(round(bottom - min(max((a - s_lo) / (s_hi - s_lo), 0.0), 1.0) * ph))

    total = sum(b.count for b in bins)
    ece = expected_calibration_error(bins) if ece is None else float(ece)
    ece_text = f"{100 * ece:.1f}%" if total else "n/a"  # no dice: nothing to measure, not a perfect 0
    _text(img, title, (W // 2, 24), 0.6, thick=2, anchor="centre")
    compact = W < COMPACT_BELOW_PX  # a tile of a grid: short subtitle, the legend is the grid's
    subtitle = (
        f"{total} values, ECE {ece_text}"
        if compact
        else f"{total} dice given a value; expected calibration error (ECE) {ece_text}; above the line: under-confident"
    )
    _text(img, subtitle, (W // 2, 48), 0.45, anchor="centre")
    digits = 1 if s_hi - s_lo > 0.5 else 2
    for t in np.linspace(s_lo, s_hi, 6):
        cv2.line(img, (px(t), top), (px(t), bottom), _GRID, 1)
        cv2.line(img, (left, py(t)), (right, py(t)), _GRID, 1)
        _text(img, f"{t:.{digits}f}", (px(t), bottom + 18), 0.4, anchor="centre")
        _text(img, f"{t:.{digits}f}", (left - 8, py(t) + 5), 0.4, anchor="right")
    for b in bins:
        if not b.count:
            continue
        x0, x1 = px(b.lo) + 3, px(b.hi) - 3
        cv2.rectangle(img, (x0, py(b.accuracy)), (x1, bottom), _BAR, -1)
        if b.accuracy < b.mean_confidence:  # over-confident: the shortfall up to the stated confidence
            cv2.rectangle(img, (x0, py(b.mean_confidence)), (x1, py(b.accuracy)), _GAP, 1)
    # Diagonal: perfect calibration (dashed).
    for k in range(0, 40, 2):
        a, c = s_lo + (s_hi - s_lo) * k / 40, s_lo + (s_hi - s_lo) * (k + 1) / 40
        cv2.line(img, (px(a), py(a)), (px(c), py(c)), (120, 120, 120), 2, cv2.LINE_AA)
    biggest = max((b.count for b in bins), default=1) or 1
    for b in bins:
        if b.count:
            r = int(round(3 + 11 * np.sqrt(b.count / biggest)))
            cv2.circle(img, (px(b.mean_confidence), py(b.accuracy)), r, (30, 30, 30), -1, cv2.LINE_AA)
            cv2.circle(img, (px(b.mean_confidence), py(b.accuracy)), r, (255, 255, 255), 1, cv2.LINE_AA)
    cv2.rectangle(img, (left, top), (right, bottom), _INK, 1)
    _text(
        img,
        "stated confidence (probability of the value named)",
        ((left + right) // 2, bottom + 40),
        0.5,
        anchor="centre",
    )
    label = np.full((24, ph, 3), 255, np.uint8)
    _text(label, "observed accuracy", (ph // 2, 17), 0.5, anchor="centre")
    rot = cv2.rotate(label, cv2.ROTATE_90_COUNTERCLOCKWISE)
    img[top : top + rot.shape[0], 14 : 14 + rot.shape[1]] = rot
    # Count strip.
    s_top, s_bot = H - strip_h - 10, H - 24
    _text(img, "dice", (left - 8, (s_top + s_bot) // 2 + 5), 0.4, anchor="right")
    for b in bins:
        x0, x1 = px(b.lo) + 3, px(b.hi) - 3
        hgt = int(round((s_bot - s_top) * b.count / biggest))
        if b.count:
            cv2.rectangle(img, (x0, s_bot - max(hgt, 1)), (x1, s_bot), (160, 160, 160), -1)
        _text(img, str(b.count), ((x0 + x1) // 2, s_bot + 15), 0.38, anchor="centre")
    cv2.line(img, (left, s_bot), (right, s_bot), _INK, 1)
    if not compact:
        draw_legend(img, left, 76)  # one row under the title, outside the plot
    return img


def draw_legend(img: np.ndarray, x: int, y: int) -> int:
    """Draw the reliability diagram's legend in one row from (`x`, `y`) (text baseline); return the x it ends at."""
    cv2.rectangle(img, (x, y - 9), (x + 16, y + 3), _BAR, -1)
    _text(img, "accuracy in bin", (x + 22, y + 2), 0.4)
    x += 140
    cv2.circle(img, (x + 8, y - 3), 5, (30, 30, 30), -1, cv2.LINE_AA)
    _text(img, "bin (size: dice)", (x + 20, y + 2), 0.4)
    x += 150
    cv2.line(img, (x, y - 3), (x + 16, y - 3), (120, 120, 120), 2, cv2.LINE_AA)
    _text(img, "calibrated", (x + 22, y + 2), 0.4)
    x += 105
    cv2.rectangle(img, (x, y - 9), (x + 16, y + 3), _GAP, 1)
    _text(img, "over-confident gap", (x + 22, y + 2), 0.4)
    return x + 160
