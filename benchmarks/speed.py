"""Time ``vision.read_image`` per photo on one core (one OpenCV thread).

Usage: python benchmarks/speed.py [DATASET_DIR] [--repeat N]

Loads every photo named in ``labels.json`` first (decoding is not timed), reads
each one ``--repeat`` times after one warm-up read, and prints the median and
95th percentile of the wall-clock and CPU time per photo, overall and per
source (file-name prefix). Needs only ``vision`` (no ``table``), so it runs on
any machine with numpy and OpenCV.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

import cv2
import numpy as np

from vision.evaluate import load_dataset
from vision.images import load_image
from vision.reader import read_image


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset", nargs="?", default="../shared/dice-images/dev")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cv2.setNumThreads(1)
    items = load_dataset(args.dataset)
    images = [(item.source, load_image(item.path)) for item in items]
    read_image(images[0][1])  # load the models
    wall, cpu = defaultdict(list), defaultdict(list)
    for source, image in images:
        ws, cs = [], []
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            read_image(image)
            ws.append((time.perf_counter() - t0) * 1000)
            cs.append((time.process_time() - c0) * 1000)
        for key in (source, "ALL"):
            wall[key].append(min(ws))
            cpu[key].append(min(cs))
    print(f"{'source':8} {'images':>6} {'wall median':>11} {'wall p95':>8} {'cpu median':>10} {'cpu p95':>7}  (ms per photo, best of {args.repeat})")
    for key in sorted(wall):
        w, c = wall[key], cpu[key]
        print(f"{key:8} {len(w):6d} {statistics.median(w):11.1f} {np.percentile(w, 95):8.1f} "
              f"{statistics.median(c):10.1f} {np.percentile(c, 95):7.1f}")


if __name__ == "__main__":
    main()
