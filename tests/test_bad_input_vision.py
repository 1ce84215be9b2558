"""Bad input to ``dicetable eval`` and ``dicetable read`` (and the vision code under them).

Each case gets one clear line on stderr and exit 2, never a traceback: malformed
labels.json entries, model files of the wrong kind or a folder given for one,
rates over zero labelled dice, and output folders that are files or cannot be
written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import cv2
import numpy as np
import pytest

from table.cli import main
from vision.errors import DatasetError, OutputError
from vision.lab.evaluate import EvalResult, evaluate, format_report, load_dataset
from vision.reading import DieReading, ImageReading

MODELS = Path(__file__).resolve().parents[1] / "vision" / "models"


def _photo(path: Path, size=(300, 200)) -> Path:
    """A plain grey photo, `size` (width, height), at `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    assert cv2.imwrite(str(path), np.full((size[1], size[0], 3), 90, np.uint8))
    return path


def _dataset(root: Path, images) -> Path:
    """`root` with a photo for each entry whose "file" is a plain name, and labels.json listing `images` as given."""
    root.mkdir(parents=True, exist_ok=True)
    for entry in images:
        name = entry.get("file") if isinstance(entry, dict) else None
        if isinstance(name, str) and name.endswith(".png") and "/" not in name:
            _photo(root / name)
    (root / "labels.json").write_text(json.dumps({"images": images}))
    return root


def _one_error_line(capsys, command: str) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert "Traceback" not in captured.err
    assert len(lines) == 1 and lines[0].startswith(f"dicetable {command}: error:"), captured.err
    return lines[0]


# ----------------------------------------------------------------- labels.json entries (defects 1, 4, 6)

_DIE = {"value": 5, "box": [10, 10, 40, 40]}


@pytest.mark.parametrize(
    "images, match",
    [
        (
            [{"file": "a.png", "dice": 5}],
            r'images\[0\] \(\'a.png\'\) has "dice": 5; every image entry needs a "dice" list '
            r"\(\[\] for a photo with no dice\)",
        ),
        ([{"file": "a.png", "dice": {"value": 5}}], 'has "dice": {"value": 5}; every image entry needs a "dice" list'),
        ([{"file": "a.png"}], r'images\[0\] \(\'a.png\'\) has no "dice"; every image entry needs a "dice" list'),
        (
            [{"file": "a.png", "dice": [{"value": True, "box": [10, 10, 40, 40]}]}],
            r'images\[0\].dice\[0\] has "value" true; need a value 1-6',
        ),
        ([{"file": "a.png", "dice": [{"value": "5", "box": [10, 10, 40, 40]}]}], 'has "value" "5"; need a value 1-6'),
        ([{"file": "a.png", "dice": [{"value": 5.0, "box": [10, 10, 40, 40]}]}], 'has "value" 5.0; need a value 1-6'),
        ([{"file": "a.png", "dice": [{"box": [10, 10, 40, 40]}]}], 'has no "value"; need a value 1-6'),
        ([{"file": "a.png", "dice": [{"value": 5, "box": [10, 10, 0, 40]}]}], "0 px wide and 40 px high"),
        ([{"file": "a.png", "dice": [{"value": 5, "box": [10, 10, 40, -3]}]}], "40 px wide and -3 px high"),
        (
            [{"file": "a.png", "dice": [{"value": 5, "box": [True, 10, 40, 40]}]}],
            r'has "box" \[true, 10, 40, 40\]; need a box \[x, y, w, h\]: 4 numbers',
        ),
        ([{"file": "a.png", "dice": [{"value": 5, "box": ["10", 10, 40, 40]}]}], "need a box"),
        ([{"file": "a.png", "dice": [{"value": 5, "box": [10, 10, 40]}]}], "need a box"),
        ([{"file": "a.png", "dice": [5]}], r"images\[0\].dice\[0\] is 5; each die must be"),
        (
            [{"file": "a.png", "dice": [_DIE]}, {"file": "b.png", "dice": []}, {"file": "a.png", "dice": [_DIE]}],
            r"images\[2\] names the photo 'a.png' again \(images\[0\] names it first\); list each photo once",
        ),
        (
            [{"file": "a.png", "dice": []}, {"file": "./a.png", "dice": []}],
            r"images\[1\] names the photo './a.png' again",
        ),
        ([{"file": "a.png", "width": "300", "height": 200, "dice": []}], 'has "width" "300" and "height" 200'),
        ([{"file": "a.png", "width": 300, "dice": []}], 'has "width" 300 and "height" null; give both'),
    ],
)
def test_malformed_entries_are_named(tmp_path, images, match):
    root = _dataset(tmp_path / "set", images)
    with pytest.raises(DatasetError, match=match):
        load_dataset(root)


@pytest.mark.parametrize("file", [".", "", "/etc/hostname", "../outside.png", "sub/../../outside.png"])
def test_a_file_outside_the_dataset_folder_is_refused(tmp_path, file):
    _photo(tmp_path / "outside.png")  # it exists: the name is refused, not the photo's absence
    root = _dataset(tmp_path / "set", [{"file": file, "dice": []}])
    with pytest.raises(
        DatasetError,
        match=r'images\[0\] has "file" .*must name a photo inside .*not absolute, '
        r'no "\.\." out of it',
    ):
        load_dataset(root)


def test_a_missing_photo_names_its_entry_not_reads_advice(tmp_path, capsys):
    root = _dataset(tmp_path / "set", [{"file": "a.png", "dice": []}])
    labels = json.loads((root / "labels.json").read_text())
    labels["images"].append({"file": "gone.png", "dice": [_DIE]})
    (root / "labels.json").write_text(json.dumps(labels))
    with pytest.raises(
        DatasetError,
        match=r"images\[1\] names the photo 'gone.png', which is not in .*; put the "
        'photo there or correct its "file"',
    ):
        load_dataset(root)
    assert main(["eval", str(root)]) == 2
    line = _one_error_line(capsys, "eval")
    assert "images[1] names the photo 'gone.png'" in line and "give the path of a photo" not in line


def test_a_folder_named_as_a_photo_is_refused(tmp_path):
    root = _dataset(tmp_path / "set", [{"file": "sub", "dice": []}])
    (root / "sub").mkdir()
    with pytest.raises(DatasetError, match=r"images\[0\] names 'sub', which is a folder"):
        load_dataset(root)


def test_valid_entries_still_load(tmp_path):
    """Boxes of whole or fractional numbers, a "file" in a subfolder, width and height that fit: accepted."""
    (tmp_path / "set" / "sub").mkdir(parents=True)
    _photo(tmp_path / "set" / "sub" / "b.png")
    root = _dataset(
        tmp_path / "set",
        [
            {"file": "a.png", "width": 300, "height": 200, "dice": [{"value": 6, "box": [10.4, 10, 40.6, 39.5]}]},
            {"file": "sub/b.png", "dice": []},
            {"file": "sub/../c.png", "dice": [_DIE]},
        ],
    )
    _photo(root / "c.png")
    items = load_dataset(root)
    assert [i.path for i in items] == [root / "a.png", root / "sub" / "b.png", root / "sub" / ".." / "c.png"]
    assert items[0].dice[0].value == 6 and items[0].dice[0].box == (10, 10, 41, 40)
    assert items[0].size == (300, 200) and items[1].size is None and [i.entry for i in items] == [0, 1, 2]


def test_a_photo_of_another_size_than_its_entry_says_is_refused(tmp_path):
    root = _dataset(
        tmp_path / "set",
        [
            {"file": "a.png", "width": 300, "height": 200, "dice": []},
            {"file": "b.png", "width": 640, "height": 480, "dice": [_DIE]},
        ],
    )
    with pytest.raises(DatasetError, match=r"images\[1\] gives 'b.png' as 640x480 px but the photo is 300x200 px"):
        evaluate(root, lambda image: ImageReading(()))


@pytest.mark.parametrize(
    "labels",
    [
        '{"images":[{"file":"a.png","dice":5}]}',
        '{"images":[{"file":"a.png"}]}',
        '{"images":[{"file":"a.png","dice":[{"value":true,"box":[1,1,9,9]}]}]}',
        '{"images":[{"file":"/etc/hostname","dice":[]}]}',
    ],
)
def test_cli_eval_malformed_entry_exits_2_with_one_line(tmp_path, capsys, labels):
    root = tmp_path / "set"
    _photo(root / "a.png")
    (root / "labels.json").write_text(labels)
    assert main(["eval", str(root)]) == 2
    assert "labels.json': images[0]" in _one_error_line(capsys, "eval")


# ----------------------------------------------------------------- model files of the wrong kind (defects 2, 3)


def _models_or_skip():
    if not all((MODELS / f"{m}.onnx").is_file() for m in ("face_reader", "pip_finder", "die_detector")):
        pytest.skip("the packaged models are not there")


@pytest.mark.parametrize("backend", ["onnxruntime", "opencv"])
def test_a_model_of_another_kind_is_refused_at_load(monkeypatch, backend):
    _models_or_skip()
    from vision.detect import DetectorModelError, DieDetector
    from vision.face import FaceModelError, FaceReader
    from vision.pips import PipFinder, PipModelError

    monkeypatch.setenv("DICETABLE_ONNX_BACKEND", backend)
    for make, error, what, others in (
        (DieDetector, DetectorModelError, "die-detector", ("face_reader", "pip_finder")),
        (PipFinder, PipModelError, "pip-finder", ("face_reader", "die_detector")),
        (FaceReader, FaceModelError, "face-reader", ("pip_finder", "die_detector")),
    ):
        for other in others:
            with pytest.raises(error, match=f"is not a {what} model") as exc:
                make(MODELS / f"{other}.onnx")
            message = str(exc.value)
            assert f"{other}.onnx" in message and "\n" not in message
            assert "reinstall dicetable" not in message  # a file the user named: reinstalling would not help


@pytest.mark.parametrize(
    "option, what, other",
    [
        ("--detector-model", "die-detector", "face_reader"),
        ("--detector-model", "die-detector", "pip_finder"),
        ("--pip-model", "pip-finder", "face_reader"),
        ("--pip-model", "pip-finder", "die_detector"),
    ],
)
def test_cli_eval_model_of_another_kind_exits_2_with_one_line(tmp_path, capsys, monkeypatch, option, what, other):
    _models_or_skip()
    import vision.reader

    monkeypatch.setattr(vision.reader, "read_image", lambda *a, **k: pytest.fail("no photo should be read"))
    root = _dataset(tmp_path / "set", [{"file": "a.png", "dice": []}])
    assert main(["eval", str(root), option, str(MODELS / f"{other}.onnx")]) == 2
    line = _one_error_line(capsys, "eval")
    assert f"{what} model {str(MODELS / f'{other}.onnx')!r} is not a {what} model" in line


@pytest.mark.parametrize(
    "option, what, stem",
    [
        ("--detector-model", "die-detector", "die_detector"),
        ("--pip-model", "pip-finder", "pip_finder"),
        ("--face-model", "face-reader", "face_reader"),
    ],
)
def test_cli_eval_folder_for_a_model_says_give_the_file(tmp_path, capsys, option, what, stem):
    root = _dataset(tmp_path / "set", [{"file": "a.png", "dice": []}])
    twin = tmp_path / "twin"
    twin.mkdir()
    assert main(["eval", str(root), option, str(twin)]) == 2
    line = _one_error_line(capsys, "eval")
    assert f"{what} model {str(twin)!r} is a folder, not a model file; give the .onnx file of a {what} model" in line
    assert "does not exist" not in line and "reinstall dicetable" not in line
    (twin / f"{stem}.onnx").write_bytes(b"")  # a folder holding the file: the message names it
    assert main(["eval", str(root), option, str(twin)]) == 2
    assert f"give the .onnx file, e.g. {str(twin / f'{stem}.onnx')!r}" in _one_error_line(capsys, "eval")


def test_reinstalling_is_suggested_only_for_the_packaged_model(tmp_path):
    from vision._onnx import model_hint
    from vision.detect import DEFAULT_MODEL_PATH, DetectorModelError, DieDetector

    assert "reinstall dicetable" in model_hint(
        DEFAULT_MODEL_PATH, DEFAULT_MODEL_PATH, "die-detector", "die_detector", "train_detector"
    )
    with pytest.raises(DetectorModelError, match="does not exist; give the .onnx file of a die-detector model") as exc:
        DieDetector(tmp_path / "none.onnx")
    assert "reinstall dicetable" not in str(exc.value)


# ----------------------------------------------------------------- zero labelled dice (defect 5)


def test_rates_over_no_labelled_dice_are_not_applicable(tmp_path):
    root = _dataset(tmp_path / "set", [{"file": "a_1.png", "dice": []}, {"file": "a_2.png", "dice": []}])
    extras = iter([ImageReading((DieReading(3, (5, 5, 30, 30), 0.9),)), ImageReading(())])
    result = evaluate(root, lambda image: next(extras))
    m = result.metrics()
    assert m["labelled"] == 0 and m["extra_valued"] == 1
    assert m["accuracy"] is None and m["silent_error_rate"] is None
    assert all(face["accuracy"] is None for face in result.by_face().values())
    text = format_report(result)
    assert "per-die accuracy: n/a" in text and "silent-error rate: n/a" in text and "calibration: ECE n/a" in text
    assert "200.00%" not in text and "0.0%" not in text.split("by true face:")[1]
    doc = json.loads(json.dumps(result.to_json()))
    assert doc["overall"]["accuracy"] is None and doc["overall"]["silent_error_rate"] is None
    assert doc["by_face"]["3"]["accuracy"] is None and doc["reliability"]["ece"] is None
    assert doc["overall"]["exact_image_rate"] == 0.5  # one photo with nothing read is exact, one with an extra is not


def test_faces_with_dice_keep_their_rates_beside_faces_without(tmp_path):
    root = _dataset(tmp_path / "set", [{"file": "a.png", "dice": [_DIE]}])
    result = evaluate(root, lambda image: ImageReading((DieReading(5, (10, 10, 40, 40), 0.95),)))
    faces = result.by_face()
    assert faces[5]["accuracy"] == 1.0 and faces[1]["accuracy"] is None
    lines = format_report(result).split("by true face:")[1].splitlines()
    assert any(line.split()[:3] == ["5", "1", "100.0%"] for line in lines)
    assert any(line.split()[:3] == ["1", "0", "n/a"] for line in lines)
    assert EvalResult(root).metrics()["exact_image_rate"] is None  # no images at all


# ----------------------------------------------------------------- --report (defect 7)


def test_cli_eval_report_on_a_file_is_refused_before_any_photo_is_read(tmp_path, capsys, monkeypatch):
    import vision.reader

    reads = []
    monkeypatch.setattr(vision.reader, "read_image", lambda image, **kw: reads.append(1) or ImageReading(()))
    root = _dataset(tmp_path / "set", [{"file": "a.png", "dice": []}])
    text = tmp_path / "text.jpg"
    text.write_text("a file, not a folder")
    assert main(["eval", str(root), "--report", str(text)]) == 2
    assert _one_error_line(capsys, "eval").endswith(
        f"--report {str(text)!r} is a file; give a folder (it is created when missing)"
    )
    assert reads == [] and text.read_text() == "a file, not a folder"
    below_a_file = text / "sub"
    assert main(["eval", str(root), "--report", str(below_a_file)]) == 2
    line = _one_error_line(capsys, "eval")
    assert f"cannot create the --report folder {str(below_a_file)!r}: not a directory" in line
    assert reads == []
    assert main(["eval", str(root), "--report", str(tmp_path / "rep")]) == 0  # a good folder: read and written
    assert reads == [1] and (tmp_path / "rep" / "metrics.json").is_file()


def test_output_folder_says_why(tmp_path):
    from vision.images import output_folder, save_image

    assert output_folder(tmp_path / "a" / "b", "--x") == tmp_path / "a" / "b" and (tmp_path / "a" / "b").is_dir()
    (tmp_path / "f").write_text("")
    with pytest.raises(OutputError, match=r"--x '.*f' is a file; give a folder"):
        output_folder(tmp_path / "f", "--x")
    (tmp_path / "d.png").mkdir()
    with pytest.raises(OutputError, match=r"cannot write '.*d.png': is a directory; a folder has that name"):
        save_image(tmp_path / "d.png", np.zeros((10, 10, 3), np.uint8))


# ----------------------------------------------------------------- read --annotate (defect 8)


@pytest.fixture
def grey_photo(tmp_path):
    return _photo(tmp_path / "photos" / "grey.png", (320, 240))


def test_cli_read_annotate_on_a_file_says_give_a_folder(grey_photo, tmp_path, capsys):
    text = tmp_path / "text.jpg"
    text.write_text("a file")
    assert main(["read", str(grey_photo), "--annotate", str(text)]) == 2
    line = _one_error_line(capsys, "read")
    assert line.endswith(f"--annotate {str(text)!r} is a file; give a folder (it is created when missing)")
    assert "File exists" not in line and text.read_text() == "a file"


def test_cli_read_prints_the_readings_when_the_annotate_folder_cannot_be_made(grey_photo, tmp_path, capfd):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder should be")
    target = blocker / "ann"
    assert main(["read", str(grey_photo), "--annotate", str(target)]) == 2
    captured = capfd.readouterr()
    assert captured.out.splitlines()[1].startswith(str(grey_photo)) and "no dice found" in captured.out
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err and "WARN" not in captured.err
    assert lines[0].startswith(
        f"dicetable read: error: cannot create the --annotate folder {str(target)!r}: "
        "not a directory; give a folder you can write to"
    )
    assert "the annotated photos were not written (the readings are complete)" in lines[0]


def test_cli_read_prints_the_readings_when_an_annotated_photo_cannot_be_written(grey_photo, tmp_path, capfd):
    out_dir = tmp_path / "ann"
    (out_dir / "grey.png").mkdir(parents=True)  # a folder where the drawing would go
    other = _photo(tmp_path / "more" / "other.png", (320, 240))
    assert main(["read", str(grey_photo), str(other), "--json", "--annotate", str(out_dir)]) == 2
    captured = capfd.readouterr()
    assert [entry["image"] for entry in json.loads(captured.out)] == [str(grey_photo), str(other)]
    assert (out_dir / "other.png").is_file()  # the photo that could be drawn was
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err and "WARN" not in captured.err
    assert lines[0].startswith(
        f"dicetable read: error: annotated photo not written: cannot write "
        f"{str(out_dir / 'grey.png')!r}: is a directory"
    )


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0,
    reason="root writes into read-only folders; run as another user to check permission denied",
)
def test_cli_read_unwritable_annotate_folder_says_permission_denied(grey_photo, tmp_path, capfd):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        assert main(["read", str(grey_photo), "--annotate", str(locked)]) == 2
    finally:
        locked.chmod(0o755)
    captured = capfd.readouterr()
    assert "no dice found" in captured.out and "WARN" not in captured.err
    assert "permission denied" in captured.err.lower() and len(captured.err.strip().splitlines()) == 1
