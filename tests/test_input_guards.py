"""Input guards (issue 35, item 8): bad input gives one line that says what to do, never a traceback.

Player names, photo sizes read from the header, files that are not regular files, JSON nested too
deep, numbers out of range, exports written whole or not at all, and the empty-tray check of calibrate.
"""

from __future__ import annotations

import json
import time

import pytest

from table.app.seats import check_setup
from table.errors import UsageError

# -- player names -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, said",
    [
        ("Ann\x00", "control character, U+0000"),
        ("Bo\tCy", "control character, U+0009"),
        ("\u202eevil", "reverses the text around it, U+202E"),
        ("x\u2066y", "reverses the text around it, U+2066"),
        ("\ud800", "lone surrogate"),
        ("a\u2028b", "line break"),
        ("x" * 41, "1-40 characters"),
    ],
)
def test_player_names_with_controls_bidi_or_lone_surrogates_are_refused_with_a_message(name, said):
    with pytest.raises(UsageError, match="cannot be used") as refused:
        check_setup("yacht", "forced", ["Ann" if name != "Ann\x00" else "Bo", name])
    assert said in str(refused.value) and "\n" not in str(refused.value)
    str(refused.value).encode("utf-8")  # the message itself can be shown and sent


@pytest.mark.parametrize("name", ["Zoë", "José María", "李雷", "👨\u200d👩\u200d👧 family", "O'Brien-2"])
def test_player_names_people_type_are_taken(name):
    check_setup("yacht", "forced", [name])


def test_a_page_naming_a_player_with_a_lone_surrogate_is_told_and_the_state_still_answers(tmp_path):
    """A lone surrogate typed on the page became a name, and /api/state answered 500 from then on."""
    pytest.importorskip("fastapi", reason="fastapi is not installed: pip install .")
    pytest.importorskip("httpx", reason="httpx is not installed: pip install '.[test]'")
    from starlette.testclient import TestClient

    from table.app import TableApp
    from table.display.server import create_app
    from table.display.snapshot import Setup

    with TableApp(tmp_path / "g.sqlite3", setup=Setup("yacht", "forced", ["Ann", "Bo"])).start() as app:
        client = TestClient(create_app(app, host_names={"testserver"}), client=("127.0.0.1", 50000))
        with client.websocket_connect("/ws") as ws:
            ws.receive_text()
            ws.send_text('{"type": "setup", "names": ["Ann", "\\ud800"], "seen": ' + str(app.seq) + "}")
            for _ in range(100):  # the page's message is applied on the worker
                if app.snapshot.get("message") or app.setup.names != ["Ann", "Bo"]:
                    break
                time.sleep(0.05)
        assert app.setup.names == ["Ann", "Bo"]
        state = client.get("/api/state")
        assert state.status_code == 200 and "lone surrogate" in state.json()["message"]


# -- photos: size from the header, files that are not regular files --------------------------------------


def _png_claiming(width: int, height: int) -> bytes:
    """A small PNG whose header (IHDR, with a right CRC) claims `width` x `height` px."""
    import struct
    import zlib

    import cv2
    import numpy as np

    data = bytearray(cv2.imencode(".png", np.zeros((10, 10, 3), np.uint8))[1].tobytes())
    ihdr = bytearray(data[12:29])
    ihdr[4:12] = struct.pack(">II", width, height)
    data[12:29] = ihdr
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(ihdr)))
    return bytes(data)


@pytest.mark.parametrize("side", [60_000, 20_000])
def test_a_photo_whose_header_claims_too_many_pixels_is_refused_before_decoding(tmp_path, monkeypatch, side):
    """A PNG claiming 60000x60000 px crashed read and eval (cv2.error); 20000x20000 took 3.7 GB to decode."""
    import cv2

    from vision.errors import ImageLoadError
    from vision.images import load_image

    path = tmp_path / "huge.png"
    path.write_bytes(_png_claiming(side, side))
    decoded = []
    real = cv2.imdecode
    monkeypatch.setattr(cv2, "imdecode", lambda *a: decoded.append(1) or real(*a))
    with pytest.raises(ImageLoadError, match=rf"is {side}x{side} px .* give the photo resized") as refused:
        load_image(path)
    assert decoded == [] and "\n" not in str(refused.value)


@pytest.mark.parametrize("ext", [".png", ".jpg", ".bmp", ".webp", ".tif", ".ppm"])
def test_header_sizes_of_every_format_match_the_decoded_photo(ext):
    import cv2
    import numpy as np

    from vision.images import header_size

    image = np.zeros((37, 53, 3), np.uint8)
    data = cv2.imencode(ext, image)[1]
    assert header_size(data.tobytes()) == (53, 37) == header_size(memoryview(data))
    assert header_size(b"") is None and header_size(data.tobytes()[:6]) is None


def _real_photo(folder):
    import shutil
    from pathlib import Path

    import cv2
    import numpy as np

    photo = folder / "b_real.png"
    dev = Path(__file__).resolve().parents[1] / ".." / "shared" / "dice-images" / "dev" / "jim_input_dice1.jpg"
    if dev.is_file():
        shutil.copy(dev, folder / "b_real.jpg")
        return folder / "b_real.jpg"
    cv2.imwrite(str(photo), np.full((120, 160, 3), 90, np.uint8))
    return photo


def test_read_of_a_folder_with_a_huge_photo_and_a_named_pipe_reads_the_others(tmp_path, capsys):
    """The huge photo crashed 'read' with a traceback, losing the other readings; a named pipe hung it."""
    import os

    from table.cli import main

    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "a_huge.png").write_bytes(_png_claiming(60_000, 60_000))
    real = _real_photo(folder)
    pipe = tmp_path / "pipe.jpg"
    os.mkfifo(pipe)
    status = main(["read", str(folder), str(pipe)])
    out, err = capsys.readouterr()
    assert status == 2 and real.name in out
    assert "60000x60000 px" in err and "not a regular file" in err and "Traceback" not in err


def test_eval_of_a_dataset_with_a_huge_photo_says_which_in_one_line(tmp_path, capsys):
    from table.cli import main

    (tmp_path / "huge.png").write_bytes(_png_claiming(60_000, 60_000))
    (tmp_path / "labels.json").write_text(json.dumps({"images": [{"file": "huge.png", "dice": []}]}))
    status = main(["eval", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 2 and "images[0]" in err and "60000x60000 px" in err and len(err.strip().splitlines()) == 1


# -- JSON nested too deeply, numbers out of range -------------------------------------------------------

DEEP = "[" * 5_000 + "]" * 5_000


@pytest.mark.parametrize(
    "argv",
    [
        ["options", "--rules", "yacht", "--dice", "11111", "--card", DEEP],
        ["advise", "--rules", "yacht", "--dice", "11111", "--card", '{"a":' * 5_000 + "1" + "}" * 5_000],
        ["replay", "GAME"],
        ["eval", "DATASET"],
    ],
)
def test_json_nested_thousands_deep_is_refused_in_one_line(tmp_path, capsys, argv):
    """Nested JSON 100,000 deep crashed replay, options --card, advise --card and eval's labels (RecursionError)."""
    from table.cli import main

    game = tmp_path / "game.json"
    game.write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "labels.json").write_text('{"images": ' + "[" * 100_000 + "]" * 100_000 + "}")
    argv = [str(game) if a == "GAME" else str(tmp_path) if a == "DATASET" else a for a in argv]
    status = main(argv)
    err = capsys.readouterr().err
    assert status == 2 and "nested too deeply" in err and len(err.strip().splitlines()) == 1


@pytest.fixture
def store_with_a_game(tmp_path):
    from table.app.session import GameSession
    from table.game import StartGame
    from table.store import open_store

    path = tmp_path / "games.sqlite3"
    with open_store(path) as store:
        GameSession.start(store, StartGame(at=1.0, ruleset="yacht", players=("Ann",)))
    return path


@pytest.mark.parametrize("game_id", ["99999999999999999999999", "9223372036854775808", "game-" + "9" * 30])
def test_a_game_id_beyond_any_game_number_is_refused_in_one_line(store_with_a_game, capsys, game_id):
    """``export 99999999999999999999999`` crashed with OverflowError from SQLite."""
    from table.cli import main

    status = main(["export", game_id, "--db", str(store_with_a_game)])
    err = capsys.readouterr().err
    assert status == 2 and "larger than any game number" in err and len(err.strip().splitlines()) == 1


def test_replay_of_a_named_pipe_is_refused_instead_of_waiting_for_ever(tmp_path, capsys):
    import os

    from table.cli import main

    pipe = tmp_path / "game.json"
    os.mkfifo(pipe)
    assert main(["replay", str(pipe)]) == 2
    assert "not a regular file" in capsys.readouterr().err


# -- exports written whole or not at all -------------------------------------------------------------------


def test_an_export_that_fails_mid_write_keeps_the_previous_file(store_with_a_game, tmp_path, capsys, monkeypatch):
    """``export --output`` wrote in place: a kill or a full disk mid-write left the previous file at 0 bytes."""
    import errno
    import os
    from pathlib import Path

    from table.cli import main

    out = tmp_path / "game.csv"
    assert main(["export", "1", "--format", "csv", "--output", str(out), "--db", str(store_with_a_game)]) == 0
    before = out.read_bytes()
    assert before and oct(out.stat().st_mode & 0o777) != oct(0o600)

    def disk_full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    def truncate_then_fail(self, *args, **kwargs):  # writing in place: truncated, then the disk is full
        open(self, "w").close()
        disk_full()

    monkeypatch.setattr(os, "fsync", disk_full)
    monkeypatch.setattr(Path, "write_text", truncate_then_fail)
    capsys.readouterr()
    assert main(["export", "1", "--output", str(out), "--db", str(store_with_a_game)]) == 2
    err = capsys.readouterr().err
    assert out.read_bytes() == before and "left as it was" in err
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")] == []


# -- calibrate: an "empty tray" with dice in it ------------------------------------------------------------


def _frames_with_dice(folder):
    import cv2

    from vision.sources.synthetic import ScriptedRoll, SyntheticSource

    folder.mkdir()
    src = SyntheticSource(
        seed=3, script=[ScriptedRoll(values=(6, 6, 5, 2, 1), tumble_frames=12, rest_frames=14)], idle_frames=12
    )
    frames = [src.read().image for _ in range(37)]
    for i, frame in enumerate(frames[25:37]):  # the dice at rest
        cv2.imwrite(str(folder / f"{i:02d}.png"), frame)
    return folder


def test_calibrate_refuses_an_empty_tray_with_dice_in_it(tmp_path, capsys):
    """calibrate accepted a tray with dice in it as the empty tray (the watcher then takes them for the tray)."""
    from table.cli import main

    frames = _frames_with_dice(tmp_path / "frames")
    status = main(["calibrate", "--camera", f"images:{frames}", "--name", "full", "--profiles-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 2 and "the tray is not empty: the reader found 5 dice" in err and "take every die out" in err
    assert not (tmp_path / "full.toml").exists()
    status = main(["calibrate", "--camera", "synthetic", "--name", "empty", "--profiles-dir", str(tmp_path)])
    assert status == 0 and (tmp_path / "empty.toml").exists()


@pytest.mark.parametrize(
    "option, value, said",
    [
        ("--dice", "99999999999999999999", "--dice must be 1 to 30"),
        ("--dice", "0", "--dice must be 1 to 30"),
        ("--die-mm", "nan", "--die-mm must be 4 to 60"),
    ],
)
def test_calibrate_refuses_numbers_its_profile_could_not_be_read_back_with(tmp_path, capsys, option, value, said):
    """--dice 99999999999999999999 was saved, and every later use of the profile refused it."""
    from table.cli import main

    status = main(["calibrate", "--camera", "synthetic", "--name", "t", "--profiles-dir", str(tmp_path), option, value])
    assert status == 2 and said in capsys.readouterr().err and not (tmp_path / "t.toml").exists()


# -- reports, annotated images and profiles: written whole or not at all ---------------------------------


def test_regression_an_annotated_image_or_report_on_a_full_disk_keeps_the_previous_file(tmp_path):
    """``write_output`` (read --annotate, --report) wrote in place: a full disk left the old file cut short."""
    from tests.test_store_faults import fill, small_disk
    from vision.errors import OutputError
    from vision.images import write_output

    with small_disk(tmp_path / "disk", "1m") as disk:
        out = disk / "report.json"
        write_output(out, b"{}" * 1000)
        out.chmod(0o640)
        before = out.read_bytes()
        filler = fill(disk)
        with pytest.raises(OutputError, match="cannot write .*report.json': no space left on device"):
            write_output(out, b"[]" * 100_000)
        assert out.read_bytes() == before and oct(out.stat().st_mode & 0o777) == oct(0o640)
        assert sorted(p.name for p in disk.iterdir()) == ["filler", "report.json"]  # no temporary file left
        filler.unlink()
        write_output(out, b"[]")
        assert out.read_bytes() == b"[]" and oct(out.stat().st_mode & 0o777) == oct(0o640)


def test_regression_a_profile_saved_on_a_full_disk_keeps_the_previous_one(tmp_path):
    """``save_profile`` wrote the empty-tray image in place: a full disk left the table's reference broken."""
    import dataclasses

    import numpy as np

    from calibration.profile import PACKAGED_PROFILES_DIR, load_profile, save_profile
    from tests.test_store_faults import fill, small_disk

    shipped = load_profile("default", PACKAGED_PROFILES_DIR)
    with small_disk(tmp_path / "disk", "1m") as disk:
        save_profile(dataclasses.replace(shipped, folder=None), disk, reference=np.zeros((48, 64, 3), np.uint8))
        before = {p.name: p.read_bytes() for p in disk.iterdir()}
        filler = fill(disk)
        noise = np.random.default_rng(0).integers(0, 256, (480, 640, 3), dtype=np.uint8)  # ~900 KB as PNG
        with pytest.raises(OSError, match="no space left on device"):
            save_profile(dataclasses.replace(shipped, folder=None, min_confidence=0.3), disk, reference=noise)
        filler.unlink()
        assert {p.name: p.read_bytes() for p in disk.iterdir()} == before
        assert load_profile("default", disk).min_confidence == shipped.min_confidence


def test_regression_a_label_review_nested_thousands_deep_is_one_clear_line(tmp_path):
    """The label review said Python's "maximum recursion depth exceeded while decoding a JSON array"."""
    from vision.errors import DatasetError
    from vision.lab.label_review import load_label_review

    review = tmp_path / "review.json"
    review.write_text('{"changes": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(DatasetError) as caught:
        load_label_review(review)
    said = str(caught.value)
    assert "nested too deeply" in said and '{"changes": [{"file"' in said and "recursion" not in said
    assert "\n" not in said
