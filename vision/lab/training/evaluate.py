"""Crop-level evaluation of the face reader on a labelled folder (the DEV set).

For every labelled die box, :func:`vision.face.crop_die` cuts the crop and
:class:`vision.face.FaceReader` reads it. A die counts as *right* when the top
class is its value with confidence (top probability) at or above the
threshold, *wrong* when the top class is another face value at or above the
threshold (a silent error), and *abstained* otherwise (top class 0, "not a
readable face", or confidence below the threshold). Background crops (random
squares with IoU < 0.1 against every die box) measure how often a detector's
false positive would be read as a face.

Run: ``python -m vision.lab.training.evaluate [--dev ../shared/dice-images/dev] [--model PATH] [--rotations 4]``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np

from vision.face import FaceReader, crop_die
from vision.lab.training.data import DEFAULT_DEV_DIR, iou

THRESHOLDS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99)


def face_probe_answers(reader) -> dict[str, dict]:
    """A face reader's answers on :func:`vision.lab.training.synth.fixed_probe_crops`, as the models' JSON records them.

    Parameters
    ----------
    reader : vision.face.FaceReader
        Or any object with ``predict(crops) -> ndarray (N, 7)`` of probabilities.

    Returns
    -------
    dict
        Probe name -> ``{"top": class 0-6, "prob": its probability, 4 decimals}``.
    """
    from vision.lab.training.synth import fixed_probe_crops

    crops, names = fixed_probe_crops()
    return {n: {"top": int(p.argmax()), "prob": round(float(p.max()), 4)} for n, p in zip(names, reader.predict(crops))}


def pip_probe_answers(finder) -> dict[str, dict]:
    """A pip finder's answers on :func:`vision.lab.training.synth.fixed_probe_crops`, as the models' JSON records them.

    Parameters
    ----------
    finder : vision.pips.PipFinder
        Or any object with ``predict(crops) -> ndarray (N, 64, 64)`` of pip probabilities.

    Returns
    -------
    dict
        Probe name -> ``{"layouts": face values whose layout the map holds
        (:func:`vision.pips.layouts_on_map`, crops cut with the default margin),
        "pip_pixels": pixels at 0.5 or more}``.
    """
    from vision.face import DEFAULT_MARGIN
    from vision.lab.training.synth import fixed_probe_crops
    from vision.pips import layouts_on_map

    crops, names = fixed_probe_crops()
    return {
        n: {"layouts": sorted(layouts_on_map(m, DEFAULT_MARGIN)), "pip_pixels": int((m >= 0.5).sum())}
        for n, m in zip(names, finder.predict(crops))
    }


def dev_crops(dev_dir: Path = DEFAULT_DEV_DIR, *, seed: int = 0) -> dict[str, np.ndarray]:
    """Crops of every labelled die of a labelled folder, plus background crops.

    Returns
    -------
    dict with
        ``crops`` (N, CROP_SIZE, CROP_SIZE, 3) uint8, ``values`` (N,) int64,
        ``sources`` (N,) str (file-name prefix, e.g. ``"kingpi"``),
        ``files`` (N,) str (photo file name),
        ``bg_crops`` (M, CROP_SIZE, CROP_SIZE, 3) uint8 (no die in them).
    """
    rng = np.random.default_rng(seed)
    labels = json.loads((Path(dev_dir) / "labels.json").read_text(encoding="utf-8"))
    crops, values, sources, files, bg = [], [], [], [], []
    for image in labels["images"]:
        img = cv2.imread(str(Path(dev_dir) / image["file"]), cv2.IMREAD_COLOR)
        if img is None:
            raise OSError(f"cannot read {str(Path(dev_dir) / image['file'])!r}")
        boxes = [tuple(float(v) for v in d["box"]) for d in image["dice"]]
        for d, b in zip(image["dice"], boxes):
            crops.append(crop_die(img, b))
            values.append(int(d["value"]))
            sources.append(image["file"].split("_")[0])
            files.append(image["file"])
        sizes = [max(b[2:]) for b in boxes] or [0.06 * max(img.shape[:2])]
        H, W = img.shape[:2]
        for _ in range(3):
            for _try in range(20):
                s = float(rng.choice(sizes))
                cand = (rng.uniform(0, W - s), rng.uniform(0, H - s), s, s)
                if not boxes or max(iou(cand, b) for b in boxes) < 0.1:
                    bg.append(crop_die(img, cand))
                    break
    return {
        "crops": np.stack(crops),
        "values": np.array(values, np.int64),
        "sources": np.array(sources),
        "files": np.array(files),
        "bg_crops": np.stack(bg),
    }


def score(probs: np.ndarray, values: np.ndarray, threshold: float) -> dict[str, float]:
    """Right / wrong / abstained fractions of dice at one confidence threshold.

    Parameters
    ----------
    probs : ndarray of shape (N, 7), dtype float32
    values : ndarray of shape (N,), dtype int64
        True face values 1..6.
    threshold : float
        Minimum top-class probability to give a value.

    Returns
    -------
    dict with ``n``, ``right``, ``wrong``, ``abstained`` (fractions of N) and
    ``accuracy_answered`` (right / (right + wrong)).
    """
    top = probs.argmax(axis=1)
    conf = probs.max(axis=1)
    answered = (top > 0) & (conf >= threshold)
    right = answered & (top == values)
    wrong = answered & (top != values)
    n = max(1, len(values))
    na = int(answered.sum())
    return {
        "n": int(len(values)),
        "right": round(float(right.sum()) / n, 4),
        "wrong": round(float(wrong.sum()) / n, 4),
        "abstained": round(1 - na / n, 4),
        "accuracy_answered": round(float(right.sum()) / na, 4) if na else 1.0,
    }


def evaluate(reader: FaceReader, data: dict[str, np.ndarray]) -> dict:
    """Per-source and overall scores at every threshold of :data:`THRESHOLDS`, plus a suggested threshold.

    The suggested threshold is the lowest one with at most 1 % silently wrong
    dice overall (half the product's 2 % budget, leaving room for detector
    errors).
    """
    probs = reader.predict(data["crops"])
    bg = reader.predict(data["bg_crops"])
    out: dict = {"by_threshold": {}, "background_read_as_face": {}}
    groups = {"all": np.ones(len(data["values"]), bool)}
    for src in sorted(set(data["sources"].tolist())):
        groups[src] = data["sources"] == src
    for t in THRESHOLDS:
        out["by_threshold"][str(t)] = {g: score(probs[m], data["values"][m], t) for g, m in groups.items()}
        bg_face = (bg.argmax(1) > 0) & (bg.max(1) >= t)
        out["background_read_as_face"][str(t)] = round(float(bg_face.mean()), 4) if len(bg) else 0.0
    ok = [t for t in THRESHOLDS if out["by_threshold"][str(t)]["all"]["wrong"] <= 0.01]
    out["suggested_threshold"] = ok[0] if ok else THRESHOLDS[-1]
    out["n_background"] = int(len(bg))
    return out


def format_table(result: dict) -> str:
    """Human-readable accuracy-at-coverage table of :func:`evaluate`'s result."""
    lines = ["thr    group   n    right  wrong  abstain  acc_answered  bg_as_face"]
    for t, groups in result["by_threshold"].items():
        for g, s in groups.items():
            bgf = result["background_read_as_face"][t] if g == "all" else ""
            lines.append(
                f"{float(t):<6.2f} {g:<7} {s['n']:<4} {s['right']:<6.3f} {s['wrong']:<6.3f} "
                f"{s['abstained']:<8.3f} {s['accuracy_answered']:<13.3f} {bgf}"
            )
    lines.append(f"suggested threshold: {result['suggested_threshold']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line: print the table for a model on the DEV set."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dev", type=Path, default=DEFAULT_DEV_DIR, help="labelled folder (default: the DEV set)")
    p.add_argument("--model", type=Path, default=None, help="ONNX model (default: the packaged one)")
    p.add_argument(
        "--rotations", type=int, choices=(1, 4), default=1, help="test-time 90-degree turns (FaceReader rotations)"
    )
    args = p.parse_args(argv)
    reader = FaceReader(args.model, rotations=args.rotations)
    print(format_table(evaluate(reader, dev_crops(args.dev))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
