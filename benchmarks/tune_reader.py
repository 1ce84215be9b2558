"""Sweep the reader's value threshold and its second opinion: accuracy vs silent errors.

Usage: python benchmarks/tune_reader.py [DATASET_DIR] [--face-model ONNX] [--pip-model ONNX] [--no-tta]
       [--thresholds T ...] [--all-sources] [--fold K]

The second opinion (a pip-layout check that must agree with the face reader)
is compared four ways: ``none`` (face reader alone), ``classical`` (dark blobs
of three binarisations), ``learned`` (the pip finder's marks) and ``either``
(learned, else classical) and ``either@X`` (learned, else classical when the
face reader's probability is at least X).

Runs the detector, the face reader and the reader's second look (which does not
depend on the threshold) once per photo and prints, per threshold, per-die accuracy and the silent-error rate
(wrong values plus extras given a value, over the labelled dice), overall and
per source. Pick the threshold from this table and write it, with the trade-off,
into ``vision/reader.py``.
"""

from __future__ import annotations

from collections import defaultdict

import _args  # (imports _checkout: this checkout's vision/ and table/ first on sys.path)
import cv2
import numpy as np

from vision._reader_pips import pips_match
from vision.detect import default_detector
from vision.face import crop_die, reading_face_reader
from vision.images import load_image
from vision.lab.evaluate import load_dataset, match_dice
from vision.pips import PipFinder, default_pip_finder, layouts_on_map
from vision.reader import (
    DROP_MAX_DETECTOR_SCORE,
    DROP_NOT_A_DIE_PROB,
    FACE_CROP_MARGIN,
    _second_look,
    pip_contrast_view,
)


def main() -> None:
    parser = _args.parser(__file__)
    _args.dataset_argument(parser)
    parser.add_argument("--face-model", default=None)
    parser.add_argument("--no-tta", action="store_true")
    parser.add_argument("--thresholds", type=float, nargs="+", default=[0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85])
    parser.add_argument("--pip-model", default=None)
    parser.add_argument(
        "--fold",
        type=int,
        default=None,
        help="only the DEV photos of this fold (vision.lab.training.data.dev_fold), e.g. the held-out one",
    )
    parser.add_argument("--all-sources", action="store_true")
    parser.add_argument("--margin", type=float, default=FACE_CROP_MARGIN, help="crop margin (vision.face.crop_die)")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    faces = reading_face_reader(args.face_model)
    det = default_detector()
    finder = PipFinder(args.pip_model) if args.pip_model else default_pip_finder()
    rows = []  # (source, truth or 0 for extra, p (7,), p_tta (7,), det score)
    n_true = defaultdict(int)
    for item in load_dataset(args.dataset):
        if args.fold is not None:
            from vision.lab.training.data import dev_fold

            if dev_fold(item.path.name) != args.fold:
                continue
        image = load_image(item.path)
        dets = det.detect(image)
        n_true[item.source] += len(item.dice)
        n_true["ALL"] += len(item.dice)
        if not dets:
            continue
        crops = [crop_die(image, d.box, margin=args.margin) for d in dets]
        p = faces.predict(crops).astype(np.float64)
        pt = _second_look(faces, crops, p)
        maps = finder.predict(crops)
        truth = {i: item.dice[j].value for i, j in match_dice([d.box for d in dets], [d.box for d in item.dice])}
        for i, d in enumerate(dets):
            view = pip_contrast_view(crops[i])
            bests = {int(np.argmax(q[1:]) + 1) for q in (p[i], pt[i])}
            classical = {v for v in bests if pips_match(view, v, args.margin)}  # values the blobs hold
            learned = layouts_on_map(maps[i], args.margin)
            rows.append(
                (
                    item.source,
                    truth.get(i, 0),
                    p[i],
                    pt[i],
                    d.score,
                    {
                        "none": set(range(1, 7)),
                        "classical": classical,
                        "learned": learned,
                        "either": classical | learned,
                    },
                )
            )
    print(f"{'thr':>5} {'second':9} {'source':7} {'accuracy':>8} {'silent':>7} {'unknown':>7}")
    for thr in args.thresholds:
        for gate in ("none", "classical", "learned", "either", "either@0.6", "either@0.8"):
            stats = defaultdict(lambda: np.zeros(3))  # correct, silent, unknown
            for source, truth, p, pt, score, pips in rows:
                if p[0] >= DROP_NOT_A_DIE_PROB and score < DROP_MAX_DETECTOR_SCORE:
                    continue
                q = p if args.no_tta else pt
                best = int(np.argmax(q[1:]) + 1)
                if "@" in gate:  # learned, or classical when the face reader is at least this sure
                    given = q[best] >= thr and (
                        best in pips["learned"] or (q[best] >= float(gate[7:]) and best in pips["classical"])
                    )
                else:
                    given = q[best] >= thr and best in pips[gate]
                for key in (source, "ALL"):
                    if given and best == truth:
                        stats[key][0] += 1
                    elif given:
                        stats[key][1] += 1
                    elif truth:
                        stats[key][2] += 1
            for key in sorted(stats):
                if args.all_sources or key in ("ALL", "kingpi"):
                    c, s_, u = stats[key]
                    n = max(1, n_true[key])
                    print(f"{thr:5.2f} {gate:9} {key:7} {c / n:8.3f} {s_ / n:7.3f} {u / n:7.3f}")


if __name__ == "__main__":
    _args.run(main)
