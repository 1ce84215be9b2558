"""Saving a profile: the TOML data of a :class:`Profile` and its file, written atomically."""

from __future__ import annotations

import dataclasses
import datetime as _dt
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from calibration.errors import ProfileError
from calibration.profile.folders import check_profile_name, user_profiles_dir
from calibration.profile.model import PROFILE_VERSION, Profile
from calibration.toml_writer import dumps
from vision.watch import WatchConfig


def profile_to_dict(profile: Profile) -> dict[str, Any]:
    """The TOML data of a profile (inverse of :func:`profile_from_dict`)."""
    cam = profile.camera
    camera: dict[str, Any] = {
        "source": cam.source,
        "width": cam.width,
        "height": cam.height,
        "fps": cam.fps,
        "exposure_time_us": cam.exposure_time_us,
        "analogue_gain": cam.analogue_gain,
        "colour_gains": list(cam.colour_gains),
    }
    if cam.lens_position is not None:
        camera["lens_position"] = cam.lens_position
    out: dict[str, Any] = {
        "version": PROFILE_VERSION,
        "name": profile.name,
        "created": profile.created or _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "tray": {
            "width_mm": profile.width_mm,
            "height_mm": profile.height_mm,
            "px_per_mm": profile.px_per_mm,
            "corners_px": [[round(float(x), 3), round(float(y), 3)] for x, y in profile.corners_px],
            "corners_from": profile.corners_from,
        },
    }
    if profile.markers is not None:
        m = profile.markers
        out["markers"] = {
            "dictionary": m.dictionary,
            "ids": list(m.ids),
            "size_mm": m.size_mm,
            "centres_mm": [list(c) for c in m.centres_mm],
        }
    out["dice"] = {"count": profile.dice_count, "size_mm": profile.die_mm}
    if profile.hold_area_mm is not None:
        x, y, w, h = profile.hold_area_mm
        out["hold_area"] = {"x_mm": x, "y_mm": y, "width_mm": w, "height_mm": h}
    if profile.reference:
        out["reference"] = {"empty_tray": profile.reference}
    out["camera"] = camera
    out["reader"] = {"min_confidence": profile.min_confidence}
    default = WatchConfig()
    out["watch"] = {
        f.name: getattr(profile.watch, f.name)
        for f in dataclasses.fields(WatchConfig)
        if f.name != "min_confidence" and getattr(profile.watch, f.name) != getattr(default, f.name)
    }
    return out


def save_profile(profile: Profile, folder: Path | None = None, *, reference: np.ndarray | None = None) -> Path:
    """Write a profile (and its empty-tray image) to ``folder/<name>.toml``, atomically.

    Parameters
    ----------
    profile : Profile
        Its name must be a plain name (see :func:`check_profile_name`).
    folder : Path, optional
        Default :func:`user_profiles_dir` (made when missing).
    reference : ndarray of shape (H, W, 3), dtype uint8, optional
        Empty-tray camera frame, written as ``<name>.empty.png`` beside the TOML.

    Returns
    -------
    Path
        The TOML file written.

    Raises
    ------
    ProfileError
        If the profile's name is not a plain name, or the folder cannot be
        made (a file in its place); nothing is written.
    """
    check_profile_name(profile.name)
    d = Path(folder) if folder is not None else user_profiles_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ProfileError(
            f"cannot make the profiles folder {str(d)!r} ({exc.strerror or exc}): a file may stand "
            "in its way; give --profiles-dir a folder you can write to"
        ) from None
    path = d / f"{profile.name}.toml"
    if reference is not None:  # written to a temporary file and renamed, as the profile: never half a file
        ref_name = f"{profile.name}.empty.png"
        ok, png = cv2.imencode(".png", reference)
        if not ok:
            raise OSError(f"could not encode the empty-tray image {str(d / ref_name)!r}")
        _write(d / ref_name, png.tobytes())
        profile = dataclasses.replace(profile, reference=ref_name)
    text = dumps(
        profile_to_dict(profile),
        header=(
            f"dicetable calibration profile {profile.name!r} (format version {PROFILE_VERSION}).\n"
            "Made by 'dicetable calibrate'; edit thresholds by hand if you like, then check with\n"
            f"'dicetable calibrate --check --profile {profile.name} --camera SOURCE'."
        ),
    )
    _write(path, text.encode("utf-8"))
    return path


def _write(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file in its folder, flushed and renamed over it.

    Raises
    ------
    OSError
        If it cannot be written (the old file is left whole, the temporary file removed).
    """
    from vision.errors import OutputError
    from vision.images import write_output

    try:
        write_output(path, data)
    except OutputError as exc:
        raise OSError(str(exc)) from exc.__cause__
