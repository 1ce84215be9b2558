"""vision.lab.evaluate and ``dicetable eval``: matching, exact metrics on a tiny dataset, reports, bad input."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from table.cli import main
from vision.errors import DatasetError
from vision.lab.evaluate import evaluate, format_report, load_dataset, match_dice, write_report
from vision.reading import DieReading, ImageReading


def _write_dataset(root, images):
    """images: list of (file name, [(value, box), ...]); draws light squares at the boxes."""
    root.mkdir(parents=True, exist_ok=True)
    entries = []
    for name, dice in images:
        img = np.full((200, 300, 3), 60, np.uint8)
        for _, (x, y, w, h) in dice:
            cv2.rectangle(img, (x, y), (x + w, y + h), (230, 230, 230), -1)
        cv2.imwrite(str(root / name), img)
        entries.append(
            {"file": name, "width": 300, "height": 200, "dice": [{"value": v, "box": list(b)} for v, b in dice]}
        )
    (root / "labels.json").write_text(json.dumps({"images": entries}))
    return root


@pytest.fixture
def tiny(tmp_path):
    return _write_dataset(
        tmp_path / "tiny",
        [
            ("a_1.png", [(1, (10, 10, 40, 40)), (2, (100, 10, 40, 40)), (3, (200, 10, 40, 40))]),
            ("a_2.png", [(4, (10, 100, 40, 40)), (5, (100, 100, 40, 40))]),
            ("b_1.png", [(6, (50, 50, 40, 40))]),
            ("b_2.png", []),
        ],
    )


# What the scripted reader "reads" in each file: a_1: 1 right, 2 read as 3 (wrong), 3 unknown;
# a_2: 4 right, 5 missed, one extra die with a value; b_1: 6 right (box shifted, IoU > .5);
# b_2: an extra unknown die.
_SCRIPT = {
    "a_1.png": [
        DieReading(1, (11, 9, 40, 41), 0.99),
        DieReading(3, (100, 12, 39, 40), 0.9),
        DieReading(None, (198, 10, 42, 40), 0.4, "low confidence"),
    ],
    "a_2.png": [DieReading(4, (10, 100, 40, 40), 0.95), DieReading(2, (250, 150, 30, 30), 0.9)],
    "b_1.png": [DieReading(6, (55, 52, 40, 40), 0.97)],
    "b_2.png": [DieReading(None, (5, 5, 30, 30), 0.3, "low confidence")],
}


def _scripted_reader():
    order = iter(["a_1.png", "a_2.png", "b_1.png", "b_2.png"])

    def read(image):
        assert image.dtype == np.uint8 and image.shape == (200, 300, 3)
        return ImageReading(tuple(_SCRIPT[next(order)]))

    return read


def test_evaluate_exact_counts_and_rates(tiny):
    result = evaluate(tiny, _scripted_reader())
    m = result.metrics()
    assert (m["labelled"], m["correct"], m["wrong"], m["unknown"], m["missed"]) == (6, 3, 1, 1, 1)
    assert (m["extra"], m["extra_valued"]) == (2, 1)
    assert m["accuracy"] == pytest.approx(3 / 6)
    assert m["silent_error_rate"] == pytest.approx(2 / 6)  # 1 wrong + 1 extra with a value
    assert m["exact_image_rate"] == pytest.approx(1 / 4)  # only b_1 is exact
    by = result.by_source()
    assert list(by) == ["a", "b"]
    assert (by["a"]["labelled"], by["a"]["correct"], by["b"]["correct"], by["b"]["extra"]) == (5, 2, 1, 1)
    conf = result.confusion()
    assert conf.shape == (6, 8)
    assert conf[1, 2] == 1 and conf[2, 6] == 1 and conf[4, 7] == 1 and conf[0, 0] == 1
    assert conf.sum() == 6
    faces = result.by_face()
    assert faces[2]["wrong"] == 1 and faces[5]["missed"] == 1 and faces[6]["accuracy"] == 1.0


def test_format_report_states_denominator_and_breakdowns(tiny):
    text = format_report(evaluate(tiny, _scripted_reader()))
    assert "per-die accuracy: 50.0%" in text
    assert "silent-error rate: 33.33%" in text and "/ 6 labelled dice" in text
    assert "by source:" in text and "by true face:" in text and "unknown" in text


def test_write_report_makes_contact_sheet_and_metrics(tiny, tmp_path):
    result = evaluate(tiny, _scripted_reader())
    written = write_report(result, tmp_path / "rep")
    names = {p.name for p in written}
    assert {"metrics.json", "failures.png"} <= names
    sheet = cv2.imread(str(tmp_path / "rep" / "failures.png"))
    assert sheet is not None and sheet.shape[1] == 12 * 96
    assert sheet.shape[0] > 96 and sheet[96:].any()  # one row of tiles, then the legend strip below it
    metrics = json.loads((tmp_path / "rep" / "metrics.json").read_text())
    assert metrics["overall"]["correct"] == 3
    assert (tmp_path / "rep" / "failures" / "a_1.jpg").is_file()
    assert not (tmp_path / "rep" / "failures" / "b_1.jpg").exists()


def test_a_report_written_again_into_its_folder_leaves_no_earlier_failure_picture(tiny, tmp_path):
    """A newcomer's second report into the same folder kept 19 failure pictures of the first, unsaid."""
    stale = tmp_path / "rep" / "failures" / "from_an_earlier_report.jpg"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"old")
    (tmp_path / "rep" / "notes.txt").write_text("mine")  # what is not a failure picture stays
    write_report(evaluate(tiny, _scripted_reader()), tmp_path / "rep")
    assert not stale.exists() and (tmp_path / "rep" / "failures" / "a_1.jpg").is_file()
    assert (tmp_path / "rep" / "notes.txt").read_text() == "mine"


def test_match_dice_greedy_by_iou_and_centre_inside():
    truth = [(0, 0, 40, 40), (50, 0, 40, 40)]
    read = [(52, 2, 40, 40), (10, 10, 60, 60), (200, 200, 10, 10)]
    pairs = dict(match_dice(read, truth))
    assert pairs[0] == 1  # best IoU first
    assert pairs[1] == 0  # centre (40, 40) inside truth 0 though IoU < 0.5
    assert 2 not in pairs
    assert match_dice([], truth) == []


@pytest.mark.parametrize(
    "content, match",
    [
        (None, "no labels.json"),
        ("{not json", "not valid JSON"),
        ('{"pictures": []}', '"images" list'),
        ('{"images": [{"file": "x.png", "dice": [{"value": 7, "box": [0, 0, 1, 1]}]}]}', "value 1-6"),
        ('{"images": [{"dice": []}]}', '"file"'),
    ],
)
def test_load_dataset_malformed(tmp_path, content, match):
    if content is not None:
        (tmp_path / "labels.json").write_text(content)
    with pytest.raises(DatasetError, match=match):
        load_dataset(tmp_path)


@pytest.mark.parametrize("content", [None, "{not json", '{"images": [{"file": 3}]}'])
def test_cli_eval_bad_dataset_exits_2_with_one_line(tmp_path, capsys, content):
    if content is not None:
        (tmp_path / "labels.json").write_text(content)
    assert main(["eval", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dicetable eval: error:")


def test_cli_eval_missing_folder_exits_2(tmp_path, capsys):
    assert main(["eval", str(tmp_path / "nowhere")]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_cli_eval_json_on_tiny_dataset(tiny, capsys, monkeypatch):
    import vision.reader

    script = _scripted_reader()
    monkeypatch.setattr(vision.reader, "read_image", lambda image, **kw: script(image))
    assert main(["eval", str(tiny), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["overall"]["correct"] == 3 and doc["overall"]["labelled"] == 6
    assert doc["silent_error_rate_denominator"] == "labelled dice"
    assert set(doc["by_source"]) == {"a", "b"}


# ----------------------------------------------------------------- reliability (issue 7 item 3)

from vision.lab.reliability import draw_reliability, expected_calibration_error, reliability_bins  # noqa: E402


def test_reliability_bins_and_ece_on_a_hand_made_case():
    conf = [0.05, 0.35, 0.38, 0.65, 1.0, 0.95]
    right = [False, True, False, True, True, True]
    bins = reliability_bins(conf, right)
    assert len(bins) == 10 and [b.count for b in bins] == [1, 0, 0, 2, 0, 0, 1, 0, 0, 2]
    assert bins[3].mean_confidence == pytest.approx(0.365) and bins[3].accuracy == 0.5
    assert bins[9].mean_confidence == pytest.approx(0.975) and bins[9].accuracy == 1.0  # 1.0 lands in the last bin
    assert bins[1].mean_confidence == 0.0 and bins[1].accuracy == 0.0
    # (1 * 0.05 + 2 * 0.135 + 1 * 0.35 + 2 * 0.025) / 6
    assert expected_calibration_error(bins) == pytest.approx(0.12)
    assert expected_calibration_error(reliability_bins([], [])) == 0.0


def test_reliability_bins_zoom_on_part_of_the_range():
    bins = reliability_bins([0.5, 0.91, 0.955, 0.96, 1.0], [True, False, True, True, True], span=(0.9, 1.0))
    assert [b.count for b in bins] == [0, 1, 0, 0, 0, 2, 0, 0, 0, 1]
    assert bins[5].lo == pytest.approx(0.95) and bins[5].accuracy == 1.0
    assert bins[1].accuracy == 0.0 and bins[1].mean_confidence == pytest.approx(0.91)
    with pytest.raises(ValueError, match="span must be"):
        reliability_bins([0.5], [True], span=(0.9, 0.8))


@pytest.mark.parametrize(
    "conf, right, match",
    [
        ([0.5, 1.2], [True, True], r"in \[0, 1\]"),
        ([0.5], [True, False], "same length"),
    ],
)
def test_reliability_bad_input(conf, right, match):
    with pytest.raises(ValueError, match=match):
        reliability_bins(conf, right)


def test_report_has_reliability_png_json_and_text_line(tiny, tmp_path):
    result = evaluate(tiny, _scripted_reader())
    # Dice given a value and matched: 1 (0.99, right), 3 for 2 (0.9, wrong), 4 (0.95), 6 (0.97).
    rel = result.reliability()
    assert rel["dice"] == 4
    top = rel["bins"][9]
    assert top["count"] == 4 and top["accuracy"] == 0.75
    assert top["mean_confidence"] == pytest.approx(0.9525, abs=1e-4)
    assert sum(b["count"] for b in rel["bins"]) == 4
    assert rel["ece"] == pytest.approx(0.2025)
    assert "calibration: ECE 20.2% over 4 dice given a value" in format_report(result)
    written = write_report(result, tmp_path / "rep")
    assert tmp_path / "rep" / "reliability.png" in written
    metrics = json.loads((tmp_path / "rep" / "metrics.json").read_text())
    assert metrics["reliability"]["ece"] == pytest.approx(0.2025)
    png = cv2.imread(str(tmp_path / "rep" / "reliability.png"))
    # All four dice lie in the top bin, so a zoom on 0.9-1.0 stands beside the plot.
    assert png is not None and png.shape == (640, 2 * 720, 3)
    # The only bar (0.9-1.0, accuracy 0.75) is drawn; the 0.4-0.5 column has no bar.
    bar = np.array([200, 140, 60])
    plot = png[200:500, :720].astype(int)  # the main plot, below the legend, above the axis
    colour_cols = np.nonzero((np.abs(plot - bar).sum(axis=2) < 10).any(axis=0))[0]
    assert colour_cols.size and colour_cols.min() > 0.85 * 720


def test_reliability_plot_marks_each_filled_bin():
    bins = reliability_bins([0.35, 0.55, 0.56, 0.95], [True, False, True, True])
    img = draw_reliability(bins)
    bar = np.array([200, 140, 60])
    cols = (np.abs(img[200:500].astype(int) - bar).sum(axis=2) < 10).any(axis=0)
    runs = np.count_nonzero(np.diff(cols.astype(int)) == 1)
    assert runs == 3  # bins 0.3-0.4, 0.5-0.6 and 0.9-1.0


def test_reliability_plot_prints_the_ece_it_is_given():
    # the report reads bins back from rounded JSON; the plot must still print the report's ECE
    bins = reliability_bins([0.35, 0.55, 0.56, 0.95], [True, False, True, True])
    ece = expected_calibration_error(bins)
    title_rows = slice(30, 56)
    assert np.array_equal(draw_reliability(bins)[title_rows], draw_reliability(bins, ece=ece)[title_rows])
    assert not np.array_equal(draw_reliability(bins)[title_rows], draw_reliability(bins, ece=ece + 0.1)[title_rows])


def test_contact_sheet_names_keep_their_distinguishing_end():
    from vision.lab.report import _fit_left

    name = "nell_IMG_20191208_112342.jpg"
    short = _fit_left(name, 92, 0.28)
    assert short.startswith("..") and short.endswith("112342.jpg")  # the photo's own part survives
    assert cv2.getTextSize(short, cv2.FONT_HERSHEY_SIMPLEX, 0.28, 1)[0][0] <= 92
    assert _fit_left("a_1.jpg", 92, 0.28) == "a_1.jpg"


def test_an_empty_dataset_is_an_error_not_a_zero_score(tmp_path):
    (tmp_path / "labels.json").write_text('{"images": []}')
    with pytest.raises(DatasetError, match="lists no images"):
        load_dataset(tmp_path)


# ----------------------------------------------------------------- held-out folds (--fold, keep=)


def test_evaluate_reads_only_the_photos_kept(tiny):
    seen = []

    def read(image):
        seen.append(image.shape)
        return ImageReading(tuple(_SCRIPT["b_1.png"]))

    result = evaluate(tiny, read, keep=lambda name: name == "b_1.png")
    assert [im.path.name for im in result.images] == ["b_1.png"] and len(seen) == 1
    assert result.metrics()["labelled"] == 1 and result.metrics()["correct"] == 1
    with pytest.raises(DatasetError, match="no photo of .* is in the selection"):
        evaluate(tiny, read, keep=lambda name: False)


def test_cli_eval_fold_reads_that_fold_with_the_networks_given(tiny, capsys, monkeypatch):
    import vision.pips
    import vision.reader
    from table.commands.eval import DEV_FOLDS
    from vision.lab.training.data import DEV_FOLDS as TRAINING_FOLDS
    from vision.lab.training.data import dev_fold

    assert DEV_FOLDS == TRAINING_FOLDS  # the parser's choices follow the trainers' folds
    calls = []

    class FakePipFinder:
        def __init__(self, path):
            calls.append(("pips", str(path)))

    def read_image(image, **kw):
        calls.append(("read", type(kw["pip_finder"]).__name__))
        return ImageReading(())

    monkeypatch.setattr(vision.pips, "PipFinder", FakePipFinder)
    monkeypatch.setattr(vision.reader, "read_image", read_image)
    names = ["a_1.png", "a_2.png", "b_1.png", "b_2.png"]
    fold = dev_fold("a_1.png")
    assert main(["eval", str(tiny), "--json", "--fold", str(fold), "--pip-model", "twin/pip_finder.onnx"]) == 0
    doc = json.loads(capsys.readouterr().out)
    in_fold = [n for n in names if dev_fold(n) == fold]
    assert 0 < len(in_fold) < len(names)  # the fixture's names fall in both folds
    labelled = {"a_1.png": 3, "a_2.png": 2, "b_1.png": 1, "b_2.png": 0}
    assert doc["overall"]["labelled"] == sum(labelled[n] for n in in_fold)
    assert calls[0] == ("pips", "twin/pip_finder.onnx")
    assert calls[1:] == [("read", "FakePipFinder")] * len(in_fold)
    with pytest.raises(SystemExit) as stop:  # not a fold: argparse says which are
        main(["eval", str(tiny), "--fold", "7"])
    assert stop.value.code == 2 and "invalid choice: 7 (choose from 0, 1)" in capsys.readouterr().err


def test_fit_confidence_reads_each_fold_with_its_own_twins(tiny, tmp_path, monkeypatch, capsys):
    import vision.face
    import vision.pips
    import vision.reader
    from vision.lab.training import fit_confidence
    from vision.lab.training.data import dev_fold

    class Named:
        def __init__(self, path, **options):  # options: how it reads (vision.face.reading_face_reader's views)
            self.path = str(path)

    monkeypatch.setattr(vision.face, "FaceReader", Named)
    monkeypatch.setattr(vision.pips, "PipFinder", Named)
    seen = []
    # each photo is read as its scripted dice, with the raw probability of the scripts
    order = {}

    def read_image(image, *, face_reader, pip_finder, calibrated):
        assert calibrated is False
        name = order["next"].pop(0)
        seen.append((name, face_reader.path, pip_finder.path))
        return ImageReading(tuple(_SCRIPT[name]))

    monkeypatch.setattr(vision.reader, "read_image", read_image)
    names = sorted(_SCRIPT)
    by_fold = {k: [n for n in names if dev_fold(n) == k] for k in (0, 1)}
    order["next"] = by_fold[0] + by_fold[1]
    out = tmp_path / "map.json"
    assert (
        fit_confidence.main(
            [
                "--twin",
                "1",
                "f1.onnx",
                "p1.onnx",
                "--twin",
                "0",
                "f0.onnx",
                "p0.onnx",
                "--dev-dir",
                str(tiny),
                "--out",
                str(out),
                "--min-block",
                "1",
            ]
        )
        == 0
    )
    # every photo once, read by the twins of its own fold, folds in order
    assert seen == [(n, f"f{k}.onnx", f"p{k}.onnx") for k in (0, 1) for n in by_fold[k]]
    doc = json.loads(out.read_text())
    # values reported over both folds: 1 (0.99), 3 (0.9, wrong), 4 (0.95), extra 2 (0.9), 6 (0.97)
    assert "DEV folds 0 and 1 (4 photos, 5 reported values, 3 right)" in doc["fitted_on"]
    assert set(doc["fold_metrics"]) == {"0", "1"} and doc["fold_metrics"]["1"]["face_model"] == "f1.onnx"
    assert doc["command"].startswith("python -m vision.lab.training.fit_confidence --twin 1 f1.onnx")
    from vision.confidence import ConfidenceMap

    cmap = ConfidenceMap(tuple(doc["map"]["raw"]), tuple(doc["map"]["calibrated"]))
    assert cmap(0.9) < cmap(0.99)  # the two 0.9 values were wrong, the higher ones right
    order["next"] = by_fold[0] + by_fold[1]
    assert (
        fit_confidence.main(
            [
                "--twin",
                "0",
                "f0.onnx",
                "p0.onnx",
                "--twin",
                "1",
                "f1.onnx",
                "p1.onnx",
                "--dev-dir",
                str(tiny),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    doc = json.loads(out.read_text())  # the default: blocks of at least 100 values, here one block of 5
    assert doc["map"]["calibrated"] == [pytest.approx((3 + 1) / (5 + 2), abs=1e-4)]
    assert "blocks of at least 100 values" in doc["method"]
    for bad, message in (
        (["--twin", "2", "f", "p"], "fold must be one of 0-1"),
        (["--twin", "0", "f", "p", "--twin", "0", "g", "q"], "each fold once"),
        (["--twin", "0", "f", "p", "--min-block", "0"], "--min-block must be 1 or more"),
    ):
        with pytest.raises(SystemExit) as stop:
            fit_confidence.main(bad + ["--dev-dir", str(tiny), "--out", str(out)])
        assert stop.value.code == 2 and message in capsys.readouterr().err
    monkeypatch.undo()  # the real FaceReader: a missing model is one line and status 2, not a traceback
    assert (
        fit_confidence.main(
            ["--twin", "0", str(tmp_path / "none.onnx"), "p.onnx", "--dev-dir", str(tiny), "--out", str(out)]
        )
        == 2
    )
    assert "fold 0: face-reader model" in capsys.readouterr().err


# ----------------------------------------------------------------- reviewed labels (vision.lab.label_review)

from pathlib import Path  # noqa: E402

from vision.lab.evaluate import DEFAULT_DEV_DIR, rescore  # noqa: E402
from vision.lab.label_review import load_label_review  # noqa: E402

#: A review of the tiny set that agrees with the scripted reader: the "2" of a_1 shows a 3, and the
#: extra die of a_2 is a real die showing 2 that was not labelled.
_TINY_REVIEW = {
    "changes": [
        {"file": "a_1.png", "box": [100, 10, 40, 40], "labelled": 2, "value": 3, "why": "three pips"},
        {"file": "a_2.png", "box": [250, 150, 30, 30], "labelled": None, "value": 2, "why": "a die not labelled"},
    ]
}


def _review_file(tmp_path, doc):
    path = tmp_path / "review.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def test_rescore_counts_the_same_readings_against_reviewed_labels(tiny, tmp_path):
    result = evaluate(tiny, _scripted_reader())
    review = load_label_review(_review_file(tmp_path, _TINY_REVIEW))
    reviewed = rescore(result, review.apply(load_dataset(tiny), tiny))
    m = reviewed.metrics()
    assert (m["labelled"], m["correct"], m["wrong"], m["unknown"], m["missed"]) == (7, 5, 0, 1, 1)
    assert (m["extra"], m["extra_valued"]) == (1, 0)  # b_2's unknown extra is still extra
    assert [im.ms for im in reviewed.images] == [im.ms for im in result.images]
    assert result.metrics()["correct"] == 3  # the result of the labels as given is left as it was


def test_cli_eval_prints_the_reviewed_measure_after_the_official_one(tiny, tmp_path, capsys, monkeypatch):
    import vision.reader

    review = _review_file(tmp_path, _TINY_REVIEW)
    script = _scripted_reader()
    monkeypatch.setattr(vision.reader, "read_image", lambda image, **kw: script(image))
    assert main(["eval", str(tiny), "--label-review", str(review)]) == 0
    official, _, reviewed = capsys.readouterr().out.partition("reviewed labels")
    assert "per-die accuracy: 50.0%" in official and "silent-error rate: 33.33%" in official
    assert "2 changes" in reviewed and "per-die accuracy: 71.4%" in reviewed
    assert "silent-error rate: 0.00%" in reviewed and "/ 7 labelled dice" in reviewed
    script = _scripted_reader()
    assert main(["eval", str(tiny), "--json", "--label-review", str(review)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["overall"]["correct"] == 3 and doc["reviewed_labels"]["correct"] == 5
    assert doc["reviewed_labels"]["changes"] == 2 and doc["reviewed_labels"]["silent_error_rate"] == 0.0


_TWO = {"file": "a_1.png", "box": [100, 10, 40, 40], "labelled": 2, "value": 3}
_NEW = {"file": "a_2.png", "box": [250, 150, 30, 30], "labelled": None, "value": 2}


@pytest.mark.parametrize(
    "changes, match",
    [
        ([{**_TWO, "labelled": 5}], "labels.json now says 2; review it again"),
        ([{**_TWO, "box": [150, 10, 40, 40]}], "no die with that box"),
        ([{**_NEW, "box": [12, 100, 40, 40]}], "adds a die where labels.json has one"),
        ([{**_TWO, "file": "nope.png"}], "not in the dataset"),  # the review of another set, a renamed photo
        ([_TWO, {**_TWO, "value": 4}], "corrects the die that changes[0] corrects"),
        ([_NEW, {**_NEW, "box": [252, 151, 30, 30]}], "adds the die that changes[0] adds"),
        ([{**_NEW, "box": [-500, -500, 40, 40]}], "outside the 300x200 px photo"),
    ],
)
def test_a_review_that_does_not_fit_is_refused_before_any_photo_is_read(
    tiny, tmp_path, capsys, monkeypatch, changes, match
):
    import vision.reader

    def never(image, **kw):
        raise AssertionError("a photo was read")

    monkeypatch.setattr(vision.reader, "read_image", never)
    review = _review_file(tmp_path, {"changes": [{**c, "why": "seen"} for c in changes]})
    assert main(["eval", str(tiny), "--label-review", str(review)]) == 2
    err = capsys.readouterr().err
    assert match in err and err.count("\n") == 1


def test_a_review_names_photos_in_sub_folders_by_their_path(tmp_path):
    root = _write_dataset(tmp_path / "sub", [])
    (root / "x").mkdir()
    (root / "y").mkdir()
    for folder in ("x", "y"):
        cv2.imwrite(str(root / folder / "a.png"), np.full((200, 300, 3), 60, np.uint8))
    (root / "labels.json").write_text(
        json.dumps(
            {
                "images": [
                    {"file": "x/a.png", "dice": [{"value": 2, "box": [100, 10, 40, 40]}]},
                    {"file": "y/a.png", "dice": [{"value": 5, "box": [10, 10, 40, 40]}]},
                ]
            }
        )
    )
    items = load_dataset(root)
    review = load_label_review(_review_file(tmp_path, {"changes": [{**_TWO, "file": "x/a.png", "why": "3"}]}))
    assert [[d.value for d in i.dice] for i in review.apply(items, root)] == [[3], [5]]
    review = load_label_review(_review_file(tmp_path, {"changes": [{**_TWO, "file": "a.png", "why": "3"}]}))
    with pytest.raises(DatasetError, match="'a.png', which is not in the dataset"):
        review.apply(items, root)


def test_cli_eval_report_keeps_the_reviewed_measure_in_metrics_json(tiny, tmp_path, monkeypatch):
    import vision.reader

    script = _scripted_reader()
    monkeypatch.setattr(vision.reader, "read_image", lambda image, **kw: script(image))
    review = _review_file(tmp_path, _TINY_REVIEW)
    assert main(["eval", str(tiny), "--label-review", str(review), "--report", str(tmp_path / "rep")]) == 0
    metrics = json.loads((tmp_path / "rep" / "metrics.json").read_text())
    assert metrics["overall"]["correct"] == 3 and metrics["reviewed_labels"]["correct"] == 5
    assert metrics["reviewed_labels"]["photos_changed"] == 2


@pytest.mark.parametrize(
    "doc, match",
    [
        ("{not json", "cannot be read as JSON"),
        ({"fixes": []}, 'a "changes" list'),
        ({"changes": [{"box": [1, 1, 5, 5], "labelled": 2, "value": 3, "why": "x"}]}, 'needs a "file"'),
        ({"changes": [{"file": "a", "box": [1, 1, 0, 5], "labelled": 2, "value": 3, "why": "x"}]}, 'needs a "box"'),
        ({"changes": [{"file": "a", "box": [1, 1, 5, 5], "value": 3, "why": "x"}]}, 'needs "labelled"'),
        ({"changes": [{"file": "a", "box": [1, 1, 5, 5], "labelled": 3, "value": 3, "why": "x"}]}, 'needs "value"'),
        ({"changes": [{"file": "a", "box": [1, 1, 5, 5], "labelled": 2, "value": True, "why": "x"}]}, 'needs "value"'),
        ({"changes": [{"file": "a", "box": [1, 1, 5, 5], "labelled": 2, "value": 3, "why": " "}]}, 'needs "why"'),
        ({"changes": [{"file": "../a", "box": [1, 1, 5, 5], "labelled": 2, "value": 3, "why": "x"}]}, 'needs a "file"'),
        ({"changes": [{"file": "/a", "box": [1, 1, 5, 5], "labelled": 2, "value": 3, "why": "x"}]}, 'needs a "file"'),
        (
            {"changes": [{"file": "a", "box": [10**400, 1, 5, 5], "labelled": 2, "value": 3, "why": "x"}]},
            'needs a "box"',
        ),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ],
)
def test_a_malformed_review_is_named(tmp_path, doc, match):
    with pytest.raises(DatasetError, match=match):
        load_label_review(_review_file(tmp_path, doc))


def test_cli_eval_missing_review_exits_2(tiny, tmp_path, capsys):
    assert main(["eval", str(tiny), "--label-review", str(tmp_path / "none.json")]) == 2
    assert "no label review" in capsys.readouterr().err


@pytest.mark.skipif(
    not (DEFAULT_DEV_DIR / "labels.json").is_file(),
    reason="the DEV photos (../shared/dice-images/dev) are not beside this checkout",
)
def test_the_dev_review_applies_to_the_dev_labels():
    """benchmarks/dev_label_review.json still fits DEV's labels.json (a stale review is refused)."""
    review = load_label_review(Path(__file__).resolve().parents[1] / "benchmarks" / "dev_label_review.json")
    items = load_dataset(DEFAULT_DEV_DIR)
    reviewed = review.apply(items, DEFAULT_DEV_DIR)
    assert sum(len(i.dice) for i in reviewed) == sum(len(i.dice) for i in items) + sum(
        c.labelled is None for c in review.changes
    )
    changed = sum(a.dice != b.dice for a, b in zip(items, reviewed))
    assert changed == len({c.file for c in review.changes})


@pytest.mark.parametrize("box", [(5000, 5000, 30, 30), (-50, -50, 30, 30)])
def test_cli_eval_refuses_a_box_outside_its_photo_in_one_line(tmp_path, capsys, box):
    # such a box was scored as a missed die and an extra (200 % silent) and crashed --report's contact sheet
    root = _write_dataset(tmp_path / "set", [("a.png", [(3, (40, 40, 50, 50)), (2, box)])])
    assert main(["eval", str(root), "--report", str(tmp_path / "rep")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "dice[1] has the box" in err[0] and "outside the 300x200 px photo 'a.png'" in err[0]


def test_a_crops_list_is_named_and_the_photo_folder_suggested(tmp_path):
    """A newcomer gave eval DEV's single/ (one die a crop): it said only 'must be an object with an images list'."""
    single = tmp_path / "dev" / "single"
    single.mkdir(parents=True)
    (single / "labels.json").write_text(json.dumps({"crops": [{"file": "single/5/a.jpg", "value": 5}]}))
    with pytest.raises(DatasetError, match="lists single-die crops, not labelled photos; give the folder of whole"):
        load_dataset(single)
