"""vision.lab.training (no torch needed): sample building, augmentation, drawn dice."""

from __future__ import annotations

import argparse
import json

import cv2
import numpy as np
import pytest

from vision.face import CROP_SIZE
from vision.lab.training.augment import (
    add_augment_options,
    add_camera_degradation,
    add_specular_streak,
    augment,
    augment_options,
    augment_record,
    centre_crop,
)
from vision.lab.training.data import (
    CONTEXT_SIZE,
    NEG_CENTRE_GAP,
    build_samples,
    cut_context,
    iou,
    nominal_side,
    samples_from_noted_photos,
)
from vision.lab.training.evaluate import score
from vision.lab.training.synth import PIP_LAYOUTS, draw_die, plain_face


def test_iou():
    assert iou((0, 0, 10, 10), (0, 0, 10, 10)) == 1.0
    assert iou((0, 0, 10, 10), (20, 20, 5, 5)) == 0.0
    assert iou((0, 0, 10, 10), (5, 0, 10, 10)) == pytest.approx(50 / 150)


@pytest.fixture()
def tiny_train(tmp_path):
    img = np.full((240, 320, 3), 90, np.uint8)
    dice = []
    for i, (x, y, v) in enumerate([(40, 40, 3), (150, 60, 5), (230, 150, 1)]):
        cv2.rectangle(img, (x, y), (x + 40, y + 40), (230, 230, 230), -1)
        dice.append({"value": v, "box": [x, y, 40, 40], "box_kind": "die"})
    cv2.imwrite(str(tmp_path / "rune_a.jpg"), img)
    pips = [
        {"value": 2, "box": [60, 60, 20, 20], "box_kind": "pips"},
        {"value": 1, "box": [200, 100, 8, 8], "box_kind": "pips"},
    ]
    cv2.imwrite(str(tmp_path / "matteo_b.jpg"), img)
    face = [{"value": 4, "box": [10, 10, 30, 30], "box_kind": "face"}]
    cv2.imwrite(str(tmp_path / "rune_c.jpg"), img)
    labels = {
        "images": [
            {"file": "rune_a.jpg", "width": 320, "height": 240, "dice": dice},
            {"file": "matteo_b.jpg", "width": 320, "height": 240, "dice": pips},
            {"file": "rune_c.jpg", "width": 320, "height": 240, "dice": face},
        ]
    }
    (tmp_path / "labels.json").write_text(json.dumps(labels))
    return tmp_path, labels


def test_build_samples_positives_and_negatives(tiny_train):
    folder, labels = tiny_train
    samples = build_samples(folder, seed=3, negatives_per_image=5)
    pos = [s for s in samples if s.label > 0]
    # the 'face' image is skipped by default; pip boxes are widened around their centre
    assert sorted((s.file, s.label) for s in pos) == sorted(
        [("rune_a.jpg", 3), ("rune_a.jpg", 5), ("rune_a.jpg", 1), ("matteo_b.jpg", 2), ("matteo_b.jpg", 1)]
    )
    matteo_one = next(s for s in pos if s.file == "matteo_b.jpg" and s.label == 1)
    assert (matteo_one.cx, matteo_one.cy) == (204.0, 104.0)
    assert matteo_one.side > nominal_side(20, 20)  # die is bigger than the 2's pip pattern
    die_boxes = [tuple(d["box"]) for d in labels["images"][0]["dice"]]
    negs = [s for s in samples if s.label == 0 and s.file == "rune_a.jpg"]
    assert any(s.kind == "neg_random" for s in negs)
    for s in negs:
        for x, y, w, h in die_boxes:
            gap = max(abs(s.cx - (x + w / 2)), abs(s.cy - (y + h / 2)))
            assert gap >= NEG_CENTRE_GAP * max(w, h) - 1e-9
        if s.kind == "neg_random":
            side = s.side / 1.3
            cand = (s.cx - side / 2, s.cy - side / 2, side, side)
            assert max(iou(cand, b) for b in die_boxes) < 0.1
    assert any(s.label == 4 for s in build_samples(folder, seed=3, use_face_boxes=True))


def test_samples_from_noted_photos_marks_whole_photos(tiny_train):
    folder, labels = tiny_train
    labels["images"][0]["notes"] = "Rune55 grayscale copy of a tray photo"
    labels["images"][1]["notes"] = "Oblique webcam photo"
    (folder / "labels.json").write_text(json.dumps(labels))
    samples = build_samples(folder, seed=3)
    marked = samples_from_noted_photos(folder, ["Rune55 grayscale"], seed=3)
    assert marked.shape == (len(samples),) and marked.dtype == bool
    # every sample of the noted photo (its dice and its negatives), none of the other photo's
    assert [s.file == "rune_a.jpg" for s in samples] == marked.tolist()
    assert marked.any() and not marked.all()
    both = samples_from_noted_photos(folder, ["Rune55 grayscale", "Oblique"], seed=3)
    assert both.all()


def test_samples_from_noted_photos_refuses_a_prefix_that_matches_nothing(tiny_train):
    folder, _ = tiny_train
    with pytest.raises(ValueError, match="begin with 'Rune55 greyscale'"):
        samples_from_noted_photos(folder, ["Rune55 greyscale"])


def test_context_centre_crop_matches_crop_die_geometry():
    from vision.face import crop_die

    yy, xx = np.mgrid[0:300, 0:300]
    img = np.dstack([xx % 256, yy % 256, (xx // 2) % 256]).astype(np.uint8)
    box = (120, 110, 50, 50)
    ctx = cut_context(img, 145, 135, nominal_side(50, 50))
    assert ctx.shape == (CONTEXT_SIZE, CONTEXT_SIZE, 3)
    a = centre_crop(ctx).astype(int)
    b = crop_die(img, box).astype(int)
    assert np.abs(a - b).mean() < 3.0  # same region, resampled twice


def test_augment_is_seeded_and_shaped():
    ctx = draw_die(5, np.random.default_rng(0), size=CONTEXT_SIZE)
    a = augment(ctx, np.random.default_rng(7))
    b = augment(ctx, np.random.default_rng(7))
    assert a.shape == (CROP_SIZE, CROP_SIZE, 3) and a.dtype == np.uint8
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, augment(ctx, np.random.default_rng(8)))


def test_augment_grayscale_prob_changes_only_the_grey_crops():
    ctx = draw_die(5, np.random.default_rng(0), size=CONTEXT_SIZE)
    ctx[..., 2] = 200  # a colourful die, so that a grey crop shows
    grey, colour = 0, 0
    for seed in range(40):
        always = augment(ctx, np.random.default_rng(seed), grayscale_prob=1.0)
        never = augment(ctx, np.random.default_rng(seed), grayscale_prob=0.0)
        # per-channel noise after the grey step leaves a grey crop a little colour; a coloured one keeps far more
        grey += np.ptp(always.astype(int), axis=2).mean() < 20
        colour += np.ptp(never.astype(int), axis=2).mean() > 60
        assert always.shape == never.shape == (CROP_SIZE, CROP_SIZE, 3)
    assert grey == 40 and colour == 40


def test_specular_streak_is_a_thin_band_of_added_light():
    for seed in range(30):
        x = np.full((CROP_SIZE, CROP_SIZE, 3), 60.0, np.float32)
        add_specular_streak(x, np.random.default_rng(seed))
        added = x[..., 0] - 60.0
        assert np.array_equal(x[..., 0], x[..., 1]) and np.array_equal(x[..., 1], x[..., 2])  # white light
        assert added.min() >= 0.0 and 50.0 * 0.5 < added.max() <= 220.0 * 1.7
        lit = added > 0.8 * added.max()  # the main band's core (a twin band is at most 0.7 as bright)
        assert 0.0 < lit.mean() < 0.15, f"seed {seed}: {lit.mean():.2f} of the crop lit; a streak is a thin band"
        ys, xs = np.nonzero(lit)  # the band's pixels lie along one line: one long axis, one short
        spread = np.linalg.eigvalsh(np.cov(np.vstack([xs, ys]).astype(float)) + 1e-9 * np.eye(2))
        assert spread[1] > 4.0 * spread[0], f"seed {seed}: lit pixels spread {spread}, not a band"


def test_augment_streaks_leave_the_other_draws_alone():
    ctx = draw_die(4, np.random.default_rng(0), size=CONTEXT_SIZE)
    streaked, brighter = 0, 0
    for seed in range(30):
        plain = augment(ctx, np.random.default_rng(seed))
        off = augment(ctx, np.random.default_rng(seed), streak_rng=np.random.default_rng(99), streak_prob=0.0)
        np.testing.assert_array_equal(plain, off)
        on = augment(ctx, np.random.default_rng(seed), streak_rng=np.random.default_rng(seed), streak_prob=1.0)
        streaked += not np.array_equal(on, plain)
        brighter += on.astype(int).sum() > plain.astype(int).sum()
    assert streaked == 30 and brighter >= 27  # clipping and inversion (7 %) may darken a few
    with pytest.raises(ValueError, match="streak_rng"):
        augment(ctx, np.random.default_rng(0), streak_prob=0.5)


def test_camera_degradation_changes_every_crop_repeatably():
    crop = cv2.resize(draw_die(5, np.random.default_rng(0), size=CONTEXT_SIZE), (CROP_SIZE, CROP_SIZE))
    changed, darker = 0, 0
    for seed in range(40):
        out = add_camera_degradation(crop, np.random.default_rng(seed))
        assert out.shape == crop.shape and out.dtype == np.uint8
        np.testing.assert_array_equal(out, add_camera_degradation(crop, np.random.default_rng(seed)))
        changed += np.abs(out.astype(int) - crop).mean() > 2.0  # at least one degradation, always
        darker += out.mean() < 0.8 * crop.mean()  # dim light: about half of them
    assert changed == 40
    assert 10 <= darker <= 30, darker


def test_augment_degradation_leaves_the_other_draws_alone():
    ctx = draw_die(3, np.random.default_rng(1), size=CONTEXT_SIZE)
    degraded = 0
    for seed in range(30):
        plain = augment(ctx, np.random.default_rng(seed))
        off = augment(ctx, np.random.default_rng(seed), degrade_rng=np.random.default_rng(99), degrade_prob=0.0)
        np.testing.assert_array_equal(plain, off)
        rng_off, rng_on = np.random.default_rng(seed), np.random.default_rng(seed)
        augment(ctx, rng_off)
        on = augment(ctx, rng_on, degrade_rng=np.random.default_rng(seed), degrade_prob=1.0)
        assert rng_on.random() == rng_off.random(), "the main generator must draw exactly as without degradation"
        degraded += not np.array_equal(on, plain)
    assert degraded == 30
    with pytest.raises(ValueError, match="degrade_rng"):
        augment(ctx, np.random.default_rng(0), degrade_prob=0.5)


def test_degrade_prob_is_an_option_recorded_only_when_used():
    parser = argparse.ArgumentParser()
    add_augment_options(parser)
    parser.add_argument("--seed", type=int, default=0)
    default = parser.parse_args([])
    assert augment_record(default) == {"grayscale_prob": 0.2, "streak_prob": 0.0}  # as recorded before the option
    used = parser.parse_args(["--degrade-prob", "0.3", "--seed", "5"])
    assert augment_record(used)["degrade_prob"] == 0.3
    options = augment_options(used)
    assert options["degrade_prob"] == 0.3
    a, b = augment_options(used)["degrade_rng"], options["degrade_rng"]
    assert a.random() == b.random() != augment_options(used)["streak_rng"].random()


@pytest.mark.parametrize("value", range(1, 7))
def test_plain_face_has_value_many_pips(value):
    crop = plain_face(value, angle_deg=20)
    dark = (cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY) < 120).astype(np.uint8)
    # pips are dark blobs inside the white square; the background is dark too, so
    # count the components that do not touch the crop border
    n, lab, stats, _ = cv2.connectedComponentsWithStats(dark)
    inner = [
        i
        for i in range(1, n)
        if stats[i, 0] > 0
        and stats[i, 1] > 0
        and stats[i, 0] + stats[i, 2] < CROP_SIZE
        and stats[i, 1] + stats[i, 3] < CROP_SIZE
    ]
    assert len(inner) == value == len(PIP_LAYOUTS[value])


def test_score_counts_right_wrong_and_abstained():
    probs = np.array(
        [
            [0.0, 0.9, 0.1, 0, 0, 0, 0],  # reads 1, right
            [0.0, 0.95, 0.05, 0, 0, 0, 0],  # reads 1, truth 2: wrong
            [0.8, 0.2, 0, 0, 0, 0, 0],  # class 0: abstained
            [0.0, 0.0, 0.0, 0.6, 0.4, 0, 0],  # reads 3 at 0.6
        ],
        np.float32,
    )
    values = np.array([1, 2, 3, 3])
    s = score(probs, values, 0.0)
    assert (s["right"], s["wrong"], s["abstained"]) == (0.5, 0.25, 0.25)
    s = score(probs, values, 0.92)
    assert (s["right"], s["wrong"], s["abstained"]) == (0.0, 0.25, 0.75)


def test_render_samples_gives_dice_and_background():
    pytest.importorskip("vision.render")
    from vision.lab.training.render_data import render_samples

    crops, labels = render_samples(2, seed=0)
    assert crops.shape[1:] == (CONTEXT_SIZE, CONTEXT_SIZE, 3) and crops.dtype == np.uint8
    assert len(crops) == len(labels)
    assert (labels == 0).any() and (labels > 0).any()
    assert set(labels.tolist()) <= set(range(7))


def test_render_samples_can_put_a_leaning_die_in_every_image(monkeypatch, tmp_path):
    pytest.importorskip("vision.render")
    import vision.lab.training.render_data as render_data
    from vision.render import Unreadable

    trays = []

    def recording(*args, **kwargs):
        tray = render_randomised(*args, **kwargs)
        trays.append(tray)
        return tray

    render_randomised = render_data.render_randomised
    monkeypatch.setattr(render_data, "render_randomised", recording)
    crops, labels = render_data.render_samples(4, seed=3, randomised=True, leaning=True)
    assert len(trays) == 4 and all(t.condition == "custom" for t in trays)
    leaning = [[d for d in t.dice if d.unreadable == Unreadable.LEANING] for t in trays]
    assert sum(len(lean) for lean in leaning) >= 3 and all(len(lean) <= 1 for lean in leaning)  # where one fits
    # each whole flat die gives a crop with its value (one cut by the picture's edge none); the leaning ones are class 0
    flat = sorted(d.value for t in trays for d in t.dice if d.unreadable is None)
    assert sorted(labels[labels > 0].tolist()) == flat
    assert len(crops) == len(labels)
    for tray, lean in zip(trays, leaning):  # each leaning die's own crop is among the class-0 crops
        for d in lean:
            x, y, w, h = (float(v) for v in d.box)
            own = cut_context(np.asarray(tray.image), x + w / 2, y + h / 2, nominal_side(w, h))
            assert any(np.array_equal(own, c) for c in crops[labels == 0])

    trays.clear()
    render_data.render_samples(4, seed=3, randomised=True)
    assert all(t.condition == "random" for t in trays)  # without `leaning`: every factor drawn at random as before

    with pytest.raises(ValueError, match="randomised=True"):
        render_data.render_samples(1, seed=0, leaning=True)  # tray scenes have no leaning dice to offer

    monkeypatch.setattr(
        render_data,
        "render_samples",
        lambda *a, **k: (
            np.zeros((1, CONTEXT_SIZE, CONTEXT_SIZE, 3), np.uint8),
            np.zeros(1, np.int64),
            [np.zeros((0, 3))],
        ),
    )
    for lean in (False, True):
        render_data.cached_render_samples(2, 0, tmp_path, randomised=True, leaning=lean)
    names = sorted(p.name.split("_2_")[0] for p in tmp_path.iterdir())
    assert names == ["render_randomised", "render_randomised_leaning"]  # two caches, never mixed


def test_cache_files_appear_whole_or_not_at_all(tmp_path, monkeypatch):
    from vision.lab.training.data import save_npz_atomically

    path = tmp_path / "cache.npz"
    save_npz_atomically(path, crops=np.arange(12, dtype=np.uint8).reshape(2, 2, 3), labels=np.array([1, 2]))
    with np.load(path) as z:
        assert z["crops"].shape == (2, 2, 3) and z["labels"].tolist() == [1, 2]
    assert [p.name for p in tmp_path.iterdir()] == ["cache.npz"]

    def broken(f, **arrays):  # a trainer killed or out of disk space half-way through writing
        f.write(b"PK\x03\x04 half a zip")
        raise OSError("No space left on device")

    monkeypatch.setattr(np, "savez", broken)
    with pytest.raises(OSError, match="No space"):
        save_npz_atomically(tmp_path / "other.npz", labels=np.array([3]))
    assert [p.name for p in tmp_path.iterdir()] == ["cache.npz"]  # no half-written file for the next trainer to load


def test_train_face_refuses_an_unknown_leave_out_before_any_work(tiny_train, tmp_path, capsys):
    pytest.importorskip("torch", reason="the face-reader trainer needs the train extra (torch)")
    from vision.lab.training.train_face import main

    folder, _ = tiny_train
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exc:
        main(["--out", str(out), "--train-dir", str(folder), "--leave-out-train", "no such notes"])
    assert exc.value.code == 2
    assert "--leave-out-train: no photo's notes" in capsys.readouterr().err
    assert not out.exists()  # refused before the output folder or any cache was made
