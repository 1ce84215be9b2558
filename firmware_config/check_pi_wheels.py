#!/usr/bin/env python3
"""Check that the Pi's install resolves: wheels for aarch64, CPython 3.11, with the system numpy kept.

Asks pip (this python's, 22.2 or later) which files `pip install -c CONSTRAINTS .` would take on
Raspberry Pi OS Bookworm (64-bit: aarch64, CPython 3.11, glibc 2.36), using the constraints that
install.sh writes (pi_constraints.py) for a system numpy of --numpy (default 1.24.2, Bookworm's
python3-numpy). Needs PyPI; downloads metadata only (pip --dry-run), builds nothing but the project.

    python3 firmware_config/check_pi_wheels.py [--numpy 1.24.2] [--repo DIR]

Prints one line per resolved package (name, version, file) and exits 0 when every one is a wheel
for the Pi and numpy is the system's; else names what is wrong on stderr and exits 1.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from pi_constraints import constraints  # noqa: E402

# Bookworm's glibc is 2.36, so every manylinux tag from 2_36 down to 2_17 (= manylinux2014) installs;
# pip does not widen a --platform tag to older glibc versions itself, so each is named.
PI_PLATFORM = [
    *(arg for minor in range(36, 16, -1) for arg in ("--platform", f"manylinux_2_{minor}_aarch64")),
    "--platform",
    "manylinux2014_aarch64",
    "--python-version",
    "3.11",
    "--implementation",
    "cp",
    "--abi",
    "cp311",
]


def resolve(repo: Path, numpy_version: str) -> list[tuple[str, str, str]]:
    """(name, version, file name) of every package pip would install for the Pi; raises CalledProcessError."""
    with tempfile.TemporaryDirectory(prefix="dicetable-pi-") as tmp:
        cons = Path(tmp) / "constraints.txt"
        cons.write_text(constraints(numpy_version))
        report = Path(tmp) / "report.json"
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--quiet",
            "--ignore-installed",
            "--report",
            str(report),
            "--only-binary=:all:",
            *PI_PLATFORM,
            "--target",
            str(Path(tmp) / "t"),
            "-c",
            str(cons),
            str(repo),
        ]
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        items = json.loads(report.read_text())["install"]
    return [
        (i["metadata"]["name"], i["metadata"]["version"], i["download_info"]["url"].rsplit("/", 1)[-1]) for i in items
    ]


def problems(resolved: list[tuple[str, str, str]], numpy_version: str) -> list[str]:
    """What is wrong with a resolved set for the Pi: not a wheel, not aarch64, numpy not the system's."""
    out = []
    names = {name.lower().replace("_", "-"): ver for name, ver, _ in resolved}
    if names.get("numpy", numpy_version) != numpy_version:  # absent: the system's numpy is used
        out.append(f"numpy {names['numpy']} instead of the system's {numpy_version}")
    for needed in ("opencv-python-headless", "onnxruntime"):
        if needed not in names:
            out.append(f"{needed} is not in the resolved set")
    for name, ver, file in resolved:
        if name == "dicetable":
            continue  # the project itself, from the local folder
        if not file.endswith(".whl"):
            out.append(f"{name} {ver}: not a wheel ({file})")
        elif not (file.endswith("-any.whl") or "aarch64" in file):
            out.append(f"{name} {ver}: no aarch64 wheel ({file})")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="check the Pi's aarch64 / Python 3.11 install resolves")
    parser.add_argument("--numpy", default="1.24.2", help="the system numpy's version (default 1.24.2)")
    parser.add_argument("--repo", type=Path, default=HERE.parent, help="the project folder (default: this checkout)")
    args = parser.parse_args(argv)
    try:
        resolved = resolve(args.repo, args.numpy)
    except subprocess.CalledProcessError as exc:
        print(f"check_pi_wheels: pip found no install for the Pi: {exc.stderr.strip()}", file=sys.stderr)
        return 1
    for name, ver, file in resolved:
        print(f"{name:28} {ver:14} {file}")
    bad = problems(resolved, args.numpy)
    for line in bad:
        print(f"check_pi_wheels: {line}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
