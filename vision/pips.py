"""The pip finder: where the pips of a die's top face are, as a second opinion.

The face reader (:mod:`vision.face`) names a value; this module answers a
different question about the same crop, "where are the pips of the top
face?", with its own small network (a U-Net, see
:mod:`vision.lab.training.train_pips`), and :mod:`vision.pip_marks` then fits
the pip layouts of the six faces to the marked pips with the classical layout
check of :mod:`vision._reader_pips`: the right number of pips, of similar
size, near the centre, in the pattern of the value, and no other pip nearby.
The reader gives a value only when this layout check agrees with the face
reader (issue #7: "two opinions must agree").

Conventions: crops are BGR ``uint8`` ``(CROP_SIZE, CROP_SIZE, 3)`` from
:func:`vision.face.crop_die`; maps are ``float32`` probabilities in ``[0, 1]``
of the same size.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from vision._onnx import check_network, model_hint
from vision.errors import VisionError
from vision.face import CROP_SIZE, preprocess
from vision.pip_marks import (  # noqa: F401  (re-exported: their home is vision.pip_marks)
    AREA_RATIO,
    CENTRE_OFFSET,
    LAYOUT_TOLERANCE,
    ONE_MIN_AREA,
    PEAK_SEPARATION,
    PEAK_THRESHOLDS,
    PIP_THRESHOLD,
    SIDE_FACE_ALONG,
    SIDE_FACE_ANGLE_DEG,
    SIDE_FACE_DISTANCE,
    SIDE_FACE_MARKS,
    SIDE_FACE_MIN_VALUE,
    SPACING_RANGE,
    SPLIT_THRESHOLDS,
    holds_layout_of,
    layouts_on_map,
    marked_peaks,
    marked_pips,
)

__all__ = [
    "PipFinder",
    "PipModelError",
    "default_pip_finder",
    "layouts_on_map",
    "holds_layout_of",
    "marked_peaks",
    "PIP_THRESHOLD",
]

DEFAULT_MODEL_PATH = Path(__file__).resolve().parent / "models" / "pip_finder.onnx"


class PipModelError(VisionError):
    """The pip-finder model is missing, corrupt or of the wrong shape."""


class PipFinder:
    """Marks the pips of the top face on die crops, with the packaged ONNX model.

    Parameters
    ----------
    model_path : str or Path, optional
        ONNX file (default ``vision/models/pip_finder.onnx``); a JSON file of
        the same stem is read as :attr:`metadata` when present.

    Raises
    ------
    PipModelError
        If the model is missing, cannot be loaded by the runtime or does not
        give one map per crop (a network of another kind).

    Examples
    --------
    >>> import numpy as np
    >>> finder = PipFinder()
    >>> finder.predict([np.full((64, 64, 3), 128, np.uint8)]).shape
    (1, 64, 64)
    """

    def __init__(self, model_path: str | Path | None = None) -> None:
        path = Path(model_path) if model_path is not None else DEFAULT_MODEL_PATH
        from vision._onnx import load_onnx

        hint = model_hint(path, DEFAULT_MODEL_PATH, "pip-finder", "pip_finder", "train_pips")
        self._net, self.metadata = load_onnx(path, "pip-finder", PipModelError, hint, stem="pip_finder")
        self.model_path = path
        # one square map per crop, as _forward reads it (a face reader's 7 scores or a detector's 5 maps are not)
        check_network(
            self._net,
            path,
            "pip-finder",
            PipModelError,
            hint,
            np.zeros((1, 3, CROP_SIZE, CROP_SIZE), np.float32),
            lambda shape: len(shape) >= 2 and shape[-1] == shape[-2] and int(np.prod(shape)) == shape[-1] ** 2,
            "one square map per crop, such as (1, 1, 32, 32)",
        )

    def __repr__(self) -> str:
        return f"PipFinder(model_path={str(self.model_path)!r})"

    def _forward(self, blob: np.ndarray) -> np.ndarray:
        out = self._net.forward(blob)
        n, side = blob.shape[0], out.shape[-1]
        out = out.reshape(n, side, side)
        if side == CROP_SIZE:
            return out
        # the network marks pips at a coarser stride; bring the maps to crop size
        return (
            np.stack([cv2.resize(m, (CROP_SIZE, CROP_SIZE), interpolation=cv2.INTER_LINEAR) for m in out])
            if n
            else np.zeros((0, CROP_SIZE, CROP_SIZE), np.float32)
        )

    def predict(self, crops: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
        """Pip maps for a batch of die crops, in one forward pass.

        Parameters
        ----------
        crops : sequence of ndarray of shape (CROP_SIZE, CROP_SIZE, 3), dtype uint8
            BGR crops from :func:`vision.face.crop_die`; may be empty.

        Returns
        -------
        maps : ndarray of shape (N, CROP_SIZE, CROP_SIZE), dtype float32
            Probability that each pixel lies in a pip of the centred die's top face.

        Raises
        ------
        ValueError
            If a crop has the wrong shape or dtype.
        """
        blob = preprocess(crops)
        if blob.shape[0] == 0:
            return np.zeros((0, CROP_SIZE, CROP_SIZE), np.float32)
        return self._forward(blob)


@lru_cache(maxsize=1)
def default_pip_finder() -> PipFinder:
    """The shared :class:`PipFinder` with the packaged model (loaded once).

    Raises
    ------
    PipModelError
        If the packaged model is missing or corrupt.
    """
    return PipFinder()
