"""``dicetable doctor``'s checks, each with fakes: tmp dirs, gpiozero's MockFactory, fake camera sources,
fake modules and fake ``vcgencmd``/``timedatectl`` scripts on PATH, a real tiny HTTP server for the page."""

from __future__ import annotations

import http.server
import json
import os
import socket
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from table.doctor import camera, gpio, models, page, pi, profile, store, versions
from table.doctor.check import Check, guarded
from vision.sources import SourceError
from vision.sources.base import FrameSource

PI5 = "Raspberry Pi 5 Model B Rev 1.0"
CLASH = "numpy.dtype size changed, may indicate binary incompatibility. Expected 96 from C header, got 88 from PyObject"


@pytest.fixture(autouse=True)
def own_data(tmp_path_factory, monkeypatch):
    """The user's profiles in a folder of the test's own, so that the shipped ones are what is found."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data")))


# -- the Check itself ---------------------------------------------------------------------------------------------


def test_a_check_is_one_line_and_refuses_an_unknown_status():
    c = Check("camera", "fail", "it is\nunplugged", "plug it in")
    assert c.line() == "FAIL    camera: it is unplugged -> plug it in" and c.failed
    assert c.screen_line() == "Camera: it is unplugged. Plug it in."
    assert c.to_json() == {"name": "camera", "status": "fail", "detail": "it is\nunplugged", "fix": "plug it in"}
    with pytest.raises(ValueError, match="status must be one of"):
        Check("x", "bad", "")


def test_a_check_that_breaks_is_a_fail_line_not_a_traceback():
    def broken():
        raise RuntimeError("boom\nsecond line")

    c = guarded("camera", broken)
    assert c.status == "fail" and "RuntimeError: second line" in c.detail and "tell support" in c.fix


# -- versions and the numpy clash ------------------------------------------------------------------------------------


@pytest.fixture
def system_site(tmp_path, monkeypatch):
    """Debian's dist-packages with numpy 1.24.2, as Raspberry Pi OS Bookworm has it."""
    site = tmp_path / "dist-packages"
    (site / "numpy-1.24.2.egg-info").mkdir(parents=True)
    monkeypatch.setattr(versions, "SYSTEM_SITE", site)
    return site


def fake_modules(tmp_path: Path, **modules: str) -> dict[str, str]:
    """An environment whose PYTHONPATH holds modules of the given source."""
    folder = tmp_path / "fake-modules"
    folder.mkdir(exist_ok=True)
    for name, source in modules.items():
        (folder / f"{name}.py").write_text(source)
    return dict(os.environ, PYTHONPATH=str(folder))


def test_python_and_libraries_say_their_versions(system_site):
    import cv2
    import numpy

    assert versions.check_python().detail.startswith(f"{sys.version_info.major}.{sys.version_info.minor}.")
    libs = versions.check_libraries()
    assert libs.status == "ok" and f"numpy {numpy.__version__}" in libs.detail and cv2.__version__ in libs.detail
    assert "the system's numpy 1.24.2" in libs.detail


def test_system_numpy_is_read_from_the_package_folder(tmp_path):
    assert versions.system_numpy_version(tmp_path) is None
    (tmp_path / "numpy-1.26.4.dist-info").mkdir()
    assert versions.system_numpy_version(tmp_path) == "1.26.4"
    assert versions.system_numpy_version(tmp_path / "nothere") is None


def test_the_numpy_clash_is_named_with_both_versions_and_the_fix(tmp_path, system_site):
    env = fake_modules(tmp_path, simplejpeg=f"raise ValueError({CLASH!r})\n", picamera2="import simplejpeg\n")
    c = versions.check_camera_libraries(PI5, env)
    import numpy

    assert c.status == "fail" and "simplejpeg does not import" in c.detail and "numpy.dtype size changed" in c.detail
    assert f"the venv has numpy {numpy.__version__} in front of the system's numpy 1.24.2" in c.fix
    assert "install.sh" in c.fix and "not installed" not in c.line()


def test_other_clash_texts_and_plain_errors(system_site):
    assert versions.clash_fix("ImportError: numpy.core.multiarray failed to import", "2.1.0") is not None
    assert versions.clash_fix("AttributeError: _ARRAY_API not found", "2.1.0", "1.24.2").startswith(
        "the venv has numpy 2.1.0 in front of the system's numpy 1.24.2"
    )
    assert versions.clash_fix("No module named 'picamera2'") is None


def test_picamera2_missing_is_skipped_off_a_pi_and_a_fail_on_one(tmp_path):
    env = fake_modules(
        tmp_path, simplejpeg="", picamera2="raise ModuleNotFoundError(\"No module named 'libcamera'\")\n"
    )
    off = versions.check_camera_libraries(None, env)
    assert off.status == "skipped" and off.detail.startswith("not a Pi: skipped")
    on = versions.check_camera_libraries(PI5, env)
    assert on.status == "fail" and "not installed" in on.detail and "python3-picamera2" in on.fix


def test_picamera2_that_imports_is_ok(tmp_path):
    assert versions.check_camera_libraries(PI5, fake_modules(tmp_path, simplejpeg="", picamera2="")).status == "ok"


# -- the camera ----------------------------------------------------------------------------------------------------


class FakeCamera(FrameSource):
    """A live camera: 30 fps timestamps; locks exposure when `locked` is given; fails after `fail_after` frames."""

    def __init__(self, kind: str = "picamera2", locked: dict | None = None, fail_after: int | None = None):
        super().__init__()
        self.kind = kind
        self._locked = locked or {}
        self._fail_after = fail_after

    def lock_controls(self):
        return dict(self._locked)

    def _grab(self):
        if self._fail_after is not None and self._index >= self._fail_after:
            raise SourceError("the Pi camera stopped giving frames (timeout)")
        return np.full((480, 640, 3), 90, np.uint8), self._index / 30.0, None


def opener(source=None, error=None):
    def open_(spec, **options):
        if error is not None:
            raise error
        return source

    return open_


def test_a_live_camera_gives_its_size_rate_and_locked_exposure():
    cam = FakeCamera(locked={"ExposureTime": 10000, "AnalogueGain": 1.5, "ColourGains": (1.8, 1.4)})
    look = camera.look_at_camera("picamera2", {}, opener=opener(cam))
    c = camera.check_camera(look)
    assert c.status == "ok" and look.frames == camera.RATE_FRAMES and cam.closed
    assert "of 640x480, 30.0 fps measured" in c.detail and "exposure locked (ExposureTime 10000" in c.detail


def test_a_webcam_that_cannot_lock_exposure_is_a_warning():
    c = camera.check_camera(camera.look_at_camera("opencv:0", {}, opener=opener(FakeCamera("opencv"))))
    assert c.status == "warning" and "does not lock its exposure" in c.detail


def test_the_synthetic_camera_and_recorded_frames_are_ok(tmp_path):
    import cv2

    look = camera.look_at_camera("synthetic:1")
    assert camera.check_camera(look).status == "ok" and look.size == (640, 480) and look.frame is not None
    cv2.imwrite(str(tmp_path / "a.png"), np.full((240, 320, 3), 50, np.uint8))
    c = camera.check_camera(camera.look_at_camera(f"images:{tmp_path}"))
    assert c.status == "ok" and "320x240" in c.detail


@pytest.mark.parametrize(
    "spec, error, words",
    [
        (
            "picamera2",
            SourceError(f"cannot import picamera2 ({CLASH}); the Pi camera needs picamera2"),
            "in front of the system's numpy",
        ),
        (
            "picamera2",
            SourceError("cannot import picamera2 (No module named 'picamera2'); the Pi camera needs ..."),
            "sudo apt install python3-picamera2",
        ),
        (
            "picamera2",
            SourceError("could not open the Pi camera 0 (list index out of range): check the ribbon cable"),
            "rpicam-hello --list-cameras",
        ),
    ],
)
def test_a_camera_that_cannot_open_says_why_and_what_to_do(spec, error, words, system_site):
    c = camera.check_camera(camera.look_at_camera(spec, {}, opener=opener(error=error)))
    assert c.status == "fail" and words in c.fix


def test_a_camera_held_by_the_running_table_is_a_warning():
    look = camera.look_at_camera("picamera2", {}, opener=opener(error=SourceError("could not open the Pi camera 0")))
    c = camera.check_camera(look, running="another dicetable (pid 7)")
    assert c.status == "warning" and "pid 7" in c.detail and "systemctl stop dicetable" in c.fix


def test_bad_specs_empty_folders_and_lost_cameras_are_fail_lines(tmp_path):
    bad = camera.check_camera(camera.look_at_camera("webcam:0"))
    assert bad.status == "fail" and "picamera2 (the Pi camera)" in bad.fix
    empty = camera.check_camera(camera.look_at_camera(f"images:{tmp_path}"))
    assert empty.status == "fail" and str(tmp_path) in empty.detail
    lost = camera.check_camera(camera.look_at_camera("picamera2", {}, opener=opener(FakeCamera(fail_after=2))))
    assert lost.status == "fail" and "stopped giving frames" in lost.detail and "cable" in lost.fix
    # the table reopens a lost camera by itself (table/app/camera.py): no restart to advise
    assert "restart" not in lost.fix.replace("no restart needed", "") and "by itself" in lost.fix


# -- the profile and its markers ---------------------------------------------------------------------------------------


def synthetic_frame():
    from vision.sources import open_source

    with open_source("synthetic:1") as src:
        return np.array(src.read().image)


def test_the_shipped_profile_is_ok_for_the_synthetic_camera_and_a_warning_for_a_real_one():
    assert profile.check_profile("default", None, "synthetic").status == "ok"
    real = profile.check_profile("default", None, "picamera2")
    assert real.status == "warning" and "dicetable calibrate --camera picamera2" in real.fix


def test_a_missing_profile_is_a_fail_that_says_how_to_make_one(tmp_path):
    c = profile.check_profile("kitchen", tmp_path, "picamera2")
    assert c.status == "fail" and "kitchen" in c.detail and c.fix.startswith("run 'dicetable calibrate")


def test_markers_seen_covered_missing_or_at_another_size():
    prof = profile.load("default", None)
    frame = synthetic_frame()
    assert profile.check_markers(prof, frame, "synthetic").status == "ok"
    covered = frame.copy()
    covered[:130, :150] = 60  # a hand over the top-left marker
    c = profile.check_markers(prof, covered, "synthetic")
    assert c.status == "warning" and "not seen: corner 1" in c.detail
    c = profile.check_markers(prof, np.full_like(frame, 60), "synthetic")
    assert c.status == "fail" and "none of the 4 tray markers" in c.detail
    c = profile.check_markers(prof, np.zeros((240, 320, 3), np.uint8), "picamera2")
    assert c.status == "warning" and "320x240" in c.detail
    assert profile.check_markers(prof, None, "picamera2").status == "skipped"
    assert profile.check_markers(None, frame, "picamera2").status == "skipped"


def test_markers_away_from_where_the_profile_has_them_say_the_camera_moved():
    prof = profile.load("default", None)
    frame = synthetic_frame()
    moved = np.zeros_like(frame)
    moved[:, 20:] = frame[:, :-20]  # the camera turned: everything 20 px to the right
    c = profile.check_markers(prof, moved, "synthetic")
    assert c.status == "warning" and "the camera moved 2" in c.detail and "put the camera back" in c.fix


# -- GPIO ------------------------------------------------------------------------------------------------------------


@pytest.fixture
def mock_pins():
    from gpiozero.pins.mock import MockFactory

    factory = MockFactory()
    yield factory
    factory.close()


def test_gpio_names_the_factory_and_finds_every_pin_free(mock_pins):
    c = gpio.check_gpio(None, None, pin_factory=mock_pins)
    assert c.status == "ok" and c.detail.startswith("mock pin factory") and "all 16 pins" in c.detail


def test_a_pin_in_use_is_named(mock_pins):
    from gpiozero import Button

    held = Button(17, pin_factory=mock_pins)
    try:
        c = gpio.check_gpio(None, None, pin_factory=mock_pins)
    finally:
        held.close()
    assert c.status == "fail" and "GPIO17 (roll)" in c.detail and "1 of 16" in c.detail


def test_pins_held_by_the_running_table_are_ok(mock_pins):
    from table.inputs import ButtonPanel, load_pin_map

    with ButtonPanel(load_pin_map(None), on_command=lambda c: None, pin_factory=mock_pins):
        c = gpio.check_gpio(None, PI5, pin_factory=mock_pins, running="another dicetable (pid 9)")
    assert c.status == "ok" and "in use by the running table (another dicetable (pid 9))" in c.detail


def test_a_pi_5_without_lgpio_is_a_warning(mock_pins):
    c = gpio.check_gpio(None, PI5, pin_factory=mock_pins)
    assert c.status == "warning" and "lgpio" in c.detail


def test_a_bad_pin_map_is_a_fail_naming_the_file(tmp_path, mock_pins):
    pins = tmp_path / "pins.toml"
    pins.write_text("[buttons]\nroll = 99\n")
    c = gpio.check_gpio(pins, None, pin_factory=mock_pins)
    assert c.status == "fail" and str(pins) in c.detail


def test_no_pin_library_is_skipped_off_a_pi_and_a_fail_on_one(monkeypatch):
    from gpiozero.exc import BadPinFactory

    def none():
        raise BadPinFactory("Unable to load any default pin factory!")

    monkeypatch.setattr(gpio, "default_factory", none)
    off = gpio.check_gpio(None, None)
    assert off.status == "skipped" and off.detail.startswith("not a Pi")
    on = gpio.check_gpio(None, PI5)
    assert on.status == "fail" and "python3-lgpio" in on.fix


def test_gpio_problems_for_the_tables_screen():
    from table.errors import DicetableError

    laptop = gpio.gpio_problem(
        DicetableError(
            "cannot open the GPIO pins (BadPinFactory: Unable to load any default "
            "pin factory!); on a Pi add your user to the 'gpio' group"
        ),
        None,
    )
    assert laptop.status == "fail" and "--no-buttons" in laptop.fix
    assert "'gpio' group" in gpio.gpio_problem("PermissionError: [Errno 13] Permission denied", PI5).fix
    assert "systemctl stop" in gpio.gpio_problem("lgpio.error: 'GPIO busy'", PI5).fix
    assert "missing" in gpio.gpio_problem("gpiozero is not installed; run 'pip install gpiozero'", PI5).detail


# -- the networks --------------------------------------------------------------------------------------------------


def test_the_three_networks_give_their_recorded_answers():
    for check in (models.check_face_reader, models.check_pip_finder, models.check_detector):
        c = check()
        assert c.status == "ok" and "as recorded" in c.detail, c.line()


def test_a_network_that_answers_otherwise_or_does_not_load_fails(tmp_path):
    rec = json.loads(models.DETECTOR_PROBE.read_text())
    rec["boxes"][0] = [0, 0, 20, 20]
    probe = tmp_path / "probe.json"
    probe.write_text(json.dumps(rec))
    c = models.check_detector(probe=probe)
    assert c.status == "fail" and "1 of 5 dice differ" in c.detail and "die 1" in c.detail
    c = models.check_face_reader(tmp_path / "nothere.onnx")
    assert c.status == "fail" and c.detail.startswith("does not load") and "retrain" in c.fix


# -- the store ---------------------------------------------------------------------------------------------------------


def test_no_store_yet_is_ok_and_makes_nothing(tmp_path):
    db = tmp_path / "data" / "dicetable" / "games.sqlite3"
    c = store.check_store(db)
    assert c.status == "ok" and c.detail.startswith(f"no store yet at {db}: ok") and list(tmp_path.iterdir()) == []


def test_a_store_with_games_opens_passes_its_check_and_says_its_space(tmp_path):
    from table.app.session import GameSession
    from table.game import StartGame
    from table.store import open_store, store_holder

    db = tmp_path / "games.sqlite3"
    with open_store(db) as s:
        GameSession.start(s, StartGame(at=1.0, ruleset="yacht", players=("A", "B")))
        c = store.check_store(db, store_holder(db))  # beside the running table: it holds the lock
    assert (
        c.status == "ok" and "1 game, integrity ok, writable" in c.detail and "in use by the running table" in c.detail
    )
    assert store.check_store(db).status == "ok"


def test_a_store_that_is_not_one_or_is_damaged_fails_and_is_left_alone(tmp_path):
    photo = tmp_path / "photo.jpg"
    photo.write_bytes(b"\xff\xd8\xff\xe0 not a store")
    c = store.check_store(photo)
    assert c.status == "fail" and "not a dicetable game store" in c.detail
    assert photo.read_bytes() == b"\xff\xd8\xff\xe0 not a store"
    damaged = tmp_path / "games.sqlite3"
    damaged.write_bytes(b"SQLite format 3\x00" + b"not a database" * 200)
    c = store.check_store(damaged)
    assert c.status == "fail" and "moves a damaged store aside" in c.fix and damaged.exists()


def test_an_unwritable_folder_and_a_full_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(store.os, "access", lambda path, mode: False)  # as a user without the rights (root has them)
    c = store.check_store(tmp_path / "new" / "games.sqlite3")
    assert c.status == "fail" and "cannot be made there" in c.detail and "chown" in c.fix
    monkeypatch.undo()
    monkeypatch.setattr(store, "_free_mb", lambda folder: 50.0)
    c = store.check_store(tmp_path / "games.sqlite3")
    assert c.status == "warning" and "only 50 MB free" in c.detail


def test_store_problems_for_the_tables_screen(tmp_path):
    assert "chown" in store.store_problem(tmp_path / "g.sqlite3", "attempt to write a readonly database").fix
    assert "free some space" in store.store_problem(tmp_path / "g.sqlite3", "database or disk is full").fix.lower()


# -- the Pi's tools ----------------------------------------------------------------------------------------------------


def fake_tool(folder: Path, name: str, script: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)


@pytest.fixture
def tools(tmp_path, monkeypatch):
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    return folder


@pytest.mark.parametrize(
    "bits, status, words",
    [
        ("0x0", "ok", "no under-voltage"),
        ("0x50000", "warning", "under-voltage, throttled since boot"),
        ("0x50005", "fail", "under-voltage, throttled now"),
    ],
)
def test_throttling_now_and_since_boot(tools, bits, status, words):
    fake_tool(tools, "vcgencmd", f'echo "throttled={bits}"\n')
    c = pi.check_power()
    assert c.status == status and words in c.detail


def test_temperature_and_a_vcgencmd_that_cannot_answer(tools):
    fake_tool(tools, "vcgencmd", 'echo "temp=83.2\'C"\n')
    c = pi.check_temperature()
    assert c.status == "warning" and "83.2 C" in c.detail
    fake_tool(tools, "vcgencmd", 'echo "temp=48.3\'C"\n')
    assert pi.check_temperature().status == "ok"
    fake_tool(tools, "vcgencmd", "echo 'VCHI initialization failed' >&2; exit 255\n")
    c = pi.check_power()
    assert c.status == "warning" and "VCHI initialization failed" in c.detail and "video" in c.fix


def test_the_clock(tools):
    fake_tool(tools, "timedatectl", "echo NTPSynchronized=yes\n")
    assert pi.check_clock().status == "ok"
    fake_tool(tools, "timedatectl", "echo NTPSynchronized=no\n")
    assert pi.check_clock().status == "warning"
    fake_tool(tools, "timedatectl", "echo 'System has not been booted with systemd' >&2; exit 1\n")
    assert pi.check_clock().status == "skipped"


def test_missing_tools_are_not_a_pi_skipped(tools):
    for check in (pi.check_power, pi.check_temperature, pi.check_clock):
        c = check()
        assert c.status == "skipped" and c.detail.startswith("not a Pi: skipped")


# -- the page and the kiosk --------------------------------------------------------------------------------------------


class _Health(http.server.BaseHTTPRequestHandler):
    status = 200

    def do_GET(self):  # noqa: N802 - http.server's name
        body = json.dumps({"ok": True, "seq": 3, "screen": "setup"}).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def health_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/health", _Health
    server.shutdown()
    server.server_close()
    _Health.status = 200


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_page_answers_or_says_how_to_start_the_table(health_server):
    url, handler = health_server
    c = page.check_page(url)
    assert c.status == "ok" and "the setup screen" in c.detail
    handler.status = 500
    assert page.check_page(url).status == "fail"
    c = page.check_page(f"http://127.0.0.1:{free_port()}/health")
    assert c.status == "fail" and "nothing answers" in c.detail and "journalctl -u dicetable" in c.fix
    assert page.check_page("not a url").status == "fail"


@pytest.mark.parametrize(
    "rel, text, board, status",
    [
        (".config/labwc/autostart", "/home/pi/dicetable/firmware_config/kiosk.sh &\n", PI5, "ok"),
        (".config/wayfire.ini", "[autostart]\nkiosk = /home/pi/dicetable/firmware_config/kiosk.sh\n", PI5, "ok"),
        (".config/labwc/autostart", "# /home/pi/dicetable/firmware_config/kiosk.sh &\n", PI5, "fail"),
        (None, None, PI5, "fail"),
        (None, None, None, "skipped"),
    ],
)
def test_the_kiosk_autostart_line(tmp_path, rel, text, board, status):
    if rel:
        (tmp_path / rel).parent.mkdir(parents=True)
        (tmp_path / rel).write_text(text)
    c = page.check_kiosk(tmp_path, board)
    assert c.status == status, c.line()
    if status == "ok":
        assert ("labwc" if "labwc" in rel else "wayfire") in c.detail
