"""The oblique hold-out slice (vision/lab/holdout.py): committed list, rule, and no trainer reads it."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from vision.lab.holdout import (
    HOLDOUT_FILE,
    HOLDOUT_KINDS,
    held_out_names,
    is_held_out,
    select_holdout,
    without_held_out,
)
from vision.lab.training.data import DEFAULT_TRAIN_DIR, build_samples
from vision.lab.training.detect_data import build_cache, load_cache

HELD = sorted(held_out_names())
KEPT = "matteo_dice_1.jpg"  # a matteo photo outside the slice


def _names_of_set(kind: str) -> list[str]:
    text = HOLDOUT_FILE.read_text(encoding="utf-8")
    names, on = [], False
    for line in text.splitlines():
        if line.startswith("# set:"):
            on = line.split()[2] == kind
        elif on and line and not line.startswith("#"):
            names.append(line)
    return names


def test_the_list_names_every_set_and_only_photos_of_the_oblique_kinds():
    assert not is_held_out(KEPT)
    for kind in HOLDOUT_KINDS:
        names = _names_of_set(kind)
        assert len(names) >= 5, kind
        assert all(n.startswith("matteo_" if kind == "matteo" else "rune_") for n in names)
    assert len(HELD) == sum(len(_names_of_set(k)) for k in HOLDOUT_KINDS)


def test_the_rule_picks_by_name_and_kind_only():
    entries = [{"file": n, "notes": HOLDOUT_KINDS["matteo"] + " x"} for n in HELD + [KEPT]]
    picked = select_holdout(entries)["matteo"]
    assert set(picked) == set(HELD) and KEPT not in picked
    # a held-out name of another kind (top-down tray notes) is not picked
    assert select_holdout([{"file": HELD[0], "notes": "Rune55 webcam image of a round tray"}]) == {
        k: [] for k in HOLDOUT_KINDS
    }


@pytest.mark.skipif(not (DEFAULT_TRAIN_DIR / "labels.json").is_file(), reason="needs ../shared/dice-images/train")
def test_the_committed_list_is_the_rule_on_the_train_set_and_no_trainer_sample_comes_from_it():
    entries = json.loads((DEFAULT_TRAIN_DIR / "labels.json").read_text(encoding="utf-8"))["images"]
    picked = select_holdout(entries)
    for kind, names in picked.items():
        assert names == _names_of_set(kind), kind
    files = {s.file for s in build_samples(DEFAULT_TRAIN_DIR, seed=0, use_face_boxes=True)}
    assert files and not files & set(HELD)
    assert len(without_held_out(entries)) == len(entries) - len(HELD)


@pytest.mark.skipif(not (DEFAULT_TRAIN_DIR / "labels.json").is_file(), reason="needs ../shared/dice-images/train")
def test_the_detector_cache_of_the_train_set_holds_no_held_out_photo(tmp_path, monkeypatch):
    # every photo read as a tiny image: only the names matter here, and decoding 1,228 photos takes long
    monkeypatch.setattr(cv2, "imread", lambda *a, **k: np.zeros((4, 4, 3), np.uint8))
    out = tmp_path / "cache.npz"
    entries = json.loads((DEFAULT_TRAIN_DIR / "labels.json").read_text(encoding="utf-8"))["images"]
    assert build_cache([DEFAULT_TRAIN_DIR], out) == len(entries) - len(HELD)
    names = set(load_cache(out)[3])
    assert names and not names & set(HELD)


@pytest.fixture()
def train_with_held_out(tmp_path):
    """A TRAIN-like folder: one kept photo and two held-out ones (real held-out names, drawn images)."""
    img = np.full((240, 320, 3), 90, np.uint8)
    cv2.rectangle(img, (40, 40), (80, 80), (230, 230, 230), -1)
    names = [KEPT, HELD[0], HELD[-1]]
    images = []
    for n in names:
        cv2.imwrite(str(tmp_path / n), img)
        images.append({"file": n, "width": 320, "height": 240, "dice": [{"value": 3, "box": [40, 40, 40, 40]}]})
    (tmp_path / "labels.json").write_text(json.dumps({"images": images}))
    return tmp_path


def test_face_and_pip_samples_leave_the_held_out_photos_out(train_with_held_out):
    samples = build_samples(train_with_held_out, seed=1)
    assert {s.file for s in samples} == {KEPT}
    assert any(s.label == 3 for s in samples)


def test_detector_cache_leaves_them_out_and_drops_them_from_an_older_cache(train_with_held_out, tmp_path):
    out = tmp_path / "cache.npz"
    assert build_cache([train_with_held_out], out) == 1
    assert load_cache(out)[3] == [KEPT]
    # a cache written before the hold-out existed: the held-out entry is dropped when read
    jpeg = np.frombuffer(cv2.imencode(".jpg", np.zeros((8, 8, 3), np.uint8))[1].tobytes(), np.uint8)
    old = tmp_path / "old.npz"
    objs = np.empty(2, object)
    objs[:] = [jpeg, jpeg]
    boxes = np.empty(2, object)
    boxes[:] = [np.zeros((1, 4), np.float32), np.ones((1, 4), np.float32)]
    np.savez(old, jpegs=objs, boxes=boxes, ignores=boxes, names=np.array([HELD[0], KEPT]))
    jpegs, kept_boxes, _, names = load_cache(old)
    assert names == [KEPT] and len(jpegs) == 1 and float(kept_boxes[0][0, 0]) == 1.0
