"""The profile values: :class:`Profile` and its :class:`CameraSettings`, and the format version."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from calibration.errors import RECALIBRATE, ProfileError
from calibration.profile.folders import PACKAGED_PROFILES_DIR
from vision.tray import MarkerLayout, TrayGeometry
from vision.watch import WatchConfig

#: Version of the profile format this code reads and writes.
PROFILE_VERSION = 1


@dataclass(frozen=True, slots=True)
class CameraSettings:
    """Camera settings of a profile (the ``[camera]`` table).

    Parameters
    ----------
    source : str
        Source spec the profile was made with (see :func:`vision.sources.open_source`).
    width, height : int
        Frame size in pixels.
    fps : float
        Frame rate.
    exposure_time_us : int
        Locked exposure in microseconds; 0 to measure at start and lock.
    analogue_gain : float
        Locked analogue gain; 0 to measure.
    colour_gains : tuple of 2 float
        Locked red and blue gains; ``(0, 0)`` to measure.
    lens_position : float or None
        Manual focus in dioptres (Camera Module 3); None to leave focus alone.
    """

    source: str = "picamera2"
    width: int = 640
    height: int = 480
    fps: float = 30.0
    exposure_time_us: int = 0
    analogue_gain: float = 0.0
    colour_gains: tuple[float, float] = (0.0, 0.0)
    lens_position: float | None = None

    def source_options(self) -> dict[str, Any]:
        """Keyword options for :func:`vision.sources.open_source` from these settings."""
        controls: dict[str, Any] = {}
        if self.exposure_time_us > 0:
            controls["ExposureTime"] = int(self.exposure_time_us)
        if self.analogue_gain > 0:
            controls["AnalogueGain"] = float(self.analogue_gain)
        if all(g > 0 for g in self.colour_gains):
            controls["ColourGains"] = tuple(self.colour_gains)
        return {
            "size": (self.width, self.height),
            "fps": self.fps,
            "lens_position": self.lens_position,
            "controls": controls or None,
        }


@dataclass(frozen=True, slots=True)
class Profile:
    """A validated calibration profile.

    Parameters
    ----------
    name : str
        Profile name (file stem).
    corners_px : tuple of 4 (float, float)
        Image pixels of the floor's top-left, top-right, bottom-right, bottom-left corners.
    width_mm, height_mm : float
        Floor size in mm.
    px_per_mm : float
        Rectified scale.
    corners_from : str
        ``"markers"`` or ``"manual"``.
    markers : MarkerLayout or None
        Corner markers, when the tray has them.
    dice_count : int
        Dice in play.
    die_mm : float
        Side of a die in mm.
    hold_area_mm : tuple of 4 float or None
        ``(x, y, w, h)`` hold rectangle in tray mm.
    reference : str or None
        Empty-tray image file, relative to the profile's folder.
    camera : CameraSettings
    min_confidence : float
        Reader confidence below which a die is unknown.
    watch : WatchConfig
    created : str
        When the profile was made (ISO 8601, UTC).
    folder : Path or None
        Folder the profile was loaded from (to find `reference`).
    """

    name: str
    corners_px: tuple[tuple[float, float], ...]
    width_mm: float
    height_mm: float
    px_per_mm: float
    corners_from: str = "manual"
    markers: MarkerLayout | None = None
    dice_count: int = 5
    die_mm: float = 16.0
    hold_area_mm: tuple[float, float, float, float] | None = None
    reference: str | None = None
    camera: CameraSettings = CameraSettings()
    min_confidence: float = 0.5
    watch: WatchConfig = WatchConfig()
    created: str = ""
    folder: Path | None = field(default=None, compare=False)

    @property
    def geometry(self) -> TrayGeometry:
        """The tray geometry of the corners."""
        return TrayGeometry.from_corners(
            self.corners_px, width_mm=self.width_mm, height_mm=self.height_mm, px_per_mm=self.px_per_mm
        )

    def watch_config(self) -> WatchConfig:
        """The watcher thresholds, with the profile's ``min_confidence``."""
        return dataclasses.replace(self.watch, min_confidence=self.min_confidence)

    def load_reference(self) -> np.ndarray | None:
        """The empty-tray camera frame, (H, W, 3) uint8 BGR; None when the profile has none.

        Raises
        ------
        ProfileError
            If the file is named but missing or unreadable.
        """
        if not self.reference:
            return None
        path = (self.folder or PACKAGED_PROFILES_DIR) / self.reference
        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if image is None:
            raise ProfileError(
                f"profile {self.name!r}: its empty-tray image {str(path)!r} is missing or unreadable; "
                f"{RECALIBRATE.replace('NAME', self.name)}"
            )
        return image
