"""``dicetable doctor`` end to end.

Every check runs, with and without a camera, a store and a profile; never a traceback.
"""

from __future__ import annotations

import json
import socket

import pytest

from table.cli import main
from table.doctor import models
from table.doctor.run import Options, run_checks, summary

NAMES = [
    "python",
    "libraries",
    "picamera2",
    "camera",
    "profile",
    "markers",
    "gpio",
    "face reader",
    "pip finder",
    "die detector",
    "store",
    "power",
    "temperature",
    "clock",
    "page",
    "kiosk",
]


def closed_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/health"


@pytest.fixture(autouse=True)
def own_data(tmp_path_factory, monkeypatch):
    """The user's profiles and store in a folder of the test's own (never the real home)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data")))
    monkeypatch.delenv("DICETABLE_DB", raising=False)


@pytest.fixture
def mock_pins():
    from gpiozero.pins.mock import MockFactory

    factory = MockFactory()
    yield factory
    factory.close()


def test_every_check_runs_in_order_with_the_synthetic_camera(tmp_path, mock_pins):
    checks = run_checks(
        Options(camera="synthetic", db=tmp_path / "g.sqlite3", url=closed_url(), home=tmp_path),
        board=None,
        pin_factory=mock_pins,
    )
    by = {c.name: c for c in checks}
    assert [c.name for c in checks] == NAMES
    for name in ("camera", "profile", "markers", "gpio", "face reader", "pip finder", "die detector", "store"):
        assert by[name].status == "ok", by[name].line()
    assert by["page"].status == "fail" and by["kiosk"].status == "skipped"
    assert summary(checks)["fail"] == 1 and list(tmp_path.iterdir()) == []  # nothing made


def test_without_a_camera_or_a_profile(tmp_path, mock_pins):
    checks = {
        c.name: c
        for c in run_checks(
            Options(
                camera="none",
                profile="kitchen",
                profiles_dir=tmp_path,
                db=tmp_path / "g.sqlite3",
                url=closed_url(),
                home=tmp_path,
            ),
            board=None,
            pin_factory=mock_pins,
        )
    }
    assert checks["camera"].status == "skipped" and checks["markers"].status == "skipped"
    assert checks["profile"].status == "fail" and "dicetable calibrate" in checks["profile"].fix


def test_the_default_camera_is_the_profiles(tmp_path, mock_pins):
    seen = []

    def opener(spec, **options):
        seen.append((spec, options.get("size")))
        from vision.sources import SourceError

        raise SourceError("cannot import picamera2 (No module named 'picamera2'); the Pi camera needs picamera2")

    checks = {
        c.name: c
        for c in run_checks(
            Options(db=tmp_path / "g.sqlite3", url=closed_url(), home=tmp_path),
            board=None,
            pin_factory=mock_pins,
            opener=opener,
        )
    }
    assert seen == [("picamera2", (640, 480))]
    assert checks["camera"].status == "fail" and "python3-picamera2" in checks["camera"].fix


def test_cli_prints_a_line_each_and_exits_1_on_a_fail(tmp_path, capsys):
    status = main(
        [
            "doctor",
            "--camera",
            "synthetic",
            "--db",
            str(tmp_path / "g.sqlite3"),
            "--url",
            closed_url(),
            "--home",
            str(tmp_path),
        ]
    )
    out, err = capsys.readouterr()
    lines = out.strip().splitlines()
    assert status == 1 and len(lines) == len(NAMES) + 1 and "Traceback" not in out + err
    assert lines[-1].startswith(f"dicetable doctor: {len(NAMES)} checks:") and " failed," in lines[-1]
    assert any(line.startswith("FAIL    page: nothing answers") for line in lines)
    assert any(line.startswith("OK      camera: synthetic") for line in lines)


def test_cli_json_for_scripts(tmp_path, capsys):
    status = main(
        [
            "doctor",
            "--camera",
            "none",
            "--db",
            str(tmp_path / "g.sqlite3"),
            "--url",
            closed_url(),
            "--home",
            str(tmp_path),
            "--json",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert status == 1 and data["ok"] is False and [c["name"] for c in data["checks"]] == NAMES
    assert set(data["checks"][0]) == {"name", "status", "detail", "fix"}
    assert sum(data["counts"].values()) == len(NAMES)


def test_cli_with_no_camera_store_or_profile_never_gives_a_traceback(tmp_path, capsys):
    bad_db = tmp_path / "photo.jpg"
    bad_db.write_bytes(b"\xff\xd8 not a store")
    status = main(
        [
            "doctor",
            "--camera",
            "picamera2",
            "--profile",
            "nope",
            "--profiles-dir",
            str(tmp_path),
            "--db",
            str(bad_db),
            "--pins",
            str(tmp_path / "nothere.toml"),
            "--url",
            "http://[::1",
            "--home",
            str(tmp_path),
        ]
    )
    out, err = capsys.readouterr()
    assert status == 1 and "Traceback" not in out + err
    assert len(out.strip().splitlines()) == len(NAMES) + 1


def test_a_check_that_breaks_is_one_fail_line_and_the_rest_still_run(tmp_path, mock_pins, monkeypatch):
    def boom():
        raise RuntimeError("boom")

    monkeypatch.setattr(models, "check_face_reader", boom)
    checks = {
        c.name: c
        for c in run_checks(
            Options(camera="none", db=tmp_path / "g.sqlite3", url=closed_url(), home=tmp_path),
            board=None,
            pin_factory=mock_pins,
        )
    }
    assert checks["face reader"].status == "fail" and "RuntimeError: boom" in checks["face reader"].detail
    assert checks["pip finder"].status == "ok" and len(checks) == len(NAMES)


def test_regression_a_bad_camera_name_is_refused_in_one_line_first(tmp_path, capsys):
    """`doctor --camera nonsense` ran every check and advised 'dicetable calibrate --camera nonsense'."""
    status = main(["doctor", "--camera", "nonsense", "--db", str(tmp_path / "g.sqlite3")])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "nonsense" in err and "unknown kind" in err
    assert "calibrate" not in err
