"""The page tells the owner too.

What ``play`` cannot use (camera, buttons, store) is the doctor's line on every screen.
"""

from __future__ import annotations

import os
import threading
import time

import pytest

from table.app import TableApp
from table.app import camera as camera_mod
from table.app.camera import CameraLoop
from table.display.snapshot import Setup
from vision.sources import SourceError, open_source

pytest.importorskip("fastapi", reason="fastapi is not installed: pip install .")

from table.cli import main  # noqa: E402

CLASH = (
    "cannot import picamera2 (numpy.dtype size changed, may indicate binary incompatibility. Expected 96 "
    "from C header, got 88 from PyObject); the Pi camera needs picamera2"
)


def wait_for(cond, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return False


def troubles(app) -> dict[str, str]:
    return {t["part"]: t["text"] for t in app.snapshot.get("troubles", [])}


@pytest.fixture
def app(tmp_path):
    a = TableApp(
        tmp_path / "games.sqlite3", setup=Setup("yacht", "forced", ["Ann", "Bo"]), camera_name="picamera2", pin="2468"
    ).start()
    yield a
    a.close()


def test_a_trouble_is_on_every_screen_until_cleared(app):
    assert app.snapshot["troubles"] == [] and app.screen == "setup"
    app.trouble("buttons", "Buttons: not a Pi. Play with --no-buttons.").result(timeout=5)
    assert troubles(app) == {"buttons": "Buttons: not a Pi. Play with --no-buttons."}
    app.apply_setup({"start": True}).result(timeout=5)  # a new game keeps it (the game's warnings are cleared)
    assert app.screen == "game" and "buttons" in troubles(app)
    app.trouble("buttons", None).result(timeout=5)
    assert troubles(app) == {}


class _Watcher:
    """A roll watcher that sees nothing (or raises `fail`), with what the camera's live view draws."""

    def __init__(self, fail=None):
        from calibration.profile import load_profile
        from vision.watch import WatchState

        self.fail = fail
        self.geometry = load_profile("default").geometry
        self.state, self.hold_area_mm, self.last_event = WatchState.SETTLING, None, None
        self.motion, self.hand, self.notice, self.camera_problem = 0.0, False, "", None

    def update(self, frame):
        if self.fail is not None:
            raise self.fail
        return []


def test_a_camera_that_cannot_open_shows_the_doctors_line_then_clears_it(app, monkeypatch):
    monkeypatch.setattr(camera_mod, "RETRY_S", 0.05)
    tries = []

    def opener():
        tries.append(1)
        if len(tries) < 3:
            raise SourceError(CLASH)
        return open_source("synthetic:1")

    seen = []
    app.subscribe(lambda seq, snap: seen.extend(t["text"] for t in snap["troubles"]))
    loop = CameraLoop(app, opener, lambda source: (_Watcher(), lambda frame: None)).start()
    try:
        assert wait_for(lambda: len(tries) >= 3 and app.camera_status == "watching" and not troubles(app))
    finally:
        loop.close()
    line = seen[0]
    assert line.startswith("Camera: picamera2 cannot be opened: the Pi camera's libraries do not import")
    assert "in front of the system's numpy" in line and "install.sh" in line and "Watching" not in line


def test_a_reader_that_stops_is_said_not_silent(app):
    from vision.face import FaceModelError

    error = FaceModelError("face-reader model 'x.onnx' does not exist; reinstall dicetable")
    loop = CameraLoop(app, lambda: open_source("synthetic:1"), lambda source: (_Watcher(error), lambda f: None)).start()
    try:
        assert wait_for(lambda: "camera" in troubles(app))
    finally:
        loop.close()
    assert troubles(app)["camera"].startswith("Dice reader: the dice reader stopped (FaceModelError: face-reader")
    assert "dicetable doctor" in troubles(app)["camera"] and app.camera_status == "failed"


def _run_play(argv, apps, monkeypatch):
    import table.app as app_mod

    real = app_mod.TableApp.start
    monkeypatch.setattr(app_mod.TableApp, "start", lambda self: apps.append(self) or real(self))
    result = {}
    t = threading.Thread(target=lambda: result.setdefault("status", main(argv)))
    t.start()
    return t, result


def test_play_on_a_store_it_cannot_use_runs_on_a_spare_one_and_says_so(tmp_path, capsys, monkeypatch):
    blocker = tmp_path / "afile"
    blocker.write_text("a file where the store's folder should be")
    apps = []
    t, result = _run_play(
        [
            "play",
            "--camera",
            "synthetic:1",
            "--reader",
            "truth",
            "--no-buttons",
            "--port",
            "0",
            "--db",
            str(blocker / "games.sqlite3"),
            "--duration",
            "2",
        ],
        apps,
        monkeypatch,
    )
    assert wait_for(lambda: len(apps) == 2 and apps[-1].seq and "store" in troubles(apps[-1]))
    line = troubles(apps[-1])["store"]
    t.join(timeout=30)
    err = capsys.readouterr().err
    assert result["status"] == 0 and line.startswith("Game store: cannot be used (cannot make the folder")
    assert "Games are not kept until it is fixed." in line and f"dicetable: {line}" in err
    spare = apps[-1].db_path.parent
    assert not spare.exists() and blocker.read_text().startswith("a file")  # the spare is gone, the file untouched


def test_play_without_buttons_says_so_on_the_screen(tmp_path, capsys, monkeypatch):
    import table.inputs
    from table.errors import DicetableError

    def busy(*args, **kwargs):
        raise DicetableError(
            "cannot open the GPIO pins (GPIOPinInUse: pin GPIO17 is already in use); on a Pi add "
            "your user to the 'gpio' group, elsewhere play with --no-buttons"
        )

    monkeypatch.setattr(table.inputs, "ButtonPanel", busy)
    apps = []
    t, result = _run_play(
        [
            "play",
            "--camera",
            "synthetic:1",
            "--reader",
            "truth",
            "--port",
            "0",
            "--db",
            str(tmp_path / "g.sqlite3"),
            "--duration",
            "1.5",
        ],
        apps,
        monkeypatch,
    )
    assert wait_for(lambda: apps and "buttons" in troubles(apps[0]))
    line = troubles(apps[0])["buttons"]
    t.join(timeout=30)
    assert result["status"] == 0 and line.startswith("Buttons: another program holds the GPIO pins")
    assert "systemctl stop dicetable" in line and f"dicetable: no GPIO buttons: {line}" in capsys.readouterr().err


def test_the_page_draws_the_troubles_on_every_screen():
    from table.display.server import STATIC

    js = (STATIC / "app.js").read_text()
    assert "renderTroubles(s.troubles || [])" in js and 'id="troubles"' in (STATIC / "index.html").read_text()


CHROMIUM = "/usr/bin/chromium"


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is absent")
def test_the_troubles_banner_in_a_real_browser(app):
    pw = pytest.importorskip("playwright.sync_api")
    from table.display.server import DisplayServer

    line = "Camera: picamera2 cannot be opened. Check the camera cable."
    app.trouble("camera", line).result(timeout=5)
    server = DisplayServer(app, port=0).start()
    try:
        with pw.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 800, "height": 480})
            page.goto(server.url)
            page.wait_for_selector("#troubles .trouble[data-part=camera]", timeout=10000)
            assert page.inner_text("#troubles") == line
            box = page.query_selector("#troubles").bounding_box()
            assert box["y"] >= 0 and box["y"] + box["height"] < 480 / 2  # at the top, leaving the screen room
            app.trouble("camera", None).result(timeout=5)
            page.wait_for_selector("#troubles", state="hidden", timeout=10000)
            browser.close()
    finally:
        server.close()


def test_gpiozero_fallback_warnings_are_shown_only_when_the_buttons_work(monkeypatch, capsys):
    """Off a Pi gpiozero warned four times (two lines each) before the one line that says why there are no
    buttons; now only that line. Where the buttons work, a fallback (a missing pin library) is still shown."""
    import warnings

    import table.inputs
    from table.commands._play_parts import _buttons
    from table.errors import DicetableError

    class App:
        def __init__(self):
            self.troubles = {}

        def trouble(self, key, line):
            self.troubles[key] = line

        def subscribe(self, fn):
            pass

    class Fallback(UserWarning):
        pass

    def failing(*a, **k):
        warnings.warn("Falling back from lgpio: No module named 'lgpio'", Fallback, stacklevel=2)
        raise DicetableError("no pin factory works here")

    class Working:
        def __init__(self, *a, **k):
            warnings.warn("Falling back from lgpio: No module named 'lgpio'", Fallback, stacklevel=2)

    monkeypatch.setattr(table.inputs, "ButtonPanel", failing)
    app = App()
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        assert _buttons(app, None) is None
    assert not shown and "buttons" in app.troubles
    assert capsys.readouterr().err.count("\n") == 1
    monkeypatch.setattr(table.inputs, "ButtonPanel", Working)
    with pytest.warns(Fallback, match="lgpio"):
        assert isinstance(_buttons(App(), None), Working)
