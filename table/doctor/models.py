"""The three networks load and give their recorded answers on fixed probes.

The face reader and the pip finder answer on :func:`vision.probe_crops.fixed_probe_crops`
(14 drawn 64 px crops), as recorded under ``"fixed_probes"`` in their JSON at training time. The
die detector answers on one rendered tray (:func:`vision.render.render_tray`, no noise, blur or
JPEG, so that it is the same picture on any machine), recorded in
``vision/models/die_detector_probe.json``; ``python -m table.doctor.models --record`` records it
again after the detector is retrained. Tolerances: another CPU's int8 kernels round a little
differently (at most 0.0074 in probability between onnxruntime and cv2.dnn on these probes).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import vision
from table.doctor.check import Check

#: The detector's probe and its recorded answer.
DETECTOR_PROBE = Path(vision.__file__).resolve().parent / "models" / "die_detector_probe.json"
#: Largest difference in a probe's top probability (face reader) accepted as the same answer.
FACE_PROB_TOLERANCE = 0.02
#: Least overlap (IoU) of a found box with its recorded one; largest score difference.
BOX_MIN_IOU = 0.8
SCORE_TOLERANCE = 0.05


def _runtime(model: Any) -> str:
    net = getattr(model, "_net", None)
    if net is None:
        return "?"
    if net.backend == "opencv":
        import cv2

        threads = cv2.getNumThreads()  # cv2.dnn runs on OpenCV's own threads
    else:
        threads = net.threads
    return f"{net.backend}, {threads} thread{'s' if threads != 1 else ''}"


def _retrain(stem: str) -> str:
    from vision._onnx import retrain_hint

    return retrain_hint(
        stem, {"face_reader": "train_face", "pip_finder": "train_pips", "die_detector": "train_detector"}[stem]
    )


def check_face_reader(model_path: str | Path | None = None) -> Check:
    """The face reader's answers on the fixed probes against ``face_reader.json``."""
    from vision.face import FaceModelError, FaceReader
    from vision.probe_crops import fixed_probe_crops

    try:
        reader = FaceReader(model_path)
    except FaceModelError as exc:
        return Check("face reader", "fail", f"does not load: {exc}".split("; ")[0], _retrain("face_reader"))
    recorded = reader.metadata.get("fixed_probes") or {}
    crops, names = fixed_probe_crops()
    t0 = time.perf_counter()
    probs = reader.predict(crops)
    ms = (time.perf_counter() - t0) * 1000
    wrong = [
        n
        for n, p in zip(names, probs)
        if n not in recorded
        or int(p.argmax()) != recorded[n]["top"]
        or abs(float(p.max()) - recorded[n]["prob"]) > FACE_PROB_TOLERANCE
    ]
    return _answer("face reader", "face_reader", reader, len(names), wrong, ms)


def check_pip_finder(model_path: str | Path | None = None) -> Check:
    """The pip finder's answers on the fixed probes against ``pip_finder.json``."""
    from vision.face import DEFAULT_MARGIN
    from vision.pips import PipFinder, PipModelError, layouts_on_map
    from vision.probe_crops import fixed_probe_crops

    try:
        finder = PipFinder(model_path)
    except PipModelError as exc:
        return Check("pip finder", "fail", f"does not load: {exc}".split("; ")[0], _retrain("pip_finder"))
    recorded = finder.metadata.get("fixed_probes") or {}
    crops, names = fixed_probe_crops()
    t0 = time.perf_counter()
    maps = finder.predict(crops)
    ms = (time.perf_counter() - t0) * 1000
    wrong = []
    for n, m in zip(names, maps):
        rec = recorded.get(n)
        pixels = int((m >= 0.5).sum())
        if (
            rec is None
            or sorted(layouts_on_map(m, DEFAULT_MARGIN)) != rec["layouts"]
            or abs(pixels - rec["pip_pixels"]) > max(3, rec["pip_pixels"] // 20)
        ):
            wrong.append(n)
    return _answer("pip finder", "pip_finder", finder, len(names), wrong, ms)


def detector_probe_image(render: dict[str, Any]) -> np.ndarray:
    """The detector's probe picture, (H, W, 3) uint8 BGR, from the recipe recorded in its JSON."""
    from vision.render import render_tray

    return np.asarray(
        render_tray(
            render["values"], seed=int(render["seed"]), size=tuple(render["size"]), noise=0, blur=0, jpeg=False
        ).image
    )


def check_detector(model_path: str | Path | None = None, probe: Path = DETECTOR_PROBE) -> Check:
    """The die detector's boxes on its rendered probe against ``die_detector_probe.json``."""
    from vision.detect import DetectorModelError, DieDetector, box_iou

    try:
        detector = DieDetector(model_path)
    except DetectorModelError as exc:
        return Check("die detector", "fail", f"does not load: {exc}".split("; ")[0], _retrain("die_detector"))
    try:
        rec = json.loads(Path(probe).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return Check(
            "die detector",
            "fail",
            f"its probe {str(probe)!r} is unreadable ({exc})",
            "reinstall dicetable to get the file back",
        )
    image = detector_probe_image(rec["render"])
    t0 = time.perf_counter()
    found = detector.detect(image)
    ms = (time.perf_counter() - t0) * 1000
    wrong = []
    boxes = np.array([d.box for d in found], np.float64).reshape(-1, 4)
    for k, (box, score) in enumerate(zip(rec["boxes"], rec["scores"])):
        iou = box_iou(np.array([box], np.float64), boxes)[0] if len(boxes) else np.zeros(0)
        j = int(np.argmax(iou)) if len(iou) else -1
        if j < 0 or iou[j] < BOX_MIN_IOU or abs(found[j].score - score) > SCORE_TOLERANCE:
            wrong.append(f"die {k + 1}")
    if len(found) != len(rec["boxes"]):
        wrong.append(f"{len(found)} dice found, {len(rec['boxes'])} recorded")
    return _answer("die detector", "die_detector", detector, len(rec["boxes"]), wrong, ms, unit="dice")


def _answer(name: str, stem: str, model: Any, n: int, wrong: list[str], ms: float, unit: str = "probes") -> Check:
    where = f"({_runtime(model)}, {ms:.0f} ms)"
    if wrong:
        return Check(
            name,
            "fail",
            f"loads {where} but {len(wrong)} of {n} {unit} differ from the recorded answers: {', '.join(wrong[:4])}",
            _retrain(stem),
        )
    return Check(name, "ok", f"{n} {unit} as recorded {where}")


def record_detector_probe(probe: Path = DETECTOR_PROBE) -> dict[str, Any]:
    """Write the packaged detector's answer on its probe (after retraining); return what was written."""
    from vision.detect import DieDetector

    render = {"values": [1, 2, 3, 4, 5], "seed": 2, "size": [640, 480]}
    found = DieDetector().detect(detector_probe_image(render))
    data = {
        "what": "the die detector's answer on one rendered tray, checked by 'dicetable doctor' "
        "(table/doctor/models.py); boxes are (x, y, w, h) px",
        "command": "python -m table.doctor.models --record",
        "render": render,
        "boxes": [list(d.box) for d in found],
        "scores": [round(d.score, 4) for d in found],
    }
    lines = ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in data.items())
    Path(probe).write_text("{\n" + lines + "\n}\n", encoding="utf-8")
    return data


if __name__ == "__main__":  # pragma: no cover - run by hand after the detector is retrained
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: python -m table.doctor.models --record")
    print(json.dumps(record_detector_probe()))
