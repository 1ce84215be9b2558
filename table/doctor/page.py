"""The table's page answers on its address, and the kiosk is started at login (labwc or wayfire)."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path

from table.doctor.check import REINSTALL, Check, first_line

#: The address the kiosk opens (``firmware_config/kiosk.sh``), at the page's health route.
DEFAULT_URL = "http://127.0.0.1:8000/health"
#: Seconds the page may take to answer.
PAGE_TIMEOUT_S = 5.0
#: The desktops' autostart files, under the kiosk user's home: labwc (Bookworm since late 2024),
#: wayfire (Bookworm before).
AUTOSTART_FILES = (".config/labwc/autostart", ".config/wayfire.ini")
#: What the installer's autostart line starts.
KIOSK_SCRIPT = "kiosk.sh"

START_FIX = (
    "start the table: 'sudo systemctl start dicetable'; if it stops again, its log says why: "
    "'journalctl -u dicetable -e'"
)


def check_page(url: str = DEFAULT_URL) -> Check:
    """GET `url`: the page answers (200), or what went wrong."""
    try:
        with urllib.request.urlopen(url, timeout=PAGE_TIMEOUT_S) as r:
            body = r.read(4096)
    except urllib.error.HTTPError as exc:
        return Check(
            "page",
            "fail",
            f"{url} answers HTTP {exc.code} ({exc.reason})",
            "restart the table: 'sudo systemctl restart dicetable'",
        )
    except urllib.error.URLError as exc:
        return Check("page", "fail", f"nothing answers at {url} ({first_line(str(exc.reason))})", START_FIX)
    except (OSError, ValueError) as exc:  # a timeout, or a malformed --url
        return Check("page", "fail", f"{url} does not answer ({first_line(exc)})", START_FIX)
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict) and "screen" in data:
        return Check("page", "ok", f"{url} answers: the {data['screen']} screen")
    return Check("page", "ok", f"{url} answers")


def kiosk_home() -> Path:
    """The home of the user whose desktop runs the kiosk: the one who ran ``sudo``, else this one."""
    user = os.environ.get("SUDO_USER")
    if user and user != "root":
        home = Path(os.path.expanduser(f"~{user}"))
        if home.is_dir():
            return home
    return Path.home()


def check_kiosk(home: Path | None, board: str | None) -> Check:
    """A line starting ``kiosk.sh`` in labwc's or wayfire's autostart under `home`."""
    home = kiosk_home() if home is None else Path(home)
    seen = []
    for rel in AUTOSTART_FILES:
        path = home / rel
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        seen.append(rel)
        if any(KIOSK_SCRIPT in line and not line.lstrip().startswith(("#", ";")) for line in lines):
            desktop = "labwc" if "labwc" in rel else "wayfire"
            return Check("kiosk", "ok", f"started by {desktop} at login (~/{rel})")
    if board is None and not seen:
        return Check("kiosk", "skipped", "not a Pi: skipped (no labwc or wayfire autostart)")
    where = ", ".join(f"~/{r}" for r in seen) or "no autostart file"
    return Check(
        "kiosk",
        "fail" if board is not None else "warning",
        f"the kiosk is not started at login ({where} in {home} has no {KIOSK_SCRIPT} line)",
        REINSTALL,
    )
