"""One check's answer (:class:`Check`), its one line, and the guard that keeps a broken check from a traceback."""

from __future__ import annotations

import logging
import platform
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: The answers a check can give, best first.
STATUSES = ("ok", "warning", "fail", "skipped")

#: Where Raspberry Pi OS says which board this is (the device tree's model string).
MODEL_FILES = (Path("/proc/device-tree/model"), Path("/sys/firmware/devicetree/base/model"))

#: How the table's screen names a part (:meth:`Check.screen_line`).
SCREEN_NAMES = {
    "camera": "Camera",
    "buttons": "Buttons",
    "gpio": "Buttons",
    "store": "Game store",
    "reader": "Dice reader",
}

#: What the owner reruns to put the table's software back as it was installed.
REINSTALL = "rerun the installer: cd into the dicetable folder, then 'sudo firmware_config/install.sh'"


@dataclass(frozen=True, slots=True)
class Check:
    """What one check found.

    Parameters
    ----------
    name : str
        The part checked, e.g. ``"camera"`` or ``"store"``.
    status : {"ok", "warning", "fail", "skipped"}
    detail : str
        What was found, one line.
    fix : str
        What to do about it (empty when nothing is to be done).
    """

    name: str
    status: str
    detail: str
    fix: str = ""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}, got {self.status!r}")

    @property
    def failed(self) -> bool:
        """True for a ``fail``."""
        return self.status == "fail"

    def line(self) -> str:
        """The check as one line: ``STATUS  name: detail; fix: ...`` (newlines in the texts become spaces)."""
        text = f"{self.name}: {self.detail}" + (f" -> {self.fix}" if self.fix else "")
        return f"{self.status.upper():8}" + " ".join(text.split())

    def screen_line(self) -> str:
        """What ``play`` shows on the table's screen and prints: ``Part: detail. Fix.`` (no status column)."""
        part = SCREEN_NAMES.get(self.name, self.name.capitalize())
        fix = self.fix[:1].upper() + self.fix[1:] if self.fix else ""
        return " ".join((f"{part}: {self.detail}. {fix}." if fix else f"{part}: {self.detail}.").split())

    def to_json(self) -> dict[str, str]:
        """``{"name", "status", "detail", "fix"}``."""
        return asdict(self)


def guarded(name: str, fn: Callable[..., Check], *args: Any, **kwargs: Any) -> Check:
    """``fn(*args, **kwargs)``, or a ``fail`` naming the error when the check itself breaks (never a traceback).

    The traceback goes to the log (``logging``), for support; the owner sees one line.
    """
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - a check must never take the others down with it
        log.debug("check %s failed", name, exc_info=True)
        return Check(
            name,
            "fail",
            f"the check itself broke ({type(exc).__name__}: {first_line(exc)})",
            "run 'dicetable doctor' again; if it stays, tell support this line",
        )


def first_line(exc: BaseException | str) -> str:
    """The last non-empty line of an error's text (where Python and C libraries put the reason)."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    return lines[-1] if lines else (type(exc).__name__ if isinstance(exc, BaseException) else "")


def board_model() -> str | None:
    """The Raspberry Pi's model string (e.g. ``"Raspberry Pi 5 Model B Rev 1.0"``), or None when not a Pi."""
    if platform.system() != "Linux":
        return None
    for path in MODEL_FILES:
        try:
            text = path.read_bytes().decode("ascii", "replace").strip("\x00 \n")
        except OSError:
            continue
        if "Raspberry Pi" in text:
            return text
    return None
