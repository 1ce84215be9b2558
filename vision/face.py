"""Face reader: a small learned classifier that reads the face value of one die.

The pip reader's pipeline is: the detector (:mod:`vision.detect`) finds die
boxes, :func:`crop_die` (:mod:`vision.face_crops`) cuts a square crop around
each box, and :class:`FaceReader` turns a batch of crops into class
probabilities; the reader (:mod:`vision.reader`) then decides a value or
"unknown" from them.

The classifier is a small convolutional network trained with PyTorch
(:mod:`vision.lab.training.train_face`, never imported at run time) and shipped as
ONNX in ``vision/models/face_reader.onnx``; it runs with onnxruntime, or OpenCV's ``cv2.dnn`` (see :mod:`vision._onnx`).
``vision/models/face_reader.json`` beside it records the crop size, the class
names, the data it was trained on and its measured accuracy.

Classes (columns of :meth:`FaceReader.predict`): 0 = "not a readable face" (no
die, a die cut in half, a side view, unreadable), 1..6 = face value.

Conventions: images are BGR ``uint8`` arrays indexed ``(row, col)``; boxes are
``(x, y, w, h)`` in image pixels with ``x`` to the right and ``y`` down (OpenCV
order).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from vision._onnx import OnnxNet, check_network, model_hint
from vision.errors import VisionError
from vision.face_crops import (  # noqa: F401  (re-exported; _crop_square for the training data)
    CROP_SIZE,
    DEFAULT_MARGIN,
    _crop_square,
    crop_die,
    preprocess,
)

__all__ = [
    "CLASS_NAMES",
    "CROP_SIZE",
    "DEFAULT_MARGIN",
    "DEFAULT_MODEL_PATH",
    "FaceModelError",
    "FaceReader",
    "crop_die",
    "default_face_reader",
    "preprocess",
    "READ_MIRRORED",
    "reading_face_reader",
]

#: Names of the classifier's output columns; column ``k`` for ``k`` in 1..6 is
#: face value ``k``.
CLASS_NAMES: tuple[str, ...] = ("not_a_face", "1", "2", "3", "4", "5", "6")

#: Whether the reader (:func:`default_face_reader`, :func:`reading_face_reader`)
#: reads each crop mirrored across its diagonal as well and combines the two
#: answers (:class:`FaceReader`'s ``mirrored``). A mirrored pip layout shows
#: the same value, but a network's answer on a borderline die (a smoky
#: translucent die, a glare streak) moves with the die's orientation: turning
#: a DEV photo by a quarter turn changed the outcome of 19 of its 947 dice.
#: Held out, over DEV at its four quarter turns, the mirrored view took the
#: reader's own silent errors from 10 to 6, for one more pass of the face
#: reader per die (median 21.4 -> 23.7 ms per DEV photo on one core).
READ_MIRRORED: bool = True

#: With :data:`READ_MIRRORED`, the mirrored view is read only for the crops
#: whose top class is under this probability as they are (``mirror_below``):
#: 85 % of DEV's dice are read at 0.93 or more (label smoothing keeps the top
#: near 0.96), and over DEV at its four quarter turns the outcome of every die
#: stayed the same while the median read took 46 -> 35 ms (docs/reader.md).
READ_MIRROR_BELOW: float = 0.93

#: The packaged model; its metadata is the JSON file with the same stem.
DEFAULT_MODEL_PATH: Path = Path(__file__).resolve().parent / "models" / "face_reader.onnx"


class FaceModelError(VisionError, OSError):
    """Raised when the face-reader model file is missing, corrupt or of the wrong shape."""


class FaceReader:
    """Reads the face value of dice from crops, with the packaged ONNX model.

    Parameters
    ----------
    model_path : str or Path, optional
        ONNX file to load; by default the model packaged in
        ``vision/models/face_reader.onnx``. A JSON file with the same stem,
        when present, is read as metadata (:attr:`metadata`).
    rotations : {1, 4}, optional
        Test-time augmentation: with 4, every crop is also read turned by 90,
        180 and 270 degrees (a die face reads the same) and the four answers
        are combined by their geometric mean, renormalised. Costs 4x the
        time; on the DEV crops it halved the silently wrong dice at the same
        coverage (see ``face_reader.json`` and the training notes).
    mirrored : bool, optional
        Test-time augmentation: every view is also read mirrored across the
        crop's main diagonal (transposed; a mirrored pip layout shows the same
        value), and all answers are combined by their geometric mean,
        renormalised. Twice the cost. Default False (the network's own
        answer); the reader uses :data:`READ_MIRRORED`
        (:func:`reading_face_reader`).
    mirror_below : float, optional
        With `mirrored` (and one rotation), read the mirrored view only for
        the crops whose top class as they are has a probability under this;
        the others keep their first answer. Default 1.0 (every crop); the
        reader uses :data:`READ_MIRROR_BELOW`.

    Attributes
    ----------
    model_path : Path
        The (first) network's ONNX file.
    rotations : int
        1 or 4, as given.
    mirrored : bool
        As given.
    metadata : dict
        The model's JSON record (empty when there is none).
    consult_below : float
        With a cascade, the first network's top probability under which the
        second is consulted; 0.0 without one.
    second_model_path : Path or None
        The cascade's second network, or None.

    Raises
    ------
    FaceModelError
        If the model file (or the cascade's second network, or its entry in
        the metadata) is missing or cannot be loaded by the runtime, or a
        network does not output 7 classes; the message says how to retrain it.

    Notes
    -----
    **Cascade.** When the metadata has a ``"cascade"`` entry (written by
    ``python -m vision.lab.training.ensemble --consult-below P``), a second network
    trained alike from another seed, in the file it names beside the model,
    is consulted for the crops on which the first network's top probability
    is below ``consult_below``: for those rows the answer is the mean of the
    two networks' log-probabilities (renormalised), for the others the first
    network's alone. This is a cascade of a deep ensemble (Wang et al.,
    "Wisdom of Committees: An Overlooked Approach To Faster and More Accurate
    Models", ICLR 2022; members as in Lakshminarayanan et al., NeurIPS 2017):
    the ensemble's accuracy where the first network is unsure, at a fraction
    of its cost, since most dice are read with near certainty. The shipped
    model has no cascade: a cascade of two seeds read a few more held-out
    dice, but lifted the first network's unsure readings right and wrong
    alike (a leaning die given a value on the rendered stress sets; the
    measurements are in ``docs/reader.md``).

    Examples
    --------
    >>> import numpy as np
    >>> reader = FaceReader()
    >>> image = np.full((100, 100, 3), 128, np.uint8)
    >>> reader.predict([crop_die(image, (30, 30, 40, 40))]).shape
    (1, 7)
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        rotations: int = 1,
        mirrored: bool = False,
        mirror_below: float = 1.0,
    ) -> None:
        if rotations not in (1, 4):
            raise ValueError(f"rotations must be 1 or 4 (test-time 90-degree turns), got {rotations!r}")
        if not isinstance(mirrored, bool):
            raise ValueError(f"mirrored must be True or False, got {mirrored!r}")
        if not 0.0 <= mirror_below <= 1.0:
            raise ValueError(f"mirror_below must be a probability in [0, 1], got {mirror_below!r}")
        self.rotations = rotations
        self.mirrored = mirrored
        self.mirror_below = mirror_below
        path = Path(model_path) if model_path is not None else DEFAULT_MODEL_PATH
        from vision._onnx import load_onnx

        hint = model_hint(path, DEFAULT_MODEL_PATH, "face-reader", "face_reader", "train_face")
        self._net, self.metadata = load_onnx(path, "face-reader", FaceModelError, hint, stem="face_reader")
        self.model_path = path
        _check_network(self._net, path, self.metadata, hint)
        self._second_net: OnnxNet | None = None
        self.second_model_path: Path | None = None
        self.consult_below = 0.0
        cascade = self.metadata.get("cascade")
        if cascade is not None:
            second_path, self.consult_below = _cascade_entry(cascade, path, hint)
            self._second_net, _ = load_onnx(second_path, "face-reader (cascade's second network)", FaceModelError, hint)
            _check_network(self._second_net, second_path, self.metadata, hint)
            self.second_model_path = second_path

    def __repr__(self) -> str:
        return f"FaceReader(model_path={str(self.model_path)!r}, rotations={self.rotations}, mirrored={self.mirrored})"

    def _log_probs(self, net: OnnxNet, blob: np.ndarray) -> np.ndarray:
        """Normalised log-probabilities of one network for a batch.

        `blob` is the (N, 3, CROP_SIZE, CROP_SIZE) float32 input of
        :func:`preprocess`; returns (N, 7) float64. With 4 rotations or
        mirrored, the views' log-probabilities are averaged and renormalised.
        """
        n = blob.shape[0]
        if self.mirrored and self.mirror_below < 1.0 and self.rotations == 1:
            return self._log_probs_mirrored_when_unsure(net, blob)
        views = [np.rot90(blob, k, axes=(2, 3)) for k in range(self.rotations)]
        if self.mirrored:
            views += [np.swapaxes(v, 2, 3) for v in views]
        if len(views) > 1:
            blob = np.ascontiguousarray(np.concatenate(views))
        logp = _log_softmax(net.forward(blob).reshape(blob.shape[0], -1).astype(np.float64))
        return _log_softmax(logp.reshape(len(views), n, -1).mean(axis=0)) if len(views) > 1 else logp

    def _log_probs_mirrored_when_unsure(self, net: OnnxNet, blob: np.ndarray) -> np.ndarray:
        """(N, 7) float64 log-probabilities: as is, and mirrored too where the top class is under ``mirror_below``."""
        logp = _log_softmax(net.forward(blob).reshape(blob.shape[0], -1).astype(np.float64))
        unsure = np.flatnonzero(np.exp(logp.max(axis=1)) < self.mirror_below)
        if len(unsure):
            mirrored = np.ascontiguousarray(np.swapaxes(blob[unsure], 2, 3))
            second = _log_softmax(net.forward(mirrored).reshape(len(unsure), -1).astype(np.float64))
            logp[unsure] = _log_softmax((logp[unsure] + second) / 2)
        return logp

    def predict(self, crops: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
        """Class probabilities for a batch of die crops, in one forward pass.

        Parameters
        ----------
        crops : sequence of ndarray of shape (CROP_SIZE, CROP_SIZE, 3), dtype uint8
            BGR crops made by :func:`crop_die`; may be empty.

        Returns
        -------
        probs : ndarray of shape (N, 7), dtype float32
            Softmax probabilities, each row sums to 1. Column 0 is "not a
            readable face" (no die, a die cut in half, a side view,
            unreadable); columns 1..6 are face values 1..6.

        Raises
        ------
        ValueError
            If a crop has the wrong shape or dtype.
        """
        blob = preprocess(crops)
        n = blob.shape[0]
        if n == 0:
            return np.zeros((0, len(CLASS_NAMES)), np.float32)
        logp = self._log_probs(self._net, blob)
        if self._second_net is not None:
            top = np.exp(logp.max(axis=1))
            unsure = np.arange(n) if self.consult_below >= 1.0 else np.flatnonzero(top < self.consult_below)
            if len(unsure):
                second = self._log_probs(self._second_net, np.ascontiguousarray(blob[unsure]))
                logp[unsure] = _log_softmax((logp[unsure] + second) / 2)
        return np.exp(logp).astype(np.float32)


def _log_softmax(z: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax of a (N, C) float64 array."""
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def _cascade_entry(cascade: object, path: Path, hint: str) -> tuple[Path, float]:
    """The second network's path and ``consult_below`` of a model's ``"cascade"`` entry; FaceModelError if malformed.

    `hint` (what to do, :func:`vision._onnx.model_hint`) ends every message.
    """
    where = f"face-reader metadata {str(path.with_suffix('.json'))!r}"
    if not isinstance(cascade, dict) or "second" not in cascade or "consult_below" not in cascade:
        raise FaceModelError(
            f'{where} has a "cascade" entry without "second" (a model file name) and '
            f'"consult_below" (a probability); {hint}'
        )
    second, below = cascade["second"], cascade["consult_below"]
    if not isinstance(second, str) or Path(second).name != second or second in ("", ".", "..", path.name):
        raise FaceModelError(
            f'{where}: cascade "second" must name another model file beside {path.name!r}, got {second!r}; {hint}'
        )
    if isinstance(below, bool) or not isinstance(below, (int, float)) or not 0.0 < float(below) <= 1.0:
        raise FaceModelError(f"{where}: cascade consult_below must be a number in (0, 1], got {below!r}; {hint}")
    return path.parent / second, float(below)


def _check_network(net: OnnxNet, path: Path, metadata: dict, hint: str) -> None:
    """Raise :class:`FaceModelError` unless `net` was trained on CROP_SIZE crops and outputs one score per class.

    `hint` (what to do, :func:`vision._onnx.model_hint`) ends every message.
    """
    crop_size = int(metadata.get("crop_size", CROP_SIZE))
    if crop_size != CROP_SIZE:
        raise FaceModelError(
            f"face-reader model {str(path)!r} was trained on {crop_size} px crops but "
            f"vision.face.CROP_SIZE is {CROP_SIZE}; {hint}"
        )
    check_network(
        net,
        path,
        "face-reader",
        FaceModelError,
        hint,
        np.zeros((1, 3, CROP_SIZE, CROP_SIZE), np.float32),
        lambda shape: int(np.prod(shape)) == len(CLASS_NAMES),
        f"(1, {len(CLASS_NAMES)}): one score per class",
    )


@lru_cache(maxsize=1)
def default_face_reader() -> FaceReader:
    """Return the shared :class:`FaceReader` the reader uses: the packaged model, :data:`READ_MIRRORED` (loaded once).

    Raises
    ------
    FaceModelError
        If the packaged model is missing or corrupt.
    """
    return reading_face_reader()


def reading_face_reader(model_path: str | Path | None = None) -> FaceReader:
    """A :class:`FaceReader` of `model_path` (default the packaged model) that reads as the reader does.

    That is with the views :data:`READ_MIRRORED` asks for, so that a held-out
    twin or a retrained network is measured the way the shipped one reads
    (:func:`vision.reader.networks_from_files`, ``benchmarks/tune_reader.py``).

    Raises
    ------
    FaceModelError
        If the model file is missing, corrupt or not a face reader.
    """
    return FaceReader(model_path, mirrored=READ_MIRRORED, mirror_below=READ_MIRROR_BELOW)
