"""``dicetable read``: JSON contract, table, annotation and bad input (exit 2, one line)."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

import vision.face
import vision.pips
from table.cli import main

render = pytest.importorskip("vision.render", reason="vision.render (the synthetic tray renderer) is not there")


class SureFives:
    """A face reader that reads every crop as a 5 with probability 0.99."""

    def predict(self, crops):
        out = np.full((len(crops), 7), 0.01 / 6, np.float32)
        out[:, 5] = 0.99
        return out


class FivePips:
    """A pip finder that marks the five pips of a 5 on every crop (so the two opinions agree)."""

    def predict(self, crops):
        m = np.zeros((64, 64), np.float32)
        for dx, dy in ((-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)):
            cv2.circle(m, (32 + 11 * dx, 32 + 11 * dy), 3, 1.0, -1)
        return np.repeat(m[None], len(crops), axis=0)


@pytest.fixture
def fives(monkeypatch):
    monkeypatch.setattr(vision.face, "default_face_reader", lambda: SureFives())
    monkeypatch.setattr(vision.pips, "default_pip_finder", lambda: FivePips())


@pytest.fixture
def photos(tmp_path):
    folder = tmp_path / "photos"
    folder.mkdir()
    for seed, name in [(0, "b.png"), (1, "a.jpg")]:
        tray = render.render_tray([1, 2, 3], seed=seed, style="felt")
        cv2.imwrite(str(folder / name), tray.image)
    cv2.imwrite(str(folder / "empty.png"), np.full((240, 320, 3), 128, np.uint8))
    (folder / "notes.txt").write_text("not an image, and not listed")
    return folder


def test_read_json_contract(photos, fives, capsys):
    assert main(["read", str(photos), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert isinstance(doc, list) and len(doc) == 3
    assert [d["image"] for d in doc] == [str(photos / n) for n in ("a.jpg", "b.png", "empty.png")]
    for entry in doc:
        assert set(entry) == {"image", "dice", "problems"}
        assert all(isinstance(p, str) for p in entry["problems"])
        for die in entry["dice"]:
            assert set(die) == {"value", "box", "confidence", "reason"}
            assert (die["reason"] is None) == (die["value"] is not None)
            assert die["value"] is None or die["value"] in range(1, 7)
            assert len(die["box"]) == 4 and all(isinstance(v, int) for v in die["box"])
            assert 0.0 <= die["confidence"] <= 1.0
    assert [d["value"] for d in doc[0]["dice"]] == [5, 5, 5]
    assert doc[2]["dice"] == [] and doc[2]["problems"] == ["no dice found"]


def test_read_table_and_annotate(photos, fives, tmp_path, capsys):
    out_dir = tmp_path / "ann"
    assert main(["read", str(photos / "a.jpg"), str(photos / "empty.png"), "--annotate", str(out_dir)]) == 0
    text = capsys.readouterr().out
    assert "5 5 5" in text and "no dice found" in text
    drawn = cv2.imread(str(out_dir / "a.jpg"))
    original = cv2.imread(str(photos / "a.jpg"))
    assert drawn is not None and drawn.shape == original.shape
    assert (out_dir / "empty.png").is_file()


def test_annotate_keeps_photos_of_the_same_name_and_never_overwrites_a_photo(photos, fives, tmp_path, capsys):
    other = tmp_path / "other"
    other.mkdir()
    cv2.imwrite(str(other / "a.jpg"), render.render_tray([4, 4], seed=5, style="felt").image)
    out_dir = tmp_path / "ann"
    assert main(["read", str(photos / "a.jpg"), str(other / "a.jpg"), "--annotate", str(out_dir)]) == 0
    assert sorted(p.name for p in out_dir.iterdir()) == ["a-2.jpg", "a.jpg"]
    assert cv2.imread(str(out_dir / "a.jpg")).shape == cv2.imread(str(photos / "a.jpg")).shape
    # annotating into the photos' own folder writes beside them
    before = (photos / "a.jpg").read_bytes()
    assert main(["read", str(photos / "a.jpg"), "--annotate", str(photos)]) == 0
    assert (photos / "a.jpg").read_bytes() == before
    assert (photos / "a-annotated.jpg").is_file()


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda p: p / "missing.jpg", "does not exist"),
        (lambda p: (p / "fake.jpg").write_text("hello") and p / "fake.jpg", "not an image"),
        (lambda p: (p / "empty").mkdir() or p / "empty", "holds no image"),
        (
            lambda p: cv2.imwrite(str(p / "dot.png"), np.zeros((1, 1, 3), np.uint8)) and p / "dot.png",
            "dot.png' is 1x1 px, too small to hold a die",
        ),
    ],
)
def test_read_bad_input_exits_2_one_line(tmp_path, capsys, make, match):
    path = make(tmp_path)
    assert main(["read", str(path)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dicetable read: error:") and match in lines[0]
    assert "Traceback" not in captured.err and captured.out == ""


def test_annotate_refuses_a_photo_name_and_a_labelled_photo_set_before_reading(photos, tmp_path, capsys):
    """A newcomer's `--annotate out.png` made a folder named out.png; `--annotate DEV` wrote into the photo set."""
    out = tmp_path / "out.png"
    assert main(["read", str(photos / "a.jpg"), "--annotate", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--annotate takes a folder" in err and str(tmp_path / "out") in err and err.count("\n") == 1
    assert not out.exists()
    labelled = tmp_path / "set"
    labelled.mkdir()
    (labelled / "labels.json").write_text("{}")
    assert main(["read", str(photos / "a.jpg"), "--annotate", str(labelled)]) == 2
    captured = capsys.readouterr()
    assert "holds a labels.json" in captured.err and captured.out == ""
    assert sorted(p.name for p in labelled.iterdir()) == ["labels.json"]


def test_read_of_a_folder_whose_photos_are_in_subfolders_says_which_to_pass(tmp_path, capsys):
    """As DEV's single/ (photos in 1/ ... 6/): it said only "holds no image"."""
    top = tmp_path / "single"
    for name, n in (("1", 2), ("2", 1)):
        (top / name).mkdir(parents=True)
        for k in range(n):
            cv2.imwrite(str(top / name / f"p{k}.png"), np.zeros((32, 32, 3), np.uint8))
    (top / "notes").mkdir()  # no photo: not named
    assert main(["read", str(top)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert f"no photos directly in {str(top)!r}; its subfolders 1, 2 hold 3 photos: pass one of them" in err
    assert "notes" not in err


def test_read_goes_on_past_a_bad_file_and_names_it(photos, fives, tmp_path, capsys):
    fake = tmp_path / "fake.jpg"
    fake.write_text("hello")
    missing_pixels = tmp_path / "dot.png"
    cv2.imwrite(str(missing_pixels), np.zeros((1, 1, 3), np.uint8))
    good = photos / "a.jpg"
    missing = tmp_path / "missing.jpg"
    assert main(["read", str(fake), str(missing), str(good), str(missing_pixels)]) == 2
    captured = capsys.readouterr()
    out_lines = captured.out.strip().splitlines()
    assert len(out_lines) == 2 and out_lines[1].startswith(str(good))  # header and the good photo
    assert captured.err.startswith("dicetable read: error: 3 of 4 paths could not be read:")
    assert all(name in captured.err for name in ("fake.jpg", "missing.jpg", "dot.png"))
    assert "Traceback" not in captured.err
    assert main(["read", "--json", str(good), str(fake)]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert [entry["image"] for entry in doc] == [str(good)]
