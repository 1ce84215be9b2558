"""The RollWatcher on the real dev photos, each played as a still stream (5 identical frames).

Prints how many verdicts were settled and right (same values as the labels, as a multiset),
settled but wrong, or unreadable; the watcher adds its checks (3-frame agreement, nested
boxes, box-shape leaning check without a reference) on top of the reader.

Usage: python benchmarks/live_photos.py [PREFIX] [--dev DIR]   (e.g. kingpi_ for the Pi camera photos)
"""

import json
from pathlib import Path

import _args  # (imports _checkout: this checkout's vision/ and table/ first on sys.path)
import cv2
import numpy as np

from vision.lab.evaluate import DEFAULT_DEV_DIR
from vision.reader import read_image
from vision.tray import TrayGeometry
from vision.watch import EventKind, RollWatcher


def main() -> None:
    parser = _args.parser(__file__, description=__doc__.splitlines()[0])
    parser.add_argument("prefix", nargs="?", default="", help="only photos whose name starts with PREFIX")
    parser.add_argument("--dev", type=_args.labelled_dir, default=str(DEFAULT_DEV_DIR), help="labelled photos (DEV)")
    args = parser.parse_args()
    prefix, dev = args.prefix, Path(args.dev)
    labels = json.loads((dev / "labels.json").read_text())
    counts = {"settled right": 0, "settled wrong": 0, "unreadable": 0, "no verdict": 0, "reader alone right": 0}
    photos = [im for im in labels["images"] if im["file"].startswith(prefix) and im["dice"]]
    if not photos:
        parser.error(f"no labelled photo's name starts with {prefix!r} in {str(dev)!r}; try kingpi_, or no prefix")
    for im in photos:
        image = cv2.imread(str(dev / im["file"]))
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
    _args.run(main)
