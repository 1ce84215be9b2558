"""``dicetable bench``: per-frame cost, settle latency and settle-to-verdict compute of the live pipeline."""

from __future__ import annotations

import argparse
import json

from vision._onnx import usable_cores
from vision.lab.livebench import bench, cores

#: Targets of the live pipeline (issue 4).
TARGET_MEDIAN_MS_640 = 8.0
TARGET_LATENCY_FRAMES = 10


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``bench`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "bench",
        help="measure the live pipeline (per-frame cost, settle latency) on synthetic rolls",
        description="Plays scripted synthetic rolls (throws, a still hand, holds, a light change, a camera bump, "
        "a leaning die) through the RollWatcher on one core and prints the per-frame cost at each "
        "frame size, the frames from the last die stopping to the verdict, the compute from the "
        "dice stopping to the verdict (ms, reads per roll) on one core and on all cores (as the "
        "table reads), and the verdicts against the truth. Exit status 1 when a target is missed.",
    )
    p.add_argument("--sizes", default="640x480,1280x960", help="frame sizes (default 640x480,1280x960)")
    p.add_argument("--seeds", type=int, default=3, help="scripts per size (default 3)")
    p.add_argument(
        "--reader",
        choices=("truth", "model"),
        default="model",
        help="pip reader: the trained model (default) or the script's truth (watcher alone)",
    )
    p.add_argument(
        "--cores",
        choices=("both", "one", "all"),
        default="both",
        help="one core (the per-frame targets are for one), all cores (as the table reads), or "
        "both (default): the one-core figures and the settle-to-verdict compute on all cores",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object per size")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the benchmark; exit status 1 when a target is missed."""
    sizes = []
    for text in args.sizes.split(","):
        try:
            w, h = (int(v) for v in text.lower().split("x"))
        except ValueError:
            raise ValueError(f"--sizes must be like 640x480,1280x960, got {args.sizes!r}") from None
        if not (64 <= w <= 4096 and 64 <= h <= 4096):
            raise ValueError(f"frame size {text!r} must be 64-4096 px a side")
        sizes.append((w, h))
    if not 1 <= args.seeds <= 50:
        raise ValueError(f"--seeds must be 1-50, got {args.seeds}")
    runs = {"both": (1, None), "one": (1,), "all": (None,)}[args.cores]
    if usable_cores() < 2:
        runs = (1,)  # one core is all there is
    missed = False
    for size in sizes:
        found = []
        for n in runs:
            with cores(n) as used:
                found.append(bench(size=size, seeds=range(args.seeds), reader=args.reader, threads=used).summary())
        s = found[0]
        for r in found:
            if r["threads"] == 1 and size == (640, 480) and (r["per_frame_ms_median"] or 0) > TARGET_MEDIAN_MS_640:
                missed = True
            if (
                (r["settle_latency_frames_max"] or 0) > TARGET_LATENCY_FRAMES
                or r["wrong"]
                or r["verdicts_while_moving"]
            ):
                missed = True
        if args.json:
            if len(found) > 1:
                s = dict(s, all_cores=found[1])
            print(json.dumps(s))
            continue
        print(f"{s['size']} ({s['reader']} reader, {s['frames']} frames, {_cores(s['threads'])}):")
        print(
            f"  per frame: median {s['per_frame_ms_median']} ms, 95th percentile {s['per_frame_ms_p95']} ms "
            f"(motion-only frames {s['motion_frame_ms_median']} ms, read frames {s['read_frame_ms_median']} ms "
            f"x {s['read_frames']})"
        )
        print(
            f"  settle latency: median {s['settle_latency_frames_median']} frames, max "
            f"{s['settle_latency_frames_max']} (target <= {TARGET_LATENCY_FRAMES}); about "
            f"{s['settle_latency_ms_at_30fps']} ms from the last die stopping to the event at 30 fps"
        )
        print(
            "  compute from the dice stopping to the verdict: "
            + "; ".join(
                f"median {r['settle_compute_ms_median']} ms, max {r['settle_compute_ms_max']} ms "
                f"({r['reads_per_roll_median']} reads per roll) on {_cores(r['threads'])}"
                for r in found
            )
        )
        print(
            f"  rolls {s['rolls']}: right {s['right']}, unreadable {s['unreadable']} (leaning, expected: "
            f"{s['leaning_rolls_reported_unreadable']}), wrong {s['wrong']}, missed {s['missed']}, "
            f"verdicts while moving {s['verdicts_while_moving']}"
        )
        for r in found:
            for line in r["wrong_details"]:
                print(f"    wrong ({_cores(r['threads'])}): {line}")
            for line in r["unexpected_unreadable"]:
                print(f"    unreadable ({_cores(r['threads'])}): {line}")
    return 1 if missed else 0


def _cores(n: int) -> str:
    return "one core" if n == 1 else f"all {n} cores"
