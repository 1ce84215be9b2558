"""Run every check of ``dicetable doctor`` in order, each guarded (:func:`table.doctor.check.guarded`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from table.doctor import camera as camera_checks
from table.doctor import gpio, models, page, pi, profile, store, versions
from table.doctor.check import STATUSES, Check, board_model, guarded

#: ``--camera none``: no camera check (and no markers check).
NO_CAMERA = "none"
#: Stands for "find out" where a board may be given (None means "not a Pi").
AUTO = "auto"


@dataclass(frozen=True)
class Options:
    """What to check (the ``dicetable doctor`` options).

    Parameters
    ----------
    camera : str or None
        A camera spec; None: the profile's camera (``picamera2`` for the shipped one); ``"none"``: no camera.
    profile : str
        Calibration profile name or ``.toml`` path.
    profiles_dir : Path or None
        Where profile names are looked up (default: the user's, then the shipped ones).
    db : Path or None
        The game store (default: :func:`table.store.default_db_path`, as ``play``).
    pins : Path or None
        The GPIO pin map (default ``firmware_config/pins.toml``).
    url : str
        The page's health address.
    home : Path or None
        The kiosk user's home (default :func:`table.doctor.page.kiosk_home`).
    """

    camera: str | None = None
    profile: str = "default"
    profiles_dir: Path | None = None
    db: Path | None = None
    pins: Path | None = None
    url: str = page.DEFAULT_URL
    home: Path | None = None


def run_checks(
    options: Options, *, board: str | None = AUTO, pin_factory: Any = None, opener: Callable[..., Any] | None = None
) -> list[Check]:
    """Every check's answer, in the order they are printed; never raises for a check that breaks.

    `board` (the Pi's model, None off a Pi; found out by default), `pin_factory` (gpiozero's) and
    `opener` (:func:`vision.sources.open_source`) are for tests.
    """
    from table.store import default_db_path, store_holder

    if board == AUTO:
        board = board_model()
    db = Path(options.db) if options.db is not None else default_db_path()
    try:
        running = store_holder(db)
    except OSError:
        running = None
    try:
        prof = profile.load(options.profile, options.profiles_dir)
    except Exception:  # noqa: BLE001 - the profile check says why
        prof = None
    spec = options.camera or (prof.camera.source if prof is not None else "picamera2")
    checks = [
        guarded("python", versions.check_python),
        guarded("libraries", versions.check_libraries),
        guarded("picamera2", versions.check_camera_libraries, board),
    ]
    frame = None
    if spec.strip().lower() == NO_CAMERA:
        checks.append(Check("camera", "skipped", "no camera given (--camera none): skipped"))
    else:
        try:
            look = camera_checks.look_at_camera(spec, prof.camera.source_options() if prof else {}, opener=opener)
        except Exception as exc:  # noqa: BLE001 - look_at_camera reports its own; this is a last guard
            look = camera_checks.Look(spec=spec, problem=camera_checks.camera_problem(spec, exc))
        checks.append(guarded("camera", camera_checks.check_camera, look, running))
        frame = look.frame
    camera_spec = None if spec.strip().lower() == NO_CAMERA else spec
    checks.append(guarded("profile", profile.check_profile, options.profile, options.profiles_dir, camera_spec))
    checks.append(guarded("markers", profile.check_markers, prof, frame, spec))
    checks.append(guarded("gpio", gpio.check_gpio, options.pins, board, pin_factory=pin_factory, running=running))
    checks += [
        guarded("face reader", models.check_face_reader),
        guarded("pip finder", models.check_pip_finder),
        guarded("die detector", models.check_detector),
    ]
    checks.append(guarded("store", store.check_store, db, running))
    checks += [
        guarded("power", pi.check_power),
        guarded("temperature", pi.check_temperature),
        guarded("clock", pi.check_clock),
    ]
    checks += [guarded("page", page.check_page, options.url), guarded("kiosk", page.check_kiosk, options.home, board)]
    return checks


def summary(checks: list[Check]) -> dict[str, int]:
    """How many checks gave each status."""
    return {s: sum(1 for c in checks if c.status == s) for s in STATUSES}
