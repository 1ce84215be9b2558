"""Python, numpy, OpenCV and onnxruntime versions, and the numpy clash that breaks picamera2 on a Pi.

The clash (issue 34): Raspberry Pi OS ships numpy (1.24 on Bookworm) and C extensions built
against it, picamera2's ``simplejpeg`` among them. A venv made with ``--system-site-packages``
that pip-installs a newer numpy puts it in front; those extensions then fail to import with
"numpy.dtype size changed" or "numpy.core.multiarray failed to import", which is not "not
installed". The import is tried in a child Python, so that a C extension that crashes cannot
take the doctor with it.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

from table.doctor.check import REINSTALL, Check, first_line

#: Where Debian and Raspberry Pi OS keep the Python packages apt installs.
SYSTEM_SITE = Path("/usr/lib/python3/dist-packages")

#: Words in an import error that mean a C extension was built against another numpy.
CLASH_SIGNS = (
    "numpy.dtype size changed",
    "numpy.core.multiarray failed to import",
    "_ARRAY_API not found",
    "compiled using NumPy 1.x cannot be run in",
    "numpy.core._multiarray_umath failed to import",
)

#: Seconds the child Python may take to import picamera2 (about 2 s on a Pi 4).
IMPORT_TIMEOUT_S = 60.0


def check_python() -> Check:
    """The Python running dicetable, and where."""
    v = sys.version_info
    return Check("python", "ok", f"{v.major}.{v.minor}.{v.micro} ({sys.executable})")


def check_libraries() -> Check:
    """numpy, OpenCV and onnxruntime: importable, and their versions."""
    found, broken = [], []
    for label, module in (("numpy", "numpy"), ("OpenCV", "cv2"), ("onnxruntime", "onnxruntime")):
        try:
            mod = importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 - ImportError, or a C extension's own error
            broken.append(f"{label} does not import ({first_line(exc)})")
            continue
        found.append(f"{label} {getattr(mod, '__version__', '?')}")
    system = system_numpy_version()
    if system:
        found.append(f"the system's numpy {system}")
    if broken:
        fix = (
            "onnxruntime is optional (OpenCV's dnn runs the networks, slower); "
            if broken[0].startswith("onnxruntime") and len(broken) == 1
            else ""
        )
        return Check("libraries", "warning" if fix else "fail", "; ".join(broken + found), fix + REINSTALL)
    return Check("libraries", "ok", ", ".join(found))


def system_numpy_version(site: Path | None = None) -> str | None:
    """The numpy apt installed (``/usr/lib/python3/dist-packages``), or None where there is none."""
    site = SYSTEM_SITE if site is None else site
    try:
        names = sorted(p.name for p in site.iterdir() if p.name.lower().startswith("numpy-"))
    except OSError:
        return None
    for name in names:  # numpy-1.24.2.egg-info (Debian) or numpy-1.24.2.dist-info
        m = re.match(r"numpy-([0-9][^-]*?)(\.egg-info|\.dist-info)$", name, re.IGNORECASE)
        if m:
            return m.group(1)
    return None


def clash_fix(error: str, venv_numpy: str | None = None, system_numpy: str | None = None) -> str | None:
    """What to say when `error` (an import error's text) is the numpy clash; None when it is something else."""
    if not any(sign in error for sign in CLASH_SIGNS):
        return None
    if venv_numpy is None:
        try:
            import numpy

            venv_numpy = numpy.__version__
        except Exception:  # noqa: BLE001 - numpy itself broken: the clash text still holds
            venv_numpy = "?"
    system_numpy = system_numpy or system_numpy_version() or "?"
    return (
        f"the venv has numpy {venv_numpy} in front of the system's numpy {system_numpy}, which the Pi's "
        f"camera libraries were built for: {REINSTALL} (it keeps the system's numpy)"
    )


def import_error(modules: tuple[str, ...], env: dict[str, str] | None = None) -> str | None:
    """Import `modules` in a child Python (this one's interpreter); the error's last line, or None when they import.

    Raises
    ------
    OSError
        If the child cannot be started.
    subprocess.TimeoutExpired
        If the import takes longer than :data:`IMPORT_TIMEOUT_S`.
    """
    code = "".join(f"import {m}\n" for m in modules)
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=IMPORT_TIMEOUT_S,
        env=dict(os.environ) if env is None else env,
    )
    if done.returncode == 0:
        return None
    return first_line(done.stderr) or f"the import ended with status {done.returncode}"


def check_camera_libraries(board: str | None, env: dict[str, str] | None = None) -> Check:
    """picamera2 (and its simplejpeg) import; the numpy clash is named as such, not as "not installed".

    Parameters
    ----------
    board : str or None
        The Pi's model (:func:`table.doctor.check.board_model`); None off a Pi.
    env : dict, optional
        The child Python's environment (tests put fake modules on its ``PYTHONPATH``).
    """
    error = None
    for module in ("simplejpeg", "picamera2"):
        error = import_error((module,), env)
        if error is not None:
            where = module
            break
    if error is None:
        return Check("picamera2", "ok", "picamera2 and simplejpeg import")
    fix = clash_fix(error)
    if fix is not None:
        return Check("picamera2", "fail", f"{where} does not import: {error}", fix)
    missing = error.startswith(("ModuleNotFoundError", "No module named")) or "No module named" in error
    if missing and board is None:
        return Check(
            "picamera2", "skipped", "not a Pi: skipped (no picamera2 here; use --camera opencv:0 or images:DIR)"
        )
    if missing:
        return Check(
            "picamera2",
            "fail",
            f"{where} is not installed ({error})",
            f"'sudo apt install python3-picamera2', then {REINSTALL}",
        )
    return Check("picamera2", "fail", f"{where} does not import: {error}", REINSTALL)
