"""``dicetable calibrate`` and ``dicetable watch`` end to end on the synthetic camera, the MJPEG
live view on 127.0.0.1, and bad input (one line, exit status 2)."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request

import cv2
import numpy as np
import pytest

from table.cli import main
from vision.liveview import MjpegServer, annotate
from vision.sources.synthetic import SyntheticSource, TruthReader
from vision.watch import RollWatcher


def synthetic_watch(profiles, *extra: str, camera: str = "synthetic:0") -> int:
    """``dicetable watch`` of `camera` on the profile "syn" with the truth reader, `extra` options after."""
    return main(
        ["watch", "--camera", camera, "--profile", "syn", "--profiles-dir", str(profiles), "--reader", "truth", *extra]
    )


def truth_check(camera: str, profile: str, folder, *extra: str) -> int:
    """``dicetable calibrate --check`` of `camera` on `profile` in `folder` with the truth reader, `extra` after."""
    return main(
        ["calibrate", "--check", "--camera", camera, "--profile", profile, "--profiles-dir", str(folder)]
        + ["--reader", "truth", *extra]
    )


@pytest.fixture(scope="module")
def profiles(tmp_path_factory):
    folder = tmp_path_factory.mktemp("profiles")
    assert (
        main(
            [
                "calibrate",
                "--camera",
                "synthetic:0",
                "--name",
                "syn",
                "--hold",
                "160,0,40,150",
                "--profiles-dir",
                str(folder),
            ]
        )
        == 0
    )
    return folder


def test_calibrate_markers_sheet(tmp_path, capsys):
    assert main(["calibrate", "--markers", str(tmp_path / "sheet.pdf"), "--marker-mm", "20"]) == 0
    out = capsys.readouterr().out
    assert "20 mm each" in out and "id 2: bottom-right corner" in out
    assert (tmp_path / "sheet.pdf").read_bytes().startswith(b"%PDF")


def test_calibrate_json(tmp_path, capsys):
    assert main(["calibrate", "--camera", "synthetic:1", "--name", "j", "--profiles-dir", str(tmp_path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["corners_from"] == "markers" and info["rectified_px"] == [560, 420]
    assert (tmp_path / "j.toml").is_file() and (tmp_path / "j.empty.png").is_file()


def test_watch_prints_json_events(profiles, capsys):
    assert synthetic_watch(profiles, "--view", "none", "--json", "--frames", "150") == 0
    captured = capsys.readouterr()
    events = [json.loads(line) for line in captured.out.splitlines()]
    plan = SyntheticSource(seed=0).plan
    settled = [e for e in events if e["event"] == "settled"]
    assert [e["event"] for e in events][:2] == ["moving", "settled"]
    assert sorted(settled[0]["values"]) == sorted(plan[0].values)
    assert sorted(settled[1]["values"]) == sorted(plan[1].values)
    assert sum(settled[1]["held"]) == 2
    assert all(e["frame"] < 150 for e in events)
    assert "watched 150 frames" in captured.err


def test_watch_human_output_and_audit(profiles, tmp_path, capsys):
    view = tmp_path / "view.png"
    assert (
        synthetic_watch(
            profiles, "--view", "none", "--frames", "60", "--save-view", str(view), "--audit", str(tmp_path / "audit")
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "settled:" in out
    shown = cv2.imread(str(view))
    assert shown.shape == (480, 640, 3)
    kept = sorted(p.name for p in (tmp_path / "audit").iterdir())
    assert len(kept) == 2 and kept[0].endswith(".json") and kept[1].endswith(".png")
    assert cv2.imread(str(tmp_path / "audit" / kept[1])).shape == (420, 560, 3)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_watch_serves_mjpeg(profiles, capsys):
    port = _free_port()
    assert synthetic_watch(profiles, "--view", "mjpeg", "--port", str(port), "--frames", "5") == 0
    assert f"live view: http://127.0.0.1:{port}/" in capsys.readouterr().err
    with pytest.raises(urllib.error.URLError):  # closed when the watch ends
        urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2)


def test_regression_watch_on_a_port_in_use_says_so_as_play_does(profiles, capsys):
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    port = busy.getsockname()[1]
    try:
        status = synthetic_watch(profiles, "--view", "mjpeg", "--port", str(port), "--frames", "5")
    finally:
        busy.close()
    err = capsys.readouterr().err.strip()
    assert status == 2 and len(err.splitlines()) == 1
    assert err.startswith(f"dicetable watch: error: cannot listen on 127.0.0.1:{port} (")
    assert err.endswith("the port is in use; give another --port, or stop the program using it")


def test_mjpeg_server_on_localhost():
    img = np.zeros((48, 64, 3), np.uint8)
    img[:, 32:] = 255
    with MjpegServer(port=0, max_clients=1) as server:
        assert server.url.startswith("http://127.0.0.1:")
        server.publish(img)
        with urllib.request.urlopen(server.url + "frame.jpg", timeout=5) as r:
            got = cv2.imdecode(np.frombuffer(r.read(), np.uint8), cv2.IMREAD_COLOR)
        assert got.shape == (48, 64, 3) and got[:, 40:].mean() > 200 and got[:, :24].mean() < 50
        with urllib.request.urlopen(server.url, timeout=5) as r:
            assert b"/stream" in r.read()
        stream = urllib.request.urlopen(server.url + "stream", timeout=5)
        assert stream.headers["Content-Type"].startswith("multipart/x-mixed-replace")
        assert stream.readline().strip() == b"--frame"
        with pytest.raises(urllib.error.HTTPError) as err:  # one viewer at most here
            urllib.request.urlopen(server.url + "stream", timeout=5)
        assert err.value.code == 503
        stream.close()
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(server.url + "nope", timeout=5)
        assert err.value.code == 404


def test_annotate_draws_the_reading():
    src = SyntheticSource(seed=2)
    reader = TruthReader(src.geometry())
    watcher = RollWatcher(reader, geometry=src.geometry())
    frame = None
    for frame in src:
        reader.see(frame)
        if any(e.kind.value == "settled" for e in watcher.update(frame)):
            break
    shown = annotate(frame.image, watcher, fps=30.0)
    assert shown.shape == frame.image.shape and not np.array_equal(shown, frame.image)
    green = (shown[..., 1] > 200) & (shown[..., 0] < 60) & (shown[..., 2] < 60)
    assert green.sum() > 200  # die boxes drawn in green
    assert np.array_equal(frame.image, src.render_state(frame.index))  # input untouched


@pytest.mark.parametrize(
    "argv, words",
    [
        (["watch", "--camera", "synthetic:0", "--frames", "0"], "--frames must be at least 1"),
        (["watch", "--camera", "synthetic:0", "--profile", "nosuch"], "no calibration profile 'nosuch'"),
        (["watch", "--camera", "webcam", "--view", "none"], "bad camera source 'webcam'"),
        (["watch", "--camera", "images:/nonexistent/dir", "--reader", "truth", "--view", "none"], "no folder or file"),
        (["watch", "--camera", "synthetic:0", "--view", "window"], "needs a display"),
        (["calibrate"], "give --markers FILE"),
        (["calibrate", "--camera", "synthetic:0", "--name", "bad name"], "profile name 'bad name' is not allowed"),
        (["calibrate", "--camera", "synthetic:0", "--corners", "1,2 3,4"], "--corners needs 4 points"),
    ],
)
def test_bad_input_is_one_line_exit_2(argv, words, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err and err.startswith(f"dicetable {argv[0]}: error:")


def test_truth_reader_needs_the_synthetic_camera(tmp_path, profiles, capsys):
    frame = np.zeros((480, 640, 3), np.uint8)
    cv2.imwrite(str(tmp_path / "a.png"), frame)
    assert synthetic_watch(profiles, "--view", "none", camera=f"images:{tmp_path}") == 2
    assert "--reader truth works only with --camera synthetic" in capsys.readouterr().err


def test_calibrate_check(profiles, capsys):
    assert truth_check("synthetic:0", "syn", profiles, "--min-confidence", "0.6", "--json") == 0
    info = json.loads(capsys.readouterr().out)
    assert info["events"][-1]["event"] == "settled" and info["min_confidence"] == 0.6


def test_bench_command_json(capsys):
    status = main(["bench", "--reader", "truth", "--seeds", "1", "--sizes", "640x480", "--json"])
    s = json.loads(capsys.readouterr().out)
    assert status == 0
    assert s["rolls"] == 6 and s["wrong"] == 0 and s["missed"] == 0 and s["verdicts_while_moving"] == 0
    assert s["leaning_rolls_reported_unreadable"] == 1 and s["right"] == 5
    assert 0 < s["settle_latency_frames_max"] <= 10
    assert s["read_frames"] >= 18 and s["per_frame_ms_median"] > 0


def test_bench_bad_sizes(capsys):
    assert main(["bench", "--sizes", "big"]) == 2
    assert "--sizes must be like 640x480" in capsys.readouterr().err


def test_calibrate_check_save_keeps_the_threshold(tmp_path, capsys):
    assert main(["calibrate", "--camera", "synthetic:2", "--name", "s", "--profiles-dir", str(tmp_path)]) == 0
    assert truth_check("synthetic:2", "s", tmp_path, "--min-confidence", "0.7", "--save") == 0
    assert "saved min_confidence = 0.7" in capsys.readouterr().err
    from calibration.profile import load_profile

    again = load_profile("s", tmp_path)
    assert again.min_confidence == 0.7 and again.reference == "s.empty.png"


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A user data folder in tmp_path (never the real home); the shipped profiles' bytes, to check they stay."""
    from calibration.profile import PACKAGED_PROFILES_DIR

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    shipped = {p.name: p.read_bytes() for p in PACKAGED_PROFILES_DIR.iterdir() if p.is_file()}
    yield tmp_path / "data" / "dicetable" / "profiles"
    assert {p.name: p.read_bytes() for p in PACKAGED_PROFILES_DIR.iterdir() if p.is_file()} == shipped


@pytest.mark.parametrize("name", ["../../evil", "", "sub/evil", "evil.toml", "-x", ".hidden", "a" * 65])
def test_regression_calibrate_refuses_a_name_that_is_not_plain(name, home, tmp_path, monkeypatch, capsys):
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    assert main(["calibrate", "--camera", "synthetic", f"--name={name}"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"profile name {name!r} is not allowed" in err
    assert "letters, digits, '_' or '-'" in err
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []  # nothing written, anywhere


def test_regression_calibrate_saves_in_the_user_folder_not_the_package(home, capsys):
    from calibration.profile import PACKAGED_PROFILES_DIR, load_profile

    assert load_profile("default").folder == PACKAGED_PROFILES_DIR  # none of the user's yet
    assert main(["calibrate", "--camera", "synthetic:3", "--name", "default"]) == 0
    out = capsys.readouterr().out
    assert f"saved {home / 'default.toml'} " in out
    assert sorted(p.name for p in home.iterdir()) == ["default.empty.png", "default.toml"]
    mine = load_profile("default")  # the user's comes first; the shipped one is left as it was (fixture)
    assert mine.folder == home and mine.camera.source == "synthetic:3"
    assert mine.load_reference().shape == (480, 640, 3)
    assert load_profile("default", PACKAGED_PROFILES_DIR).camera.source == "picamera2"


def test_calibrate_check_save_of_the_shipped_profile_goes_to_the_user_folder(home, capsys):
    from calibration.profile import load_profile

    assert (
        main(
            [
                "calibrate",
                "--check",
                "--camera",
                "synthetic:2",
                "--profile",
                "default",
                "--reader",
                "truth",
                "--min-confidence",
                "0.7",
                "--save",
            ]
        )
        == 0
    )
    assert f"saved min_confidence = 0.7 into profile 'default' ({home / 'default.toml'})" in capsys.readouterr().err
    assert load_profile("default").folder == home and load_profile("default").min_confidence == 0.7


def test_regression_calibrate_without_check_refuses_check_options_and_writes_nothing(home, capsys):
    home.mkdir(parents=True)
    mine = home / "default.toml"
    mine.write_text("# hand-edited\n")
    assert main(["calibrate", "--camera", "synthetic", "--profile", "t1", "--save"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "dicetable calibrate: error: --profile, --save only work with --check, and nothing was done: "
        "to check a profile add --check; to make one from the empty tray, name it with --name: "
        "dicetable calibrate --camera synthetic --name t1"
    )
    assert [p.name for p in home.iterdir()] == ["default.toml"] and mine.read_text() == "# hand-edited\n"


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--min-confidence", "0.7"], "--min-confidence only works with --check, and nothing was done"),
        (["--max-frames", "10"], "--max-frames only works with --check"),
        (["--reader", "truth"], "--reader only works with --check"),
        (
            ["--check", "--name", "t1"],
            "--name is for making a profile, not for --check, which checks the profile "
            "named by --profile; drop --name or --check",
        ),
        (["--check", "--hold", "1,2,3,4", "--corners", "1,2 3,4 5,6 7,8"], "--corners, --hold are for making"),
        (["--check", "--tray-mm", "200x150"], "--tray-mm is for making a profile"),  # even at its default
        (
            ["--check", "--dice", "6", "--die-mm", "19", "--px-per-mm", "3", "--marker-mm", "20"],
            "--px-per-mm, --die-mm, --dice, --marker-mm are for making a profile",
        ),
        (["--check", "--markers", "sheet.pdf"], "--markers writes the marker sheet and stops, and nothing was checked"),
        (["--dpi", "600"], "--dpi is the marker sheet's resolution and only works with --markers FILE"),
    ],
)
def test_regression_calibrate_refuses_options_of_the_other_step(home, argv, words, capsys):
    assert main(["calibrate", "--camera", "synthetic:2", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err
    assert not home.exists()


def test_regression_calibrate_again_says_it_replaced_the_profile_and_keeps_the_old(home, capsys):
    assert main(["calibrate", "--camera", "synthetic:3", "--name", "t1"]) == 0
    assert "replaced" not in capsys.readouterr().out
    old = (home / "t1.toml").read_text() + "# hand-edited\n"
    (home / "t1.toml").write_text(old)
    assert main(["calibrate", "--camera", "synthetic:3", "--name", "t1"]) == 0
    out = capsys.readouterr().out
    assert (
        f"replaced the profile 't1' that was there; the old one is kept as {home / 't1.toml.bak'} "
        f"and its empty-tray image as {home / 't1.empty.png.bak'} (to go back, rename them to t1.toml "
        "and t1.empty.png)"
    ) in out
    assert (home / "t1.toml.bak").read_text() == old and "# hand-edited" not in (home / "t1.toml").read_text()
    assert sorted(p.name for p in home.iterdir()) == ["t1.empty.png", "t1.empty.png.bak", "t1.toml", "t1.toml.bak"]
    assert main(["calibrate", "--camera", "synthetic:3", "--name", "t1", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["replaced"] is True and info["backup"] == str(home / "t1.toml.bak")
    assert info["backup_empty_tray"] == str(home / "t1.empty.png.bak")


def test_regression_calibrate_again_keeps_the_old_empty_tray_image(home, capsys):
    """Only the old TOML was kept: going back to it gave the old tray corners with the new empty-tray image."""
    import cv2

    assert main(["calibrate", "--camera", "synthetic:3", "--name", "t1"]) == 0
    first = cv2.imread(str(home / "t1.empty.png"))
    first[:20, :20] = (0, 0, 255)  # mark the first empty-tray image
    cv2.imwrite(str(home / "t1.empty.png"), first)
    assert main(["calibrate", "--camera", "synthetic:3", "--name", "t1"]) == 0
    kept = cv2.imread(str(home / "t1.empty.png.bak"))
    assert kept is not None and (kept == first).all()
    assert not (cv2.imread(str(home / "t1.empty.png")) == first).all()
    (home / "t1.toml.bak").replace(home / "t1.toml")  # go back, as the message says
    (home / "t1.empty.png.bak").replace(home / "t1.empty.png")
    from calibration.profile import load_profile

    assert (load_profile("t1", home).load_reference() == first).all()
