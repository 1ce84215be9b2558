"""Why dice came out unknown, and how sure the reader said it was of its wrong values (``dicetable eval``).

Issue 37, item 7: the report counts the unknown dice per reason
(:class:`vision.reading.UnknownReason`: ``"pip count disagrees"``, ``"glare on
the face"``, ``"leaning"``...) and lists each silent error (a wrong value, or
a value on an extra "die") with the confidence the reader stated for it, so a
confidence that does not warn shows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vision.lab.evaluate import EvalResult

__all__ = ["unknown_reasons", "silent_errors", "reason_lines"]


def unknown_reasons(result: EvalResult) -> dict[str, dict[str, int]]:
    """Unknown dice per reason, most first: ``{"labelled": {reason: n}, "extra": {reason: n}}``.

    ``labelled``: labelled dice read without a value; ``extra``: things read
    without a value where no die is labelled. A missing reason counts as ``"none given"``.
    """
    out: dict[str, dict[str, int]] = {"labelled": {}, "extra": {}}
    for im in result.images:
        for o in im.outcomes:
            if o.read is not None or o.kind not in ("unknown", "extra"):
                continue
            counts = out["labelled" if o.kind == "unknown" else "extra"]
            reason = str(o.reason) if o.reason else "none given"
            counts[reason] = counts.get(reason, 0) + 1
    return {k: dict(sorted(v.items(), key=lambda kv: (-kv[1], kv[0]))) for k, v in out.items()}


def silent_errors(result: EvalResult) -> list[dict]:
    """Each wrong value and each extra given a value: ``image``, ``kind``, ``truth``, ``read``, ``confidence``, ``box``.

    Sorted by stated confidence, highest (the least warned) first.
    """
    out = [
        {
            "image": im.path.name,
            "kind": o.kind,
            "truth": o.truth,
            "read": o.read,
            "confidence": round(float(o.confidence), 4),
            "box": list(o.box),
        }
        for im in result.images
        for o in im.outcomes
        if o.kind == "wrong" or (o.kind == "extra" and o.read is not None)
    ]
    return sorted(out, key=lambda e: (-e["confidence"], e["image"]))


def reason_lines(result: EvalResult) -> list[str]:
    """The report's lines: unknown dice per reason, and the silent errors with their stated confidence."""
    reasons = unknown_reasons(result)

    def listed(counts: dict[str, int]) -> str:
        return ", ".join(f"{r} {n}" for r, n in counts.items()) or "none"

    lines = [f"unknown dice by reason: {listed(reasons['labelled'])}"]
    if reasons["extra"]:
        lines.append(f"extra things read without a value, by reason: {listed(reasons['extra'])}")
    errors = silent_errors(result)
    if not errors:
        lines.append("silent errors: none")
        return lines
    conf = [e["confidence"] for e in errors]
    lines.append(
        f"silent errors' stated confidence: {len(errors)} values, mean {100 * sum(conf) / len(conf):.1f}%, "
        f"highest {100 * max(conf):.1f}%, lowest {100 * min(conf):.1f}%"
    )
    for e in errors:
        truth = "an extra (nothing labelled there)" if e["kind"] == "extra" else f"a {e['truth']}"
        lines.append(f"  {e['image']}: {truth} read as {e['read']}, stated {100 * e['confidence']:.1f}%")
    return lines
