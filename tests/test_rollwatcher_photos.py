"""RollWatcher on recorded still photos (../shared/dice-images/dev, Pi camera set): a still
photo played as a stream settles once, with the reader's own values or as unreadable."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.sources import open_source
from vision.tray import TrayGeometry
from vision.watch import EventKind, RollWatcher

DEV = Path(__file__).resolve().parents[1] / ".." / "shared" / "dice-images" / "dev"

pytestmark = [pytest.mark.realdata, pytest.mark.slow]


def _photos(prefix="kingpi_"):
    if not (DEV / "labels.json").is_file():
        pytest.skip(f"real photos not found at {DEV} (../shared/dice-images/dev)")
    labels = json.loads((DEV / "labels.json").read_text())
    return [im for im in labels["images"] if im["file"].startswith(prefix)]


def _reader():
    try:
        from vision.reader import read_image

        read_image(np.full((64, 64, 3), 128, np.uint8))
    except Exception as exc:  # the model may not be trained in this checkout
        pytest.skip(f"the pip reader is not usable here: {exc}")
    return read_image


def whole_image_geometry(w, h, px_per_mm=1.0):
    """The whole photo as the tray, rectified at most 640 px wide."""
    scale = min(1.0, 640.0 / w)
    return TrayGeometry.from_corners(
        [(0, 0), (w, 0), (w, h), (0, h)],
        width_mm=w * scale / px_per_mm,
        height_mm=h * scale / px_per_mm,
        px_per_mm=px_per_mm,
    )


def test_still_photos_settle_once_with_the_readers_values(tmp_path):
    photos = _photos()
    read_image = _reader()
    assert photos
    for im in photos:
        image = cv2.imread(str(DEV / im["file"]))
        h, w = image.shape[:2]
        geo = whole_image_geometry(w, h)
        side_px = float(np.median([max(d["box"][2], d["box"][3]) for d in im["dice"]])) * geo.size_px[0] / w
        watcher = RollWatcher(read_image, geometry=geo, die_mm=side_px / geo.px_per_mm)
        cv2.imwrite(str(tmp_path / "f0.png"), image)
        for k in range(1, 6):  # a still scene: the same photo, five frames
            (tmp_path / f"f{k}.png").write_bytes((tmp_path / "f0.png").read_bytes())
        with open_source(f"images:{tmp_path}@30") as src:
            events = [e for f in src for e in watcher.update(f)]
        verdicts = [e for e in events if e.kind in (EventKind.SETTLED, EventKind.UNREADABLE)]
        assert len(verdicts) == 1, (im["file"], events)
        v = verdicts[0]
        direct = read_image(geo.rectify(image))
        if v.kind == EventKind.SETTLED:
            assert sorted(v.values) == sorted(direct.values), im["file"]
        else:
            assert v.problems, im["file"]
