"""``dicetable doctor``: check the table, a line each (ok / warning / fail / skipped), and say what to do."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from table.commands._live import add_profile_options
from table.doctor.page import DEFAULT_URL


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``doctor`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "doctor",
        help="check the table (versions, camera, buttons, networks, store, profile, Pi, page)",
        description="Check every part of the table and print one line each: ok, warning, fail or skipped, and "
        "what to do. Safe while the table runs: nothing is changed or made. Exit status 0 when "
        "nothing fails, 1 otherwise.",
    )
    p.add_argument(
        "--camera",
        default=None,
        metavar="SOURCE",
        help="the camera to check: picamera2, opencv:0, images:DIR or synthetic (default: the "
        "profile's camera, picamera2 for the shipped one); 'none' checks no camera",
    )
    add_profile_options(p)
    p.add_argument(
        "--db",
        type=Path,
        default=None,
        metavar="PATH",
        help="game store (default: $DICETABLE_DB or the user data folder, as play)",
    )
    p.add_argument(
        "--pins", type=Path, default=None, metavar="FILE", help="GPIO pin map (default firmware_config/pins.toml)"
    )
    p.add_argument("--url", default=DEFAULT_URL, help=f"the page's health address (default {DEFAULT_URL})")
    p.add_argument(
        "--home",
        type=Path,
        default=None,
        metavar="DIR",
        help="home folder of the user whose desktop starts the kiosk (default: the user who ran sudo, else this one)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object (for scripts)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run every check; exit status 1 when one fails."""
    from table.doctor.run import NO_CAMERA, Options, run_checks, summary
    from vision.sources import parse_spec

    if args.camera is not None and args.camera != NO_CAMERA:
        parse_spec(args.camera)  # a bad --camera is one line first, not advice to calibrate with it
    checks = run_checks(
        Options(
            camera=args.camera,
            profile=args.profile,
            profiles_dir=args.profiles_dir,
            db=args.db,
            pins=args.pins,
            url=args.url,
            home=args.home,
        )
    )
    counts = summary(checks)
    failed = counts["fail"] > 0
    if args.json:
        print(json.dumps({"ok": not failed, "counts": counts, "checks": [c.to_json() for c in checks]}, indent=1))
    else:
        for check in checks:
            print(check.line())
        print(
            f"dicetable doctor: {len(checks)} checks: {counts['ok']} ok, {counts['warning']} warnings, "
            f"{counts['fail']} failed, {counts['skipped']} skipped"
        )
    return 1 if failed else 0
