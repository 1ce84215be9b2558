"""The Raspberry Pi OS install path: firmware_config/install.sh on Debian bookworm's own python.

Debian bookworm is what Raspberry Pi OS Bookworm is built from: /usr/bin/python3 3.11 with apt's
python3-numpy 1.24.2. python3-bottleneck, a C extension built against apt's numpy, stands in for
simplejpeg (which picamera2 imports): a numpy 2 from pip in the venv would break both. .ci/run
installs these apt packages; this test never calls apt-get and is skipped when they are absent.

install.sh runs for real (venv, pip from PyPI) into a copy of the project, with /etc, /boot and
/home under a scratch DICETABLE_ROOT and the commands that need a real Pi stubbed on PATH (they
log their arguments). About 1-3 minutes, mostly pip downloads; needs PyPI.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.pi_install]

REPO = Path(__file__).resolve().parents[1]
SYSTEM_PY = "/usr/bin/python3"
SYSTEM_SITE = "/usr/lib/python3/dist-packages/"
STUBBED = ("apt-get", "systemctl", "usermod", "raspi-config", "chown", "loginctl")
INSTALL_S = 600  # one install.sh run: pip downloads OpenCV (~50 MB) and onnxruntime on the first


def _system_python_lacks() -> str | None:
    """Why the Pi OS stand-in cannot run here (None: it can)."""
    if not os.access(SYSTEM_PY, os.X_OK):
        return f"{SYSTEM_PY} is absent: apt-get install -y python3"
    for module, package in (
        ("numpy", "python3-numpy"),
        ("bottleneck", "python3-bottleneck"),
        ("ensurepip", "python3-venv"),
    ):
        if subprocess.run([SYSTEM_PY, "-c", f"import {module}"], capture_output=True).returncode:
            return f"{SYSTEM_PY} lacks {module}: apt-get install -y {package} (as .ci/run does)"
    return None


def _copy_project(dst: Path) -> None:
    """What `pip install .` needs, without the checkout's .venv, .git, tests or build leftovers."""
    import shutil

    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", ".venv")
    dst.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, dst / name)
    for name in ("table", "vision", "calibration", "firmware_config"):
        shutil.copytree(REPO / name, dst / name, ignore=skip)


class PiInstall:
    """A scratch Pi: the project copy, the fake root and the stubs; run() runs install.sh once."""

    def __init__(self, base: Path):
        self.repo = base / "dicetable"
        self.root = base / "root"
        self.log = base / "stub-calls.log"
        self.venv_py = self.repo / ".venv" / "bin" / "python"
        _copy_project(self.repo)
        (self.root / "boot/firmware").mkdir(parents=True)
        (self.root / "boot/firmware/config.txt").write_text("[pi4]\narm_boost=1\n")
        (self.root / "home/pi/.config").mkdir(parents=True)
        (self.root / "home/pi/.config/wayfire.ini").write_text("[core]\nplugins = autostart\n")
        bin_dir = base / "stub-bin"
        bin_dir.mkdir()
        for name in STUBBED:
            (bin_dir / name).write_text(f'#!/bin/sh\necho "{name} $*" >> "$STUB_LOG"\n')
            (bin_dir / name).chmod(0o755)
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
        self.env = {
            **env,
            "PATH": f"{bin_dir}:{env['PATH']}",
            "PYTHON": SYSTEM_PY,
            "DICETABLE_ROOT": str(self.root),
            "DICETABLE_USER": "pi",
            "STUB_LOG": str(self.log),
        }

    def run(self) -> str:
        out = subprocess.run(
            ["bash", str(self.repo / "firmware_config/install.sh")],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=INSTALL_S,
        )
        assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
        return out.stdout

    def python(self, code: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(self.venv_py), "-c", code], env=self.env, capture_output=True, text=True, timeout=120
        )

    def snapshot(self) -> dict[str, str]:
        """sha256 of every file of the fake root and the pip constraints, and the venv's pip freeze."""
        files = [*self.root.rglob("*"), self.repo / ".venv/dicetable-constraints.txt"]
        snap = {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in files if p.is_file()}
        freeze = subprocess.run(
            [str(self.venv_py), "-m", "pip", "freeze"], env=self.env, capture_output=True, text=True, timeout=120
        )
        snap["pip freeze"] = freeze.stdout
        return snap


def _check_numpy_and_c_extensions(pi: PiInstall, first_output: str) -> None:
    out = pi.python(
        "import json, bottleneck, numpy, cv2, onnxruntime; print(json.dumps("
        "[numpy.__file__, numpy.__version__, cv2.__version__, onnxruntime.__version__]))"
    )
    assert out.returncode == 0, out.stderr  # bottleneck stands in for picamera2's simplejpeg
    numpy_file, numpy_version, cv2_version, ort_version = json.loads(out.stdout)
    system = subprocess.run(
        [SYSTEM_PY, "-c", "import numpy; print(numpy.__version__)"], capture_output=True, text=True
    ).stdout.strip()
    assert numpy_file.startswith(SYSTEM_SITE) and numpy_version == system, numpy_file
    print(f"venv: numpy {numpy_version} (apt's), OpenCV {cv2_version}, onnxruntime {ort_version}")
    assert (pi.repo / ".venv/dicetable-constraints.txt").read_text().count(f"numpy=={system}\n") == 1
    assert f"pip keeps the system's numpy=={system}" in first_output


def _check_boot_files_and_stubs(pi: PiInstall) -> None:
    config = (pi.root / "boot/firmware/config.txt").read_text()
    assert config.startswith("[pi4]\narm_boost=1\n# --- dicetable begin ---\n") and "\n[all]\n" in config
    kiosk = f"{pi.repo}/firmware_config/kiosk.sh"
    assert (pi.root / "home/pi/.config/labwc/autostart").read_text() == f"{kiosk} &\n"
    assert f"[autostart]\ndicetable = {kiosk}\n" in (pi.root / "home/pi/.config/wayfire.ini").read_text()
    unit = (pi.root / "etc/systemd/system/dicetable.service").read_text()
    assert f"ExecStart={pi.repo}/.venv/bin/python -m table play --wait --camera picamera2" in unit
    calls = pi.log.read_text()
    for call in (
        "apt-get install -y python3-venv python3-pip python3-numpy python3-picamera2",
        "usermod -a -G video,gpio pi",
        "systemctl enable dicetable.service",
        "raspi-config nonint",
    ):
        assert call in calls


def _check_reading_and_health(pi: PiInstall, work: Path) -> None:
    dicetable = str(pi.repo / ".venv/bin/dicetable")
    demo = subprocess.run(
        [dicetable, "demo", "--headless", "--players", "1"],
        env=pi.env,
        cwd=work,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert demo.returncode == 0 and "Reading:" in demo.stdout, demo.stdout[-2000:] + demo.stderr[-2000:]
    # The table itself on the synthetic camera with the model reader: the page answers /health.
    play = subprocess.Popen(
        [
            dicetable,
            "play",
            "--camera",
            "synthetic:3",
            "--rules",
            "yacht",
            "--players",
            "Ann",
            "--no-buttons",
            "--port",
            "0",
            "--db",
            str(work / "g.sqlite3"),
            "--duration",
            "120",
        ],
        env={**pi.env, "PYTHONFAULTHANDLER": "1"},  # SIGABRT then prints every thread's stack
        cwd=work,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: list[str] = []
    try:
        url = None
        while url is None:
            line = play.stderr.readline()  # play exits after --duration: the loop ends
            if not line:
                break
            seen.append(line)
            url = next((w for w in line.split() if w.startswith("http://127.0.0.1:")), None)
        assert url, "play printed no address:\n" + "".join(seen)
        with urllib.request.urlopen(url + "health", timeout=10) as r:
            assert json.loads(r.read())["ok"] is True
    finally:
        # SIGTERM, as systemd stops the service: a SIGINT is ignored by a process started from a shell's
        # background job (the test suite run as `... &`: Python then keeps SIGINT ignored), and play never
        # stopped (its threads' stacks showed the main thread still waiting). Ctrl-C: tests/test_play.py.
        play.send_signal(signal.SIGTERM)
        try:
            rest = play.communicate(timeout=60)[1]
        except subprocess.TimeoutExpired:  # say where it hangs
            play.send_signal(signal.SIGABRT)
            pytest.fail("play did not stop within 60 s of SIGTERM; its threads:\n" + play.communicate(timeout=30)[1])
    assert "Traceback" not in "".join(seen) + rest


def _check_repair_of_a_venv_numpy(pi: PiInstall) -> None:
    """An install made before the constraint left pip's numpy 2 in the venv, hiding apt's: the C
    extension breaks (the issue's failure); install.sh removes it."""
    broken = subprocess.run(
        [str(pi.venv_py), "-m", "pip", "install", "-q", "--no-deps", "numpy>=2"],
        env=pi.env,
        capture_output=True,
        text=True,
        timeout=INSTALL_S,
    )
    assert broken.returncode == 0, broken.stderr
    assert pi.python("import bottleneck").returncode != 0
    assert "removing the venv's own numpy" in pi.run()
    assert pi.python("import bottleneck, cv2, onnxruntime").returncode == 0


def test_pi_install_keeps_apt_numpy_starts_the_table_and_runs_twice_unchanged(tmp_path):
    """One test, not several on a shared fixture: pytest-xdist would give each worker its own install."""
    reason = _system_python_lacks()
    if reason:
        pytest.skip(reason)
    pi = PiInstall(tmp_path / "pi")
    started = time.monotonic()
    first_output = pi.run()
    first = pi.snapshot()
    print(f"install.sh: {time.monotonic() - started:.0f} s")
    _check_numpy_and_c_extensions(pi, first_output)
    _check_boot_files_and_stubs(pi)
    work = tmp_path / "work"
    work.mkdir()
    _check_reading_and_health(pi, work)
    pi.run()
    assert pi.snapshot() == first, "a second install.sh run changed something"
    _check_repair_of_a_venv_numpy(pi)
    assert pi.snapshot() == first, "the repaired venv differs from a new one"


def test_pi_wheels_resolve_for_aarch64_python311_with_the_system_numpy():
    """check_pi_wheels.py: pip finds aarch64 / CPython 3.11 wheels for everything with numpy==1.24.2."""
    out = subprocess.run(
        [sys.executable, str(REPO / "firmware_config/check_pi_wheels.py"), "--numpy", "1.24.2"],
        capture_output=True,
        text=True,
        timeout=INSTALL_S,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    resolved = {line.split()[0].lower(): line.split()[1] for line in out.stdout.splitlines()}
    assert resolved["numpy"] == "1.24.2" and "opencv-python-headless" in resolved and "onnxruntime" in resolved
    print(out.stdout)
