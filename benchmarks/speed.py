"""Time ``vision.read_image`` per photo on one core (one OpenCV thread).

Usage: python benchmarks/speed.py [DATASET_DIR] [--repeat N] [--models DIR] [--against DIR]

Loads every photo named in ``labels.json`` first (decoding is not timed), reads
each one ``--repeat`` times after one warm-up read, and prints the median and
95th percentile of the wall-clock and CPU time per photo, overall and per
source (file-name prefix). Needs only ``vision`` (no ``table``), so it runs on
any machine with numpy and OpenCV.

``--models DIR`` reads with the ``face_reader.onnx`` and ``pip_finder.onnx``
in DIR instead of the packaged ones. ``--against DIR`` also times a second
pair, photo by photo in turn with the first, so that both see the same
moments of a shared, noisy machine (for instance the float networks of the
packaged int8 ones: ``git show 194dda7:vision/models/face_reader.onnx``, the
same for the pip finder and both JSON files), and prints the ratio of the medians.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from pathlib import Path

import _args  # (imports _checkout: this checkout's vision/ and table/ first on sys.path)
import cv2
import numpy as np

from vision.images import load_image
from vision.lab.evaluate import load_dataset
from vision.reader import networks_from_files, read_image


def _networks(folder: Path | None) -> dict:
    """``read_image`` keyword arguments for the face reader and pip finder in `folder` (packaged ones: none)."""
    if folder is None:
        return {}
    return networks_from_files(face_model=folder / "face_reader.onnx", pip_model=folder / "pip_finder.onnx")


def _best_of(image: np.ndarray, repeat: int, networks: dict) -> tuple[float, float]:
    """Least wall-clock and CPU time, ms, of `repeat` reads of `image`."""
    ws, cs = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        read_image(image, **networks)
        ws.append((time.perf_counter() - t0) * 1000)
        cs.append((time.process_time() - c0) * 1000)
    return min(ws), min(cs)


def main() -> None:
    parser = _args.parser(__file__)
    _args.dataset_argument(parser)
    parser.add_argument("--repeat", type=_args.positive(), default=3)
    parser.add_argument(
        "--models",
        type=Path,
        default=None,
        metavar="DIR",
        help="read with DIR/face_reader.onnx and DIR/pip_finder.onnx (default: the packaged ones)",
    )
    parser.add_argument(
        "--against",
        type=Path,
        default=None,
        metavar="DIR",
        help="also time DIR's face reader and pip finder, in turn with the first pair",
    )
    args = parser.parse_args()
    cv2.setNumThreads(1)
    items = load_dataset(args.dataset)
    images = [(item.source, load_image(item.path)) for item in items]
    pairs = {"": _networks(args.models)}
    if args.against is not None:
        pairs["against"] = _networks(args.against)
    for networks in pairs.values():
        read_image(images[0][1], **networks)  # load the models
    wall, cpu = defaultdict(list), defaultdict(list)
    for source, image in images:
        for name, networks in pairs.items():
            w, c = _best_of(image, args.repeat, networks)
            for key in (source, "ALL"):
                wall[name, key].append(w)
                cpu[name, key].append(c)
    for name in pairs:
        label = f"{args.against}" if name else (f"{args.models}" if args.models else "packaged networks")
        print(f"{label}:")
        print(
            f"{'source':8} {'images':>6} {'wall median':>11} {'wall p95':>8} {'cpu median':>10} {'cpu p95':>7}  "
            f"(ms per photo, best of {args.repeat})"
        )
        for key in sorted({k for n, k in wall if n == name}):
            w, c = wall[name, key], cpu[name, key]
            print(
                f"{key:8} {len(w):6d} {statistics.median(w):11.1f} {np.percentile(w, 95):8.1f} "
                f"{statistics.median(c):10.1f} {np.percentile(c, 95):7.1f}"
            )
    if args.against is not None:
        ratio = statistics.median(wall["", "ALL"]) / statistics.median(wall["against", "ALL"])
        print(f"median wall time, first pair over --against: {ratio:.2f}")


if __name__ == "__main__":
    _args.run(main)
