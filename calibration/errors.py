"""Errors of the ``calibration`` package; each says how to recalibrate."""

from __future__ import annotations

#: The command that makes a profile, quoted in every message.
RECALIBRATE = "run 'dicetable calibrate --camera SOURCE --name NAME' to make one"


class CalibrationError(ValueError):
    """Raised when a calibration cannot be made (markers not found, bad corners, bad options)."""


class ProfileError(CalibrationError):
    """Raised when a calibration profile is broken: not TOML, a missing or wrong value, a wrong version."""


class ProfileNotFoundError(ProfileError):
    """Raised when no profile of the given name or path exists."""
