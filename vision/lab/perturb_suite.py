"""The perturbation suite (issue 37, item 6): every edit of :mod:`vision.lab.perturb` and friends, read and scored.

A condition is either an edit of labelled photos (:data:`vision.lab.perturb.LIGHT_EDITS`,
:data:`vision.lab.perturb_compose.COMPOSE_EDITS`) applied to each DEV photo
with a generator seeded by ``(seed, condition, photo)``, or a render
(:data:`vision.lab.perturb_render.RENDER_EDITS`) drawn ``renders`` times. Each
result is scored by :func:`vision.lab.stress.score_rendered`: right / wrong /
unknown / missed dice, dice that must get no value given one, and dice read
where none is (with or without a value). Same seed, same photos, same numbers.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Sequence

import numpy as np

from vision.images import load_image
from vision.lab.dataset import LabelledImage
from vision.lab.perturb import LIGHT_EDITS, Perturbed, Truth
from vision.lab.perturb_compose import COMPOSE_EDITS
from vision.lab.perturb_render import RENDER_EDITS
from vision.lab.stress import StressCounts, score_rendered
from vision.reading import ImageReading

__all__ = ["PERTURBATIONS", "perturbed", "run_condition"]

#: Every condition, in the order the benchmark prints them; ``none`` is the photos as they are.
PERTURBATIONS: tuple[str, ...] = ("none", *LIGHT_EDITS, *COMPOSE_EDITS, *RENDER_EDITS)


def perturbed(condition: str, photos: Sequence[LabelledImage], *, seed: int = 0, renders: int = 20) -> list[Perturbed]:
    """The pictures of one condition, edited or rendered, in a fixed order.

    Parameters
    ----------
    condition : str
        One of :data:`PERTURBATIONS`.
    photos : sequence of LabelledImage
        The labelled photos to edit (ignored by the rendered conditions).
    seed : int, optional
        Seed of every random choice.
    renders : int, optional
        Scenes of a rendered condition.

    Returns
    -------
    list of Perturbed
        Only those the edit could be applied to.

    Raises
    ------
    ValueError
        If `condition` is unknown.
    """
    if condition not in PERTURBATIONS:
        raise ValueError(f"unknown condition {condition!r}; use one of {', '.join(PERTURBATIONS)}")
    salt = zlib.crc32(condition.encode())
    if condition in RENDER_EDITS:
        made = [
            RENDER_EDITS[condition](int(np.random.SeedSequence([seed, salt, k]).generate_state(1)[0]))
            for k in range(renders)
        ]
        return [m for m in made if m.applied]
    out = []
    for k, photo in enumerate(photos):
        image = load_image(photo.path)
        truth = [Truth(d.value, d.box) for d in photo.dice]
        if condition == "none":
            out.append(Perturbed(image, tuple(truth)))
            continue
        edit = LIGHT_EDITS.get(condition) or COMPOSE_EDITS[condition]
        made = edit(image, truth, np.random.default_rng([seed, salt, k]))
        if made.applied:
            out.append(made)
    return out


def run_condition(
    condition: str,
    photos: Sequence[LabelledImage],
    read: Callable[[np.ndarray], ImageReading],
    *,
    seed: int = 0,
    renders: int = 20,
    on_image: Callable[[int, Perturbed, ImageReading, StressCounts], None] | None = None,
) -> StressCounts:
    """Read every picture of one condition (:func:`perturbed`) and sum the scores.

    ``read(image_bgr) -> ImageReading``; ``on_image(k, picture, reading, counts)``
    is called after picture ``k`` is scored.
    """
    total = StressCounts()
    for k, pic in enumerate(perturbed(condition, photos, seed=seed, renders=renders)):
        t0 = time.perf_counter()
        reading = read(pic.image)
        counts = score_rendered(pic, reading, (time.perf_counter() - t0) * 1000.0)
        if on_image is not None:
            on_image(k, pic, reading, counts)
        total = total + counts
    return total
