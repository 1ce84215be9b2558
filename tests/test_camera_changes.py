"""vision.lab.camera_changes (photos as other cameras would take them) and benchmarks/camera_changes.py."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.lab.camera_changes import CAMERA_CHANGES, apply_change, change_names

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / ".." / "shared" / "dice-images" / "dev"

#: Red squares on a grey photo: (x, y, w, h) boxes, away from the edges so no change cuts them.
SQUARES = [(60, 50, 40, 40), (200, 120, 30, 30), (330, 60, 50, 50), (120, 190, 36, 36)]


def _photo() -> np.ndarray:
    img = np.full((280, 440, 3), 150, np.uint8)
    for x, y, w, h in SQUARES:
        img[y : y + h, x : x + w] = (30, 30, 220)
    return img


def _red_blobs(img: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Bounding boxes of the red regions (the moved squares), biggest first."""
    b, g, r = (img[..., k].astype(int) for k in range(3))
    mask = ((r - np.maximum(b, g)) > 80).astype(np.uint8)
    n, _, stats, _ = cv2.connectedComponentsWithStats(mask)
    blobs = [tuple(int(v) for v in stats[k, :4]) for k in range(1, n) if stats[k, 4] > 50]
    return blobs


def _iou(a, b) -> float:
    ax1, ay1, bx1, by1 = a[0] + a[2], a[1] + a[3], b[0] + b[2], b[1] + b[3]
    iw = max(0, min(ax1, bx1) - max(a[0], b[0]))
    ih = max(0, min(ay1, by1) - max(a[1], b[1]))
    inter = iw * ih
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


@pytest.mark.parametrize("name", change_names())
def test_every_change_gives_a_bgr_photo_and_one_box_per_die(name):
    img = _photo()
    out, boxes = apply_change(name, img, SQUARES, np.random.default_rng(0))
    assert out.dtype == np.uint8 and out.ndim == 3 and out.shape[2] == 3
    assert len(boxes) == len(SQUARES)
    for x, y, w, h in boxes:
        assert 0 <= x and 0 <= y and w > 0 and h > 0
        assert x + w <= out.shape[1] and y + h <= out.shape[0]
    assert img.tobytes() == _photo().tobytes(), "the photo given must not be changed in place"


@pytest.mark.parametrize("name", ["none", "upscale", "downscale", "turn", "tilt"])
def test_moved_boxes_cover_the_moved_dice(name):
    """Where a square lands in the changed photo is where its moved box says (the turn's box is the turned square's)."""
    out, boxes = apply_change(name, _photo(), SQUARES, np.random.default_rng(0))
    blobs = _red_blobs(out)
    assert len(blobs) == len(SQUARES)
    for box in boxes:
        best = max(_iou(box, blob) for blob in blobs)
        assert best > 0.85, (name, box, blobs)


def test_turn_and_tilt_keep_the_whole_photo_in_view():
    img = _photo()
    for name in ("turn", "tilt"):
        out, _ = apply_change(name, img, SQUARES, np.random.default_rng(0))
        # a 30 degree turn of a 440 x 280 photo needs (440 cos30 + 280 sin30) x (440 sin30 + 280 cos30)
        assert out.shape[1] >= img.shape[1] * 0.9 and out.shape[0] >= img.shape[0] * 0.9
        assert len(_red_blobs(out)) == len(SQUARES)
    turned, _ = apply_change("turn", img, SQUARES, np.random.default_rng(0))
    assert abs(turned.shape[1] - (440 * np.cos(np.radians(30)) + 280 * 0.5)) <= 2
    assert abs(turned.shape[0] - (440 * 0.5 + 280 * np.cos(np.radians(30)))) <= 2


def test_tilt_shrinks_the_far_side():
    """A camera tilted from straight down sees one edge of the photo farther away: the photo becomes a trapezoid."""
    img = np.full((300, 300, 3), 200, np.uint8)  # a light frame: what the tilt uncovers is filled with its colour
    img[4:-4, 4:-4] = 40
    out, _ = apply_change("tilt", img, [], np.random.default_rng(0))
    rows = np.nonzero((out[..., 0] < 100).any(axis=1))[0]
    widths = (out[..., 0] < 100).sum(axis=1)
    top, bottom = widths[rows[0] + 2], widths[rows[-1] - 2]
    assert abs(int(top) - int(bottom)) > 30, (top, bottom)


def test_light_changes():
    img = _photo()
    rng = np.random.default_rng(0)
    grey_patch = (slice(5, 40), slice(5, 40))
    warm, _ = apply_change("warm", img, SQUARES, rng)
    cool, _ = apply_change("cool", img, SQUARES, rng)
    w, c = warm[grey_patch].reshape(-1, 3).mean(0), cool[grey_patch].reshape(-1, 3).mean(0)
    assert w[2] > w[0] + 30 and c[0] > c[2] + 30  # warm: red over blue; cool: blue over red
    dark, _ = apply_change("dark", img, SQUARES, rng)
    bright, _ = apply_change("bright", img, SQUARES, rng)
    assert dark.mean() < img.mean() * 0.75 < img.mean() * 1.2 < bright.mean()
    flat, _ = apply_change("low_contrast", img, SQUARES, rng)
    assert flat.astype(float).std() < img.astype(float).std() * 0.6
    none, boxes = apply_change("none", img, SQUARES, rng)
    assert none.tobytes() == img.tobytes() and boxes == SQUARES


def test_noise_is_repeatable_by_seed():
    img = _photo()
    a, _ = apply_change("noise", img, SQUARES, np.random.default_rng(3))
    b, _ = apply_change("noise", img, SQUARES, np.random.default_rng(3))
    c, _ = apply_change("noise", img, SQUARES, np.random.default_rng(4))
    assert a.tobytes() == b.tobytes() != c.tobytes()
    assert 8 < np.abs(a.astype(float) - img).mean() < 14  # |N(0, 12)| averages 9.6 grey levels


def test_defocus_blurs_in_proportion_to_the_dice():
    """Defocus is measured in die sides, so a photo with big dice is blurred more in pixels."""
    img = _photo()
    small, _ = apply_change("defocus", img, [(0, 0, 20, 20)], np.random.default_rng(0))
    big, _ = apply_change("defocus", img, [(0, 0, 120, 120)], np.random.default_rng(0))
    edge = lambda x: np.abs(np.diff(x.astype(float), axis=1)).max()  # noqa: E731
    assert edge(img) > edge(small) > edge(big)


def test_bad_input_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="unknown camera change 'fisheye'.*warm"):
        apply_change("fisheye", _photo(), [], np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"\(H, W, 3\) uint8"):
        apply_change("warm", _photo()[..., 0], [], np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"\(H, W, 3\) uint8"):
        apply_change("warm", _photo().astype(np.float32), [], np.random.default_rng(0))
    assert list(CAMERA_CHANGES)[0] == "none"


def _benchmark():
    if str(ROOT / "benchmarks") not in sys.path:  # as `python benchmarks/camera_changes.py` has it: for _args
        sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("camera_changes_bench", ROOT / "benchmarks" / "camera_changes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_benchmark_refuses_an_unknown_change(capsys):
    with pytest.raises(SystemExit) as exc:
        _benchmark().main(["--changes", "none,fisheye"])
    assert exc.value.code == 2
    assert "unknown camera change(s) fisheye" in capsys.readouterr().err


def test_benchmark_reads_the_changed_dev_photos(tmp_path, capsys):
    """On the jim photos (11 dice), unchanged they read as `dicetable eval` reads them; turned, the boxes still pair."""
    if not (DEV / "labels.json").is_file():
        pytest.skip(f"dev photos not found at {DEV} (../shared/dice-images/dev beside the repo)")
    assert _benchmark().main(["--source", "jim_", "--changes", "none,turn,jpeg", "--save", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rows = {
        line.split()[0]: line.split() for line in out.splitlines() if line.split()[:1] in (["none"], ["turn"], ["jpeg"])
    }
    assert set(rows) == {"none", "turn", "jpeg"}
    assert rows["none"][1:7] == ["11", "11", "0", "0", "0", "0"]  # dice, right, wrong, unknown, missed, extraV
    assert rows["turn"][1] == "11" and rows["turn"][5] == "0", "a turned die's moved box must still pair with it"
    # the change from the unchanged photos is printed for the changes, not for 'none' itself
    assert len(rows["turn"]) == len(rows["none"]) + 1 and rows["turn"][-2][0] in "+-"
    sheets = sorted(p.name for p in tmp_path.iterdir())
    assert "none.png" not in sheets  # every unchanged jim photo is read right: nothing to show


@pytest.mark.parametrize("k", range(5))
def test_quarter_turns_move_the_boxes_with_the_dice(k):
    from vision.lab.camera_changes import quarter_turn

    turned, boxes = quarter_turn(_photo(), SQUARES, k)
    assert turned.shape == ((280, 440, 3) if k % 2 == 0 else (440, 280, 3)) and turned.flags["C_CONTIGUOUS"]
    blobs = _red_blobs(turned)
    for box in boxes:
        assert max(_iou(box, blob) for blob in blobs) == 1.0, (k, box, blobs)
