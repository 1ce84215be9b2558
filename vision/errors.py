"""Errors raised by the ``vision`` package (which knows nothing of games)."""


class VisionError(Exception):
    """Root of every error the ``vision`` package raises on purpose."""


class ImageLoadError(VisionError, OSError):
    """Raised when an image file is missing, unreadable or not an image."""


class DatasetError(VisionError, ValueError):
    """Raised when a labelled dataset folder or its ``labels.json`` is malformed."""


class OutputError(VisionError, OSError):
    """Raised when an output folder or file (a report, an annotated photo) cannot be made or written."""
