"""The RollWatcher on the real dev photos, each played as a still stream (5 identical frames).

Prints how many verdicts were settled and right (same values as the labels, as a multiset),
settled but wrong, or unreadable; the watcher adds its checks (3-frame agreement, nested
boxes, box-shape leaning check without a reference) on top of the reader.

Usage: python benchmarks/live_photos.py [PREFIX]   (e.g. kingpi_ for the Pi camera photos)
"""

import json
import sys
from pathlib import Path

import _checkout  # noqa: F401  (this checkout's vision/ and table/ first on sys.path)
import cv2
import numpy as np

from vision.reader import read_image
from vision.tray import TrayGeometry
from vision.watch import EventKind, RollWatcher

DEV = Path(__file__).resolve().parents[1] / ".." / "shared" / "dice-images" / "dev"


def main(prefix: str = "") -> None:
    labels = json.loads((DEV / "labels.json").read_text())
    counts = {"settled right": 0, "settled wrong": 0, "unreadable": 0, "no verdict": 0, "reader alone right": 0}
    photos = [im for im in labels["images"] if im["file"].startswith(prefix) and im["dice"]]
    for im in photos:
        image = cv2.imread(str(DEV / im["file"]))
        h, w = image.shape[:2]
        scale = min(1.0, 640.0 / w)
        geo = TrayGeometry.from_corners(
            [(0, 0), (w, 0), (w, h), (0, h)], width_mm=w * scale, height_mm=h * scale, px_per_mm=1.0
        )
        side = float(np.median([max(d["box"][2], d["box"][3]) for d in im["dice"]])) * scale
        watcher = RollWatcher(read_image, geometry=geo, die_mm=side)
        events = [e for k in range(5) for e in watcher.update(image, index=k)]
        verdicts = [e for e in events if e.kind in (EventKind.SETTLED, EventKind.UNREADABLE)]
        truth = sorted(d["value"] for d in im["dice"])
        if sorted(v for v in read_image(geo.rectify(image)).values if v is not None) == truth:
            counts["reader alone right"] += 1
        if not verdicts:
            counts["no verdict"] += 1
        elif verdicts[0].kind == EventKind.UNREADABLE:
            counts["unreadable"] += 1
        elif sorted(verdicts[0].values) == truth:
            counts["settled right"] += 1
        else:
            counts["settled wrong"] += 1
            print(f"  wrong: {im['file']}: read {sorted(verdicts[0].values)}, labels {truth}")
    print(f"{len(photos)} photos{' ' + prefix if prefix else ''}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
