"""Reading a profile: the TOML file found by name or path, validated into a :class:`Profile`.

Every wrong value raises :class:`~calibration.errors.ProfileError` with a message
that names the table and key (``[tray] width_mm must be ...``) and says to
fix the file or calibrate again.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, overload

from calibration.errors import RECALIBRATE, ProfileError, ProfileNotFoundError
from calibration.profile.folders import list_profiles, profile_path, user_profiles_dir
from calibration.profile.model import PROFILE_VERSION, CameraSettings, Profile
from vision.tray import CORNER_NAMES, MarkerLayout, TrayGeometry
from vision.watch import WatchConfig


def load_profile(name_or_path: str | os.PathLike[str], folder: Path | None = None) -> Profile:
    """Load and validate a profile.

    Parameters
    ----------
    name_or_path : str or path
        A profile name (``"default"``) or a path to a ``.toml`` file.
    folder : Path, optional
        Where names are looked up (default: :func:`user_profiles_dir`, then
        :data:`PACKAGED_PROFILES_DIR`).

    Raises
    ------
    ProfileNotFoundError
        If the file does not exist (the message lists the profiles there are).
    ProfileError
        If the file is not TOML, misses a value, has a wrong value or version.
    """
    path = profile_path(name_or_path, folder)
    name = path.stem
    if not path.is_file():
        by_name = folder is None and os.fspath(name_or_path) == name
        have = list_profiles(None if by_name else path.parent)
        where = (
            f"not in {str(user_profiles_dir())!r} nor among the shipped profiles"
            if by_name
            else f"{str(path)!r} does not exist"
        )
        raise ProfileNotFoundError(
            f"no calibration profile {name!r} ({where}); "
            f"{RECALIBRATE.replace('NAME', name)}" + (f"; profiles there: {', '.join(have)}" if have else "")
        )
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ProfileError(
            f"profile {str(path)!r} is not valid TOML ({exc}); fix the file or {RECALIBRATE.replace('NAME', name)}"
        ) from None
    return profile_from_dict(data, name=name, where=str(path), folder=path.parent)


class _Reader:
    """Typed access to one table of the profile with messages that name the key."""

    def __init__(self, data: Mapping[str, Any], table: str, where: str, name: str) -> None:
        self.data = data
        self.table = table
        self.where = where
        self.name = name

    def fail(self, key: str, what: str) -> ProfileError:
        loc = f"[{self.table}] {key}" if self.table else key
        return ProfileError(f"profile {self.where!r}: {loc} {what}; fix it or {RECALIBRATE.replace('NAME', self.name)}")

    def get(self, key: str, default: Any = ...) -> Any:
        if key not in self.data:
            if default is ...:
                raise self.fail(key, "is missing")
            return default
        return self.data[key]

    def number(self, key: str, lo: float, hi: float, default: Any = ..., integer: bool = False) -> Any:
        v = self.get(key, default)
        if v is None:
            return None
        ok = isinstance(v, int) if integer else isinstance(v, (int, float))
        if isinstance(v, bool) or not ok or not math.isfinite(v) or not lo <= v <= hi:
            kind = "a whole number" if integer else "a number"
            raise self.fail(key, f"must be {kind} from {lo:g} to {hi:g}, got {v!r}")
        return int(v) if integer else float(v)

    def points(self, key: str, n: int, default: Any = ...) -> Any:
        v = self.get(key, default)
        if v is None:
            return None
        try:
            pts = tuple((float(p[0]), float(p[1])) for p in v)
            good = len(pts) == n and all(len(p) == 2 for p in v) and all(map(math.isfinite, sum(pts, ())))
        except (TypeError, ValueError, IndexError):
            good = False
        if not good:
            raise self.fail(key, f"must be {n} [x, y] pairs of numbers, got {v!r}")
        return pts

    def text(self, key: str, choices: tuple[str, ...] | None = None, default: Any = ...) -> Any:
        v = self.get(key, default)
        if v is None:
            return None
        if not isinstance(v, str) or (choices and v not in choices):
            allowed = f"one of {', '.join(choices)}" if choices else "a string"
            raise self.fail(key, f"must be {allowed}, got {v!r}")
        return v

    @overload
    def table_of(self, key: str, required: Literal[True] = ...) -> Mapping[str, Any]: ...

    @overload
    def table_of(self, key: str, required: bool) -> Mapping[str, Any] | None: ...

    def table_of(self, key: str, required: bool = True) -> Mapping[str, Any] | None:
        """The sub-table `key`; None when it is absent and not `required`, else ProfileError if not a table."""
        v = self.data.get(key)
        if v is None and not required:
            return None
        if not isinstance(v, Mapping):
            raise ProfileError(
                f"profile {self.where!r}: the [{key}] table is missing; {RECALIBRATE.replace('NAME', self.name)}"
            )
        return v


def profile_from_dict(
    data: Mapping[str, Any], *, name: str, where: str = "<profile>", folder: Path | None = None
) -> Profile:
    """Validate parsed TOML and build the :class:`Profile` (see :func:`load_profile`)."""
    top = _Reader(data, "", where, name)
    version = top.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise top.fail("version", f"must be a whole number, got {version!r}")
    if version > PROFILE_VERSION:
        raise ProfileError(
            f"profile {where!r} has version {version}, newer than this dicetable reads "
            f"({PROFILE_VERSION}); update dicetable or {RECALIBRATE.replace('NAME', name)}"
        )
    if version < 1:
        raise top.fail("version", f"must be 1 to {PROFILE_VERSION}, got {version}")
    t = _Reader(top.table_of("tray"), "tray", where, name)
    width = t.number("width_mm", 10, 2000)
    height = t.number("height_mm", 10, 2000)
    ppm = t.number("px_per_mm", 0.25, 20)
    corners = t.points("corners_px", 4)
    corners_from = t.text("corners_from", ("markers", "manual"), "manual")
    try:
        TrayGeometry.from_corners(corners, width_mm=width, height_mm=height, px_per_mm=ppm)
    except ValueError as exc:
        raise t.fail("corners_px", f"do not make a tray ({exc})") from None
    markers = None
    mt = top.table_of("markers", required=False)
    if mt is not None:
        m = _Reader(mt, "markers", where, name)
        ids = m.get("ids", [0, 1, 2, 3])
        if not isinstance(ids, list) or len(ids) != 4 or not all(isinstance(i, int) for i in ids):
            raise m.fail("ids", f"must be 4 marker ids ({', '.join(CORNER_NAMES)}), got {ids!r}")
        try:
            markers = MarkerLayout(
                centres_mm=m.points("centres_mm", 4),
                size_mm=m.number("size_mm", 2, 200),
                ids=tuple(ids),
                dictionary=m.text("dictionary", default="DICT_4X4_50"),
            )
        except ValueError as exc:
            raise m.fail("dictionary/ids", str(exc)) from None
    d = _Reader(top.table_of("dice"), "dice", where, name)
    count = d.number("count", 1, 30, integer=True)
    die_mm = d.number("size_mm", 4, 60)
    hold = None
    ht = top.table_of("hold_area", required=False)
    if ht is not None:
        h = _Reader(ht, "hold_area", where, name)
        hold = (
            h.number("x_mm", 0, width),
            h.number("y_mm", 0, height),
            h.number("width_mm", die_mm, width),
            h.number("height_mm", die_mm, height),
        )
        if hold[0] + hold[2] > width + 1e-6 or hold[1] + hold[3] > height + 1e-6:
            raise h.fail("x_mm/width_mm", f"put the hold area {hold!r} outside the {width:g} x {height:g} mm tray")
    ref = None
    rt = top.table_of("reference", required=False)
    if rt is not None:
        ref = _Reader(rt, "reference", where, name).text("empty_tray", default=None) or None
    c = _Reader(top.table_of("camera"), "camera", where, name)
    gains = c.get("colour_gains", [0.0, 0.0])
    if (
        not isinstance(gains, list)
        or len(gains) != 2
        or not all(isinstance(g, (int, float)) and not isinstance(g, bool) and 0 <= g <= 32 for g in gains)
    ):
        raise c.fail("colour_gains", f"must be [red, blue] gains 0-32, got {gains!r}")
    camera = CameraSettings(
        source=c.text("source", default="picamera2"),
        width=c.number("width", 64, 8192, integer=True),
        height=c.number("height", 64, 8192, integer=True),
        fps=c.number("fps", 1, 240, 30.0),
        exposure_time_us=c.number("exposure_time_us", 0, 10_000_000, 0, integer=True),
        analogue_gain=c.number("analogue_gain", 0, 64, 0.0),
        colour_gains=(float(gains[0]), float(gains[1])),
        lens_position=c.number("lens_position", 0, 32, None),
    )
    r = _Reader(top.table_of("reader", required=False) or {}, "reader", where, name)
    min_conf = r.number("min_confidence", 0, 1, 0.5)
    wt = top.table_of("watch", required=False) or {}
    known = {f.name for f in dataclasses.fields(WatchConfig)} - {"min_confidence"}
    unknown = sorted(set(wt) - known)
    if unknown:
        raise ProfileError(
            f"profile {where!r}: [watch] has unknown keys {', '.join(unknown)} (allowed: "
            f"{', '.join(sorted(known))}; min_confidence goes in [reader]); fix it or "
            f"{RECALIBRATE.replace('NAME', name)}"
        )
    try:
        watch = WatchConfig(**{k: v for k, v in wt.items() if k != "min_confidence"})
    except (TypeError, ValueError) as exc:
        raise ProfileError(f"profile {where!r}: [watch] {exc}; fix it or {RECALIBRATE.replace('NAME', name)}") from None
    return Profile(
        name=name,
        corners_px=corners,
        width_mm=width,
        height_mm=height,
        px_per_mm=ppm,
        corners_from=corners_from,
        markers=markers,
        dice_count=count,
        die_mm=die_mm,
        hold_area_mm=hold,
        reference=ref,
        camera=camera,
        min_confidence=min_conf,
        watch=watch,
        created=str(top.get("created", "")),
        folder=folder,
    )
