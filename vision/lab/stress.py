"""Rendered stress sets: the pip reader per condition of :func:`vision.render.render_randomised`.

Each condition's set is ``n`` images of five dice (values and seeds drawn from
one seed), read with a reader (default :func:`vision.reader.read_image`) and
scored against the renderer's truth with :func:`vision.lab.evaluate.match_dice`.

Scoring per die: a *readable* die (lying flat, whole in the picture) is right,
wrong (a value given and wrong: a silent error), unknown or missed. An
*unreadable* die (:class:`vision.render.Unreadable`) must not mislead: a leaning
die given any value, or a die cut by the border given a wrong value, is a silent
error; reading a cut die right, calling it unknown or dropping it are all fine.
A die read where none was drawn and given a value is a silent error too; one
found where none was drawn and left unknown is counted apart (a phantom: the
table would ask for a re-roll that fixes nothing).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from vision.lab.evaluate import match_dice
from vision.reading import ImageReading
from vision.render import RenderedTray, Unreadable, render_randomised

__all__ = ["StressCounts", "score_rendered", "run_stress", "close_up_window"]


@dataclass(frozen=True, slots=True)
class StressCounts:
    """Outcome counts of one stress set (or one image).

    Parameters
    ----------
    images : int
        Images read.
    dice : int
        Readable dice drawn (flat and whole).
    right, wrong, unknown, missed : int
        Readable dice read right, given a wrong value, found without a value, not found.
    unreadable : int
        Dice drawn leaning or cut by the border.
    unreadable_valued : int
        Of those, leaning dice given any value plus cut dice given a wrong value
        (silent errors).
    extra_valued : int
        Dice read with a value where none was drawn (silent errors).
    extra_unknown : int
        Dice found where none was drawn, without a value (phantoms: not silent,
        but the table asks for a re-roll).
    ms : float
        Total reading time, milliseconds of wall clock.
    """

    images: int = 0
    dice: int = 0
    right: int = 0
    wrong: int = 0
    unknown: int = 0
    missed: int = 0
    unreadable: int = 0
    unreadable_valued: int = 0
    extra_valued: int = 0
    extra_unknown: int = 0
    ms: float = 0.0

    def __add__(self, other: StressCounts) -> StressCounts:
        return StressCounts(*(getattr(self, f) + getattr(other, f) for f in self.__slots__))

    @property
    def silent(self) -> int:
        """Silent errors: wrong values, values on unreadable dice, valued extras."""
        return self.wrong + self.unreadable_valued + self.extra_valued

    @property
    def accuracy(self) -> float:
        """Readable dice read right over readable dice (0 when there are none)."""
        return self.right / self.dice if self.dice else 0.0

    @property
    def silent_rate(self) -> float:
        """Silent errors over all dice drawn (readable and unreadable)."""
        return self.silent / max(1, self.dice + self.unreadable)

    @property
    def ms_per_image(self) -> float:
        return self.ms / max(1, self.images)


def score_rendered(tray: RenderedTray, reading: ImageReading, ms: float = 0.0) -> StressCounts:
    """Score one reading of a rendered tray; see the module text for the rules.

    Parameters
    ----------
    tray : RenderedTray
        The render, with each die's truth (value, box, ``unreadable``).
    reading : ImageReading
        What the reader reported for ``tray.image``.
    ms : float, optional
        Reading time to record, ms.

    Returns
    -------
    StressCounts
        Counts for this one image.
    """
    pairs = match_dice([d.box for d in reading.dice], [d.box for d in tray.dice])
    by_true = {j: reading.dice[i] for i, j in pairs}
    matched = {i for i, _ in pairs}
    c = dict(images=1, dice=0, right=0, wrong=0, unknown=0, missed=0, unreadable=0, unreadable_valued=0)
    for j, t in enumerate(tray.dice):
        r = by_true.get(j)
        if t.unreadable is not None:
            c["unreadable"] += 1
            if r is not None and r.value is not None and (t.unreadable == Unreadable.LEANING or r.value != t.value):
                c["unreadable_valued"] += 1
            continue
        c["dice"] += 1
        if r is None:
            c["missed"] += 1
        elif r.value is None:
            c["unknown"] += 1
        elif r.value == t.value:
            c["right"] += 1
        else:
            c["wrong"] += 1
    extras = [d for i, d in enumerate(reading.dice) if i not in matched]
    valued = sum(1 for d in extras if d.value is not None)
    return StressCounts(**c, extra_valued=valued, extra_unknown=len(extras) - valued, ms=ms)


def run_stress(
    condition: str | None,
    n: int,
    *,
    seed: int = 0,
    n_dice: int = 5,
    read: Callable[[np.ndarray], ImageReading] | None = None,
    on_image: Callable[[int, RenderedTray, ImageReading, StressCounts], None] | None = None,
) -> StressCounts:
    """Render `n` images of `condition` and score the reader on them.

    Parameters
    ----------
    condition : str or None
        One of :data:`vision.render.CONDITIONS`, or None for fully random conditions.
    n : int
        Images to render, at least 1.
    seed : int, optional
        Seed of the values and renders (image ``k`` uses values and a render seed
        drawn from ``seed``, the same for every condition).
    n_dice : int, optional
        Dice per image, 1-30.
    read : callable, optional
        ``read(image_bgr) -> ImageReading``; default :func:`vision.reader.read_image`.
    on_image : callable, optional
        Called as ``on_image(k, tray, reading, counts)`` after image ``k`` is scored.

    Returns
    -------
    StressCounts
        Summed over the `n` images.

    Raises
    ------
    ValueError
        If `n` is under 1 or `condition` is unknown.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1 image, got {n!r}")
    if read is None:
        from vision.reader import read_image as read
    rng = np.random.default_rng(seed)
    total = StressCounts()
    for k in range(n):
        values = [int(v) for v in rng.integers(1, 7, n_dice)]
        tray = render_randomised(values, seed=int(rng.integers(2**31)), condition=condition)
        t0 = time.perf_counter()
        reading = read(np.asarray(tray.image))
        counts = score_rendered(tray, reading, (time.perf_counter() - t0) * 1000.0)
        if on_image is not None:
            on_image(k, tray, reading, counts)
        total = total + counts
    return total


def close_up_window(
    box: tuple[float, float, float, float], share: float, shape: tuple[int, int]
) -> tuple[int, int, int, int]:
    """The square window around a die in which it fills `share` of the side: a close-up made from a wider photo.

    Parameters
    ----------
    box : (x, y, w, h)
        The die's box, px.
    share : float
        The die's long side over the window's side, in ``(0, 1]``.
    shape : (H, W)
        The photo's size, px; the window is clipped to it.

    Returns
    -------
    (x0, y0, x1, y1)
        The window's corners, px, for ``image[y0:y1, x0:x1]``.
    """
    x, y, w, h = box
    side = max(w, h) / share
    height, width = shape
    x0, y0 = int(max(0, x + w / 2 - side / 2)), int(max(0, y + h / 2 - side / 2))
    x1, y1 = int(min(width, x + w / 2 + side / 2)), int(min(height, y + h / 2 + side / 2))
    return x0, y0, x1, y1
