"""Loading photos from disk and finding the photos in a folder.

Images are returned as BGR ``uint8`` arrays of shape ``(H, W, 3)`` indexed
``(row, col)``, as OpenCV reads them.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import cv2
import numpy as np

from vision.errors import ImageLoadError

__all__ = ["IMAGE_SUFFIXES", "load_image", "list_images", "expand_image_paths"]

#: File-name suffixes (lower case) taken as images when a folder is listed.
IMAGE_SUFFIXES: tuple[str, ...] = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")


#: Least width and height of a photo, px: anything smaller cannot hold a die.
MIN_SIDE_PX: int = 8


def load_image(path: str | Path) -> np.ndarray:
    """Read one photo as a BGR image.

    Parameters
    ----------
    path : str or Path
        Image file (JPEG, PNG, BMP, TIFF, WebP; grayscale files come back as
        three equal channels, an alpha channel is dropped).

    Returns
    -------
    image : ndarray of shape (H, W, 3), dtype uint8
        The photo, BGR.

    Raises
    ------
    ImageLoadError
        If `path` is missing, is a folder, cannot be read, is not an image
        OpenCV can decode, or is under :data:`MIN_SIDE_PX` on a side.
    """
    p = Path(path)
    if not p.exists():
        raise ImageLoadError(f"image {str(path)!r} does not exist; give the path of a photo (JPEG or PNG)")
    if p.is_dir():
        raise ImageLoadError(f"{str(path)!r} is a folder, not an image file")
    try:
        data = np.fromfile(str(p), dtype=np.uint8)
    except OSError as exc:
        raise ImageLoadError(f"cannot read image {str(path)!r}: {exc.strerror or exc}") from exc
    image = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    if image is None:
        raise ImageLoadError(
            f"{str(path)!r} is not an image OpenCV can decode; give a JPEG, PNG, BMP, TIFF or WebP photo"
        )
    height, width = image.shape[:2]
    if min(height, width) < MIN_SIDE_PX:
        raise ImageLoadError(f"{str(path)!r} is {width}x{height} px, too small to hold a die; give a photo of the "
                             f"tray (at least {MIN_SIDE_PX} px a side; 640x480 or more reads best)")
    return image


def list_images(folder: str | Path) -> list[Path]:
    """Image files directly inside `folder` (by suffix, see :data:`IMAGE_SUFFIXES`), sorted by name.

    Raises
    ------
    ImageLoadError
        If `folder` does not exist or is not a folder.
    """
    p = Path(folder)
    if not p.is_dir():
        raise ImageLoadError(f"{str(folder)!r} is not a folder")
    return sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES)


def expand_image_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Expand folders in `paths` to the images they hold (sorted); keep files as given.

    Raises
    ------
    ImageLoadError
        If a path does not exist, or a folder holds no image.
    """
    out: list[Path] = []
    for path in paths:
        p = Path(path)
        if p.is_dir():
            found = list_images(p)
            if not found:
                raise ImageLoadError(
                    f"folder {str(path)!r} holds no image (looked for {', '.join(IMAGE_SUFFIXES)})"
                )
            out.extend(found)
        elif p.exists():
            out.append(p)
        else:
            raise ImageLoadError(f"{str(path)!r} does not exist; give photos or folders of photos")
    return out
