"""Reading d6 dice in photos: detection, pip reading and what they found.

The names below are imported lazily, so ``import vision`` stays cheap:

* :func:`read_image` (:mod:`vision.reader`): photo -> :class:`ImageReading`;
* :func:`load_image` (:mod:`vision.images`): path -> BGR ``uint8`` array;
* :class:`DieReading`, :class:`ImageReading` (:mod:`vision.reading`);
* :func:`chosen_backend`: the runtime the networks will run on (checks
  ``DICETABLE_ONNX_BACKEND``; a command can call it first to fail early).

Example::

    from vision import load_image, read_image
    reading = read_image(load_image("tray.jpg"))
    print(reading.values, reading.problems)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = ["read_image", "load_image", "DieReading", "ImageReading", "chosen_backend"]

_LAZY = {
    "read_image": "vision.reader",
    "load_image": "vision.images",
    "DieReading": "vision.reading",
    "ImageReading": "vision.reading",
    "chosen_backend": "vision._onnx",
}

if TYPE_CHECKING:  # pragma: no cover
    from vision._onnx import chosen_backend
    from vision.images import load_image
    from vision.reader import read_image
    from vision.reading import DieReading, ImageReading


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'vision' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
