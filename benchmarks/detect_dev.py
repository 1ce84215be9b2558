"""Box recall and precision of the die detector alone on a labelled set.

Usage: python benchmarks/detect_dev.py [DATASET_DIR] [--model PATH] [--thresholds 0.2 0.3 ...]

A labelled die is found when a detection pairs with it (IoU >= 0.5 or centre
inside, greedy by IoU: the matching of ``dicetable eval``). Prints recall,
precision and median detector time (one OpenCV thread) per source and threshold.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict

import _args  # (imports _checkout: this checkout's vision/ and table/ first on sys.path)
import cv2
import numpy as np

from vision.detect import DieDetector, box_iou
from vision.images import load_image
from vision.lab.evaluate import load_dataset, match_dice


def main() -> None:
    parser = _args.parser(__file__)
    _args.dataset_argument(parser)
    parser.add_argument("--model", default=None)
    parser.add_argument("--thresholds", type=float, nargs="+", default=[0.15, 0.2, 0.25, 0.3, 0.4, 0.5])
    args = parser.parse_args()
    cv2.setNumThreads(1)
    det = DieDetector(args.model, score_threshold=min(args.thresholds))
    items = load_dataset(args.dataset)
    stats = defaultdict(lambda: np.zeros(4))  # (thr, source) -> labelled, found, detections, true-positive (IoU>=.5)
    times = []
    for item in items:
        image = load_image(item.path)
        t0 = time.perf_counter()
        dets = det.detect(image)
        times.append((time.perf_counter() - t0) * 1000)
        truth = [d.box for d in item.dice]
        for thr in args.thresholds:
            kept = [d.box for d in dets if d.score >= thr]
            pairs = match_dice(kept, truth)
            iou_ok = sum(box_iou([kept[i]], [truth[j]])[0, 0] >= 0.5 for i, j in pairs)
            for key in ((thr, item.source), (thr, "ALL")):
                stats[key] += [len(truth), len(pairs), len(kept), iou_ok]
    print(f"detector median {statistics.median(times):.1f} ms, p95 {np.percentile(times, 95):.1f} ms per image")
    for (thr, src), (n, found, k, ok) in sorted(stats.items()):
        print(
            f"thr {thr:.2f} {src:7s} labelled {int(n):4d} recall {found / max(n, 1):.3f} "
            f"(IoU>=.5: {ok / max(n, 1):.3f}) precision {found / max(k, 1):.3f} extras {int(k - found)}"
        )


if __name__ == "__main__":
    _args.run(main)
