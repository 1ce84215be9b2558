"""Loading photos from disk and finding the photos in a folder.

Images are returned as BGR ``uint8`` arrays of shape ``(H, W, 3)`` indexed
``(row, col)``, as OpenCV reads them.
"""

from __future__ import annotations

import os
import re
import stat
import struct
from collections.abc import Iterable
from pathlib import Path

import cv2
import numpy as np

from vision.errors import ImageLoadError, OutputError

__all__ = [
    "IMAGE_SUFFIXES",
    "MAX_PIXELS",
    "expand_image_paths",
    "header_size",
    "jpeg_roundtrip",
    "list_images",
    "load_image",
    "output_folder",
    "save_image",
    "write_output",
]

#: File-name suffixes (lower case) taken as images when a folder is listed.
IMAGE_SUFFIXES: tuple[str, ...] = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")


#: Least width and height of a photo, px: anything smaller cannot hold a die.
MIN_SIDE_PX: int = 8

#: Most pixels of a photo decoded (a 48 MP phone photo, 8000x6000, is read in about 330 MB in all).
#: Checked from the file's header before decoding: a 20000x20000 photo took 3.7 GB, more than a 2 GB Pi 4 has.
MAX_PIXELS: int = 50_000_000

#: Largest photo file read, bytes (an uncompressed 50 Mpx BMP or TIFF is 150 MB).
MAX_FILE_BYTES: int = 256 * 1024 * 1024

_JPEG_FRAME_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}  # SOF0-SOF15 (not DHT, JPG, DAC)


def _jpeg_size(data: bytes | memoryview) -> tuple[int, int] | None:
    """Width and height from the first frame header (SOFn) of a JPEG, walking the segments before it."""
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xD8:  # standalone markers: no length
            i += 2
            continue
        if marker in (0xD9, 0xDA):  # end of image, start of scan: no frame header before them
            return None
        (length,) = struct.unpack_from(">H", data, i + 2)
        if marker in _JPEG_FRAME_MARKERS:
            height, width = struct.unpack_from(">HH", data, i + 5)
            return width, height
        i += 2 + length
    return None


def _tiff_size(data: bytes | memoryview) -> tuple[int, int] | None:
    """Width and height (tags 256 and 257) of a classic TIFF's first image (BigTIFF: None)."""
    order = "<" if data[:2] == b"II" else ">"
    if struct.unpack_from(order + "H", data, 2)[0] != 42:
        return None
    (ifd,) = struct.unpack_from(order + "I", data, 4)
    (count,) = struct.unpack_from(order + "H", data, ifd)
    found: dict[int, int] = {}
    for k in range(count):
        tag, kind = struct.unpack_from(order + "HH", data, ifd + 2 + 12 * k)
        if tag in (256, 257) and kind in (3, 4):  # SHORT or LONG
            found[tag] = struct.unpack_from(order + ("H" if kind == 3 else "I"), data, ifd + 2 + 12 * k + 8)[0]
    return (found[256], found[257]) if len(found) == 2 else None


def header_size(data: bytes | memoryview) -> tuple[int, int] | None:
    """``(width, height)`` in px that an image file's header gives, read without decoding it.

    `data` is the file's content (or its start: a JPEG's frame header follows its metadata).

    Knows PNG, JPEG, BMP, WebP, TIFF and PNM (the formats photos come in); None for another
    format or a header cut short (the decoder then decides).
    """
    try:
        if data[:8] == b"\x89PNG\r\n\x1a\n":
            return struct.unpack_from(">II", data, 16)
        if data[:2] == b"\xff\xd8":
            return _jpeg_size(data)
        if data[:2] == b"BM":
            if struct.unpack_from("<I", data, 14)[0] == 12:  # OS/2 BITMAPCOREHEADER: 16-bit sides
                return struct.unpack_from("<HH", data, 18)
            width, height = struct.unpack_from("<ii", data, 18)
            return abs(width), abs(height)  # a negative height: rows top-down
        if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
            chunk = data[12:16]
            if chunk == b"VP8 ":
                width, height = struct.unpack_from("<HH", data, 26)
                return width & 0x3FFF, height & 0x3FFF
            if chunk == b"VP8L":
                (bits,) = struct.unpack_from("<I", data, 21)
                return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
            if chunk == b"VP8X":
                return (int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1)
            return None
        if data[:4] in (b"II*\x00", b"MM\x00*"):
            return _tiff_size(data)
        if re.match(rb"P[1-6]\s", data[:3]):  # PNM: the sides as text, each followed by white space
            sides = re.match(rb"\s*(\d+)\s+(\d+)\s", re.sub(rb"#[^\n]*", b" ", bytes(data[2:512])))
            return (int(sides[1]), int(sides[2])) if sides else None
    except (struct.error, IndexError, ValueError):
        return None
    return None


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
        If `path` is missing, is a folder or not a regular file (a named pipe would never end),
        cannot be read, is over :data:`MAX_FILE_BYTES`, has a header that gives more than
        :data:`MAX_PIXELS` (checked before decoding), is not an image OpenCV can decode, or is
        under :data:`MIN_SIDE_PX` on a side.
    """
    p = Path(path)
    try:
        mode = p.stat()
    except FileNotFoundError:
        raise ImageLoadError(f"image {str(path)!r} does not exist; give the path of a photo (JPEG or PNG)") from None
    except OSError as exc:
        raise ImageLoadError(f"cannot read image {str(path)!r}: {exc.strerror or exc}") from exc
    if stat.S_ISDIR(mode.st_mode):
        raise ImageLoadError(f"{str(path)!r} is a folder, not an image file")
    if not stat.S_ISREG(mode.st_mode):
        raise ImageLoadError(
            f"{str(path)!r} is not a regular file (a named pipe, device or socket); give the path of a photo file"
        )
    if mode.st_size > MAX_FILE_BYTES:
        raise ImageLoadError(
            f"{str(path)!r} is {mode.st_size / 2**20:.0f} MiB, larger than a photo this reader "
            f"takes ({MAX_FILE_BYTES // 2**20} MiB); give a smaller photo (a JPEG of 640x480 or more)"
        )
    try:
        data = np.fromfile(str(p), dtype=np.uint8)
    except OSError as exc:
        raise ImageLoadError(f"cannot read image {str(path)!r}: {exc.strerror or exc}") from exc
    size = header_size(memoryview(data))
    if size is not None and size[0] * size[1] > MAX_PIXELS:
        raise ImageLoadError(
            f"{str(path)!r} is {size[0]}x{size[1]} px ({size[0] * size[1] / 1e6:.0f} Mpx), more than "
            f"this reader decodes ({MAX_PIXELS / 1e6:.0f} Mpx); give the photo resized, e.g. to "
            "4000x3000 px or less"
        )
    try:
        image = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    except cv2.error:  # OpenCV's own limits (1 Gpx), a header it refuses
        image = None
    if image is None:
        raise ImageLoadError(
            f"{str(path)!r} is not an image OpenCV can decode; give a JPEG, PNG, BMP, TIFF or WebP photo"
        )
    height, width = image.shape[:2]
    if min(height, width) < MIN_SIDE_PX:
        raise ImageLoadError(
            f"{str(path)!r} is {width}x{height} px, too small to hold a die; give a photo of the "
            f"tray (at least {MIN_SIDE_PX} px a side; 640x480 or more reads best)"
        )
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
                raise ImageLoadError(f"folder {str(path)!r} holds no image (looked for {', '.join(IMAGE_SUFFIXES)})")
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
        raise OutputError(
            f"cannot create the {what} folder {str(folder)!r}: {_reason(exc)}; give a folder you can write to"
        ) from exc
    if not os.access(p, os.W_OK | os.X_OK):
        raise OutputError(
            f"cannot write into the {what} folder {str(folder)!r}: permission denied; give a folder you can write to"
        )
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

    The bytes go to a temporary file in the same folder, flushed to the disk and renamed over
    `path` (``os.replace``): a kill or a full disk mid-write leaves the old file whole, never a
    part of the new one (``dicetable export`` writes the same way). An old file keeps its
    permissions; a new one gets the umask's.

    Parameters
    ----------
    path : str or Path
        The file to write: a report's JSON, an encoded image.
    data : bytes
        Its whole content.

    Raises
    ------
    OutputError
        If the file cannot be written (the temporary file is removed); the message says why
        (permission denied, a folder of that name, no space left, ...) and what to give.
    """
    import tempfile

    p = Path(path)
    tmp = None
    try:
        if p.is_dir():
            raise IsADirectoryError(21, "Is a directory", str(p))
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".part", dir=p.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if p.exists():
            mode = p.stat().st_mode & 0o7777
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, p)
    except OSError as exc:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        advice = (
            "a folder has that name; move it or give another folder"
            if isinstance(exc, IsADirectoryError)
            else "give a folder you can write to"
        )
        raise OutputError(f"cannot write {str(path)!r}: {_reason(exc)}; {advice}") from exc
    return p
