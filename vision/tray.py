"""Tray geometry: ArUco corner markers, the homography and the rectified tray image.

Coordinates
-----------
- *Image* points are ``(x, y)`` pixels of the camera frame, ``x`` right, ``y`` down
  (OpenCV order; arrays are indexed ``(row, col)``).
- *Tray* points are ``(x, y)`` millimetres on the tray floor, origin at the floor's
  top-left corner as seen by the camera, ``x`` along the floor's width.
- The *rectified* image is the tray floor seen straight from above at a fixed scale
  ``px_per_mm``: rectified pixel ``(x, y)`` is tray point ``(x / px_per_mm, y / px_per_mm)``.

Markers are four ArUco markers (``DICT_4X4_50`` by default), ids 0, 1, 2, 3 at the
top-left, top-right, bottom-right and bottom-left corners of the floor, printed by
``dicetable calibrate --markers``.  Their centres and size in tray millimetres are a
:class:`MarkerLayout`.

Examples
--------
>>> geo = TrayGeometry.from_corners([(100, 80), (540, 80), (540, 410), (100, 410)],
...                                 width_mm=200, height_mm=150, px_per_mm=2.0)
>>> geo.size_px
(400, 300)
>>> [round(v, 3) for v in geo.image_to_tray((320, 245))]
[100.0, 75.0]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np

#: ArUco dictionaries that :func:`aruco_dictionary` accepts, by name.
ARUCO_DICTIONARIES: tuple[str, ...] = ("DICT_4X4_50", "DICT_4X4_100", "DICT_5X5_50", "DICT_6X6_50")

#: Corner names in marker-id order: top-left, top-right, bottom-right, bottom-left.
CORNER_NAMES: tuple[str, ...] = ("top-left", "top-right", "bottom-right", "bottom-left")


def aruco_dictionary(name: str) -> cv2.aruco.Dictionary:
    """Return the predefined ArUco dictionary called `name` (e.g. ``"DICT_4X4_50"``).

    Raises
    ------
    ValueError
        If `name` is not one of :data:`ARUCO_DICTIONARIES`.
    """
    if name not in ARUCO_DICTIONARIES:
        raise ValueError(f"unknown ArUco dictionary {name!r}; use one of {', '.join(ARUCO_DICTIONARIES)}")
    return cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, name))


@dataclass(frozen=True, slots=True)
class MarkerLayout:
    """Where the four corner markers sit, in tray millimetres.

    Parameters
    ----------
    centres_mm : tuple of 4 (float, float)
        Centre ``(x, y)`` of markers ``ids[0..3]`` (top-left, top-right,
        bottom-right, bottom-left), in tray mm; usually just outside the floor.
    size_mm : float
        Side of each marker's black square, in mm (the printed size).
    ids : tuple of 4 int, optional
        ArUco ids of the four markers, in corner order.
    dictionary : str, optional
        ArUco dictionary name, one of :data:`ARUCO_DICTIONARIES`.
    """

    centres_mm: tuple[tuple[float, float], ...]
    size_mm: float
    ids: tuple[int, ...] = (0, 1, 2, 3)
    dictionary: str = "DICT_4X4_50"

    def __post_init__(self) -> None:
        if len(self.centres_mm) != 4 or len(self.ids) != 4 or len(set(self.ids)) != 4:
            raise ValueError(
                f"a marker layout needs 4 distinct ids and 4 centres, got ids {self.ids!r} and "
                f"{len(self.centres_mm)} centres"
            )
        if not (2.0 <= float(self.size_mm) <= 200.0):
            raise ValueError(f"marker size_mm must be 2-200 mm, got {self.size_mm!r}")
        aruco_dictionary(self.dictionary)

    @classmethod
    def at_corners(
        cls,
        width_mm: float,
        height_mm: float,
        *,
        size_mm: float = 16.0,
        inset_mm: float | None = None,
        ids: tuple[int, ...] = (0, 1, 2, 3),
        dictionary: str = "DICT_4X4_50",
    ) -> MarkerLayout:
        """Markers centred diagonally outside each floor corner.

        Parameters
        ----------
        width_mm, height_mm : float
            Floor size in mm.
        size_mm : float, optional
            Marker side in mm.
        inset_mm : float, optional
            Distance in mm from the floor corner to the marker centre along each
            axis (outwards); default ``size_mm / 2 + 2`` (marker on the rim).
        """
        d = size_mm / 2 + 2 if inset_mm is None else float(inset_mm)
        w, h = float(width_mm), float(height_mm)
        centres = ((-d, -d), (w + d, -d), (w + d, h + d), (-d, h + d))
        return cls(centres_mm=centres, size_mm=float(size_mm), ids=tuple(ids), dictionary=dictionary)

    def corners_mm(self, index: int) -> np.ndarray:
        """Corners of marker `index` (0-3), shape (4, 2) float64, tray mm, ArUco order.

        ArUco order is the marker's own top-left, top-right, bottom-right,
        bottom-left; markers are printed upright (not rotated) on the tray.
        """
        cx, cy = self.centres_mm[index]
        h = self.size_mm / 2
        return np.array([(cx - h, cy - h), (cx + h, cy - h), (cx + h, cy + h), (cx - h, cy + h)], np.float64)


@dataclass(frozen=True, slots=True)
class CalibrationFailed:
    """A tray fit that did not work, and why (falsy, like skimage's ``FailedEstimation``).

    Parameters
    ----------
    reason : str
        What went wrong and what to do, in words for the person at the table.
    """

    reason: str

    def __bool__(self) -> bool:
        return False

    def __str__(self) -> str:
        return self.reason


def _as_matrix(h: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
    m = np.asarray(h, np.float64)
    if m.shape != (3, 3) or not np.all(np.isfinite(m)) or abs(np.linalg.det(m)) < 1e-12:
        raise ValueError(f"homography must be a finite invertible 3x3 matrix, got {np.asarray(h).tolist()!r}")
    return m / m[2, 2]


@dataclass(frozen=True, slots=True)
class TrayGeometry:
    """The camera-to-tray homography and the rectified image it gives.

    Parameters
    ----------
    homography : tuple of 3 tuples of 3 float
        Maps homogeneous image pixels ``(x, y, 1)`` to rectified pixels.
    width_mm, height_mm : float
        Size of the tray floor in mm.
    px_per_mm : float
        Scale of the rectified image, in pixels per mm.
    """

    homography: tuple[tuple[float, ...], ...]
    width_mm: float
    height_mm: float
    px_per_mm: float
    _m: np.ndarray = field(init=False, repr=False, compare=False)
    _inv: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        m = _as_matrix(self.homography)
        if not (10.0 <= self.width_mm <= 2000.0 and 10.0 <= self.height_mm <= 2000.0):
            raise ValueError(f"tray size must be 10-2000 mm a side, got {self.width_mm!r} x {self.height_mm!r}")
        if not (0.25 <= self.px_per_mm <= 20.0):
            raise ValueError(f"px_per_mm must be 0.25-20, got {self.px_per_mm!r}")
        object.__setattr__(self, "homography", tuple(tuple(float(v) for v in row) for row in m))
        object.__setattr__(self, "_m", m)
        object.__setattr__(self, "_inv", np.linalg.inv(m))

    @classmethod
    def from_corners(
        cls, corners_px: Sequence[Sequence[float]], *, width_mm: float, height_mm: float, px_per_mm: float
    ) -> TrayGeometry:
        """Geometry from the four floor corners seen in the image.

        Parameters
        ----------
        corners_px : sequence of 4 (x, y)
            Image pixels of the floor's top-left, top-right, bottom-right and
            bottom-left corners (clockwise from top-left as seen by the camera).
        width_mm, height_mm, px_per_mm : float
            Floor size in mm and rectified scale in px per mm.

        Raises
        ------
        ValueError
            If there are not 4 finite corners, or they do not form a convex
            clockwise quadrilateral of at least 20 px a side.
        """
        pts = np.asarray(corners_px, np.float64)
        if pts.shape != (4, 2) or not np.all(np.isfinite(pts)):
            raise ValueError(
                f"corners must be 4 (x, y) image points, top-left, top-right, bottom-right, bottom-left; "
                f"got {np.asarray(corners_px).tolist()!r}"
            )
        sides = [np.linalg.norm(pts[i] - pts[(i + 1) % 4]) for i in range(4)]
        cross = []
        for i in range(4):
            (ax, ay), (bx, by) = pts[(i + 1) % 4] - pts[i], pts[(i + 2) % 4] - pts[(i + 1) % 4]
            cross.append(ax * by - ay * bx)
        if min(sides) < 20 or not all(c > 0 for c in cross):
            raise ValueError(
                f"corners {pts.tolist()!r} do not outline the tray: give the floor's top-left, top-right, "
                "bottom-right and bottom-left corners in that order, at least 20 px apart"
            )
        w, h = width_mm * px_per_mm, height_mm * px_per_mm
        dst = np.float32([(0, 0), (w, 0), (w, h), (0, h)])
        m = cv2.getPerspectiveTransform(pts.astype(np.float32), dst)
        return cls(
            homography=tuple(map(tuple, m)),
            width_mm=float(width_mm),
            height_mm=float(height_mm),
            px_per_mm=float(px_per_mm),
        )

    @property
    def matrix(self) -> np.ndarray:
        """The homography, shape (3, 3) float64, image px to rectified px (a copy)."""
        return self._m.copy()

    @property
    def size_px(self) -> tuple[int, int]:
        """``(width, height)`` of the rectified image in pixels."""
        return int(round(self.width_mm * self.px_per_mm)), int(round(self.height_mm * self.px_per_mm))

    @property
    def corners_px(self) -> np.ndarray:
        """Image pixels of the four floor corners, shape (4, 2) float64 (TL, TR, BR, BL)."""
        return self.tray_to_image([(0, 0), (self.width_mm, 0), (self.width_mm, self.height_mm), (0, self.height_mm)])

    def image_to_tray(self, points_xy: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
        """Map image pixels ``(x, y)`` to tray mm; shape (N, 2) in, (N, 2) out (or (2,) for one)."""
        p = np.asarray(points_xy, np.float64)
        one = p.ndim == 1
        out = cv2.perspectiveTransform(p.reshape(-1, 1, 2), self._m).reshape(-1, 2) / self.px_per_mm
        return out[0] if one else out

    def tray_to_image(self, points_mm: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
        """Map tray mm ``(x, y)`` to image pixels; shape (N, 2) in, (N, 2) out (or (2,) for one)."""
        p = np.asarray(points_mm, np.float64) * self.px_per_mm
        one = p.ndim == 1
        out = cv2.perspectiveTransform(p.reshape(-1, 1, 2), self._inv).reshape(-1, 2)
        return out[0] if one else out

    def rectify(self, image: np.ndarray, *, scale: float = 1.0, interpolation: int = cv2.INTER_LINEAR) -> np.ndarray:
        """Warp `image` to the top-down tray view.

        Parameters
        ----------
        image : ndarray of shape (H, W) or (H, W, 3), dtype uint8
            A camera frame (BGR) or its grayscale.
        scale : float, optional
            Output scale relative to :attr:`size_px` (0.25 gives a quarter-size
            view for cheap motion checks).
        interpolation : int, optional
            OpenCV interpolation flag.

        Returns
        -------
        ndarray of shape (round(height_px * scale), round(width_px * scale)[, 3]), dtype uint8
        """
        w, h = self.size_px
        m = self._m
        if scale != 1.0:
            m = np.diag([scale, scale, 1.0]) @ m
        size = (max(1, int(round(w * scale))), max(1, int(round(h * scale))))
        return cv2.warpPerspective(image, m, size, flags=interpolation, borderMode=cv2.BORDER_REPLICATE)

    def scaled_input(self, factor: float) -> TrayGeometry:
        """The same geometry for input frames resized by `factor` (e.g. 0.5 for half size)."""
        m = self._m @ np.diag([1.0 / factor, 1.0 / factor, 1.0])
        return TrayGeometry(tuple(map(tuple, m)), self.width_mm, self.height_mm, self.px_per_mm)


def detect_markers(
    image: np.ndarray, dictionary: str = "DICT_4X4_50", *, detector: cv2.aruco.ArucoDetector | None = None
) -> dict[int, np.ndarray]:
    """Find ArUco markers in a frame.

    Parameters
    ----------
    image : ndarray of shape (H, W) or (H, W, 3), dtype uint8
        Camera frame (BGR) or grayscale.
    dictionary : str, optional
        ArUco dictionary name.
    detector : cv2.aruco.ArucoDetector, optional
        A detector to reuse (saves building one per call).

    Returns
    -------
    dict of int to ndarray of shape (4, 2), float64
        Image corners ``(x, y)`` of each marker found, by id, in ArUco order.
    """
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    det = detector or cv2.aruco.ArucoDetector(aruco_dictionary(dictionary), cv2.aruco.DetectorParameters())
    corners, ids, _ = det.detectMarkers(gray)
    if ids is None:
        return {}
    return {int(i): np.asarray(c, np.float64).reshape(4, 2) for i, c in zip(ids.ravel(), corners)}


def fit_tray(
    markers: Mapping[int, np.ndarray],
    layout: MarkerLayout,
    *,
    width_mm: float,
    height_mm: float,
    px_per_mm: float,
    max_error_px: float = 3.0,
) -> TrayGeometry | CalibrationFailed:
    """Fit the tray geometry to the corner markers found in a frame.

    Parameters
    ----------
    markers : mapping of int to ndarray of shape (4, 2)
        Image corners by marker id, as :func:`detect_markers` gives them.
    layout : MarkerLayout
        Where the markers sit on the tray.
    width_mm, height_mm, px_per_mm : float
        Floor size in mm and rectified scale.
    max_error_px : float, optional
        Largest reprojection error (image px) of any marker corner accepted.

    Returns
    -------
    TrayGeometry or CalibrationFailed
        The geometry, or a falsy :class:`CalibrationFailed` saying which markers
        are missing or why the fit is bad.
    """
    found = [i for i, mid in enumerate(layout.ids) if mid in markers]
    if len(found) < 4:
        missing = [f"{CORNER_NAMES[i]} (id {layout.ids[i]})" for i in range(4) if i not in found]
        return CalibrationFailed(
            f"found {len(found)} of 4 tray markers; missing {', '.join(missing)}: make sure all four "
            "corner markers are in view, flat and not covered, or give the corners by hand (--corners)"
        )
    src = np.vstack([markers[layout.ids[i]] for i in range(4)])
    dst = np.vstack([layout.corners_mm(i) for i in range(4)]) * px_per_mm
    m, _ = cv2.findHomography(src, dst, 0)
    if m is None or not np.all(np.isfinite(m)) or abs(np.linalg.det(m)) < 1e-12:
        return CalibrationFailed("the four markers do not give a usable homography; check they lie flat on the tray")
    try:
        geo = TrayGeometry(tuple(map(tuple, m)), float(width_mm), float(height_mm), float(px_per_mm))
    except ValueError as exc:
        return CalibrationFailed(f"marker fit rejected: {exc}")
    back = geo.tray_to_image(dst / px_per_mm)
    err = float(np.max(np.linalg.norm(back - src, axis=1)))
    if err > max_error_px:
        return CalibrationFailed(
            f"markers do not match the layout (worst corner off by {err:.1f} px, at most {max_error_px:g} "
            "allowed): check the marker size and positions in the profile, and that the markers lie flat"
        )
    return geo


def marker_shift_px(geometry: TrayGeometry, layout: MarkerLayout, markers: Mapping[int, np.ndarray]) -> float | None:
    """Largest distance (image px) between the markers found and where `geometry` expects them.

    Returns None when none of the layout's markers was found.
    """
    worst = None
    for i, mid in enumerate(layout.ids):
        if mid not in markers:
            continue
        expect = geometry.tray_to_image(layout.corners_mm(i))
        d = float(np.max(np.linalg.norm(expect - np.asarray(markers[mid], np.float64), axis=1)))
        worst = d if worst is None else max(worst, d)
    return worst


def quad_mask(geometry: TrayGeometry, shape: tuple[int, int]) -> np.ndarray:
    """Mask of the tray floor in an image of `shape` ``(rows, cols)``; uint8 0/255."""
    mask = np.zeros(shape, np.uint8)
    cv2.fillConvexPoly(mask, np.round(geometry.corners_px).astype(np.int32), 255)
    return mask


def rotation_deg(geometry: TrayGeometry) -> float:
    """Rotation of the tray's x axis in the image, degrees counter-clockwise (for reports)."""
    a, b = geometry.tray_to_image([(0.0, 0.0), (geometry.width_mm, 0.0)])
    return math.degrees(math.atan2(-(b[1] - a[1]), b[0] - a[0]))
