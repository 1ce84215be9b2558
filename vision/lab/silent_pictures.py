"""Pictures of the silent errors a benchmark found: truth in green (red: a die that must get no value), reading in red.

Used by ``benchmarks/perturbations.py --save`` and ``benchmarks/oblique.py --save``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

__all__ = ["truth_and_reading", "silent_saver"]


def truth_and_reading(image: np.ndarray, truths, reading) -> np.ndarray:
    """A copy of `image` (BGR uint8) with each truth's box and value and each die read (its box inset, its value).

    `truths` are objects with ``box`` ``(x, y, w, h)``, ``value`` and optionally ``unreadable`` (drawn red: a
    die that must get no value); `reading` is a :class:`vision.reading.ImageReading` ("?" for an unknown die).
    """
    img = image.copy()
    for t in truths:
        x, y, w, h = t.box
        colour = (0, 0, 255) if getattr(t, "unreadable", None) else (0, 200, 0)
        cv2.rectangle(img, (x, y), (x + w, y + h), colour, 1)
        cv2.putText(img, str(t.value), (x, max(y - 3, 10)), cv2.FONT_HERSHEY_SIMPLEX, 0.5, colour, 1)
    for d in reading.dice:
        x, y, w, h = d.box
        cv2.rectangle(img, (x + 2, y + 2), (x + w - 2, y + h - 2), (0, 0, 255), 1)
        label = "?" if d.value is None else str(d.value)
        cv2.putText(img, label, (x + w - 12, y + h + 14), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 255), 1)
    return img


def silent_saver(folder: Path, name: str) -> Callable:
    """A benchmark's per-picture callback ``save(k, pic, reading, counts)``: writes ``FOLDER/NAME_K.png`` for
    each picture with a silent error (``counts.silent``), drawn by :func:`truth_and_reading`."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = name.replace(" ", "_")

    def save(k, pic, reading, counts) -> None:
        if counts.silent:
            cv2.imwrite(str(folder / f"{stem}_{k}.png"), truth_and_reading(pic.image, pic.dice, reading))

    return save
