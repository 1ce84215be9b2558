"""On a Pi: power and heat (``vcgencmd get_throttled``, ``vcgencmd measure_temp``) and the clock's sync.

A tool that is not there (no ``vcgencmd`` off a Pi, no ``timedatectl`` without systemd) gives a
``skipped`` line, never a traceback.
"""

from __future__ import annotations

import re
import shutil
import subprocess

from table.doctor.check import Check, first_line

#: Seconds a tool may take.
TOOL_TIMEOUT_S = 10.0

#: ``get_throttled`` bits (Raspberry Pi documentation, "vcgencmd"): now, and (bit + 16) since boot.
THROTTLE_BITS = {0: "under-voltage", 1: "the CPU clock capped", 2: "throttled", 3: "the soft temperature limit"}

#: CPU temperature (degrees C) above which a warning is given: the Pi 4 and 5 start to throttle
#: at 80 and stop the clock at 85.
HOT_C = 80.0

POWER_FIX = (
    "use the official power supply (5.1 V: 15 W for a Pi 4, 27 W for a Pi 5) and a short cable; "
    "give the Pi a heatsink or fan if it runs hot"
)


def run_tool(*argv: str) -> tuple[int, str] | None:
    """``(status, stdout and stderr)`` of a tool, or None when it is not installed (or cannot be run)."""
    path = shutil.which(argv[0])
    if path is None:
        return None
    try:
        done = subprocess.run([path, *argv[1:]], capture_output=True, text=True, timeout=TOOL_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.returncode, (done.stdout + done.stderr).strip()


def _vcgencmd(name: str, command: str, pattern: str) -> re.Match[str] | Check:
    """``vcgencmd COMMAND``'s answer matched by `pattern`, or check `name`'s line when there is none.

    No ``vcgencmd`` is "not a Pi: skipped"; an error or an answer `pattern` does not match is a
    warning (the user is usually not in the ``video`` group).
    """
    out = run_tool("vcgencmd", command)
    if out is None:
        return Check(name, "skipped", "not a Pi: skipped (no vcgencmd)")
    status, text = out
    m = re.search(pattern, text)
    if status != 0 or m is None:
        return Check(
            name,
            "warning",
            f"'vcgencmd {command}' did not answer ({first_line(text) or status})",
            "add the user to the 'video' group (the installer does), then log out and in",
        )
    return m


def check_power() -> Check:
    """``vcgencmd get_throttled``: under-voltage or throttling now (fail) or since boot (warning)."""
    m = _vcgencmd("power", "get_throttled", r"throttled=(0x[0-9a-fA-F]+|\d+)")
    if isinstance(m, Check):
        return m
    bits = int(m.group(1), 0)
    now = [name for b, name in THROTTLE_BITS.items() if bits & (1 << b)]
    before = [name for b, name in THROTTLE_BITS.items() if bits & (1 << (b + 16))]
    if now:
        return Check("power", "fail", f"{', '.join(now)} now (throttled={m.group(1)})", POWER_FIX)
    if before:
        return Check("power", "warning", f"{', '.join(before)} since boot, not now (throttled={m.group(1)})", POWER_FIX)
    return Check("power", "ok", f"no under-voltage or throttling since boot (throttled={m.group(1)})")


def check_temperature() -> Check:
    """``vcgencmd measure_temp``: the CPU's temperature (warning above :data:`HOT_C`)."""
    m = _vcgencmd("temperature", "measure_temp", r"temp=([-0-9.]+)")
    if isinstance(m, Check):
        return m
    temp = float(m.group(1))
    if temp >= HOT_C:
        return Check(
            "temperature",
            "warning",
            f"CPU at {temp:.1f} C (it slows down from {HOT_C:.0f} C)",
            "give the Pi a heatsink or fan (the Pi 5's Active Cooler), and air around the case",
        )
    return Check("temperature", "ok", f"CPU at {temp:.1f} C")


def check_clock() -> Check:
    """``timedatectl show -p NTPSynchronized``: the clock is set from the network (game times are right)."""
    out = run_tool("timedatectl", "show", "-p", "NTPSynchronized")
    if out is None:
        return Check("clock", "skipped", "not a Pi: skipped (no timedatectl)")
    status, text = out
    m = re.search(r"NTPSynchronized=(\w+)", text)
    if status != 0 or m is None:
        return Check("clock", "skipped", f"timedatectl cannot tell ({first_line(text) or status}): skipped")
    if m.group(1) == "yes":
        return Check("clock", "ok", "synchronised from the network")
    return Check(
        "clock",
        "warning",
        "not synchronised: the Pi has no battery clock, so game times may be wrong",
        "connect the Pi to a network (Wi-Fi or cable) for a minute; 'sudo systemctl restart systemd-timesyncd'",
    )
