"""The pip finder: where the pips of a die's top face are, as a second opinion.

The face reader (:mod:`vision.face`) names a value; this module answers a
different question about the same crop, "where are the pips of the top
face?", with its own small network (a U-Net, see
:mod:`vision.training.train_pips`), and then fits the pip layouts of the six
faces to the marked pips with the classical layout check of
:mod:`vision._reader_pips`: the right number of pips, of similar size, near
the centre, in the pattern of the value, and no other pip nearby. The reader
gives a value only when this layout check agrees with the face reader
(issue #7: "two opinions must agree").

Conventions: crops are BGR ``uint8`` ``(CROP_SIZE, CROP_SIZE, 3)`` from
:func:`vision.face.crop_die`; maps are ``float32`` probabilities in ``[0, 1]``
of the same size.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.errors import VisionError
from vision.face import CROP_SIZE, preprocess

__all__ = ["PipFinder", "PipModelError", "default_pip_finder", "layouts_on_map", "PIP_THRESHOLD"]

DEFAULT_MODEL_PATH = Path(__file__).resolve().parent / "models" / "pip_finder.onnx"
_RETRAIN_HINT = ("reinstall dicetable, or retrain it with "
                 "'python -m vision.training.train_pips --out vision/models' (needs the train extra)")

#: A pixel is part of a pip when the map's probability is at least this.
PIP_THRESHOLD: float = 0.5


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
        If the model is missing, cannot be loaded by ``cv2.dnn`` or does not
        give one map per crop.

    Examples
    --------
    >>> import numpy as np
    >>> finder = PipFinder()
    >>> finder.predict([np.full((64, 64, 3), 128, np.uint8)]).shape
    (1, 64, 64)
    """

    def __init__(self, model_path: str | Path | None = None) -> None:
        path = Path(model_path) if model_path is not None else DEFAULT_MODEL_PATH
        if not path.is_file():
            raise PipModelError(f"pip-finder model {str(path)!r} does not exist; {_RETRAIN_HINT}")
        try:
            self._net = cv2.dnn.readNetFromONNX(str(path))
        except cv2.error as exc:
            first = str(exc).strip().splitlines()[-1] if str(exc).strip() else "unknown error"
            raise PipModelError(f"pip-finder model {str(path)!r} could not be loaded by cv2.dnn ({first}); "
                                f"{_RETRAIN_HINT}") from None
        self.model_path = path
        meta = path.with_suffix(".json")
        self.metadata: dict[str, Any] = {}
        if meta.is_file():
            try:
                self.metadata = json.loads(meta.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise PipModelError(f"pip-finder metadata {str(meta)!r} is unreadable ({exc}); {_RETRAIN_HINT}") from None
        probe = self._forward(np.zeros((1, 3, CROP_SIZE, CROP_SIZE), np.float32))
        if probe.shape != (1, CROP_SIZE, CROP_SIZE):
            raise PipModelError(f"pip-finder model {str(path)!r} gives maps of shape {probe.shape}, expected "
                                f"(1, {CROP_SIZE}, {CROP_SIZE}); {_RETRAIN_HINT}")

    def __repr__(self) -> str:
        return f"PipFinder(model_path={str(self.model_path)!r})"

    def _forward(self, blob: np.ndarray) -> np.ndarray:
        self._net.setInput(blob)
        out = np.asarray(self._net.forward(), np.float32)
        n, side = blob.shape[0], out.shape[-1]
        out = out.reshape(n, side, side)
        if side == CROP_SIZE:
            return out
        # the network marks pips at a coarser stride; bring the maps to crop size
        return np.stack([cv2.resize(m, (CROP_SIZE, CROP_SIZE), interpolation=cv2.INTER_LINEAR) for m in out]) \
            if n else np.zeros((0, CROP_SIZE, CROP_SIZE), np.float32)

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


def layouts_on_map(pip_map: np.ndarray, margin: float) -> set[int]:
    """Face values whose pip layout the marked pips of one crop hold.

    The map is thresholded at :data:`PIP_THRESHOLD`; its blobs inside the die
    box are the pips (:func:`vision._reader_pips.pip_blobs` rules: size,
    roundness, not touching the box edge) and each value 1..6 is tested with
    :func:`vision._reader_pips.match_subset`, which also refuses a layout with
    another pip near it (a 4 inside a 5 or a 6 is not a 4).

    Parameters
    ----------
    pip_map : ndarray of shape (S, S), dtype float32
        One map from :meth:`PipFinder.predict`.
    margin : float
        The margin the crop was cut with (fraction of the box's long side).

    Returns
    -------
    set of int
        Usually empty (no layout) or one value.
    """
    from vision._reader_pips import _blobs_of, match_subset

    side = pip_map.shape[0]
    m = int(side * margin / (1.0 + 2.0 * margin)) + 2
    inner = np.ascontiguousarray(pip_map[m:side - m, m:side - m])
    if inner.shape[0] < 8:
        return set()
    blobs = _blobs_of((inner >= PIP_THRESHOLD).astype(np.uint8) * 255)
    return {v for v in range(1, 7) if match_subset(blobs, v) is not None}
