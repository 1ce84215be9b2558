"""vision.lab.training.detect_data and train_detector.

The detector's training cache with renders, and fine-tuning's start.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

pytest.importorskip("vision.render", reason="vision.render (the synthetic tray renderer) is not there")

from vision.lab.training.detect_data import build_cache, close_up_of, is_render, load_cache, rendered_examples  # noqa: E402


def test_rendered_examples_box_every_die_inside_the_image_and_repeat_by_seed():
    first = list(rendered_examples(3, seed=7))
    again = list(rendered_examples(3, seed=7))
    assert len(first) == 3
    for (image, boxes), (image2, boxes2) in zip(first, again):
        assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
        assert image.shape[:2] in ((480, 640), (960, 1280))
        assert np.array_equal(image, image2) and boxes == boxes2
        assert 1 <= len(boxes) <= 12
        h, w = image.shape[:2]
        for x, y, bw, bh in boxes:
            assert 0 <= x and 0 <= y and x + bw <= w and y + bh <= h and bw > 1 and bh > 1
    assert not np.array_equal(first[0][0], list(rendered_examples(1, seed=8))[0][0])


def test_cache_holds_renders_with_boxes_scaled_like_their_image(tmp_path):
    out = tmp_path / "cache.npz"
    assert build_cache([], out, renders=3, render_seed=7) == 3
    jpegs, boxes, ignores, names = load_cache(out)
    assert names == ["render_7_0", "render_7_1", "render_7_2"] and all(is_render(n) for n in names)
    for jpeg, b, ign, (image, truth) in zip(jpegs, boxes, ignores, rendered_examples(3, seed=7)):
        cached = cv2.imdecode(jpeg, cv2.IMREAD_COLOR)
        scale = min(1.0, 512 / max(image.shape[:2]))
        assert cached.shape[:2] == (round(image.shape[0] * scale), round(image.shape[1] * scale))
        np.testing.assert_allclose(b, np.float32(truth) * scale, rtol=1e-6)
        assert ign.shape == (0, 4)


def test_clutter_changes_some_renders_but_never_their_dice():
    plain = list(rendered_examples(6, seed=4))
    cluttered = list(rendered_examples(6, seed=4, clutter_share=1.0))
    assert [b for _, b in plain] == [b for _, b in cluttered]
    assert all(not np.array_equal(a, b) for (a, _), (b, _) in zip(plain, cluttered))
    none = list(rendered_examples(6, seed=4, clutter_share=0.0))
    assert all(np.array_equal(a, b) for (a, _), (b, _) in zip(plain, none))
    with pytest.raises(ValueError, match="clutter_share must be 0-1"):
        next(rendered_examples(1, seed=4, clutter_share=1.5))


def test_a_close_up_enlarges_one_die_and_moves_every_box_with_the_picture():
    image = np.zeros((960, 1280, 3), np.uint8)
    # two dice side by side, and a speck in the far corner (under 8 px: never the close-up's die)
    boxes = [[600, 400, 100, 100], [760, 420, 90, 90], [0, 0, 6, 6]]
    for x, y, w, h in boxes:
        image[y : y + h, x : x + w] = 255
    for seed in range(5):
        out, kept = close_up_of(image, boxes, np.random.default_rng(seed))
        assert out.shape == (480, 640, 3)
        assert max(max(b[2], b[3]) for b in kept) >= 0.2 * 480  # one die fills 0.2-0.7 of the height
        for x, y, w, h in kept:  # each box lies on its white square, inside the picture
            assert 0 <= x and 0 <= y and x + w <= 640 and y + h <= 480
            m = max(2, (min(w, h) + 5) // 10)  # the enlargement blurs the edges by a few px
            assert out[y + m : y + h - m, x + m : x + w - m].min() >= 250
        # the window (at most 500 px high around a die near x = 650) never reaches the corner: no box for it
        assert 1 <= len(kept) <= 2


def test_close_up_renders_leave_the_other_renders_as_they_were():
    plain = list(rendered_examples(8, seed=6))
    mixed = list(rendered_examples(8, seed=6, close_up_share=0.5))
    same = [np.array_equal(a, b) and bx == by for (a, bx), (b, by) in zip(plain, mixed)]
    assert 0 < sum(same) < len(same)  # some renders became close-ups, the rest are untouched
    for (image, boxes), untouched in zip(mixed, same):
        if not untouched:  # a close-up: 640 x 480 with one die at least 0.2 of its height
            assert image.shape == (480, 640, 3) and max(max(b[2], b[3]) for b in boxes) >= 0.2 * 480 - 1
    with pytest.raises(ValueError, match="close_up_share must be 0-1"):
        next(rendered_examples(1, seed=6, close_up_share=-0.1))


def test_cache_command_refuses_a_negative_render_count(capsys):
    from vision.lab.training.detect_data import main

    with pytest.raises(SystemExit):
        main(["--data", "nowhere", "--renders", "-1"])
    assert "--renders must be 0 or more" in capsys.readouterr().err


def test_fine_tuning_starts_from_exactly_the_exported_detector(tmp_path):
    torch = pytest.importorskip("torch", reason="torch (the train extra) is needed to fine-tune")
    pytest.importorskip("onnx", reason="onnx is needed to read the exported weights")

    from vision.detect import DEFAULT_MODEL_PATH, DieDetector
    from vision.lab.training.train_detector import DieNet, Exportable, load_onnx_weights

    net = DieNet()
    load_onnx_weights(net, DEFAULT_MODEL_PATH)
    net.eval()
    path = tmp_path / "die_detector.onnx"
    torch.onnx.export(
        Exportable(net),
        torch.zeros(1, 3, 384, 384),
        str(path),
        dynamo=False,
        input_names=["image"],
        output_names=["maps"],
        opset_version=13,
        dynamic_axes={"image": {2: "height", 3: "width"}, "maps": {2: "grid_height", 3: "grid_width"}},
    )
    image, _ = next(rendered_examples(1, seed=3))
    shipped, again = DieDetector(), DieDetector(path)
    np.testing.assert_allclose(again.heatmaps(image)[0], shipped.heatmaps(image)[0], atol=1e-4)
    assert again.detect(image) == shipped.detect(image)
    with pytest.raises(ValueError, match="same widths"):
        load_onnx_weights(DieNet((8, 16, 32, 64)), DEFAULT_MODEL_PATH)


def test_a_fine_tune_records_which_network_it_started_from(tmp_path):
    pytest.importorskip("torch", reason="torch (the train extra) is needed to fine-tune")
    import hashlib
    import json
    import shutil

    from vision.detect import DEFAULT_MODEL_PATH
    from vision.lab.training.train_detector import init_record

    start = tmp_path / "die_detector.onnx"
    shutil.copy(DEFAULT_MODEL_PATH, start)
    bare = init_record(start)
    assert bare == {"path": str(start), "sha256": hashlib.sha256(start.read_bytes()).hexdigest()}
    (tmp_path / "die_detector.json").write_text(
        json.dumps({"command": "python -m vision.lab.training.train_detector X"})
    )
    assert init_record(start)["trained_by"] == "python -m vision.lab.training.train_detector X"


def _white_square(size=(240, 320), box=(150, 60, 40, 40)):
    image = np.zeros((*size, 3), np.uint8)
    x, y, w, h = box
    image[y : y + h, x : x + w] = 255
    return image


@pytest.mark.parametrize("degrees", [30.0, -45.0, 12.5, 90.0])
def test_a_turned_photo_keeps_each_die_box_on_its_die(degrees):
    pytest.importorskip("torch", reason="torch (the train extra) is needed for the detector's training")
    from vision.lab.training.train_detector import turn_photo

    box = np.float32([[150, 60, 40, 40]])
    turned, boxes, _ = turn_photo(_white_square(), box, np.zeros((0, 4), np.float32), degrees, [0, 0, 0])
    ys, xs = np.nonzero(turned[..., 0] > 127)
    x, y, w, h = boxes[0]
    # the box's centre is where the drawn square landed, and every corner of the photo is on the canvas
    assert abs(x + w / 2 - (xs.mean() + 0.5)) < 0.6 and abs(y + h / 2 - (ys.mean() + 0.5)) < 0.6
    assert turned.shape[0] >= 240 and turned.shape[1] >= 240
    # a square die keeps its size: its own orientation is unknown, so the box does not grow with the turn
    assert w == pytest.approx(40, abs=0.01) and h == pytest.approx(40, abs=0.01)


def test_a_turned_ignore_region_still_covers_everything_it_covered():
    pytest.importorskip("torch", reason="torch (the train extra) is needed for the detector's training")
    from vision.lab.training.train_detector import turn_photo

    region = np.float32([[100, 50, 80, 30]])
    turned, _, ignores = turn_photo(
        _white_square(box=(100, 50, 80, 30)), np.zeros((0, 4), np.float32), region, 30.0, [0, 0, 0]
    )
    ys, xs = np.nonzero(turned[..., 0] > 127)
    x, y, w, h = ignores[0]
    assert xs.min() >= x - 1 and xs.max() <= x + w + 1 and ys.min() >= y - 1 and ys.max() <= y + h + 1
    assert w > 80  # grown to the turned corners' box


def test_a_turn_share_outside_0_to_1_is_refused(capsys):
    pytest.importorskip("torch", reason="torch (the train extra) is needed for the detector's training")
    from vision.lab.training.train_detector import main

    with pytest.raises(SystemExit):
        main(["--turn-prob", "1.5", "--cache", "nowhere.npz"])
    assert "--turn-prob must be between 0 and 1" in capsys.readouterr().err
