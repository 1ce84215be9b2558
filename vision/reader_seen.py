"""What the reader already found or asked about a photo's dice, so that no network or rule is asked twice.

:func:`vision.reader_glare.glare_free_crops` looks for glints on every
candidate die and asks the pip finder (and for a few dice the face reader)
about the crops; the reader's main pass asks both networks about the same
crops again, and the stated confidence looks for glints again
(:func:`vision.confidence_model.die_features`). :class:`Seen` carries those
answers through; both networks answer a crop the same whatever else is in its
batch (onnxruntime, bit for bit on DEV), so the readings do not change.

Conventions: keys are the dice's indices in the list the reader passed to
:func:`vision.reader_glare.glare_free_crops` (its candidates).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Seen", "predict_unseen"]


@dataclass
class Seen:
    """Answers already had, by candidate index.

    Attributes
    ----------
    glint_spots : dict of int to int
        How many glint spots (:func:`vision.reader_glints.glint_spots`) each die's box holds.
    pip_maps : dict of int to ndarray of shape (S, S), dtype float32
        The pip finder's map of the crop the reader reads (one left as cut).
    face_probs : dict of int to ndarray of shape (7,), dtype float64
        The face reader's probabilities for the crop the reader reads.
    """

    glint_spots: dict[int, int] = field(default_factory=dict)
    pip_maps: dict[int, np.ndarray] = field(default_factory=dict)
    face_probs: dict[int, np.ndarray] = field(default_factory=dict)


def predict_unseen(
    predict: Callable[[list[np.ndarray]], np.ndarray], crops: Sequence[np.ndarray], known: Sequence[np.ndarray | None]
) -> np.ndarray:
    """``predict(crops)`` with the rows in `known` (not None) taken as they are: the network asked only about the rest.

    Parameters
    ----------
    predict : callable
        A network's ``predict(crops) -> ndarray (N, ...)``.
    crops : sequence of N ndarray
        The crops.
    known : sequence of N ndarray or None
        The answer already had for each crop, or None.

    Returns
    -------
    ndarray of shape (N, ...), dtype of the answers (float64 when every row is known)
    """
    ask = [i for i, k in enumerate(known) if k is None]
    if len(ask) == len(crops):
        return np.asarray(predict(list(crops)))
    rows = [k for k in known if k is not None]
    asked = np.asarray(predict([crops[i] for i in ask])) if ask else np.zeros((0, *rows[0].shape), rows[0].dtype)
    out = np.empty((len(crops), *rows[0].shape), np.result_type(asked.dtype, rows[0].dtype))
    out[ask] = asked
    for i, k in enumerate(known):
        if k is not None:
            out[i] = k
    return out
