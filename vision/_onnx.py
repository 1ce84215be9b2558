"""Loading and running the packaged ONNX models: one way, one set of error messages.

Two runtimes can run the networks, with the same answers (to about 1e-6):

* **onnxruntime** (the default when it is installed, as it is with dicetable):
  2-3x faster than ``cv2.dnn`` for these small networks on one core (measured
  on this project's machine, one thread, a batch of 6 crops: face reader 6.6
  -> 2.0 ms, pip finder 12.3 -> 5.7 ms; detector at 384 px 8.7 -> 3.9 ms);
* **OpenCV's** ``cv2.dnn``: always there (OpenCV is needed anyway), used when
  onnxruntime is not installed or when asked for.

The face reader and the pip finder ship quantised to 8-bit integers
(:mod:`vision.lab.training.quantise`, QOperator format); both runtimes run them,
and their integer kernels round a little differently (face probabilities
within 0.01, pip maps within 0.03 on the fixed probes; the same readings on DEV).

``DICETABLE_ONNX_BACKEND=opencv`` (or ``onnxruntime``) in the environment picks
one; unset or ``auto`` takes onnxruntime when it can be imported.

Threads (:func:`onnx_threads`, read when a model is loaded): ``DICETABLE_THREADS=N``
(or ``all``) sets the onnxruntime session's intra-op threads; unset, a session
uses every core this process may run on (a settled roll is read on all of the
Pi's four cores), but no more than OpenCV is set to, so ``cv2.setNumThreads(1)``
before the first read still gives the one-core numbers of ``dicetable eval``
and the benchmarks. Idle threads do not spin.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np

#: Environment variable naming the runtime: ``auto`` (default), ``onnxruntime`` or ``opencv``.
BACKEND_ENV = "DICETABLE_ONNX_BACKEND"
BACKENDS = ("auto", "onnxruntime", "opencv")
#: Environment variable setting the threads of each onnxruntime session: a whole number >= 1, or ``all``.
THREADS_ENV = "DICETABLE_THREADS"
#: onnxruntime graph rewrites left out. QDQ propagation moves the int8 face reader's first QuantizeLinear ahead
#: of its float MaxPool, which then runs on uint8 in NCHW, a slow kernel (14 % of the network's time on one core)
#: instead of the fast NCHWc one. Max commutes with a monotonic quantisation, so the outputs are the same bit for bit
#: (every DEV input of the three networks): face reader 14.4 -> 12.4 ms per DEV photo, pip finder 7.8 -> 7.6.
DISABLED_OPTIMIZERS: tuple[str, ...] = ("QDQPropagationTransformer",)


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity where the OS tells it), at least 1."""
    if hasattr(os, "sched_getaffinity"):
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except OSError:
            pass
    return max(1, os.cpu_count() or 1)


def onnx_threads() -> int:
    """Intra-op threads of the next onnxruntime session (see the module docstring).

    Raises
    ------
    ValueError
        If ``DICETABLE_THREADS`` is neither a whole number >= 1 nor ``all``.
    """
    asked = os.environ.get(THREADS_ENV, "").strip().lower()
    if asked == "all":
        return usable_cores()
    if asked:
        if not asked.isdigit() or int(asked) < 1:
            raise ValueError(
                f"{THREADS_ENV}={asked!r} is not a number of threads; give a whole number >= 1, "
                "or 'all' (or unset it: every core)"
            )
        return int(asked)
    return max(1, min(usable_cores(), cv2.getNumThreads()))


def chosen_backend() -> str:
    """The runtime the next model will be loaded with: ``"onnxruntime"`` or ``"opencv"``.

    Raises
    ------
    ValueError
        If ``DICETABLE_ONNX_BACKEND`` names no known runtime, or asks for
        onnxruntime where it is not installed.
    """
    asked = os.environ.get(BACKEND_ENV, "auto").strip().lower() or "auto"
    if asked not in BACKENDS:
        raise ValueError(f"{BACKEND_ENV}={asked!r} is not a runtime; use one of {', '.join(BACKENDS)} (or unset it)")
    if asked == "opencv":
        return "opencv"
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        if asked == "onnxruntime":
            raise ValueError(
                f"{BACKEND_ENV}=onnxruntime but onnxruntime is not installed; "
                "run 'pip install onnxruntime' or unset the variable to use OpenCV's dnn"
            ) from None
        return "opencv"
    return "onnxruntime"


class OnnxNet:
    """One ONNX network and the runtime that runs it (see the module docstring).

    Attributes
    ----------
    backend : str
        ``"onnxruntime"`` or ``"opencv"``.
    input_shape : tuple or None
        The shape of the network's first input as the model declares it (a
        name, such as ``"n"``, for a free dimension); None when the runtime
        does not say (``cv2.dnn``).
    threads : int
        The onnxruntime session's intra-op threads (:func:`onnx_threads`); 1 for
        ``cv2.dnn``, whose threads are OpenCV's own (:func:`cv2.setNumThreads`).
    """

    def __init__(self, path: Path, backend: str) -> None:
        self.backend = backend
        self.threads = 1
        if backend == "onnxruntime":
            import onnxruntime as ort

            options = ort.SessionOptions()
            self.threads = onnx_threads()
            options.intra_op_num_threads = self.threads
            options.inter_op_num_threads = 1
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            options.log_severity_level = 3  # errors only
            options.enable_cpu_mem_arena = False  # allocate per run: ~15 MB less resident memory, no measurable cost
            self._session = ort.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"], disabled_optimizers=list(DISABLED_OPTIMIZERS)
            )
            first = self._session.get_inputs()[0]
            self._input = first.name
            self.input_shape: tuple | None = tuple(first.shape)
        else:
            self._net = cv2.dnn.readNetFromONNX(str(path))
            self.input_shape = None  # cv2.dnn does not say

    def forward(self, blob: np.ndarray) -> np.ndarray:
        """Run the network on one input blob.

        Parameters
        ----------
        blob : ndarray of shape (N, 3, H, W), dtype float32
            The network's input (NCHW).

        Returns
        -------
        ndarray, dtype float32
            The network's first output.
        """
        blob = np.ascontiguousarray(blob, dtype=np.float32)
        if self.backend == "onnxruntime":
            return np.asarray(self._session.run(None, {self._input: blob})[0], np.float32)
        self._net.setInput(blob)
        return np.asarray(self._net.forward(), np.float32)


def retrain_hint(stem: str, trainer: str) -> str:
    """What to do about a missing or broken packaged model, for error messages.

    Parameters
    ----------
    stem : str
        The model's file stem in ``vision/models`` (e.g. ``"face_reader"``).
    trainer : str
        The module under :mod:`vision.lab.training` that trains it (e.g. ``"train_face"``).

    Returns
    -------
    str
        Reinstall, or retrain with the command recorded in the model's JSON.
    """
    return (
        "reinstall dicetable to get the packaged model back, or, in a source checkout, retrain it with "
        f"`pip install -e '.[train]'` then the command recorded under \"command\" in vision/models/{stem}.json "
        f"(python -m vision.lab.training.{trainer} --out vision/models ...)"
    )


def model_hint(path: Path, packaged: Path, what: str, stem: str, trainer: str) -> str:
    """What to do about a model file that is missing or not usable, for error messages.

    Reinstalling or retraining (:func:`retrain_hint`) fixes only the packaged
    model; a file the user named is fixed by naming the right one.

    Parameters
    ----------
    path : Path
        The model file asked for.
    packaged : Path
        The packaged model of that kind (e.g. :data:`vision.face.DEFAULT_MODEL_PATH`).
    what : str
        The model's name in messages, e.g. ``"face-reader"``.
    stem, trainer : str
        As for :func:`retrain_hint`.

    Returns
    -------
    str
        :func:`retrain_hint` when `path` is the packaged model; otherwise
        advice to give another file.
    """
    try:
        is_packaged = Path(path).resolve() == Path(packaged).resolve()
    except (OSError, RuntimeError):  # a path that cannot be resolved is not the packaged one
        is_packaged = False
    if is_packaged:
        return retrain_hint(stem, trainer)
    return (
        f"give the .onnx file of a {what} model (as `python -m vision.lab.training.{trainer}` writes it), "
        "or leave it out to use the packaged one"
    )


def check_network(
    net: OnnxNet,
    path: Path,
    what: str,
    error: type[Exception],
    hint: str,
    blob: np.ndarray,
    fits: Callable[[tuple[int, ...]], bool],
    expected: str,
) -> np.ndarray:
    """Run `net` once on `blob` and check the shape of its output: is it a `what` network at all?

    A network of another kind (a face reader given as the die detector, say)
    loads as well as the right one, then fails at its first photo with the
    runtime's own error, or gives maps that cannot be decoded.

    Parameters
    ----------
    net : OnnxNet
        From :func:`load_onnx`.
    path : Path
        Its file, for messages.
    what : str
        The model's name in messages, e.g. ``"die-detector"``.
    error : type of Exception
        The error to raise.
    hint : str
        What the user can do (:func:`model_hint`), appended to every message.
    blob : ndarray of shape (N, 3, H, W), dtype float32
        An input such a network takes.
    fits : callable
        ``fits(output_shape) -> bool``: whether the output has the shape such a network gives.
    expected : str
        That shape, in words, for the message.

    Returns
    -------
    ndarray, dtype float32
        The network's output for `blob`.

    Raises
    ------
    error
        If the runtime refuses `blob` or the output does not fit: the message
        says the file is not a `what` model.
    """
    head = f"{what} model {str(path)!r} is not a {what} model"
    try:
        out = net.forward(blob)
    except Exception as exc:  # noqa: BLE001 - onnxruntime's and cv2.dnn's errors for inputs of the wrong shape
        declared = getattr(net, "input_shape", None)
        if declared is not None:
            why = "it takes input of shape [" + ", ".join(str(d) for d in declared) + "]"
        else:
            lines = str(exc).strip().splitlines()
            why = lines[-1].strip() if lines else type(exc).__name__
        raise error(f"{head}: it cannot read input of shape {tuple(blob.shape)} ({why}); {hint}") from None
    if not fits(tuple(out.shape)):
        raise error(
            f"{head}: for input of shape {tuple(blob.shape)} it gives output of shape {tuple(out.shape)}, "
            f"expected {expected}; {hint}"
        )
    return out


def load_onnx(
    path: Path, what: str, error: type[Exception], hint: str, stem: str | None = None
) -> tuple[OnnxNet, dict[str, Any]]:
    """Load an ONNX model and the JSON metadata beside it.

    Parameters
    ----------
    path : Path
        The ``.onnx`` file; a ``.json`` file of the same stem, when present, is
        read as its metadata.
    what : str
        The model's name in messages, e.g. ``"face-reader"``.
    error : type of Exception
        The error to raise (the model's own, e.g. :class:`vision.face.FaceModelError`).
    hint : str
        What the user can do, appended to every message.
    stem : str, optional
        The packaged model's file stem (e.g. ``"face_reader"``): when `path` is a
        folder holding ``STEM.onnx``, the message names that file.

    Returns
    -------
    net : OnnxNet
        Call ``net.forward(blob)``.
    metadata : dict
        Empty when there is no JSON file.

    Raises
    ------
    error
        If the file is missing or a folder, the runtime cannot load it, the
        metadata is unreadable, or ``DICETABLE_ONNX_BACKEND`` or ``DICETABLE_THREADS`` is wrong.
    """
    if path.is_dir():
        inside = path / f"{stem}.onnx" if stem else None
        which = f", e.g. {str(inside)!r}" if inside is not None and inside.is_file() else f" of a {what} model"
        raise error(f"{what} model {str(path)!r} is a folder, not a model file; give the .onnx file{which}")
    if not path.is_file():
        raise error(f"{what} model {str(path)!r} does not exist; {hint}")
    try:
        backend = chosen_backend()
        onnx_threads()  # a bad DICETABLE_THREADS is told as itself, not as a model that cannot load
    except ValueError as exc:
        raise error(str(exc)) from None
    try:
        net = OnnxNet(path, backend)
    except Exception as exc:  # noqa: BLE001 - cv2.error, onnxruntime's own errors, protobuf errors
        lines = str(exc).strip().splitlines()
        first = lines[-1] if lines else type(exc).__name__
        name = "cv2.dnn" if backend == "opencv" else "onnxruntime"
        raise error(f"{what} model {str(path)!r} could not be loaded by {name} ({first}); {hint}") from None
    meta_path = path.with_suffix(".json")
    metadata: dict[str, Any] = {}
    if meta_path.is_file():
        try:
            metadata = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise error(f"{what} metadata {str(meta_path)!r} is unreadable ({exc}); {hint}") from None
    return net, metadata
