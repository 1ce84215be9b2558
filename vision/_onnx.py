"""Loading the packaged ONNX models with ``cv2.dnn``: one way, one set of error messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2


def load_onnx(path: Path, what: str, error: type[Exception], hint: str) -> tuple[Any, dict[str, Any]]:
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

    Returns
    -------
    net : cv2.dnn.Net
    metadata : dict
        Empty when there is no JSON file.

    Raises
    ------
    error
        If the file is missing, ``cv2.dnn`` cannot parse it, or the metadata is unreadable.
    """
    if not path.is_file():
        raise error(f"{what} model {str(path)!r} does not exist; {hint}")
    try:
        net = cv2.dnn.readNetFromONNX(str(path))
    except cv2.error as exc:
        first = str(exc).strip().splitlines()[-1] if str(exc).strip() else "unknown error"
        raise error(f"{what} model {str(path)!r} could not be loaded by cv2.dnn ({first}); {hint}") from None
    meta_path = path.with_suffix(".json")
    metadata: dict[str, Any] = {}
    if meta_path.is_file():
        try:
            metadata = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise error(f"{what} metadata {str(meta_path)!r} is unreadable ({exc}); {hint}") from None
    return net, metadata
