"""The report of ``dicetable eval``: text summary and tables, ``metrics.json``, reliability plot, failure contact sheet.

Everything here formats an :class:`vision.lab.evaluate.EvalResult` already scored;
nothing is read or scored again (the failure images are loaded to be cropped).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np

from vision.images import load_image, output_folder, save_image, write_output
from vision.lab.eval_reasons import reason_lines
from vision.reading import UnknownReason, short_reason
from vision.top_face import draw_top_face

if TYPE_CHECKING:
    from vision.lab.evaluate import DieOutcome, EvalResult

__all__ = ["format_summary", "format_report", "write_report"]


def _pct(x: float | None, digits: int = 1) -> str:
    """`x` (a share) as a percentage; ``n/a`` for None (a rate of nothing)."""
    return "n/a" if x is None else f"{100.0 * x:.{digits}f}%"


def format_summary(result: EvalResult) -> list[str]:
    """The summary lines of the report: counts, accuracy, silent-error and exact-image rates."""
    m = result.metrics()
    return [
        f"dataset: {result.dataset}  ({m['images']} images, {m['labelled']} labelled dice)",
        f"dice correct {m['correct']}, wrong value {m['wrong']}, unknown {m['unknown']}, "
        f"missed {m['missed']}, extra {m['extra']} ({m['extra_valued']} given a value)",
        f"per-die accuracy: {_pct(m['accuracy'])} (correct / labelled dice)",
        # two decimals: the target is 0.5 %, and 5 of 947 (0.53 %) must not print as 0.5 %
        f"silent-error rate: {_pct(m['silent_error_rate'], 2)} "
        f"((wrong value + extras given a value) / {m['labelled']} labelled dice)",
        f"exact-image rate: {_pct(m['exact_image_rate'])} ({m['exact_images']} of {m['images']} images "
        "with every die right and nothing extra)",
    ]


def format_report(result: EvalResult) -> str:
    """The text report of ``dicetable eval``."""
    m = result.metrics()
    lines = [
        *format_summary(result),
        f"time per image (read_image, one OpenCV thread): median {m['median_ms']:.1f} ms, p95 {m['p95_ms']:.1f} ms "
        f"wall clock; CPU time median {m['median_cpu_ms']:.1f} ms, p95 {m['p95_cpu_ms']:.1f} ms",
        _calibration_line(result.reliability()),
        *reason_lines(result),
        "",
        "confusion (rows: true face; columns: read)",
        "true      1     2     3     4     5     6  unknown  missed",
    ]
    for v, row in enumerate(result.confusion(), start=1):
        lines.append(f"   {v}  " + " ".join(f"{n:5d}" for n in row[:6]) + f"  {row[6]:7d}  {row[7]:6d}")
    lines += ["", "by source:", "source     images  dice  accuracy  silent  unknown  missed  extra  median ms"]
    for s, sm in result.by_source().items():
        lines.append(
            f"{s:<10} {sm['images']:6d} {sm['labelled']:5d}  {_pct(sm['accuracy']):>8}  "
            f"{_pct(sm['silent_error_rate'], 2):>6}  {sm['unknown']:7d}  {sm['missed']:6d}  {sm['extra']:5d}  "
            f"{sm['median_ms']:9.1f}"
        )
    lines += ["", "by true face:", "face  dice  accuracy  wrong  unknown  missed"]
    for v, fm in result.by_face().items():
        lines.append(
            f"   {v}  {fm['labelled']:4d}  {_pct(fm['accuracy']):>8}  {fm['wrong']:5d}  {fm['unknown']:7d}  "
            f"{fm['missed']:6d}"
        )
    return "\n".join(lines)


def _calibration_line(rel: dict) -> str:
    filled = [b for b in rel["bins"] if b["count"]]
    worst = max(filled, key=lambda b: abs(b["accuracy"] - b["mean_confidence"]), default=None)
    tail = ""
    if worst is not None:
        tail = (
            f"; worst bin {worst['lo']:.1f}-{worst['hi']:.1f}: stated {_pct(worst['mean_confidence'])}, "
            f"observed {_pct(worst['accuracy'])} ({worst['count']} dice)"
        )
    return f"calibration: ECE {_pct(rel['ece'])} over {rel['dice']} dice given a value{tail}"


def write_report(
    result: EvalResult, out_dir: str | Path, *, tile: int = 96, columns: int = 12, extra: dict | None = None
) -> list[Path]:
    """Write ``metrics.json``, ``reliability.png``, ``failures.png`` (contact sheet) and annotated failure images.

    Failure pictures (``failures/*.jpg``) and a ``failures.png`` of an earlier report in `out_dir` that this
    one does not write are removed, so that the folder shows this report only.

    Parameters
    ----------
    result : EvalResult
        From :func:`evaluate`.
    out_dir : str or Path
        Folder to write into (created; see :func:`vision.images.output_folder`,
        which a caller can call first to check it before the evaluation).
    tile : int, optional
        Side of each contact-sheet crop, px.
    columns : int, optional
        Crops per contact-sheet row.
    extra : dict, optional
        More keys for ``metrics.json`` (``dicetable eval --label-review`` adds ``reviewed_labels``).

    Returns
    -------
    list of Path
        The files written.

    Raises
    ------
    vision.errors.OutputError
        If `out_dir` is a file or a file cannot be written (the message says why).
    """
    from vision.annotate import annotate_outcomes

    out = output_folder(out_dir, "report")
    written = [out / "metrics.json"]
    write_output(written[0], (json.dumps({**result.to_json(), **(extra or {})}, indent=1) + "\n").encode())
    from vision.lab.reliability import ReliabilityBin, draw_reliability

    rel = result.reliability()
    bins = [ReliabilityBin(**b) for b in rel["bins"]]
    plot = draw_reliability(bins, title=f"Reliability: {result.dataset.name}", ece=rel["ece"])
    if rel["dice"] and bins[-1].count > 0.5 * rel["dice"]:  # most dice in the top bin: add a zoom on it
        zoom = result.reliability(span=(bins[-1].lo, 1.0))
        plot = np.hstack(
            [
                plot,
                draw_reliability(
                    [ReliabilityBin(**b) for b in zoom["bins"]],
                    span=(bins[-1].lo, 1.0),
                    title=f"zoom on {bins[-1].lo:.1f}-1.0",
                    ece=zoom["ece"],
                ),
            ]
        )
    written.append(save_image(out / "reliability.png", plot))
    tiles = []
    fail_dir = out / "failures"
    # an earlier report's failure pictures in the same folder would pass for this one's: they go
    earlier = set(fail_dir.glob("*.jpg")) if fail_dir.is_dir() else set()
    for im in result.images:
        bad = [o for o in im.outcomes if o.kind != "correct"]
        if not bad:
            continue
        image = load_image(im.path)
        for o in bad:
            tiles.append(_failure_tile(image, o, tile, im.path.name))
        output_folder(fail_dir, "report's failures")
        written.append(save_image(fail_dir / (im.path.stem + ".jpg"), annotate_outcomes(image, im.outcomes)))
    if tiles:
        rows = [tiles[i : i + columns] for i in range(0, len(tiles), columns)]
        rows[-1] = rows[-1] + [np.zeros_like(tiles[0])] * (columns - len(rows[-1]))
        sheet = np.vstack([np.hstack(r) for r in rows] + [_legend(columns * tile)])
        written.append(save_image(out / "failures.png", sheet))
    else:
        (out / "failures.png").unlink(missing_ok=True)
    for stale in earlier - {Path(w) for w in written}:
        stale.unlink(missing_ok=True)
    return written


_KIND_COLOURS = {
    "wrong": (0, 0, 255),
    "unknown": (0, 200, 255),
    "missed": (255, 0, 255),
    "extra": (255, 128, 0),
}


def _legend(width: int) -> np.ndarray:
    """A strip explaining the contact sheet's labels, `width` px wide, BGR ``uint8`` (the reasons wrap to fit)."""
    font, scale, grey = cv2.FONT_HERSHEY_SIMPLEX, 0.4, (220, 220, 220)
    lines, line = [], "why unknown:"
    for reason in UnknownReason:
        item = f" {reason.short} = {str(reason)},"
        if cv2.getTextSize(line + item, font, scale, 1)[0][0] > width - 8:
            lines.append(line)
            line = "   "
        line += item
    lines.append(line.rstrip(","))
    strip = np.zeros((20 + 15 * len(lines), width, 3), np.uint8)
    x = 4
    for kind, colour in _KIND_COLOURS.items():
        cv2.putText(strip, kind, (x, 13), font, scale, colour, 1, cv2.LINE_AA)
        x += cv2.getTextSize(kind, font, scale, 1)[0][0] + 12
    text = "t = labelled value, r = value read (? none, - no die labelled)"
    cv2.putText(strip, text, (x + 8, 13), font, scale, grey, 1, cv2.LINE_AA)
    for k, text in enumerate(lines):
        cv2.putText(strip, text, (4, 28 + 15 * k), font, scale, grey, 1, cv2.LINE_AA)
    return strip


def _fit_left(text: str, width: int, scale: float) -> str:
    """`text`, its start cut off (marked ``..``) until it fits `width` px at `scale`: photo names differ at the end."""

    def fits(t: str) -> bool:
        return cv2.getTextSize(t, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)[0][0] <= width

    if fits(text):
        return text
    for k in range(1, len(text)):
        if fits(".." + text[k:]):
            return ".." + text[k:]
    return ""


def _failure_tile(image: np.ndarray, o: DieOutcome, tile: int, name: str) -> np.ndarray:
    x, y, w, h = o.box
    side = max(w, h) * 1.4
    cx, cy = x + w / 2, y + h / 2
    x1, y1 = int(round(cx - side / 2)), int(round(cy - side / 2))
    s = max(2, int(round(side)))
    padded = cv2.copyMakeBorder(image, s, s, s, s, cv2.BORDER_CONSTANT, value=(0, 0, 0))
    crop = padded[y1 + s : y1 + 2 * s, x1 + s : x1 + 2 * s]
    crop = cv2.resize(crop, (tile, tile - 24), interpolation=cv2.INTER_AREA)
    if o.box is not None and min(o.box[2], o.box[3]) > 0:
        draw_top_face(crop, image, o.box, offset=(x1, y1), scale=(tile / s, (tile - 24) / s))  # the top face seen
    label = np.zeros((24, tile, 3), np.uint8)
    colour = _KIND_COLOURS.get(o.kind, (255, 255, 255))
    truth = "-" if o.truth is None else str(o.truth)
    read = "?" if o.read is None else str(o.read)
    text = f"t{truth} r{read}"  # the kind is the colour (the legend says which)
    if o.read is None and o.reason:  # why the reader said unknown
        text += " " + short_reason(o.reason)
    cv2.putText(label, text, (2, 10), cv2.FONT_HERSHEY_SIMPLEX, 0.33, colour, 1, cv2.LINE_AA)
    cv2.putText(
        label, _fit_left(name, tile - 4, 0.28), (2, 21), cv2.FONT_HERSHEY_SIMPLEX, 0.28, (200, 200, 200), 1, cv2.LINE_AA
    )
    out = np.vstack([crop, label])
    cv2.rectangle(out, (0, 0), (tile - 1, tile - 1), colour, 1)
    return out
