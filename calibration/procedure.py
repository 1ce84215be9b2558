"""The calibration procedure: lock the camera, find the tray, keep an empty-tray image, check.

Steps (``dicetable calibrate``):

1. open the camera and lock exposure, gain and colour gains (the source does the
   warm-up); the locked values go into the profile;
2. with the tray *empty*, take a few frames and keep their median as the
   empty-tray reference (noise averages out);
3. find the four corner markers in it and fit the homography, or use the four
   floor corners given by hand; read the tray floor of the reference, and refuse
   it if the reader finds dice there (the watcher would take them for the tray);
4. save ``<name>.toml`` and ``<name>.empty.png``;
5. check: roll the dice, watch until they settle, show the reading; adjust
   ``--min-confidence`` (saved with ``--save``) until it reads right.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from calibration.errors import CalibrationError
from calibration.profile import CameraSettings, Profile, check_profile_name, save_profile
from vision.reading import ImageReading
from vision.sources.base import FrameSource, SourceEnded
from vision.tray import MarkerLayout, TrayGeometry, detect_markers, fit_tray
from vision.watch import EventKind, RollEvent, RollWatcher


def median_frame(source: FrameSource, frames: int = 9, skip: int = 3) -> np.ndarray:
    """Median of `frames` frames after skipping `skip` (an empty-tray reference without noise).

    A source that ends after the skipped frames but before `frames` more gives the
    median of those it gave.

    Raises
    ------
    CalibrationError
        If the source ends within the first ``skip + 1`` frames (the message says how
        many it gave and how many are needed).
    """
    grabbed = []
    skipped = 0
    try:
        for _ in range(skip):
            source.read()
            skipped += 1
        for _ in range(frames):
            grabbed.append(source.read().image)
    except SourceEnded:
        if not grabbed:
            raise CalibrationError(
                f"{source.describe} gave {skipped} frame{'' if skipped == 1 else 's'}, but calibrating needs at "
                f"least {skip + 1}: the first {skip} are skipped while the camera settles, then up to {frames} "
                f"of the empty tray are combined; give at least {skip + 1} frames ({skip + frames} is best)"
            ) from None
    return np.median(np.stack(grabbed), axis=0).astype(np.uint8)


def calibrate(
    source: FrameSource,
    *,
    name: str,
    source_spec: str,
    width_mm: float,
    height_mm: float,
    px_per_mm: float = 2.8,
    die_mm: float = 16.0,
    dice_count: int = 5,
    hold_area_mm: tuple[float, float, float, float] | None = None,
    corners_px: Sequence[Sequence[float]] | None = None,
    markers: MarkerLayout | None = None,
    lens_position: float | None = None,
    frames: int = 9,
    folder: Path | None = None,
    save: bool = True,
    reader: Callable[[np.ndarray], ImageReading] | None = None,
) -> tuple[Profile, np.ndarray]:
    """Make (and by default save) a profile from an empty tray in front of `source`.

    Parameters
    ----------
    source : FrameSource
        The open camera, looking at the *empty* tray.
    name : str
        Profile name.
    source_spec : str
        The spec `source` was opened with (stored in the profile).
    width_mm, height_mm : float
        Floor size in mm.
    px_per_mm : float, optional
        Rectified scale; keep a die at least ~40 px wide (16 mm x 2.8 = 45 px).
    die_mm : float, optional
        Die side in mm.
    dice_count : int, optional
        Dice in play.
    hold_area_mm : tuple of 4 float, optional
        Hold rectangle ``(x, y, w, h)`` in tray mm.
    corners_px : sequence of 4 (x, y), optional
        Floor corners by hand (TL, TR, BR, BL); markers are used when None.
    markers : MarkerLayout, optional
        Marker layout (default: 16 mm markers at the corners).
    lens_position : float, optional
        Manual focus used, in dioptres (stored).
    frames : int, optional
        Frames whose median is the reference.
    folder : Path, optional
        Profiles folder (default: the user's, :func:`calibration.profile.user_profiles_dir`).
    save : bool, optional
        Write the profile and reference.
    reader : callable, optional
        The pip reader (``reader(rectified_bgr) -> ImageReading``), run on the reference's tray
        floor: dice there refuse the calibration. None: not checked.

    Returns
    -------
    (Profile, ndarray)
        The profile and the empty-tray reference frame (H, W, 3) uint8.

    Raises
    ------
    CalibrationError
        If the markers are not all found (the message says which), the corners are bad, or
        `reader` finds dice in the "empty" tray.
    ProfileError
        If `name` is not a plain profile name (checked before the camera is read).
    """
    if save:
        check_profile_name(name)
    controls = source.lock_controls()
    reference = median_frame(source, frames)
    h, w = reference.shape[:2]
    layout = markers or MarkerLayout.at_corners(width_mm, height_mm)
    if corners_px is not None:
        try:
            geo = TrayGeometry.from_corners(corners_px, width_mm=width_mm, height_mm=height_mm, px_per_mm=px_per_mm)
        except ValueError as exc:
            raise CalibrationError(str(exc)) from None
        found = detect_markers(reference, layout.dictionary)
        use_markers = layout if all(i in found for i in layout.ids) else None
        corners_from = "manual"
    else:
        fit = fit_tray(
            detect_markers(reference, layout.dictionary),
            layout,
            width_mm=width_mm,
            height_mm=height_mm,
            px_per_mm=px_per_mm,
        )
        if not fit:
            raise CalibrationError(f"calibration failed: {fit.reason}")
        geo, use_markers, corners_from = fit, layout, "markers"
    corners = geo.corners_px
    if (
        corners[:, 0].min() < -2
        or corners[:, 1].min() < -2
        or corners[:, 0].max() > w + 2
        or corners[:, 1].max() > h + 2
    ):
        raise CalibrationError(
            f"the tray floor reaches outside the {w}x{h} frame (corners {np.round(corners).tolist()}); "
            "move the camera up or back so the whole tray is in view"
        )
    if reader is not None:
        refuse_dice_in(reader(geo.rectify(reference)), geo.px_per_mm)
    gains = controls.get("ColourGains", (0.0, 0.0))
    camera = CameraSettings(
        source=source_spec,
        width=w,
        height=h,
        fps=float(source.fps),
        exposure_time_us=int(controls.get("ExposureTime", 0)),
        analogue_gain=float(controls.get("AnalogueGain", 0.0)),
        colour_gains=(float(gains[0]), float(gains[1])),
        lens_position=lens_position if lens_position is not None else controls.get("LensPosition"),
    )
    profile = Profile(
        name=name,
        corners_px=tuple((round(float(x), 3), round(float(y), 3)) for x, y in corners),
        width_mm=float(width_mm),
        height_mm=float(height_mm),
        px_per_mm=float(px_per_mm),
        corners_from=corners_from,
        markers=use_markers,
        dice_count=int(dice_count),
        die_mm=float(die_mm),
        hold_area_mm=hold_area_mm,
        camera=camera,
        created=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        folder=folder,
    )
    if save:
        path = save_profile(profile, folder, reference=reference)
        profile = dataclasses.replace(profile, reference=f"{name}.empty.png", folder=path.parent)
    return profile, reference


def refuse_dice_in(reading: ImageReading, px_per_mm: float) -> None:
    """Refuse an empty-tray reference in whose tray floor the reader found dice.

    Raises
    ------
    CalibrationError
        Naming how many dice, their values and where (tray mm), and what to do.
    """
    if not reading.dice:
        return
    found = [
        f"{'?' if d.value is None else d.value} at ({(d.box[0] + d.box[2] / 2) / px_per_mm:.0f}, "
        f"{(d.box[1] + d.box[3] / 2) / px_per_mm:.0f}) mm"
        for d in reading.dice[:6]
    ]
    n = len(reading.dice)
    raise CalibrationError(
        f"the tray is not empty: the reader found {n} {'die' if n == 1 else 'dice'} in it "
        f"({', '.join(found)}{', ...' if n > 6 else ''}); take every die out of the tray, keep hands out of "
        "view, and calibrate again"
    )


def make_watcher(profile: Profile, reader: Callable[[np.ndarray], ImageReading]) -> RollWatcher:
    """A :class:`RollWatcher` set up from a profile."""
    return RollWatcher(
        reader,
        geometry=profile.geometry,
        config=profile.watch_config(),
        die_mm=profile.die_mm,
        hold_area_mm=profile.hold_area_mm,
        reference=profile.load_reference(),
        markers=profile.markers,
        expected_dice=profile.dice_count,
    )


def check(
    profile: Profile,
    source: FrameSource,
    reader: Callable[[np.ndarray], ImageReading],
    *,
    max_frames: int = 900,
    on_frame: Callable[[object], None] | None = None,
) -> list[RollEvent]:
    """Watch until the first settled or unreadable verdict; return every event up to it.

    Parameters
    ----------
    profile : Profile
    source : FrameSource
        The camera; roll the dice in front of it.
    reader : callable
        The pip reader.
    max_frames : int, optional
        Give up after this many frames (30 s at 30 fps).
    on_frame : callable, optional
        Called with each frame before it is watched (tests use it to feed truth).
    """
    watcher = make_watcher(profile, reader)
    events: list[RollEvent] = []
    for k, frame in enumerate(source):
        if k >= max_frames:
            break
        if on_frame is not None:
            on_frame(frame)
        for event in watcher.update(frame):
            events.append(event)
            if event.kind in (EventKind.SETTLED, EventKind.UNREADABLE):
                return events
    return events
