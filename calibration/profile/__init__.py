"""Calibration profiles: one TOML file per camera set-up, versioned and validated.

A profile holds the tray geometry (the floor's four corners in the camera image,
its size in mm and the rectified scale), the corner markers when there are any,
the dice (count, side in mm), the hold area, the empty-tray reference image (a PNG
beside the TOML file), the locked camera controls, the reader threshold and the
watcher's thresholds.

``dicetable calibrate`` saves profiles in the user's profiles folder,
``$XDG_DATA_HOME/dicetable/profiles/<name>.toml`` (default
``~/.local/share/dicetable/profiles``, beside the game store), so that
reinstalling or upgrading dicetable keeps them.  A name is looked up there
first, then among the profiles shipped in ``calibration/profiles/`` (the
``default`` one matches the synthetic camera).

Modules: :mod:`~calibration.profile.model` (the values), :mod:`~calibration.profile.folders`
(where profiles live, names), :mod:`~calibration.profile.reading` (load and validate),
:mod:`~calibration.profile.saving` (write); every public name is importable from here.

Examples
--------
>>> p = load_profile("default")
>>> p.name, p.dice_count, p.geometry.size_px
('default', 5, (560, 420))
"""

from calibration.profile.folders import (
    PACKAGED_PROFILES_DIR,
    check_profile_name,
    list_profiles,
    profile_folders,
    profile_path,
    user_profiles_dir,
)
from calibration.profile.model import PROFILE_VERSION, CameraSettings, Profile
from calibration.profile.reading import load_profile, profile_from_dict
from calibration.profile.saving import profile_to_dict, save_profile

__all__ = [
    "PACKAGED_PROFILES_DIR",
    "PROFILE_VERSION",
    "CameraSettings",
    "Profile",
    "check_profile_name",
    "list_profiles",
    "load_profile",
    "profile_folders",
    "profile_from_dict",
    "profile_path",
    "profile_to_dict",
    "save_profile",
    "user_profiles_dir",
]
