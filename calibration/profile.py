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

Examples
--------
>>> p = load_profile("default")
>>> p.name, p.dice_count, p.geometry.size_px
('default', 5, (560, 420))
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from calibration.errors import RECALIBRATE, ProfileError, ProfileNotFoundError
from calibration.toml_writer import dumps
from vision.tray import CORNER_NAMES, MarkerLayout, TrayGeometry
from vision.watch import WatchConfig

#: Version of the profile format this code reads and writes.
PROFILE_VERSION = 1

#: Folder of the profiles shipped with dicetable; an upgrade replaces it, so nothing is saved here.
PACKAGED_PROFILES_DIR = Path(__file__).resolve().parent / "profiles"

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


def user_profiles_dir() -> Path:
    """Where profiles are saved: ``$XDG_DATA_HOME/dicetable/profiles``.

    The default is ``~/.local/share/dicetable/profiles``, beside the game store
    (:func:`table.store.default_db_path`): outside the installed package, so
    ``pip install --upgrade`` keeps the user's calibration, and writable by the
    user who runs the table.  The folder is made when a profile is saved.
    """
    base = os.environ.get("XDG_DATA_HOME", "")  # a relative one is ignored (XDG Base Directory Specification)
    return (Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share") / "dicetable" / "profiles"


def profile_folders() -> tuple[Path, ...]:
    """The folders a profile name is looked up in, in order: the user's, then the shipped one."""
    return (user_profiles_dir(), PACKAGED_PROFILES_DIR)


def check_profile_name(name: str) -> str:
    """Return `name` if it is a plain profile name; raise :class:`ProfileError` otherwise.

    A plain name is 1-64 letters, digits, ``_`` or ``-``, starting with a letter
    or digit: never empty, never a path (``../x``), so a profile is always
    saved as ``<folder>/<name>.toml``.
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ProfileError(
            f"profile name {name!r} is not allowed: use 1-64 letters, digits, '_' or '-', starting with a "
            "letter or digit (e.g. 'kitchen-table'); a name is not a path or a file name"
        )
    return name


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
        return {"size": (self.width, self.height), "fps": self.fps, "lens_position": self.lens_position,
                "controls": controls or None}


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
        return TrayGeometry.from_corners(self.corners_px, width_mm=self.width_mm, height_mm=self.height_mm,
                                         px_per_mm=self.px_per_mm)

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


def profile_path(name_or_path: str | os.PathLike[str], folder: Path | None = None) -> Path:
    """The TOML file of a profile name, or a path given as is.

    A name is looked up in `folder` when given; else in the user's profiles
    folder, then the shipped one (:func:`profile_folders`); when neither holds
    it, the path is the one it would be saved at in the user's folder.

    Raises
    ------
    ProfileError
        If a name has characters other than letters, digits, ``_`` and ``-``, or a path is a folder.
    """
    text = os.fspath(name_or_path)
    if text.endswith(".toml") or os.sep in text or "/" in text:
        if Path(text).is_dir():
            raise ProfileError(f"profile {text!r} is a folder; give its .toml file or a profile name")
        return Path(text)
    check_profile_name(text)
    if folder is not None:
        return Path(folder) / f"{text}.toml"
    candidates = [d / f"{text}.toml" for d in profile_folders()]
    return next((p for p in candidates if p.is_file()), candidates[0])


def list_profiles(folder: Path | None = None) -> list[str]:
    """Names of the profiles in `folder` (default: the user's and the shipped ones), sorted."""
    folders = (Path(folder),) if folder is not None else profile_folders()
    return sorted({p.stem for d in folders if d.is_dir() for p in d.glob("*.toml")})


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
        where = (f"not in {str(user_profiles_dir())!r} nor among the shipped profiles" if by_name
                 else f"{str(path)!r} does not exist")
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
        return ProfileError(f"profile {self.where!r}: {loc} {what}; fix it or "
                            f"{RECALIBRATE.replace('NAME', self.name)}")

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

    def table_of(self, key: str, required: bool = True) -> Mapping[str, Any] | None:
        v = self.data.get(key)
        if v is None and not required:
            return None
        if not isinstance(v, Mapping):
            raise ProfileError(f"profile {self.where!r}: the [{key}] table is missing; "
                               f"{RECALIBRATE.replace('NAME', self.name)}")
        return v


def profile_from_dict(data: Mapping[str, Any], *, name: str, where: str = "<profile>",
                      folder: Path | None = None) -> Profile:
    """Validate parsed TOML and build the :class:`Profile` (see :func:`load_profile`)."""
    top = _Reader(data, "", where, name)
    version = top.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise top.fail("version", f"must be a whole number, got {version!r}")
    if version > PROFILE_VERSION:
        raise ProfileError(f"profile {where!r} has version {version}, newer than this dicetable reads "
                           f"({PROFILE_VERSION}); update dicetable or {RECALIBRATE.replace('NAME', name)}")
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
            markers = MarkerLayout(centres_mm=m.points("centres_mm", 4), size_mm=m.number("size_mm", 2, 200),
                                   ids=tuple(ids), dictionary=m.text("dictionary", default="DICT_4X4_50"))
        except ValueError as exc:
            raise m.fail("dictionary/ids", str(exc)) from None
    d = _Reader(top.table_of("dice"), "dice", where, name)
    count = d.number("count", 1, 30, integer=True)
    die_mm = d.number("size_mm", 4, 60)
    hold = None
    ht = top.table_of("hold_area", required=False)
    if ht is not None:
        h = _Reader(ht, "hold_area", where, name)
        hold = (h.number("x_mm", 0, width), h.number("y_mm", 0, height),
                h.number("width_mm", die_mm, width), h.number("height_mm", die_mm, height))
        if hold[0] + hold[2] > width + 1e-6 or hold[1] + hold[3] > height + 1e-6:
            raise h.fail("x_mm/width_mm", f"put the hold area {hold!r} outside the {width:g} x {height:g} mm tray")
    ref = None
    rt = top.table_of("reference", required=False)
    if rt is not None:
        ref = _Reader(rt, "reference", where, name).text("empty_tray", default=None) or None
    c = _Reader(top.table_of("camera"), "camera", where, name)
    gains = c.get("colour_gains", [0.0, 0.0])
    if not isinstance(gains, list) or len(gains) != 2 or not all(
            isinstance(g, (int, float)) and not isinstance(g, bool) and 0 <= g <= 32 for g in gains):
        raise c.fail("colour_gains", f"must be [red, blue] gains 0-32, got {gains!r}")
    camera = CameraSettings(
        source=c.text("source", default="picamera2"), width=c.number("width", 64, 8192, integer=True),
        height=c.number("height", 64, 8192, integer=True), fps=c.number("fps", 1, 240, 30.0),
        exposure_time_us=c.number("exposure_time_us", 0, 10_000_000, 0, integer=True),
        analogue_gain=c.number("analogue_gain", 0, 64, 0.0), colour_gains=(float(gains[0]), float(gains[1])),
        lens_position=c.number("lens_position", 0, 32, None))
    r = _Reader(top.table_of("reader", required=False) or {}, "reader", where, name)
    min_conf = r.number("min_confidence", 0, 1, 0.5)
    wt = top.table_of("watch", required=False) or {}
    known = {f.name for f in dataclasses.fields(WatchConfig)} - {"min_confidence"}
    unknown = sorted(set(wt) - known)
    if unknown:
        raise ProfileError(f"profile {where!r}: [watch] has unknown keys {', '.join(unknown)} (allowed: "
                           f"{', '.join(sorted(known))}; min_confidence goes in [reader]); fix it or "
                           f"{RECALIBRATE.replace('NAME', name)}")
    try:
        watch = WatchConfig(**{k: v for k, v in wt.items() if k != "min_confidence"})
    except (TypeError, ValueError) as exc:
        raise ProfileError(f"profile {where!r}: [watch] {exc}; fix it or {RECALIBRATE.replace('NAME', name)}") from None
    return Profile(name=name, corners_px=corners, width_mm=width, height_mm=height, px_per_mm=ppm,
                   corners_from=corners_from, markers=markers, dice_count=count, die_mm=die_mm,
                   hold_area_mm=hold, reference=ref, camera=camera, min_confidence=min_conf, watch=watch,
                   created=str(top.get("created", "")), folder=folder)


def profile_to_dict(profile: Profile) -> dict[str, Any]:
    """The TOML data of a profile (inverse of :func:`profile_from_dict`)."""
    cam = profile.camera
    camera: dict[str, Any] = {"source": cam.source, "width": cam.width, "height": cam.height, "fps": cam.fps,
                              "exposure_time_us": cam.exposure_time_us, "analogue_gain": cam.analogue_gain,
                              "colour_gains": list(cam.colour_gains)}
    if cam.lens_position is not None:
        camera["lens_position"] = cam.lens_position
    out: dict[str, Any] = {
        "version": PROFILE_VERSION,
        "name": profile.name,
        "created": profile.created or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "tray": {"width_mm": profile.width_mm, "height_mm": profile.height_mm, "px_per_mm": profile.px_per_mm,
                 "corners_px": [[round(float(x), 3), round(float(y), 3)] for x, y in profile.corners_px],
                 "corners_from": profile.corners_from},
    }
    if profile.markers is not None:
        m = profile.markers
        out["markers"] = {"dictionary": m.dictionary, "ids": list(m.ids), "size_mm": m.size_mm,
                          "centres_mm": [list(c) for c in m.centres_mm]}
    out["dice"] = {"count": profile.dice_count, "size_mm": profile.die_mm}
    if profile.hold_area_mm is not None:
        x, y, w, h = profile.hold_area_mm
        out["hold_area"] = {"x_mm": x, "y_mm": y, "width_mm": w, "height_mm": h}
    if profile.reference:
        out["reference"] = {"empty_tray": profile.reference}
    out["camera"] = camera
    out["reader"] = {"min_confidence": profile.min_confidence}
    default = WatchConfig()
    out["watch"] = {f.name: getattr(profile.watch, f.name) for f in dataclasses.fields(WatchConfig)
                    if f.name != "min_confidence" and getattr(profile.watch, f.name) != getattr(default, f.name)}
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
        raise ProfileError(f"cannot make the profiles folder {str(d)!r} ({exc.strerror or exc}): a file may stand "
                           "in its way; give --profiles-dir a folder you can write to") from None
    path = d / f"{profile.name}.toml"
    if reference is not None:
        ref_name = f"{profile.name}.empty.png"
        if not cv2.imwrite(str(d / ref_name), reference):
            raise OSError(f"could not write the empty-tray image {str(d / ref_name)!r}")
        profile = dataclasses.replace(profile, reference=ref_name)
    text = dumps(profile_to_dict(profile), header=(
        f"dicetable calibration profile {profile.name!r} (format version {PROFILE_VERSION}).\n"
        "Made by 'dicetable calibrate'; edit thresholds by hand if you like, then check with\n"
        f"'dicetable calibrate --check --profile {profile.name} --camera SOURCE'."))
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path
