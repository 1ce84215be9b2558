"""Calibration: TOML writer, profile round trip and broken-profile messages, marker sheet (PNG
and PDF), the procedure on synthetic frames (markers, manual corners, a covered marker), the
check step, and a bumped camera noticed by a watcher made from the profile."""

from __future__ import annotations

import dataclasses
import re
import struct
import tomllib
import zlib

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calibration.errors import CalibrationError, ProfileError, ProfileNotFoundError
from calibration.markers import marker_sheet, write_marker_sheet
from calibration.pdf import image_pdf
from calibration.procedure import calibrate, check, make_watcher
from calibration.profile import (
    PACKAGED_PROFILES_DIR,
    PROFILE_VERSION,
    list_profiles,
    load_profile,
    profile_to_dict,
    save_profile,
    user_profiles_dir,
)
from calibration.toml_writer import dumps
from vision.sources import _world as world
from vision.sources.synthetic import CameraPose, ScriptedRoll, SyntheticSource, TruthReader
from vision.tray import MarkerLayout, detect_markers
from vision.watch import EventKind

# -- TOML writer ----------------------------------------------------------------------------
scalars = st.one_of(
    st.booleans(), st.integers(-(2**40), 2**40), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20)
)
values = st.one_of(
    scalars,
    st.lists(st.floats(-1e6, 1e6), max_size=4),
    st.lists(st.lists(st.integers(-9, 9), min_size=2, max_size=2), max_size=4),
)
keys = st.text(st.characters(codec="utf-8", categories=("L", "N")), min_size=1, max_size=8)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(keys, values, max_size=5),
    st.dictionaries(keys, st.dictionaries(keys, values, max_size=4), max_size=3),
)
def test_toml_writer_round_trips(top, tables):
    data = {**top, **{k: v for k, v in tables.items() if k not in top}}
    assert tomllib.loads(dumps(data)) == data


@pytest.mark.parametrize(
    "data, words",
    [
        ({"a": None}, "NoneType"),
        ({"a": float("nan")}, "finite numbers"),
        ({"t": {"n": {"x": 1}}}, "nested table"),
    ],
)
def test_toml_writer_refuses(data, words):
    with pytest.raises(ValueError, match=words):
        dumps(data)


# -- profiles -------------------------------------------------------------------------------
def test_default_profile_matches_the_synthetic_camera():
    p = load_profile("default")
    assert p.markers is not None and p.dice_count == 5 and p.hold_area_mm == world.HOLD_AREA_MM
    truth = SyntheticSource(seed=0, script=[ScriptedRoll(values=(1,))]).geometry()
    assert np.abs(p.geometry.corners_px - truth.corners_px).max() < 0.01


def test_profile_round_trip_with_reference(tmp_path):
    p = load_profile("default")
    ref = np.random.default_rng(0).integers(0, 255, (480, 640, 3), dtype=np.uint8)
    save_profile(
        p.__class__(**{**{f: getattr(p, f) for f in p.__slots__ if f != "folder"}, "name": "mine"}),
        tmp_path,
        reference=ref,
    )
    q = load_profile("mine", tmp_path)
    assert q.reference == "mine.empty.png"
    assert np.array_equal(q.load_reference(), ref)
    assert profile_to_dict(q)["tray"] == profile_to_dict(p)["tray"]
    assert q.watch == p.watch and q.markers == p.markers and q.camera == p.camera


def _write(tmp_path, text, name="broken"):
    (tmp_path / f"{name}.toml").write_text(text)
    return name


GOOD = (load_profile("default").folder / "default.toml").read_text()


@pytest.mark.parametrize(
    "edit, words",
    [
        (lambda t: t.replace('corners_from = "markers"', "corners_from = ["), "not valid TOML"),
        (lambda t: t.replace("version = 1", "version = 99"), "newer than this dicetable reads"),
        (lambda t: t.replace("version = 1", ""), "version is missing"),
        (lambda t: t.replace("[tray]", "[trays]"), r"the \[tray\] table is missing"),
        (lambda t: re.sub(r"corners_px = .*", "corners_px = [[1, 2], [3, 4]]", t), r"\[tray\] corners_px must be 4"),
        (
            lambda t: re.sub(r"corners_px = .*", "corners_px = [[0, 0], [0, 300], [400, 300], [400, 0]]", t),
            "do not make a tray",
        ),
        (lambda t: t.replace("px_per_mm = 2.8", "px_per_mm = 0"), r"\[tray\] px_per_mm must be a number from 0.25"),
        (lambda t: t.replace("count = 5", "count = 2.5"), r"\[dice\] count must be a whole number"),
        (lambda t: t.replace("[watch]", "[watch]\nspeed = 3"), r"\[watch\] has unknown keys speed"),
        (lambda t: t.replace("[watch]", "[watch]\nvote_frames = 1"), "vote_frames must be at least 3"),
        (lambda t: t.replace("x_mm = 160.0", "x_mm = 190.0"), "hold area"),
        (lambda t: t.replace("[reader]", '[reference]\nempty_tray = "gone.png"\n\n[reader]'), None),
    ],
)
def test_broken_profiles_say_how_to_recalibrate(tmp_path, edit, words):
    name = _write(tmp_path, edit(GOOD))
    if words is None:  # a missing reference image fails when it is loaded
        with pytest.raises(ProfileError, match="gone.png' is missing or unreadable") as err:
            load_profile(name, tmp_path).load_reference()
    else:
        with pytest.raises(ProfileError, match=words) as err:
            load_profile(name, tmp_path)
    assert "dicetable calibrate" in str(err.value) or "update dicetable" in str(err.value)
    assert isinstance(err.value, ValueError)


def test_missing_profile_lists_the_others(tmp_path):
    _write(tmp_path, GOOD, "kitchen")
    with pytest.raises(ProfileNotFoundError) as err:
        load_profile("attic", tmp_path)
    msg = str(err.value)
    assert "no calibration profile 'attic'" in msg and "--name attic" in msg and "profiles there: kitchen" in msg


def test_bad_profile_name():
    with pytest.raises(ProfileError, match="profile name 'a b' is not allowed"):
        load_profile("a b")


@pytest.mark.parametrize("name", ["../../evil", "", "sub/x", "x.toml", "a b"])
def test_save_profile_refuses_a_name_that_is_not_plain(tmp_path, name):
    p = load_profile("default", PACKAGED_PROFILES_DIR)
    with pytest.raises(ProfileError, match="is not allowed"):
        save_profile(dataclasses.replace(p, name=name), tmp_path / "profiles", reference=np.zeros((4, 4, 3), np.uint8))
    assert list(tmp_path.iterdir()) == []


def test_profiles_are_saved_per_user_and_looked_up_there_first(tmp_path, monkeypatch):
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_profiles_dir() == tmp_path / "home" / ".local" / "share" / "dicetable" / "profiles"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    mine = tmp_path / "data" / "dicetable" / "profiles"
    assert user_profiles_dir() == mine
    shipped = load_profile("default")
    assert shipped.folder == PACKAGED_PROFILES_DIR and list_profiles() == ["default"]
    path = save_profile(dataclasses.replace(shipped, min_confidence=0.3, folder=None))
    assert path == mine / "default.toml"
    assert load_profile("default").folder == mine and load_profile("default").min_confidence == 0.3
    assert load_profile("default", PACKAGED_PROFILES_DIR).min_confidence == 0.5
    save_profile(dataclasses.replace(shipped, name="attic"))
    assert list_profiles() == ["attic", "default"] and list_profiles(PACKAGED_PROFILES_DIR) == ["default"]
    with pytest.raises(ProfileNotFoundError, match="not in .* nor among the shipped profiles.*attic, default"):
        load_profile("cellar")


def test_profile_version_constant():
    assert tomllib.loads(GOOD)["version"] == PROFILE_VERSION == 1


# -- marker sheet ---------------------------------------------------------------------------
LAYOUT = MarkerLayout.at_corners(200, 150, size_mm=16)


def test_marker_sheet_has_the_four_markers_at_true_size():
    page = marker_sheet(LAYOUT, dpi=300)
    assert page.shape == (3508, 2480)
    found = detect_markers(cv2.cvtColor(page, cv2.COLOR_GRAY2BGR))
    assert sorted(found) == [0, 1, 2, 3]
    side_px = np.linalg.norm(found[0][1] - found[0][0])
    assert side_px / 300 * 25.4 == pytest.approx(16.0, abs=0.2)


def test_marker_sheet_png_records_its_dpi(tmp_path):
    path = write_marker_sheet(tmp_path / "m.png", LAYOUT, dpi=200)
    data = path.read_bytes()
    i = data.index(b"pHYs")
    ppm_x, ppm_y, unit = struct.unpack(">IIB", data[i + 4 : i + 13])
    assert unit == 1 and ppm_x == ppm_y == round(200 / 0.0254)
    assert zlib.crc32(data[i : i + 13]) & 0xFFFFFFFF == struct.unpack(">I", data[i + 13 : i + 17])[0]
    assert cv2.imread(str(path), cv2.IMREAD_GRAYSCALE).shape == marker_sheet(LAYOUT, dpi=200).shape


def test_pdf_is_well_formed_and_holds_the_page():
    img = (np.arange(60 * 40) % 251).astype(np.uint8).reshape(60, 40)
    pdf = image_pdf(img, (210.0, 297.0))
    assert pdf.startswith(b"%PDF-1.4") and pdf.rstrip().endswith(b"%%EOF")
    xref = int(pdf.rsplit(b"startxref", 1)[1].split()[0])
    assert pdf[xref : xref + 4] == b"xref"
    offsets = [int(line[:10]) for line in pdf[xref:].split(b"\n")[3:8]]
    for k, off in enumerate(offsets, start=1):
        assert pdf[off:].startswith(f"{k} 0 obj".encode())
    assert b"/MediaBox [0 0 595.276 841.890]" in pdf
    start = pdf.index(b"stream\n", pdf.index(b"/Subtype /Image")) + 7
    length = int(re.search(rb"/Length (\d+) >>\nstream", pdf[pdf.index(b"/Subtype /Image") :]).group(1))
    assert zlib.decompress(pdf[start : start + length]) == img.tobytes()


def test_marker_sheet_errors(tmp_path):
    with pytest.raises(CalibrationError, match="must end in .pdf or .png"):
        write_marker_sheet(tmp_path / "m.jpg", LAYOUT)
    with pytest.raises(CalibrationError, match="do not fit"):
        marker_sheet(MarkerLayout.at_corners(200, 150, size_mm=120))


# -- the procedure --------------------------------------------------------------------------
def _source(pose=CameraPose(), **kw):
    script = [
        ScriptedRoll(values=(1, 2, 3, 4, 5), tumble_frames=12, rest_frames=14),
        ScriptedRoll(values=(6, 6, 5, 2, 1), camera=kw.pop("bump", None), tumble_frames=12, rest_frames=14),
    ]
    return SyntheticSource(seed=kw.pop("seed", 3), script=script, idle_frames=12, camera=pose, **kw)


def test_calibrate_from_markers(tmp_path):
    src = _source(CameraPose(6, -4, 1.0))
    profile, ref = calibrate(
        src,
        name="t",
        source_spec="synthetic:3",
        width_mm=200,
        height_mm=150,
        hold_area_mm=world.HOLD_AREA_MM,
        folder=tmp_path,
    )
    truth = src.geometry(CameraPose(6, -4, 1.0))
    assert np.abs(profile.geometry.corners_px - truth.corners_px).max() < 1.5
    assert profile.corners_from == "markers" and profile.markers == world.MARKERS
    again = load_profile("t", tmp_path)
    assert again.reference == "t.empty.png" and again.load_reference().shape == (480, 640, 3)
    assert again.camera.source == "synthetic:3"


def test_calibrate_by_hand(tmp_path):
    src = _source()
    corners = src.geometry().corners_px + 0.4
    profile, _ = calibrate(
        src, name="hand", source_spec="synthetic:3", width_mm=200, height_mm=150, corners_px=corners, folder=tmp_path
    )
    assert profile.corners_from == "manual"
    np.testing.assert_allclose(profile.geometry.corners_px, corners, atol=0.01)


class Covered:
    """A source with the bottom-right marker covered by a hand."""

    def __init__(self, src):
        self.src = src
        self.describe = src.describe
        self.fps = src.fps

    def lock_controls(self):
        return {}

    def read(self):
        f = self.src.read()
        img = f.image.copy()
        img[390:480, 520:640] = 90
        return f.__class__(img, f.timestamp_s, f.index, f.truth)


def test_calibrate_with_a_covered_marker_says_which(tmp_path):
    with pytest.raises(CalibrationError, match=r"found 3 of 4 tray markers; missing bottom-right \(id 2\)"):
        calibrate(Covered(_source()), name="x", source_spec="synthetic:3", width_mm=200, height_mm=150, folder=tmp_path)
    assert not (tmp_path / "x.toml").exists()


@pytest.mark.parametrize("files", [1, 2, 3])
def test_regression_calibrate_from_too_few_frames_says_how_many_it_got_and_needs(tmp_path, files):
    """Two frames were said to be 'ended before giving a frame'; it needs 4 (3 skipped while the camera settles)."""
    from vision.sources import open_source

    frames = tmp_path / "frames"
    frames.mkdir()
    for i in range(files):
        cv2.imwrite(str(frames / f"{i}.png"), np.zeros((48, 64, 3), np.uint8))
    gave = f"gave {files} frame{'' if files == 1 else 's'}"
    with pytest.raises(
        CalibrationError,
        match=rf"{gave}, but calibrating needs at least 4: the first 3 are skipped "
        r"while the camera settles, then up to 9 of the empty tray are "
        r"combined; give at least 4 frames \(12 is best\)",
    ):
        with open_source(f"images:{frames}") as src:
            calibrate(src, name="few", source_spec="images", width_mm=200, height_mm=150, folder=tmp_path)
    assert not (tmp_path / "few.toml").exists()


def test_check_step_reads_a_roll(tmp_path):
    src = _source()
    profile, _ = calibrate(src, name="c", source_spec="synthetic:3", width_mm=200, height_mm=150, folder=tmp_path)
    src2 = _source()
    reader = TruthReader(profile.geometry)
    events = check(profile, src2, reader, on_frame=reader.see)
    assert [e.kind for e in events] == [EventKind.MOVING, EventKind.SETTLED]
    assert sorted(events[-1].values) == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("bump", [CameraPose(15, 0, 0), CameraPose(0, 0, 2.0)])
def test_bumped_camera_is_refitted_from_the_markers(tmp_path, bump):
    src = _source(bump=bump, seed=5)
    profile, _ = calibrate(
        src,
        name="b",
        source_spec="synthetic:5",
        width_mm=200,
        height_mm=150,
        hold_area_mm=world.HOLD_AREA_MM,
        folder=tmp_path,
    )
    play = _source(bump=bump, seed=5)
    reader = TruthReader(profile.geometry)
    watcher = make_watcher(profile, reader)
    events = []
    for f in play:
        reader.see(f)
        events.extend(watcher.update(f))
    kinds = [e.kind for e in events]
    assert EventKind.CAMERA_MOVED in kinds
    verdicts = [e for e in events if e.kind in (EventKind.SETTLED, EventKind.UNREADABLE)]
    assert [v.kind for v in verdicts] == [EventKind.SETTLED, EventKind.SETTLED]
    assert sorted(verdicts[1].values) == [1, 2, 5, 6, 6]
    assert np.abs(watcher.geometry.corners_px - play.geometry(bump).corners_px).max() < 1.5


def test_profile_folders_that_cannot_be_are_said_plainly(tmp_path, monkeypatch):
    """A file where the profiles folder goes, a folder given as a profile, a relative $XDG_DATA_HOME."""
    in_the_way = tmp_path / "xdgfile"
    in_the_way.write_text("not a folder")
    profile = load_profile("default", PACKAGED_PROFILES_DIR)
    with pytest.raises(ProfileError, match="cannot make the profiles folder .*give --profiles-dir a folder"):
        save_profile(profile, in_the_way / "profiles")
    with pytest.raises(ProfileError, match="is a folder; give its .toml file or a profile name"):
        load_profile(str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", "relative/dir")
    assert user_profiles_dir() == tmp_path / ".local" / "share" / "dicetable" / "profiles"
    assert in_the_way.read_text() == "not a folder"
