"""The calibration profile: present and valid, and its tray markers seen in a frame from the camera now."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from table.doctor.check import Check, first_line

#: Markers farther than this from where the profile has them mean the camera moved, in image px
#: (the watcher's own refit threshold, :attr:`vision.watch.WatchConfig.camera_shift_px`, is 4 px; a
#: few px more are refitted by the table on its own, so the doctor warns only beyond that).
MOVED_PX = 12.0


def load(name: str, folder: Path | None) -> Any:
    """The profile `name` (:func:`calibration.profile.load_profile`); raises its ProfileError."""
    from calibration.profile import load_profile

    return load_profile(name, folder)


def check_profile(name: str, folder: Path | None, camera: str | None = None) -> Check:
    """The profile `name` loads.

    The shipped ``default`` with a real camera is a warning (it is made for the synthetic one).
    """
    from calibration.errors import ProfileError
    from calibration.profile import PACKAGED_PROFILES_DIR

    try:
        profile = load(name, folder)
    except ProfileError as exc:
        text = str(exc)
        fix = (
            text[text.index("run 'dicetable calibrate") :]
            if "run 'dicetable calibrate" in text
            else ("run 'dicetable calibrate --camera picamera2 --name default'")
        )
        return Check("profile", "fail", text.split("; run 'dicetable calibrate")[0], fix)
    where = profile.folder or PACKAGED_PROFILES_DIR
    markers = "corner markers" if profile.markers is not None else "corners set by hand"
    text = (
        f"{profile.name!r} from {where} ({markers}, {profile.camera.width}x{profile.camera.height}, "
        f"{profile.dice_count} dice, made {profile.created or 'at an unknown time'})"
    )
    shipped = Path(where).resolve() == PACKAGED_PROFILES_DIR.resolve()
    if shipped and camera is not None and not camera.startswith("synthetic"):
        return Check(
            "profile",
            "warning",
            f"{text}: the shipped profile, made for the synthetic camera, not for {camera}",
            f"calibrate this table: 'dicetable calibrate --camera {camera} --name {profile.name}'",
        )
    return Check("profile", "ok", text)


def check_markers(profile: Any, frame: np.ndarray | None, camera: str) -> Check:
    """The profile's tray markers in `frame` (BGR, from the camera now): all seen, where the profile has them.

    Skipped without a frame (no camera); ok for a profile whose corners were set by hand (no markers).
    """
    from vision.tray import detect_markers, marker_shift_px

    if profile is None:
        return Check("markers", "skipped", "no profile: skipped")
    if frame is None:
        return Check("markers", "skipped", "no frame from the camera: skipped")
    layout = profile.markers
    if layout is None:
        return Check(
            "markers", "ok", f"profile {profile.name!r} has no markers (corners set by hand): nothing to look for"
        )
    h, w = frame.shape[:2]
    size = (profile.camera.width, profile.camera.height)
    if (w, h) != size:
        return Check(
            "markers",
            "warning",
            f"the camera gives {w}x{h} frames, the profile was made at {size[0]}x{size[1]}",
            f"calibrate again at this size: 'dicetable calibrate --camera {camera} --name {profile.name}'",
        )
    try:
        found = detect_markers(frame, layout.dictionary)
    except Exception as exc:  # noqa: BLE001 - an OpenCV without the aruco module
        return Check(
            "markers",
            "fail",
            f"cannot look for markers ({first_line(exc)})",
            "reinstall dicetable (its OpenCV has the aruco module)",
        )
    missing = [i + 1 for i, mid in enumerate(layout.ids) if mid not in found]
    recal = f"'dicetable calibrate --camera {camera} --name {profile.name}'"
    if len(missing) == len(layout.ids):
        return Check(
            "markers",
            "fail",
            f"none of the {len(layout.ids)} tray markers is seen",
            f"clear the tray's corners, check the light and that the camera points at the tray; "
            f"if it was moved for good, {recal}",
        )
    shift = marker_shift_px(profile.geometry, layout, found)
    moved = f"; the camera moved {shift:.0f} px since calibration" if shift is not None and shift > MOVED_PX else ""
    if missing:
        return Check(
            "markers",
            "warning",
            f"{len(found)} of {len(layout.ids)} tray markers seen; not seen: "
            f"corner {', '.join(map(str, missing))}{moved}",
            "clear what covers that corner of the tray (a hand, a die, a cup)",
        )
    if moved:
        return Check(
            "markers",
            "warning",
            f"all {len(layout.ids)} tray markers seen{moved}",
            f"put the camera back, or calibrate again: {recal}",
        )
    return Check(
        "markers", "ok", f"all {len(layout.ids)} tray markers seen where the profile has them (within {shift:.1f} px)"
    )
