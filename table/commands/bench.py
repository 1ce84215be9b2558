"""``dicetable bench``: per-frame cost and settle latency of the live pipeline on synthetic rolls."""

from __future__ import annotations

import argparse
import json

from vision.lab.livebench import bench, one_core

#: Targets of the live pipeline (issue 4).
TARGET_MEDIAN_MS_640 = 8.0
TARGET_LATENCY_FRAMES = 10


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``bench`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "bench", help="measure the live pipeline (per-frame cost, settle latency) on synthetic rolls",
        description="Plays scripted synthetic rolls (throws, a still hand, holds, a light change, a camera bump, "
                    "a leaning die) through the RollWatcher on one core and prints the per-frame cost at each "
                    "frame size, the frames from the last die stopping to the verdict, and the verdicts "
                    "against the truth. Exit status 1 when a target is missed.")
    p.add_argument("--sizes", default="640x480,1280x960", help="frame sizes (default 640x480,1280x960)")
    p.add_argument("--seeds", type=int, default=3, help="scripts per size (default 3)")
    p.add_argument("--reader", choices=("truth", "model"), default="model",
                   help="pip reader: the trained model (default) or the script's truth (watcher alone)")
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
    one_core()
    missed = False
    for size in sizes:
        s = bench(size=size, seeds=range(args.seeds), reader=args.reader).summary()
        if size == (640, 480) and (s["per_frame_ms_median"] or 0) > TARGET_MEDIAN_MS_640:
            missed = True
        if (s["settle_latency_frames_max"] or 0) > TARGET_LATENCY_FRAMES or s["wrong"] or s["verdicts_while_moving"]:
            missed = True
        if args.json:
            print(json.dumps(s))
            continue
        print(f"{s['size']} ({s['reader']} reader, {s['frames']} frames, one core):")
        print(f"  per frame: median {s['per_frame_ms_median']} ms, 95th percentile {s['per_frame_ms_p95']} ms "
              f"(motion-only frames {s['motion_frame_ms_median']} ms, read frames {s['read_frame_ms_median']} ms "
              f"x {s['read_frames']})")
        print(f"  settle latency: median {s['settle_latency_frames_median']} frames, max "
              f"{s['settle_latency_frames_max']} (target <= {TARGET_LATENCY_FRAMES}); about "
              f"{s['settle_latency_ms_at_30fps']} ms from the last die stopping to the event at 30 fps")
        print(f"  rolls {s['rolls']}: right {s['right']}, unreadable {s['unreadable']} (leaning, expected: "
              f"{s['leaning_rolls_reported_unreadable']}), wrong {s['wrong']}, missed {s['missed']}, "
              f"verdicts while moving {s['verdicts_while_moving']}")
        for line in s["wrong_details"]:
            print(f"    wrong: {line}")
        for line in s["unexpected_unreadable"]:
            print(f"    unreadable: {line}")
    return 1 if missed else 0
