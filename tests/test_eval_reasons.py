"""dicetable eval's unknown dice per reason and its silent errors with their stated confidence (issue 37, item 7)."""

from __future__ import annotations

import json
from pathlib import Path

from vision.lab.eval_reasons import reason_lines, silent_errors, unknown_reasons
from vision.lab.evaluate import DieOutcome, EvalResult, ImageResult
from vision.lab.report import format_report, write_report
from vision.reading import UnknownReason


def _result(tmp_path: Path) -> EvalResult:
    import cv2
    import numpy as np

    outcomes = {
        "a_1.png": (
            DieOutcome("correct", 1, 1, (10, 10, 40, 40), 0.99),
            DieOutcome("wrong", 2, 3, (60, 10, 40, 40), 0.62),
            DieOutcome("unknown", 3, None, (110, 10, 40, 40), 0.9, str(UnknownReason.PIPS_DISAGREE)),
            DieOutcome("unknown", 4, None, (160, 10, 40, 40), 0.8, str(UnknownReason.GLARE)),
        ),
        "b_1.png": (
            DieOutcome("unknown", 5, None, (10, 60, 40, 40), 0.7, str(UnknownReason.PIPS_DISAGREE)),
            DieOutcome("extra", None, 2, (60, 60, 40, 40), 0.97),
            DieOutcome("extra", None, None, (110, 60, 40, 40), 0.3, str(UnknownReason.LOW_CONFIDENCE)),
            DieOutcome("missed", 6, None, (160, 60, 40, 40)),
        ),
    }
    images = []
    for name, outs in outcomes.items():
        cv2.imwrite(str(tmp_path / name), np.full((120, 220, 3), 90, np.uint8))
        images.append(ImageResult(tmp_path / name, name[0], outs, (), 5.0))
    return EvalResult(tmp_path, images)


def test_unknown_dice_are_counted_per_reason_most_first(tmp_path):
    reasons = unknown_reasons(_result(tmp_path))
    assert reasons["labelled"] == {"pip count disagrees": 2, "glare on the face": 1}
    assert list(reasons["labelled"]) == ["pip count disagrees", "glare on the face"]
    assert reasons["extra"] == {"low confidence": 1}


def test_silent_errors_carry_their_stated_confidence_least_warned_first(tmp_path):
    errors = silent_errors(_result(tmp_path))
    assert [(e["kind"], e["truth"], e["read"], e["confidence"]) for e in errors] == [
        ("extra", None, 2, 0.97),
        ("wrong", 2, 3, 0.62),
    ]


def test_the_printed_report_and_metrics_json_say_both(tmp_path):
    result = _result(tmp_path)
    text = format_report(result)
    assert "unknown dice by reason: pip count disagrees 2, glare on the face 1" in text
    assert "silent errors' stated confidence: 2 values, mean 79.5%, highest 97.0%, lowest 62.0%" in text
    assert (
        "a_1.png: a 2 read as 3, stated 62.0%" in text
        and "b_1.png: an extra (nothing labelled there) read as 2, stated 97.0%" in text
    )
    write_report(result, tmp_path / "rep")
    doc = json.loads((tmp_path / "rep" / "metrics.json").read_text())
    assert doc["unknown_reasons"]["labelled"]["glare on the face"] == 1
    assert [e["confidence"] for e in doc["silent_errors"]] == [0.97, 0.62]


def test_a_reading_without_errors_says_so(tmp_path):
    result = _result(tmp_path)
    clean = EvalResult(tmp_path, [ImageResult(tmp_path / "a_1.png", "a", result.images[0].outcomes[:1], (), 5.0)])
    assert reason_lines(clean) == ["unknown dice by reason: none", "silent errors: none"]
