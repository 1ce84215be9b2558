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
    for needed in (
        "Restart=on-failure",
        "Environment=PYTHONUNBUFFERED=1",
        "SupplementaryGroups=video gpio",
        "ExecStart=@DIR@/.venv/bin/python -m table play --wait",
    ):
        assert needed in unit
    kiosk = (FW / "kiosk.sh").read_text()
    assert "health" in kiosk and "--kiosk --start-maximized" in kiosk
    config = (FW / "config.txt").read_text()
    assert "camera_auto_detect=1" in config and "display_auto_detect=1" in config
    block = config[config.index("# --- dicetable begin ---") :].splitlines()
    assert [ln for ln in block if not ln.startswith("#")][0] == "[all]"  # before any setting of the block


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is absent: apt-get install -y shellcheck")
@pytest.mark.parametrize("script", ["install.sh", "kiosk.sh"])
def test_firmware_scripts_pass_shellcheck(script):
    out = subprocess.run(["shellcheck", str(FW / script)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def _stub(bin_dir: Path, name: str, body: str = "") -> None:
    p = bin_dir / name
    p.write_text(f'#!/bin/sh\necho "{name} $*" >> "$STUB_LOG"\n{body}\n')
    p.chmod(0o755)


# python3 -m venv --system-site-packages DIR makes DIR/bin/python (exits 1: "no numpy of the venv's own")
# and DIR/bin/pip (logs); python3 pi_constraints.py prints a constraint as for apt's numpy 1.24.2.
_PYTHON3 = """case "$1" in
-m) mkdir -p "$4/bin"
    printf '#!/bin/sh\\necho "python $*" >> "$STUB_LOG"\\nexit 1\\n' > "$4/bin/python"
    printf '#!/bin/sh\\necho "pip $*" >> "$STUB_LOG"\\n' > "$4/bin/pip"
    chmod +x "$4/bin/python" "$4/bin/pip" ;;
*) printf 'numpy==1.24.2\\n' ;;
esac"""


def _installer(tmp_path: Path, config: str, wayfire: str | None = None):
    """install.sh with apt, systemctl, usermod, python and pip stubbed, into a scratch root: returns run()."""
    repo = tmp_path / "dicetable"
    shutil.copytree(FW, repo / "firmware_config")
    root = tmp_path / "root"
    (root / "boot/firmware").mkdir(parents=True)
    (root / "boot/firmware/config.txt").write_text(config)
    if wayfire is not None:
        (root / "home/pi/.config").mkdir(parents=True)
        (root / "home/pi/.config/wayfire.ini").write_text(wayfire)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("apt-get", "systemctl", "usermod", "chown", "raspi-config"):
        _stub(bin_dir, name)
    _stub(bin_dir, "python3", _PYTHON3)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "DICETABLE_ROOT": str(root),
        "DICETABLE_USER": "pi",
        "STUB_LOG": str(tmp_path / "calls.log"),
    }
    env.pop("PYTHON", None)

    def run() -> dict[str, str]:
        out = subprocess.run(
            ["bash", str(repo / "firmware_config" / "install.sh")], env=env, capture_output=True, text=True
        )
        assert out.returncode == 0, out.stdout + out.stderr
        run.stdout = out.stdout
        return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}

    return repo, run


def test_firmware_install_twice_changes_nothing_the_second_time(tmp_path):
    repo, run = _installer(tmp_path, "[all]\narm_64bit=1\n")
    first = run()
    second = run()
    assert first == second
    config = first["boot/firmware/config.txt"]
    assert config.startswith("[all]\narm_64bit=1\n# --- dicetable begin ---\n")
    assert config.count("# --- dicetable begin ---") == 1 and config.endswith("# --- dicetable end ---\n")
    assert "camera_auto_detect=1" in config
    assert first["boot/firmware/config.txt.before-dicetable"] == "[all]\narm_64bit=1\n"
    unit = first["etc/systemd/system/dicetable.service"]
    assert "User=pi" in unit and f"ExecStart={repo}/.venv/bin/python -m table play --wait --camera picamera2" in unit
    assert "@" not in unit.replace("multi-user", "")
    assert first["home/pi/.config/labwc/autostart"] == f"{repo}/firmware_config/kiosk.sh &\n"
    assert "home/pi/.config/wayfire.ini" not in first  # none was there: not made, and the output says so
    assert "wayfire not set up" in run.stdout and "journalctl -u dicetable -f" in run.stdout
    calls = (tmp_path / "calls.log").read_text().splitlines()
    assert sum(c.startswith("python3 -m venv --system-site-packages") for c in calls) == 1  # venv made once
    cons = f"{repo}/.venv/dicetable-constraints.txt"
    assert sum(c == f"pip install --upgrade -c {cons} {repo}[pi]" for c in calls) == 2
    assert (repo / ".venv/dicetable-constraints.txt").read_text() == "numpy==1.24.2\n"
    assert not any(c.startswith("pip uninstall") for c in calls)  # the venv has no numpy of its own
    assert "usermod -a -G video,gpio pi" in calls


def test_firmware_config_block_starts_with_all_and_replaces_an_older_block(tmp_path):
    """A [pi4] filter above the block must not swallow it; an older block is replaced; no newline at the end is fine."""
    old = (
        "[pi4]\narm_boost=1\n"
        "# --- dicetable begin ---\ncamera_auto_detect=1\n# --- dicetable end ---\n"
        "max_framebuffers=2"
    )
    _, run = _installer(tmp_path, old)
    config = run()["boot/firmware/config.txt"]
    block = (FW / "config.txt").read_text()
    block = block[block.index("# --- dicetable begin ---") :]
    assert block.splitlines()[1:3] == [
        "# [all] first: a section filter above the block ([pi4], [cm4], ...) would otherwise apply to it.",
        "[all]",
    ]
    assert config == "[pi4]\narm_boost=1\nmax_framebuffers=2\n" + block
    assert run()["boot/firmware/config.txt.before-dicetable"] == old  # the first backup is kept


@pytest.mark.parametrize(
    "wayfire, expected",
    [
        (
            "[core]\nplugins = autostart\n\n[autostart]\npanel = wfrespawn wf-panel-pi\n",
            "[core]\nplugins = autostart\n\n[autostart]\n{line}\npanel = wfrespawn wf-panel-pi\n",
        ),
        ("[core]\nplugins = autostart\n", "[core]\nplugins = autostart\n\n[autostart]\n{line}\n"),
        ("[autostart]\ndicetable = /old/kiosk.sh\n", "[autostart]\n{line}\n"),
    ],
)
def test_firmware_kiosk_in_wayfire_autostart_when_the_user_has_wayfire(tmp_path, wayfire, expected):
    repo, run = _installer(tmp_path, "", wayfire=wayfire)
    first = run()
    line = f"dicetable = {repo}/firmware_config/kiosk.sh"
    assert first["home/pi/.config/wayfire.ini"] == expected.format(line=line)
    assert run() == first and "wayfire's autostart" in run.stdout
    assert first["home/pi/.config/labwc/autostart"] == f"{repo}/firmware_config/kiosk.sh &\n"
