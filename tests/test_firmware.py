"""firmware_config/: pins.toml matches the built-in wiring; install.sh passes shellcheck and is safe to run twice."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from table.inputs import Command, default_pin_map, load_pin_map
from table.inputs.pins import default_pins_path

FW = Path(__file__).resolve().parents[1] / "firmware_config"


def test_firmware_pins_toml_is_the_builtin_default_and_names_every_button():
    assert default_pins_path() == FW / "pins.toml"
    loaded = load_pin_map(FW / "pins.toml")
    assert loaded == default_pin_map()
    assert set(loaded.buttons) == set(Command) and sorted(loaded.leds) == [0, 1, 2, 3, 4]


def test_firmware_unit_and_kiosk_say_what_the_issue_asks():
    unit = (FW / "dicetable.service").read_text()
    for needed in ("Restart=on-failure", "Environment=PYTHONUNBUFFERED=1", "SupplementaryGroups=video gpio",
                   "ExecStart=@DIR@/.venv/bin/python -m table play --wait"):
        assert needed in unit
    kiosk = (FW / "kiosk.sh").read_text()
    assert "health" in kiosk and "--kiosk" in kiosk
    config = (FW / "config.txt").read_text()
    assert "camera_auto_detect=1" in config and "display_auto_detect=1" in config


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is absent: apt-get install -y shellcheck")
@pytest.mark.parametrize("script", ["install.sh", "kiosk.sh"])
def test_firmware_scripts_pass_shellcheck(script):
    out = subprocess.run(["shellcheck", str(FW / script)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def _stub(bin_dir: Path, name: str, body: str = "") -> None:
    p = bin_dir / name
    p.write_text(f"#!/bin/sh\necho \"{name} $*\" >> \"$STUB_LOG\"\n{body}\n")
    p.chmod(0o755)


def test_firmware_install_twice_changes_nothing_the_second_time(tmp_path):
    """install.sh with apt, systemctl, usermod, python and pip stubbed, into a scratch root, twice."""
    repo = tmp_path / "dicetable"
    shutil.copytree(FW, repo / "firmware_config")
    root = tmp_path / "root"
    (root / "boot/firmware").mkdir(parents=True)
    (root / "boot/firmware/config.txt").write_text("[all]\narm_64bit=1\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("apt-get", "systemctl", "usermod", "chown", "raspi-config"):
        _stub(bin_dir, name)
    # python3 -m venv DIR: make DIR/bin/python and DIR/bin/pip stubs.
    _stub(bin_dir, "python3", 'mkdir -p "$4/bin"; for f in python pip; do printf \'#!/bin/sh\\necho "%s $*" >> "$STUB_LOG"\\n\' "$f" > "$4/bin/$f"; chmod +x "$4/bin/$f"; done')
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "DICETABLE_ROOT": str(root),
           "DICETABLE_USER": "pi", "STUB_LOG": str(tmp_path / "calls.log")}
    script = repo / "firmware_config" / "install.sh"

    def run() -> dict[str, str]:
        out = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stdout + out.stderr
        return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}

    first = run()
    second = run()
    assert first == second
    config = first["boot/firmware/config.txt"]
    assert config.startswith("[all]\narm_64bit=1\n") and config.count("# --- dicetable begin ---") == 1
    assert "camera_auto_detect=1" in config
    assert first["boot/firmware/config.txt.before-dicetable"] == "[all]\narm_64bit=1\n"
    unit = first["etc/systemd/system/dicetable.service"]
    assert "User=pi" in unit and f"ExecStart={repo}/.venv/bin/python -m table play --wait --camera picamera2" in unit
    assert "@" not in unit.replace("multi-user", "")
    assert first["home/pi/.config/labwc/autostart"] == f"{repo}/firmware_config/kiosk.sh &\n"
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert sum(c.startswith("python3 -m venv --system-site-packages") for c in calls) == 1  # venv made once
    assert sum(c.startswith("pip install --upgrade") and c.endswith("[pi]") for c in calls) == 2
    assert "usermod -a -G video,gpio pi" in calls
