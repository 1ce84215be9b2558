"""Sweep the reader's value threshold on a labelled set: accuracy vs silent errors.

Usage: python benchmarks/tune_reader.py [DATASET_DIR] [--face-model ONNX] [--no-tta]

Runs the detector, the face reader and the reader's second look (which does not
depend on the threshold) once per photo and prints, per threshold, per-die accuracy and the silent-error rate
(wrong values plus extras given a value, over the labelled dice), overall and
per source. Pick the threshold from this table and write it, with the trade-off,
into ``vision/reader.py``.
"""

from __future__ import annotations

import argparse
from collections import defaultdict

import cv2
import numpy as np

from vision.detect import default_detector
from vision.evaluate import load_dataset, match_dice
from vision.face import FaceReader, crop_die, default_face_reader
from vision.images import load_image
from vision.reader import DROP_MAX_DETECTOR_SCORE, DROP_NOT_A_DIE_PROB, FACE_CROP_MARGIN, _second_look


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset", nargs="?", default="../shared/dice-images/dev")
    parser.add_argument("--face-model", default=None)
    parser.add_argument("--no-tta", action="store_true")
    parser.add_argument("--margin", type=float, default=FACE_CROP_MARGIN, help="crop margin (vision.face.crop_die)")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    faces = FaceReader(args.face_model) if args.face_model else default_face_reader()
    det = default_detector()
    rows = []  # (source, truth or 0 for extra, p (7,), p_tta (7,), det score)
    n_true = defaultdict(int)
    for item in load_dataset(args.dataset):
        image = load_image(item.path)
        dets = det.detect(image)
        n_true[item.source] += len(item.dice)
        n_true["ALL"] += len(item.dice)
        if not dets:
            continue
        crops = [crop_die(image, d.box, margin=args.margin) for d in dets]
        p = faces.predict(crops).astype(np.float64)
        pt = _second_look(faces, crops, p)
        truth = {i: item.dice[j].value for i, j in match_dice([d.box for d in dets], [d.box for d in item.dice])}
        for i, d in enumerate(dets):
            rows.append((item.source, truth.get(i, 0), p[i], pt[i], d.score))
    print(f"{'thr':>5} {'source':7} {'accuracy':>8} {'silent':>7} {'unknown':>7}")
    for thr in (0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.8, 0.9):
        stats = defaultdict(lambda: np.zeros(3))  # correct, silent, unknown
        for source, truth, p, pt, score in rows:
            if p[0] >= DROP_NOT_A_DIE_PROB and score < DROP_MAX_DETECTOR_SCORE:
                continue
            q = p if args.no_tta else pt
            best = int(np.argmax(q[1:]) + 1)
            given = q[best] >= thr
            for key in (source, "ALL"):
                if given and best == truth:
                    stats[key][0] += 1
                elif given:
                    stats[key][1] += 1
                elif truth:
                    stats[key][2] += 1
        for key in sorted(stats):
            c, s, u = stats[key]
            n = max(1, n_true[key])
            print(f"{thr:5.2f} {key:7} {c / n:8.3f} {s / n:7.3f} {u / n:7.3f}")


if __name__ == "__main__":
    main()
