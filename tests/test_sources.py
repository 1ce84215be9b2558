"""Frame sources: spec strings, recorded images, OpenCV captures (real file and a failing fake
camera), the Pi camera against a fake picamera2 module, synthetic scripted rolls."""

from __future__ import annotations

import sys
import types

import cv2
import numpy as np
import pytest

from vision.errors import VisionError
from vision.sources import SourceEnded, SourceError, UnknownSourceError, open_source, parse_spec
from vision.sources.capture import BACKOFF_S, OpenCVSource
from vision.sources.synthetic import CameraPose, ScriptedRoll, SyntheticSource


# -- spec strings ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "spec, kind, arg",
    [
        ("picamera2", "picamera2", ""),
        ("opencv:0", "opencv", "0"),
        ("opencv:rtsp://cam/1", "opencv", "rtsp://cam/1"),
        ("images:rec/*.png@15", "images", "rec/*.png@15"),
        ("synthetic:7", "synthetic", "7"),
    ],
)
def test_parse_spec(spec, kind, arg):
    assert parse_spec(spec) == (kind, arg)


@pytest.mark.parametrize(
    "spec, words",
    [
        ("", "empty"),
        ("webcam:0", "unknown kind 'webcam'"),
        ("opencv:", "camera index, file or URL"),
        ("synthetic:abc", "seed 'abc'"),
        ("picamera2:x", "camera number 'x'"),
        ("images:", "folder or glob"),
    ],
)
def test_bad_specs_say_what_is_allowed(spec, words):
    with pytest.raises(UnknownSourceError) as err:
        open_source(spec)
    assert words in str(err.value)
    assert "opencv:0" in str(err.value)  # lists the allowed forms
    assert isinstance(err.value, (VisionError, ValueError))


# -- recorded images ------------------------------------------------------------------------
def _write_frames(folder, n=3):
    for i in range(n):
        img = np.full((48, 64, 3), 40 * i, np.uint8)
        cv2.imwrite(str(folder / f"f{i:03d}.png"), img)


def test_images_in_name_order_with_timestamps(tmp_path):
    _write_frames(tmp_path)
    (tmp_path / "notes.txt").write_text("not a frame")
    with open_source(f"images:{tmp_path}@10") as src:
        frames = list(src)
    assert [f.index for f in frames] == [0, 1, 2]
    assert [f.timestamp_s for f in frames] == pytest.approx([0.0, 0.1, 0.2])
    assert [int(f.image[0, 0, 0]) for f in frames] == [0, 40, 80]
    assert frames[0].image.shape == (48, 64, 3) and not frames[0].image.flags.writeable


def test_images_glob_and_end(tmp_path):
    _write_frames(tmp_path, 2)
    src = open_source(f"images:{tmp_path}/*.png")
    src.read(), src.read()
    with pytest.raises(SourceEnded, match="all 2 frames played"):
        src.read()


def test_images_errors(tmp_path):
    with pytest.raises(SourceError, match="no image files"):
        open_source(f"images:{tmp_path}")
    with pytest.raises(SourceError, match="no folder or file"):
        open_source(f"images:{tmp_path}/missing")
    (tmp_path / "a.png").write_bytes(b"not a png")
    src = open_source(f"images:{tmp_path}")
    with pytest.raises(SourceError, match="not a readable image"):
        src.read()
    with pytest.raises(UnknownSourceError, match="frame rate 'x'"):
        open_source(f"images:{tmp_path}@x")


# -- OpenCV capture -------------------------------------------------------------------------
def test_opencv_reads_a_video_file_to_its_end(tmp_path):
    path = str(tmp_path / "clip.avi")
    writer = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (64, 48))
    if not writer.isOpened():
        pytest.skip("this OpenCV build cannot write MJPG AVI files")
    for i in range(5):
        writer.write(np.full((48, 64, 3), 50 * i, np.uint8))
    writer.release()
    with open_source(f"opencv:{path}") as src:
        frames = list(src)
    assert len(frames) == 5
    assert frames[-1].timestamp_s > frames[0].timestamp_s
    assert abs(int(frames[3].image.mean()) - 150) < 6


class FakeCapture:
    """A webcam: gives `frames` good frames, then fails; `opens` says which reopen tries work."""

    def __init__(self, script):
        self.script = script
        self.opened = script["opens"].pop(0)
        self.released = False

    def isOpened(self):
        return self.opened

    def read(self):
        if self.script["frames"] > 0:
            self.script["frames"] -= 1
            return True, np.zeros((48, 64, 3), np.uint8)
        return False, None

    def set(self, *a):
        return True

    def get(self, prop):
        return 0.0

    def release(self):
        self.released = True


def _fake_camera(opens, frames):
    script = {"opens": list(opens), "frames": frames}
    caps = []

    def factory(target):
        cap = FakeCapture(script)
        if caps and cap.opened:
            script["frames"] = script.get("refill", 0)  # plugged back in
        caps.append(cap)
        return cap

    return script, caps, factory


def test_unplugged_camera_reconnects_with_backoff():
    script, caps, factory = _fake_camera([True, False, False, True], frames=2)
    waits = []
    src = OpenCVSource(0, capture_factory=factory, sleep=waits.append, clock=iter(range(100)).__next__)
    src.read(), src.read()
    script["refill"] = 1  # unplugged now; it comes back on the third try
    frame = src.read()
    assert frame.index == 2
    assert waits == list(BACKOFF_S[:3])
    assert caps[0].released


def test_camera_gone_for_good_raises_a_clear_error():
    _, _, factory = _fake_camera([True] + [False] * 10, frames=1)
    waits = []
    src = OpenCVSource(0, capture_factory=factory, sleep=waits.append)
    src.read()
    with pytest.raises(SourceError, match="did not come back after 5 tries"):
        src.read()
    assert waits == list(BACKOFF_S)


def test_camera_that_cannot_open():
    _, _, factory = _fake_camera([False], frames=0)
    with pytest.raises(SourceError, match="is the camera plugged in"):
        OpenCVSource(1, capture_factory=factory)


# -- Pi camera against a fake picamera2 -----------------------------------------------------
class FakePicamera2:
    instances: list = []

    def __init__(self, camera_num=0):
        self.camera_num = camera_num
        self.calls = []
        self.camera_controls = {"LensPosition": (0.0, 15.0, 1.0), "ExposureTime": (1, 1000000, 1)}
        self.fail_after = None
        FakePicamera2.instances.append(self)

    def create_video_configuration(self, main=None, controls=None):
        self.calls.append(("create_video_configuration", main, controls))
        return {"main": main, "controls": controls}

    def configure(self, config):
        self.calls.append(("configure", config))

    def start(self):
        self.calls.append(("start",))

    def capture_array(self, name="main"):
        self.calls.append(("capture_array", name))
        if self.fail_after is not None:
            self.fail_after -= 1
            if self.fail_after < 0:
                raise RuntimeError("Camera frontend has timed out!")
        w, h = self.calls[0][1]["size"]
        img = np.zeros((h, w, 3), np.uint8)
        img[..., 0] = 200  # blue first: RGB888 arrives as B, G, R
        return img

    def capture_metadata(self):
        self.calls.append(("capture_metadata",))
        return {"ExposureTime": 12000, "AnalogueGain": 2.5, "ColourGains": (1.8, 1.4), "LensPosition": 3.0}

    def set_controls(self, controls):
        self.calls.append(("set_controls", dict(controls)))

    def stop(self):
        self.calls.append(("stop",))

    def close(self):
        self.calls.append(("close",))


@pytest.fixture
def fake_picamera2(monkeypatch):
    FakePicamera2.instances = []
    mod = types.ModuleType("picamera2")
    mod.Picamera2 = FakePicamera2
    libcamera = types.ModuleType("libcamera")
    libcamera.controls = types.SimpleNamespace(AfModeEnum=types.SimpleNamespace(Manual="Manual", Auto="Auto"))
    monkeypatch.setitem(sys.modules, "picamera2", mod)
    monkeypatch.setitem(sys.modules, "libcamera", libcamera)
    return FakePicamera2


def test_picamera2_configures_warms_up_and_locks(fake_picamera2):
    with open_source("picamera2", size=(320, 240), fps=30, lens_position=2.0, warmup_frames=4) as src:
        frame = src.read()
        cam = fake_picamera2.instances[0]
        assert cam.calls[0] == (
            "create_video_configuration",
            {"size": (320, 240), "format": "RGB888"},
            {"FrameRate": 30.0},
        )
        sets = [c[1] for c in cam.calls if c[0] == "set_controls"]
        assert sets[0] == {"AfMode": "Manual", "LensPosition": 2.0}
        assert sets[1] == {
            "AeEnable": False,
            "AwbEnable": False,
            "ExposureTime": 12000,
            "AnalogueGain": 2.5,
            "ColourGains": (1.8, 1.4),
        }
        warm = [c for c in cam.calls[: cam.calls.index(("capture_metadata",))] if c[0] == "capture_array"]
        assert len(warm) == 4
        assert src.lock_controls() == {
            "ExposureTime": 12000,
            "AnalogueGain": 2.5,
            "ColourGains": (1.8, 1.4),
            "LensPosition": 3.0,
        }
        assert frame.image.shape == (240, 320, 3) and frame.image[0, 0, 0] == 200
    assert cam.calls[-2:] == [("stop",), ("close",)]
    assert "closed" in repr(src)


def test_picamera2_uses_profile_controls(fake_picamera2):
    src = open_source(
        "picamera2:1", controls={"ExposureTime": 8000, "AnalogueGain": 1.0, "ColourGains": (2.0, 1.5)}, warmup_frames=0
    )
    cam = fake_picamera2.instances[0]
    assert cam.camera_num == 1
    locked = [c[1] for c in cam.calls if c[0] == "set_controls"][-1]
    assert locked["ExposureTime"] == 8000 and locked["ColourGains"] == (2.0, 1.5)
    src.close()


def test_picamera2_failing_mid_stream(fake_picamera2):
    src = open_source("picamera2", warmup_frames=0)
    fake_picamera2.instances[0].fail_after = 1
    src.read()
    with pytest.raises(SourceError, match="stopped giving frames"):
        src.read()


def test_picamera2_without_focus_control(fake_picamera2, monkeypatch):
    monkeypatch.setattr(FakePicamera2, "camera_controls", {}, raising=False)
    orig = FakePicamera2.__init__

    def init(self, n=0):
        orig(self, n)
        self.camera_controls = {}

    monkeypatch.setattr(FakePicamera2, "__init__", init)
    with pytest.raises(SourceError, match="no focus control"):
        open_source("picamera2", lens_position=1.0)
    assert fake_picamera2.instances[0].calls[-2:] == [("stop",), ("close",)]


def test_picamera2_missing_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "picamera2", None)
    with pytest.raises(SourceError, match="sudo apt install python3-picamera2"):
        open_source("picamera2")


# -- synthetic rolls ------------------------------------------------------------------------
def test_synthetic_is_deterministic_and_carries_truth():
    script = [ScriptedRoll(values=(3, 1, 4, 1, 5), tumble_frames=10, rest_frames=10)]
    a = SyntheticSource(seed=5, script=script, idle_frames=2)
    b = SyntheticSource(seed=5, script=script, idle_frames=2)
    fa, fb = list(a), list(b)
    assert len(fa) == a.frame_count == a.plan[0].end_index
    assert all(np.array_equal(x.image, y.image) for x, y in zip(fa, fb))
    assert fa[3].timestamp_s == pytest.approx(0.1)
    last = fa[-1].truth
    assert sorted(d.value for d in last.dice) == [1, 1, 3, 4, 5]
    assert not last.moving and last.stop_index == a.plan[0].stop_index
    assert any(f.truth.moving for f in fa[2 : a.plan[0].stop_index + 1])
    assert not any(f.truth.moving for f in fa[a.plan[0].stop_index + 1 :])


def test_synthetic_frames_change_only_while_moving():
    src = SyntheticSource(
        seed=2, script=[ScriptedRoll(values=(6, 6), tumble_frames=8, rest_frames=8)], noise=0.0, idle_frames=2
    )
    frames = list(src)
    stop = src.plan[0].stop_index
    assert np.array_equal(frames[stop].image, frames[-1].image)
    assert not np.array_equal(frames[stop - 1].image, frames[stop].image)


def test_synthetic_bad_script():
    with pytest.raises(ValueError, match="values must be 1 to 6 face values"):
        ScriptedRoll(values=(7,))
    with pytest.raises(ValueError, match="both held and unmoved"):
        ScriptedRoll(values=(1, 2), hold=(0,), unmoved=(0,))
    with pytest.raises(ValueError, match="no rolls"):
        SyntheticSource(script=[])


def test_closed_source_refuses_to_read():
    src = open_source("synthetic:1", script=[ScriptedRoll(values=(1,), tumble_frames=6, rest_frames=8)])
    src.close()
    src.close()
    with pytest.raises(SourceError, match="is closed"):
        src.read()
    assert repr(src).endswith("(closed)>")


def test_synthetic_camera_bump_moves_the_tray():
    src = SyntheticSource(
        seed=1, script=[ScriptedRoll(values=(1, 2)), ScriptedRoll(values=(3, 4), camera=CameraPose(15, 0, 2))]
    )
    a, b = src.geometry(), src.geometry(CameraPose(15, 0, 2))
    shift = np.linalg.norm(a.corners_px - b.corners_px, axis=1)
    assert 8 < shift.min() and shift.max() < 30


@pytest.mark.parametrize("idle", [-1, 1.5, True, "3", 601])
def test_synthetic_idle_frames_out_of_range_is_a_clear_value_error(idle):
    with pytest.raises(ValueError, match=r"idle_frames must be a whole number of frames 0-600, got"):
        SyntheticSource(idle_frames=idle)


def test_synthetic_with_no_idle_frames_starts_with_the_throw():
    from vision.sources.synthetic import ScriptedRoll

    src = SyntheticSource(idle_frames=0, script=[ScriptedRoll(values=(1, 2, 3, 4, 5))])
    assert src.plan[0].start_index == 0 and src.read().truth.phase != "idle"
