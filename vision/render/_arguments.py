"""Check the renderers' arguments: the seed, the face values and the image size.

Each check returns the argument in the form the renderer uses (a numpy Generator,
a tuple of ints, ``(width, height)``) or raises ValueError saying what is wrong.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vision.render._types import MAX_DICE


def _rng(seed: int | np.random.Generator) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, (bool, float)) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an int or a numpy.random.Generator, got {seed!r}")
    return np.random.default_rng(int(seed))


def _check_values(values: Sequence[int]) -> tuple[int, ...]:
    try:
        vals = tuple(values)
    except TypeError:
        raise ValueError(f"values must be a sequence of face values 1-6, got {values!r}") from None
    if not vals:
        raise ValueError("values is empty; give 1 to 30 face values 1-6, e.g. [3, 5, 6, 6, 1]")
    if len(vals) > MAX_DICE:
        raise ValueError(
            f"too many dice for the tray: {len(vals)} values given, at most {MAX_DICE} fit; "
            "render them in several images"
        )
    for v in vals:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= 6:
            raise ValueError(f"face value {v!r} is impossible on a d6; every value must be 1-6 (got {list(vals)})")
    return tuple(int(v) for v in vals)


def _check_size(size: tuple[int, int]) -> tuple[int, int]:
    try:
        w, h = (int(x) for x in size)
    except (TypeError, ValueError):
        raise ValueError(f"size must be (width, height) in pixels, got {size!r}") from None
    if w < 64 or h < 64 or w > 8192 or h > 8192:
        raise ValueError(f"size must be (width, height) between 64 and 8192 px each, got {size!r}")
    return w, h
