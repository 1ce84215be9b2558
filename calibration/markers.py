"""The printable marker sheet: four ArUco markers at true size, for the tray corners.

``dicetable calibrate --markers FILE.pdf`` (or ``.png``) writes it.  Print at 100 %
(no "fit to page"); the 50 mm bar on the sheet must measure 50 mm.  Cut the
markers out and stick each on its corner of the tray rim, upright (the label
text reads normally when you stand at the tray's bottom edge), centred where
the profile's ``[markers] centres_mm`` says (by default diagonally just outside
each floor corner).
"""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

import cv2
import numpy as np

from calibration.errors import CalibrationError
from calibration.pdf import write_image_pdf
from vision.tray import CORNER_NAMES, MarkerLayout, aruco_dictionary

#: A4 portrait, mm.
A4_MM = (210.0, 297.0)


def marker_sheet(layout: MarkerLayout, *, dpi: int = 300, page_mm: tuple[float, float] = A4_MM) -> np.ndarray:
    """Draw the sheet of the four corner markers.

    Parameters
    ----------
    layout : MarkerLayout
        Marker ids, dictionary and printed size.
    dpi : int, optional
        Dots per inch of the page image (150-1200).
    page_mm : tuple of 2 float, optional
        Page ``(width, height)`` in mm.

    Returns
    -------
    ndarray of shape (H, W), dtype uint8
        The page, white background; ``W = page_mm[0] / 25.4 * dpi``.

    Raises
    ------
    CalibrationError
        If the dpi is out of range or four markers of this size do not fit on the page.
    """
    if not 150 <= dpi <= 1200:
        raise CalibrationError(f"dpi must be 150-1200, got {dpi!r}")
    ppm = dpi / 25.4
    w, h = int(round(page_mm[0] * ppm)), int(round(page_mm[1] * ppm))
    cell_w, cell_h = page_mm[0] / 2, (page_mm[1] - 60) / 2
    if layout.size_mm + 30 > min(cell_w, cell_h):
        raise CalibrationError(
            f"markers of {layout.size_mm:g} mm do not fit four to a {page_mm[0]:g} x {page_mm[1]:g} mm page; "
            f"use --marker-mm {int(min(cell_w, cell_h) - 30)} or less"
        )
    page = np.full((h, w), 255, np.uint8)
    dictionary = aruco_dictionary(layout.dictionary)
    side = int(round(layout.size_mm * ppm))
    font = cv2.FONT_HERSHEY_SIMPLEX
    scale = dpi / 300.0
    cv2.putText(
        page,
        f"dicetable tray markers ({layout.dictionary}), {layout.size_mm:g} mm each",
        (int(12 * ppm), int(18 * ppm)),
        font,
        1.6 * scale,
        0,
        max(1, int(3 * scale)),
        cv2.LINE_AA,
    )
    cv2.putText(
        page,
        "Print at 100% (no fit-to-page). The bar below must measure 50 mm.",
        (int(12 * ppm), int(28 * ppm)),
        font,
        1.1 * scale,
        0,
        max(1, int(2 * scale)),
        cv2.LINE_AA,
    )
    y_bar = int(36 * ppm)
    cv2.rectangle(page, (int(12 * ppm), y_bar), (int(62 * ppm), y_bar + int(3 * ppm)), 0, -1)
    for i, mid in enumerate(layout.ids):
        col, row = (0, 0) if i == 0 else (1, 0) if i == 1 else (1, 1) if i == 2 else (0, 1)
        cx = (col + 0.5) * cell_w * ppm
        cy = (60 + (row + 0.5) * cell_h) * ppm
        x0, y0 = int(round(cx - side / 2)), int(round(cy - side / 2))
        page[y0 : y0 + side, x0 : x0 + side] = cv2.aruco.generateImageMarker(dictionary, int(mid), side)
        quiet = int(round(4 * ppm))
        cv2.rectangle(page, (x0 - quiet, y0 - quiet), (x0 + side + quiet, y0 + side + quiet), 160, 1)
        label = f"id {mid}: {CORNER_NAMES[i]} corner, {layout.size_mm:g} mm"
        cv2.putText(
            page,
            label,
            (int(cx - 40 * ppm), int(y0 + side + 12 * ppm)),
            font,
            1.0 * scale,
            0,
            max(1, int(2 * scale)),
            cv2.LINE_AA,
        )
    return page


def _png_with_dpi(png: bytes, dpi: int) -> bytes:
    """Insert a pHYs chunk (pixels per metre) after IHDR so printers know the size."""
    ppm = int(round(dpi / 0.0254))
    body = b"pHYs" + struct.pack(">IIB", ppm, ppm, 1)
    chunk = struct.pack(">I", 9) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    end_ihdr = 8 + 4 + 4 + 13 + 4
    return png[:end_ihdr] + chunk + png[end_ihdr:]


def write_marker_sheet(path: str | os.PathLike[str], layout: MarkerLayout, *, dpi: int = 300) -> Path:
    """Write the marker sheet as ``.pdf`` (A4 at true size) or ``.png`` (with its dpi recorded).

    Raises
    ------
    CalibrationError
        If the file name does not end in .pdf or .png.
    OSError
        If the file cannot be written.
    """
    p = Path(path)
    page = marker_sheet(layout, dpi=dpi)
    suffix = p.suffix.lower()
    if suffix == ".pdf":
        write_image_pdf(p, page, A4_MM)
    elif suffix == ".png":
        ok, buf = cv2.imencode(".png", page)
        if not ok:
            raise OSError(f"could not encode the marker sheet for {str(p)!r}")
        p.write_bytes(_png_with_dpi(buf.tobytes(), dpi))
    else:
        raise CalibrationError(f"marker sheet file {str(p)!r} must end in .pdf or .png")
    return p
