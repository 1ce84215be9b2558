"""Loading photos from disk and finding the photos in a folder.

Images are returned as BGR ``uint8`` arrays of shape ``(H, W, 3)`` indexed
``(row, col)``, as OpenCV reads them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import cv2
import numpy as np

from vision.errors import ImageLoadError, OutputError

__all__ = ["IMAGE_SUFFIXES", "jpeg_roundtrip", "load_image", "list_images", "expand_image_paths", "output_folder", "save_image",
           "write_output"]

#: File-name suffixes (lower case) taken as images when a folder is listed.
IMAGE_SUFFIXES: tuple[str, ...] = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")


#: Least width and height of a photo, px: anything smaller cannot hold a die.
MIN_SIDE_PX: int = 8


def jpeg_roundtrip(image: np.ndarray, quality: int) -> np.ndarray:
    """`image` as it comes back from being saved as a JPEG of `quality` (1-100) and read again.

    Parameters
    ----------
    image : ndarray of shape (H, W, 3), dtype uint8
        BGR.
    quality : int
        OpenCV's ``IMWRITE_JPEG_QUALITY``, 1-100.

    Returns
    -------
    ndarray of shape (H, W, 3), dtype uint8
        A new array, with JPEG's block and chroma artefacts.

    Raises
    ------
    RuntimeError
        If OpenCV cannot encode the image.
    """
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise RuntimeError("OpenCV could not encode the image as JPEG")
    return cv2.imdecode(data, cv2.IMREAD_COLOR)


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


def _reason(exc: OSError) -> str:
    """The operating system's words for `exc`, lower case ("permission denied")."""
    text = exc.strerror or str(exc) or type(exc).__name__
    return text[:1].lower() + text[1:]


def output_folder(folder: str | Path, what: str = "output") -> Path:
    """Make sure `folder` is a folder this process can write into, creating it when missing.

    Call it before the work whose results go there, so that a bad folder is
    said at once, not after the work.

    Parameters
    ----------
    folder : str or Path
        The folder.
    what : str, optional
        Its name in messages, e.g. ``"--report"`` ("--report 'x' is a file",
        "cannot create the --report folder 'x'").

    Returns
    -------
    Path
        `folder`.

    Raises
    ------
    OutputError
        If `folder` is a file, cannot be created, or cannot be written into;
        the message says why (permission denied, ...) and what to give.
    """
    p = Path(folder)
    if p.exists() and not p.is_dir():
        raise OutputError(f"{what} {str(folder)!r} is a file; give a folder (it is created when missing)")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create the {what} folder {str(folder)!r}: {_reason(exc)}; "
                          "give a folder you can write to") from exc
    if not os.access(p, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write into the {what} folder {str(folder)!r}: permission denied; "
                          "give a folder you can write to")
    return p


def save_image(path: str | Path, image: np.ndarray) -> Path:
    """Write `image` to `path`, in the format its suffix names (PNG when it names none OpenCV writes).

    Encoded in memory and written by Python, so that a failure raises with
    the reason rather than OpenCV printing a warning and returning False.

    Parameters
    ----------
    path : str or Path
        The file to write (its folder must exist).
    image : ndarray of shape (H, W, 3) or (H, W), dtype uint8
        BGR (or grey) image.

    Returns
    -------
    Path
        `path`.

    Raises
    ------
    OutputError
        If the image cannot be encoded or the file cannot be written.
    """
    p = Path(path)
    suffix = p.suffix.lower() if p.suffix.lower() in IMAGE_SUFFIXES else ".png"
    try:
        ok, data = cv2.imencode(suffix, image)
    except cv2.error as exc:
        raise OutputError(f"cannot encode the image for {str(path)!r} ({str(exc).strip().splitlines()[-1]})") from exc
    if not ok:
        raise OutputError(f"cannot encode the image for {str(path)!r} as {suffix}")
    return write_output(p, data.tobytes())


def write_output(path: str | Path, data: bytes) -> Path:
    """Write `data` to the file `path` (its folder must exist) and return the path.

    Parameters
    ----------
    path : str or Path
        The file to write: a report's JSON, an encoded image.
    data : bytes
        Its whole content.

    Raises
    ------
    OutputError
        If the file cannot be written; the message says why (permission
        denied, a folder of that name, ...) and what to give.
    """
    p = Path(path)
    try:
        p.write_bytes(data)
    except OSError as exc:
        advice = ("a folder has that name; move it or give another folder" if isinstance(exc, IsADirectoryError)
                  else "give a folder you can write to")
        raise OutputError(f"cannot write {str(path)!r}: {_reason(exc)}; {advice}") from exc
    return p
