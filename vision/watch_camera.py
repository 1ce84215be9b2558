"""The roll watcher's views of the tray and its checks that the camera has not moved.

Mixed into :class:`vision.watch.RollWatcher`: the small grey view of the tray
that motion is measured on, the empty-tray reference it is compared with, the
edge view of the tray walls (:meth:`vision.watch.RollWatcher.alignment`), and the corner
markers that show a bump of the camera, after which the tray geometry is
refitted from them (or every roll is unreadable until the camera is
recalibrated).

Coordinates: tray millimetres and rectified pixels as in :mod:`vision.tray`.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from vision.tray import TrayGeometry, detect_markers, fit_tray, marker_shift_px
from vision.watch_events import EventKind, RollEvent, WatchState

#: Margin around the floor, in mm, of the edge view used to check the camera against the reference.
_EDGE_PAD_MM = 25.0


class _CameraChecks:
    """The tray views and camera checks of :class:`vision.watch.RollWatcher` (which holds the state they use)."""

    def _set_geometry(self, geometry: TrayGeometry) -> None:
        self.geometry = geometry
        c = self.config
        self._small_geo = geometry.scaled_input(0.5)
        w, h = geometry.size_px
        self._small_size = (max(8, int(round(w * c.motion_scale))), max(8, int(round(h * c.motion_scale))))
        side = self.die_mm * geometry.px_per_mm * c.motion_scale
        self._die_area_small = side * side
        pad = _EDGE_PAD_MM
        bw, bh = int(geometry.width_mm + 2 * pad), int(geometry.height_mm + 2 * pad)
        band = np.zeros((bh, bw), np.uint8)
        cv2.rectangle(band, (int(pad - 10), int(pad - 10)), (int(bw - pad + 10), int(bh - pad + 10)), 1, -1)
        cv2.rectangle(band, (int(pad + 10), int(pad + 10)), (int(bw - pad - 10), int(bh - pad - 10)), 0, -1)
        self._band = band.astype(bool)

    def _set_reference(self, reference: np.ndarray, geometry: TrayGeometry) -> None:
        if reference.ndim != 3 or reference.shape[2] != 3 or reference.dtype != np.uint8:
            raise ValueError(
                f"reference must be an (H, W, 3) uint8 BGR camera frame of the empty tray, "
                f"got shape {reference.shape}, dtype {reference.dtype}"
            )
        small = self._small_view(reference)
        self._ref_small = small
        self._ref_median = float(np.median(small))
        self._ref_edges = self._edges(reference, geometry)
        ref_rect = geometry.rectify(reference)
        half = cv2.resize(ref_rect, (ref_rect.shape[1] // 2, ref_rect.shape[0] // 2), interpolation=cv2.INTER_AREA)
        self._ref_log = [cv2.log(ch.astype(np.float32) + 4.0) for ch in cv2.split(half)]

    def _held_cluster(self, x: int, y: int, w: int, h: int) -> bool:
        """Whether a foreground blob's box (px of the small view) lies in the hold area, half a die to spare.

        Held dice pushed together against the tray's wall make one blob at the
        edge of three die areas and more (three held dice side by side: 3.1),
        which is not a hand reaching in; a hand still counts anywhere once it is
        :attr:`WatchConfig.hand_area_dice` die areas.
        """
        if self.hold_area_mm is None:
            return False
        ppm = self.geometry.px_per_mm * self.config.motion_scale
        hx, hy, hw, hh = self.hold_area_mm
        spare = self.die_mm / 2
        return (
            x / ppm >= hx - spare
            and y / ppm >= hy - spare
            and (x + w) / ppm <= hx + hw + spare
            and (y + h) / ppm <= hy + hh + spare
        )

    def _small_view(self, image: np.ndarray) -> np.ndarray:
        gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        half = cv2.resize(gray, (gray.shape[1] // 2, gray.shape[0] // 2), interpolation=cv2.INTER_AREA)
        scale = self._small_size[0] / self.geometry.size_px[0]
        m = np.diag([scale, scale, 1.0]) @ self._small_geo.matrix
        return cv2.warpPerspective(
            half, m, self._small_size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        ).astype(np.float32)

    def _edges(self, image: np.ndarray, geometry: TrayGeometry) -> np.ndarray:
        """Blurred gradient magnitude of the tray and its walls at 1 px/mm, float32."""
        pad = _EDGE_PAD_MM
        k = 1.0 / geometry.px_per_mm
        m = np.array([[k, 0, pad], [0, k, pad], [0, 0, 1]], np.float64) @ geometry.matrix
        size = (int(geometry.width_mm + 2 * pad), int(geometry.height_mm + 2 * pad))
        gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        view = cv2.warpPerspective(gray, m, size, flags=cv2.INTER_AREA).astype(np.float32)
        mag = cv2.magnitude(cv2.Sobel(view, cv2.CV_32F, 1, 0), cv2.Sobel(view, cv2.CV_32F, 0, 1))
        return cv2.GaussianBlur(mag, (0, 0), 1.0)[self._band]

    def alignment(self, image: np.ndarray) -> float | None:
        """How well the tray walls in `image` line up with the empty-tray reference (1 is perfect).

        Normalised correlation of edge images in a band along the walls (a 10 mm
        band either side, in tray coordinates); None without a reference.  Below
        ``config.alignment_min`` the camera has moved since calibration.
        """
        if self._ref_edges is None:
            return None
        cur = self._edges(image, self.geometry)
        ref = self._ref_edges
        return float((cur * ref).sum() / (math.sqrt(float((cur * cur).sum()) * float((ref * ref).sum())) + 1e-9))

    def _markers_near_expected(self, image: np.ndarray) -> dict[int, np.ndarray]:
        """Markers found in small windows around where the geometry expects them (cheap)."""
        assert self.markers is not None and self._detector is not None
        h, w = image.shape[:2]
        found: dict[int, np.ndarray] = {}
        for i, mid in enumerate(self.markers.ids):
            pts = self.geometry.tray_to_image(self.markers.corners_mm(i))
            side = float(np.max(np.ptp(pts, axis=0)))
            (x0, y0), (x1, y1) = pts.min(axis=0) - side, pts.max(axis=0) + side
            x0, y0 = max(0, int(x0)), max(0, int(y0))
            x1, y1 = min(w, int(math.ceil(x1))), min(h, int(math.ceil(y1)))
            if x1 - x0 < 16 or y1 - y0 < 16:
                continue
            got = detect_markers(image[y0:y1, x0:x1], detector=self._detector)
            if mid in got:
                found[mid] = got[mid] + (x0, y0)
        return found

    def _check_camera(self, image: np.ndarray, idx: int, ts: float, events: list[RollEvent]) -> bool:
        assert self.markers is not None and self._detector is not None
        found = self._markers_near_expected(image)
        if len(found) < 4:
            found = detect_markers(image, detector=self._detector)
        shift = marker_shift_px(self.geometry, self.markers, found)
        if shift is None or shift <= self.config.camera_shift_px:
            if shift is not None and self.camera_problem and len([m for m in self.markers.ids if m in found]) == 4:
                self.camera_problem = None
            return False
        fit = fit_tray(
            found,
            self.markers,
            width_mm=self.geometry.width_mm,
            height_mm=self.geometry.height_mm,
            px_per_mm=self.geometry.px_per_mm,
        )
        if fit:
            self._set_geometry(fit)
            self.camera_problem = None
            events.append(
                self._event(
                    EventKind.CAMERA_MOVED,
                    idx,
                    ts,
                    problems=(f"camera moved by {shift:.0f} px; tray geometry refitted from the corner markers",),
                )
            )
            self._prev = None
            self._level = None
            if self.state != WatchState.MOVING:
                if self.state == WatchState.SETTLED and self._verdict_given:
                    events.append(self._event(EventKind.DISTURBED, idx, ts))
                    self._verdict_given = False
                self.state = WatchState.MOVING
                self._votes.clear()
            return True
        problem = (
            f"camera moved by {shift:.0f} px and the markers cannot be refitted ({fit}); "
            "run 'dicetable calibrate' again"
        )
        if problem != self.camera_problem:
            events.append(self._event(EventKind.CAMERA_MOVED, idx, ts, problems=(problem,)))
        self.camera_problem = problem
        return False
