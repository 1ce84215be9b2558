"""The whole pip reader on the real dev photos (``../shared/dice-images/dev``).

Floors sit a little under what ``dicetable eval ../shared/dice-images/dev``
measured when they were written (see the report in the commit), so a change that
makes reading clearly worse fails here. Skipped when the photos or the packaged
models are absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

DEV = Path(__file__).resolve().parents[1] / ".." / "shared" / "dice-images" / "dev"

pytestmark = [pytest.mark.realdata, pytest.mark.slow]


@pytest.fixture(scope="module")
def dev_result():
    if not (DEV / "labels.json").is_file():
        pytest.skip(f"dev photos not found at {DEV} (../shared/dice-images/dev beside the repo)")
    from vision.face import DEFAULT_MODEL_PATH

    if not DEFAULT_MODEL_PATH.is_file():
        pytest.skip("the packaged face-reader model vision/models/face_reader.onnx is not there yet")
    from vision.lab.evaluate import evaluate
    from vision.reader import read_image

    return evaluate(DEV, read_image)


def test_dev_detector_finds_nearly_every_die(dev_result):
    m = dev_result.metrics()
    assert m["missed"] / m["labelled"] <= 0.01
    assert m["extra"] <= 10


def test_dev_accuracy_and_silent_errors(dev_result):
    m = dev_result.metrics()
    assert m["accuracy"] >= ACCURACY_FLOOR
    assert m["silent_error_rate"] <= SILENT_CEILING


def test_dev_kingpi_closest_to_product(dev_result):
    k = dev_result.by_source()["kingpi"]
    assert k["accuracy"] >= KINGPI_FLOOR
    assert k["wrong"] + k["extra_valued"] <= 1


def test_dev_blank_image_gives_no_dice(dev_result):
    blank = [im for im in dev_result.images if im.path.name == "jim_input_dice3.jpg"]
    assert blank and all(o.kind != "extra" or o.read is None for o in blank[0].outcomes)


# Measured with die detector v1, face reader v8 (widths 64-96-128-192, depth 2, with
# 1200 domain-randomised renders and specular streaks on a quarter of the crops) and
# pip finder v3 (widths 24-48-64, rendered and label-guided pip targets; layout check
# on blobs and peaks), both trained on the TRAIN set and on every DEV photo (so these
# numbers are not a measure of generalisation: each held-out DEV fold, read by twins
# trained without it, gave 94.7 % / 0.2 % and 92.6 % / 0.8 %, see
# vision/models/reader_confidence.json), detector with the containment rule,
# VALUE_THRESHOLD 0.75, pip maps of turned crops where the first disagrees: accuracy
# 0.949, silent errors 0.006 (5 wrong + 1 extra of 947), kingpi 1.000 (78 of 78,
# every image exact).
ACCURACY_FLOOR = 0.925
SILENT_CEILING = 0.010
KINGPI_FLOOR = 1.0


def test_dev_every_kingpi_image_exactly_right(dev_result):
    """Issue #7's target for the photos closest to the product (Pi camera, ivory dice, dark tray)."""
    kingpi = [im for im in dev_result.images if im.path.name.startswith("kingpi_")]
    assert len(kingpi) == 13
    assert [im.path.name for im in kingpi if not im.exact] == []


def test_dev_jim_wood_table_gives_no_phantom_die(dev_result):
    """The reddish wood grain of the jim photos holds pip-like spots; none may be reported as a die."""
    jim = [im for im in dev_result.images if im.path.name.startswith("jim_")]
    assert len(jim) == 6
    assert [(im.path.name, o.box) for im in jim for o in im.outcomes if o.kind == "extra"] == []


def test_dev_single_die_close_ups_are_not_read_as_their_pips():
    """The 300 close-ups of dev/single (one die filling about 3/4 of the picture) must not turn into wrong values."""
    from vision.images import load_image
    from vision.reader import read_image

    folder = DEV / "single"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent (the DEV set's single-die close-ups)")
    wrong = right = 0
    for path in sorted(folder.glob("*/*.jpg")):
        values = read_image(load_image(path)).values
        truth = int(path.parent.name)
        wrong += sum(v is not None and v != truth for v in values)
        right += values == (truth,)
    # without the coarse look: 38 right, 83 wrong values; with it 222 right, 2 wrong (a neighbouring die cut by
    # the crop read as a 2, and nell_IMG_20191208_112342_d16, labelled 2, which shows three pips); with the
    # framed coarse look too and the speck rule, 237 right, 0 wrong; when a part of the die boxed tighter no
    # longer vetoes the big box's value, 245 right, 0 wrong; with the close-up judgment asking the reader's
    # three pip looks and no box left inside a die given a value, 249 right, 1 wrong (d16 above, read 3 as in
    # its DEV photo); with face reader v8, 254 right, 2 wrong: d16, and nell_IMG_20191208_112342_d9 (a blue 4 with
    # red pips, 37 px across), where neither of the detector's looks boxes the whole die, only its lower half
    # (16 x 15 px), which v8 reads as a 2 and the pip finder agrees (v7 left it unknown): a detector miss, not
    # pips taken for dice
    assert right >= 240 and wrong <= 2


def _kingpi_jim_close_ups(share: float, every: int = 1):
    """Each `every`-th kingpi and jim DEV die cropped to fill `share` of the picture.

    Yields (die, its box in the crop, reading).
    """
    from vision.images import load_image
    from vision.lab.evaluate import load_dataset
    from vision.lab.stress import close_up_window
    from vision.reader import read_image

    if not DEV.is_dir():
        pytest.skip(f"{DEV} is absent")
    for item in load_dataset(DEV):
        if not item.path.name.startswith(("kingpi", "jim")):
            continue
        image = load_image(item.path)
        for die in item.dice[::every]:
            x, y, w, h = die.box
            x0, y0, x1, y1 = close_up_window(die.box, share, image.shape[:2])
            yield die, (x - x0, y - y0, w, h), read_image(image[y0:y1, x0:x1])


@pytest.mark.parametrize("share, least_right", [(0.65, 44), (0.9, 41)])
def test_dev_dice_cropped_to_fill_the_picture_are_read_whole(share, least_right):
    """kingpi and jim dice cropped so that one fills `share` of the picture: read as dice, not as their pips."""
    from vision.lab.evaluate import match_dice

    right = wrong = total = 0
    for die, box, reading in _kingpi_jim_close_ups(share, every=2):
        matched = dict(match_dice([d.box for d in reading.dice], [box]))
        total += 1
        value = next((reading.dice[i].value for i in matched), None)
        right += value == die.value
        wrong += value is not None and value != die.value
    # 0.65: before the coarse look 1 of 46 right, 36 missed (their pips read as 1s and 2s), with it 46 right;
    # 0.9: 44 right, 2 unknown with the framed coarse look (40 without it)
    assert total == 46 and right >= least_right and wrong == 0


def test_eval_on_dev_says_its_numbers_are_in_sample(dev_result, capsys, tmp_path):
    """The shipped models were trained on DEV; eval must say so rather than pass the numbers off as held-out."""
    from table.cli import main
    from table.commands.eval import _is_the_dev_set

    assert main(["eval", str(DEV)]) == 0
    assert "in-sample" in capsys.readouterr().err
    assert not _is_the_dev_set(tmp_path)


def test_dev_set_is_known_from_a_deleted_working_folder(monkeypatch, tmp_path):
    """A working folder deleted under the process (Path.cwd() fails) must not turn a whole eval into an error."""
    from table.commands.eval import _is_the_dev_set
    from vision.lab.evaluate import DEFAULT_DEV_DIR

    def gone():
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(Path, "cwd", staticmethod(gone))
    assert _is_the_dev_set(DEFAULT_DEV_DIR)  # found beside the source checkout without asking for the working folder
    assert not _is_the_dev_set(tmp_path)


@pytest.mark.parametrize(
    "photo, window, truth, cut",
    [
        # a 1 filling half of the picture, of which the main look boxed only two specks of felt (one read as a 1)
        ("kingpi_scripts_collected_images_image_4.jpg", (415, 496, 720, 801), (1, (498, 579, 139, 139)), 0),
        # a 5, and a corner of a 6 cut by the picture's edge whose box stops 7 px short of it (read as a 1)
        ("kingpi_scripts_collected_images_image_5.jpg", (824, 208, 1056, 436), (5, (868, 251, 145, 142)), 1),
        # the newcomer check of stop 15: every box touches the edge of this tight crop of a 5, so no die was
        # "wholly in view" to size the corner of the 6 beside it, read as a 1; the biggest square box stands in
        ("kingpi_scripts_collected_images_image_2.jpg", (828, 606, 1028, 806), (5, (876, 654, 150, 150)), 1),
        ("kingpi_scripts_collected_images_image_5.jpg", (866, 249, 1059, 442), (5, (868, 251, 145, 142)), 1),
    ],
)
def test_close_ups_found_by_newcomers_read_right(photo, window, truth, cut):
    """Close-ups cut from DEV photos where the newcomer checks of stops 14 and 15 found silent errors."""
    from vision.images import load_image
    from vision.lab.evaluate import match_dice
    from vision.reader import read_image

    if not (DEV / photo).is_file():
        pytest.skip(f"{DEV / photo} is absent")
    x0, y0, x1, y1 = window
    reading = read_image(load_image(DEV / photo)[y0:y1, x0:x1])
    value, (x, y, w, h) = truth
    matched = dict(match_dice([d.box for d in reading.dice], [(x - x0, y - y0, w, h)]))
    assert [reading.dice[i].value for i in matched] == [value]
    others = [d for i, d in enumerate(reading.dice) if i not in matched]
    assert all(d.value is None for d in others)  # nothing else is given a value
    assert sum(d.reason == "cut off by the picture's edge" for d in others) == cut


def test_dice_cut_to_their_outline_are_one_die_not_a_die_and_its_pips():
    """Every kingpi and jim die cut to its own box: the die read whole, and no box left around one of its pips.

    A box lying inside a much bigger die given a value is a pip or a part of it
    (``vision.detect.contained_in`` across looks): before that rule 74 of the 89
    crops were exactly right (the die right and nothing else boxed); 11 more
    showed an unknown box, or once a 1, on a pip of the die read right. Now 85.
    (Measured with the close-up judgment asking the reader's three pip looks.)
    """
    exactly_right = wrong = total = 0
    for die, _, reading in _kingpi_jim_close_ups(1.0):
        total += 1
        exactly_right += reading.values == (die.value,)
        wrong += sum(v is not None and v != die.value for v in reading.values)
    # the wrong values (2; 3 before the biggest square box sized cut corners, 4 asking the three looks
    # without the containment rule) are pips boxed as dice where the die itself was not read: the README asks
    # for a little background around a close-up die
    assert total == 89 and exactly_right >= 84 and wrong <= 3
