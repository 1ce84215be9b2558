"""A minimal PDF writer: one page showing one grayscale image at an exact physical size.

Enough for printing the marker sheet at true scale without a PDF library.  The
image is stored losslessly (``/FlateDecode``, 8-bit ``/DeviceGray``) and drawn to
fill the page.
"""

from __future__ import annotations

import os
import zlib

import numpy as np

MM_PER_INCH = 25.4
POINTS_PER_INCH = 72.0


def image_pdf(image: np.ndarray, page_mm: tuple[float, float]) -> bytes:
    """Return a one-page PDF of `image` filling a page of `page_mm`.

    Parameters
    ----------
    image : ndarray of shape (H, W), dtype uint8
        Grayscale page image, row 0 at the top.
    page_mm : tuple of 2 float
        ``(width, height)`` of the page in mm (A4 is ``(210, 297)``).

    Raises
    ------
    ValueError
        If `image` is not 2-D uint8 or the page size is not positive.
    """
    img = np.ascontiguousarray(image)
    if img.ndim != 2 or img.dtype != np.uint8 or min(img.shape) < 1:
        raise ValueError(f"image must be 2-D uint8 (grayscale), got shape {img.shape}, dtype {img.dtype}")
    if not (page_mm[0] > 0 and page_mm[1] > 0):
        raise ValueError(f"page size must be positive mm, got {page_mm!r}")
    h, w = img.shape
    pw = page_mm[0] / MM_PER_INCH * POINTS_PER_INCH
    ph = page_mm[1] / MM_PER_INCH * POINTS_PER_INCH
    data = zlib.compress(img.tobytes(), 9)
    content = f"q {pw:.3f} 0 0 {ph:.3f} 0 0 cm /Im0 Do Q\n".encode("ascii")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        (
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {pw:.3f} {ph:.3f}] "
            f"/Resources << /XObject << /Im0 4 0 R >> >> /Contents 5 0 R >>"
        ).encode("ascii"),
        (
            f"<< /Type /XObject /Subtype /Image /Width {w} /Height {h} /ColorSpace /DeviceGray "
            f"/BitsPerComponent 8 /Filter /FlateDecode /Length {len(data)} >>\nstream\n"
        ).encode("ascii")
        + data
        + b"\nendstream",
        f"<< /Length {len(content)} >>\nstream\n".encode("ascii") + content + b"endstream",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode("ascii") + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode("ascii")
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode("ascii")
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode("ascii")
    return bytes(out)


def write_image_pdf(path: str | os.PathLike[str], image: np.ndarray, page_mm: tuple[float, float]) -> None:
    """Write :func:`image_pdf` of `image` to `path`."""
    with open(path, "wb") as fh:
        fh.write(image_pdf(image, page_mm))
