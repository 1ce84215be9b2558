"""Training data for the die detector: a compact cache of resized photos and boxes.

Reads ``labels.json`` datasets in the format of ``../shared/dice-images`` and
stores each photo re-encoded as JPEG at :data:`CACHE_LONG_SIDE` pixels on the
long side, with its die boxes scaled to match, in one ``.npz`` file. Caching
once keeps the training loop free of 1280-px decodes and lets the training run
travel to another machine as one small file.

Only images whose boxes cover whole dice (``box_kind == "die"``, or no
``box_kind`` as in dev) give positive boxes. Boxes of other kinds (``"face"``,
``"pips"``) cover only part of a die, so they become *ignore* regions: the
detector is not taught there, but the rest of those photos still teach it what
is not a die.

Run as ``python -m vision.training.detect_data --out /tmp/det_cache.npz``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np

from vision.training.data import save_npz_atomically

#: Long side, in pixels, of the cached photos.
CACHE_LONG_SIDE: int = 512


def build_cache(dataset_dirs: list[Path], out: Path, *, long_side: int = CACHE_LONG_SIDE) -> int:
    """Write the cache of every image in `dataset_dirs` to `out`; return the image count.

    Parameters
    ----------
    dataset_dirs : list of Path
        Folders that each hold ``labels.json`` and the images it names.
    out : Path
        The ``.npz`` file to write.
    long_side : int, optional
        Long side of the cached images, in pixels; smaller images are not enlarged.

    Returns
    -------
    int
        Number of images cached.
    """
    jpegs, boxes, ignores, names = [], [], [], []
    for folder in dataset_dirs:
        labels = json.loads((folder / "labels.json").read_text())
        for entry in labels["images"]:
            image = cv2.imread(str(folder / entry["file"]), cv2.IMREAD_COLOR)
            if image is None:
                continue
            scale = min(1.0, long_side / max(image.shape[:2]))
            if scale < 1.0:
                image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
            die, ign = [], []
            for d in entry["dice"]:
                b = [v * scale for v in d["box"]]
                (die if d.get("box_kind", "die") == "die" else ign).append(b)
            ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 92])
            jpegs.append(np.frombuffer(buf.tobytes(), np.uint8))
            boxes.append(np.array(die, np.float32).reshape(-1, 4))
            ignores.append(np.array(ign, np.float32).reshape(-1, 4))
            names.append(entry["file"])
    out.parent.mkdir(parents=True, exist_ok=True)
    obj = np.empty(len(jpegs), dtype=object)
    save_npz_atomically(
        out,
        jpegs=_objects(jpegs),
        boxes=_objects(boxes),
        ignores=_objects(ignores),
        names=np.array(names),
    )
    return len(jpegs)


def _objects(items: list) -> np.ndarray:
    arr = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        arr[i] = item
    return arr


def load_cache(path: Path) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray], list[str]]:
    """Read a cache written by :func:`build_cache`: (jpegs, boxes, ignores, names)."""
    data = np.load(path, allow_pickle=True)
    return list(data["jpegs"]), list(data["boxes"]), list(data["ignores"]), [str(n) for n in data["names"]]


def main(argv: list[str] | None = None) -> int:
    """Command line: build the detector's training cache."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, nargs="+", default=[Path("../shared/dice-images/train")],
                        help="dataset folders with labels.json (default: ../shared/dice-images/train)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/dicetable_detect_cache.npz"))
    args = parser.parse_args(argv)
    n = build_cache(args.data, args.out)
    print(f"cached {n} images into {args.out} ({args.out.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
