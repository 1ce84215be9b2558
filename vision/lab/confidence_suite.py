"""Each value given on the perturbation suite's pictures, with its stated confidence, warnings and truth.

Used twice (issue 37, item 5): ``python -m vision.lab.training.fit_confidence_model``
fits :mod:`vision.confidence_model` on these rows (DEV as it is is the suite's
``none`` condition), and ``benchmarks/perturbations.py --reliability`` prints
the reliability curve per condition from them (stated confidence against the
share right, per bin: :func:`vision.lab.reliability.reliability_bins`).

A value is right by the rules of :func:`vision.lab.stress.score_rendered`:
on a die lying flat it is right when it is the die's value; a value on a die
that must get none (cocked, stacked: ``Unreadable.LEANING``) or on no die at
all (an extra "die") is wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.confidence_model import FEATURES, recording
from vision.lab.dataset import LabelledImage
from vision.lab.evaluate import match_dice
from vision.lab.perturb import Perturbed
from vision.lab.perturb_suite import run_condition
from vision.lab.reliability import ReliabilityBin, expected_calibration_error, reliability_bins
from vision.reading import ImageReading
from vision.render import Unreadable

__all__ = ["ValuedDie", "valued_outcomes", "collect", "reliability_table", "format_reliability"]


@dataclass(frozen=True, slots=True)
class ValuedDie:
    """A value given: its condition, stated confidence, whether right, its warnings (:data:`FEATURES`) or None."""

    condition: str
    confidence: float
    right: bool
    features: np.ndarray | None


def valued_outcomes(pic: Perturbed, reading: ImageReading) -> list[tuple[int, bool]]:
    """``(index into reading.dice, right)`` for each die of `reading` given a value (see the module text)."""
    pairs = dict(match_dice([d.box for d in reading.dice], [t.box for t in pic.dice]))
    out = []
    for i, d in enumerate(reading.dice):
        if d.value is None:
            continue
        j = pairs.get(i)
        t = None if j is None else pic.dice[j]
        out.append((i, t is not None and t.unreadable != Unreadable.LEANING and d.value == t.value))
    return out


def collect(
    conditions: Sequence[str],
    photos: Sequence[LabelledImage],
    read: Callable[[np.ndarray], ImageReading],
    *,
    seed: int,
    renders: int,
    on_condition: Callable[[str, object, list[ValuedDie]], None] | None = None,
) -> list[ValuedDie]:
    """Read every picture of `conditions` (:func:`vision.lab.perturb_suite.run_condition`); one row per value given.

    ``read(image) -> ImageReading`` must state confidences
    (:func:`vision.reader.read_image` with ``calibrated=True``) so that the
    warnings are recorded; ``on_condition(name, counts, rows)`` is called after
    each condition with its :class:`vision.lab.stress.StressCounts` and rows.
    A value whose warnings were not recorded (a reader without the hook) gets
    NaN features.
    """
    rows: list[ValuedDie] = []
    for c in conditions:
        found: list[ValuedDie] = []
        last: list = []

        def recorded(image, last=last):
            with recording() as rec:
                reading = read(image)
            last[:] = rec
            return reading

        def on_image(k, pic, reading, counts, c=c, found=found, last=last):
            seen = {(tuple(box), value): f for box, value, f in last}
            for i, right in valued_outcomes(pic, reading):
                d = reading.dice[i]
                f = seen.get((tuple(d.box), d.value), np.full(len(FEATURES), np.nan))
                found.append(ValuedDie(c, float(d.confidence), right, f))

        counts = run_condition(c, photos, recorded, seed=seed, renders=renders, on_image=on_image)
        rows += found
        if on_condition is not None:
            on_condition(c, counts, found)
    return rows


def reliability_table(rows: Sequence[ValuedDie], n_bins: int = 10, lo: float = 0.0) -> dict[str, dict]:
    """Per condition (and ``"all"``): ``dice``, ``ece`` and ``bins`` of stated against observed, over ``[lo, 1]``."""
    out: dict[str, dict] = {}
    names = list(dict.fromkeys(r.condition for r in rows))
    for name in [*names, "all"]:
        sel = [r for r in rows if name == "all" or r.condition == name]
        bins = reliability_bins([r.confidence for r in sel], [r.right for r in sel], n_bins=n_bins, span=(lo, 1.0))
        out[name] = {
            "dice": sum(b.count for b in bins),
            "wrong": sum(not r.right for r in sel),
            "ece": expected_calibration_error(bins) if sel else None,
            "bins": [b.to_json() for b in bins],
        }
    return out


def format_reliability(table: dict[str, dict]) -> list[str]:
    """Text lines: per condition, each filled bin as ``lo-hi: stated/observed (n)``."""
    lines = ["reliability per condition (bin of stated confidence: mean stated / observed right, values given):"]
    for name, t in table.items():
        ece = "n/a" if t["ece"] is None else f"{100 * t['ece']:.1f}%"
        cells = [
            f"{b['lo']:.2f}-{b['hi']:.2f}: {100 * b['mean_confidence']:.1f}/{100 * b['accuracy']:.1f}% ({b['count']})"
            for b in t["bins"]
            if b["count"]
        ]
        lines.append(f"  {name:<14} {t['dice']:4d} values, {t['wrong']:3d} wrong, ECE {ece:>5}: " + "; ".join(cells))
    return lines


def bins_of(table: dict[str, dict], name: str) -> list[ReliabilityBin]:
    """The :class:`ReliabilityBin` list of one condition of :func:`reliability_table` (for drawing)."""
    return [ReliabilityBin(**b) for b in table[name]["bins"]]


def draw_reliability_grid(table: dict[str, dict], columns: int = 6, tile: tuple[int, int] = (400, 380)) -> np.ndarray:
    """A reliability diagram per condition of :func:`reliability_table` (``"all"`` first) in a grid; BGR uint8."""
    from vision.lab.reliability import draw_legend, draw_reliability

    names = ["all", *[n for n in table if n != "all"]]
    tiles = [
        draw_reliability(bins_of(table, n), title=n, size=tile, ece=table[n]["ece"] or 0.0)
        for n in names
        if table[n]["dice"]
    ]
    while len(tiles) % columns:
        tiles.append(np.full_like(tiles[0], 255))
    grid = np.vstack([np.hstack(tiles[i : i + columns]) for i in range(0, len(tiles), columns)])
    header = np.full((40, grid.shape[1], 3), 255, np.uint8)
    end = draw_legend(header, 80, 26)
    cv2.putText(
        header,
        "above the diagonal: under-confident; ECE: expected calibration error",
        (end, 28),
        cv2.FONT_HERSHEY_SIMPLEX,
        0.45,
        (40, 40, 40),
        1,
        cv2.LINE_AA,
    )
    return np.vstack([header, grid])
