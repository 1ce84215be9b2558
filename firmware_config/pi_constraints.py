#!/usr/bin/env python3
"""Print the pip constraints that keep the system's numpy in the Pi's venv (stdlib only).

install.sh runs it with the system python (python3 from apt) and installs the project with
`pip install -c` of its output. Why: Raspberry Pi OS ships numpy from apt (1.24.2 on Bookworm)
and C extensions built against it, among them simplejpeg, which picamera2 imports. A numpy 2 that
pip puts into the venv (--system-site-packages) hides apt's numpy, and those extensions then fail
to import ("numpy.dtype size changed"; picamera2 issues 1088, 1170, 1211).

    python3 firmware_config/pi_constraints.py               # this python's numpy
    python3 firmware_config/pi_constraints.py --numpy 1.24.2

Exit status 1, with one line on stderr, when this python has no numpy (apt-get install python3-numpy).
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import PackageNotFoundError, version

# opencv-python-headless 4.12.0.88 and every later release declare numpy>=2 (their Requires-Dist);
# 4.11.0.86 is the last that accepts numpy 1.x. Saying so up front spares pip's resolver from
# downloading each newer ~60 MB wheel only to reject it (Debian's pip 23.0 fetches whole wheels).
LAST_OPENCV_FOR_NUMPY1 = "opencv-python-headless<4.12"


def constraints(numpy_version: str) -> str:
    """The constraints file's text for a system numpy of `numpy_version` (e.g. "1.24.2")."""
    lines = [
        "# Written by firmware_config/install.sh from the system python's numpy: keep apt's numpy,",
        "# which apt's C extensions (simplejpeg for picamera2) were built against.",
        f"numpy=={numpy_version}",
    ]
    if int(numpy_version.split(".")[0]) < 2:
        lines.append(LAST_OPENCV_FOR_NUMPY1)
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="pip constraints that keep the system's numpy")
    parser.add_argument("--numpy", metavar="VERSION", help="numpy version (default: this python's numpy)")
    args = parser.parse_args(argv)
    numpy_version = args.numpy
    if numpy_version is None:
        try:
            numpy_version = version("numpy")
        except PackageNotFoundError:
            print(f"pi_constraints: {sys.executable} has no numpy: apt-get install python3-numpy", file=sys.stderr)
            return 1
    sys.stdout.write(constraints(numpy_version))
    return 0


if __name__ == "__main__":
    sys.exit(main())
