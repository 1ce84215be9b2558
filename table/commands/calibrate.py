"""``dicetable calibrate``: marker sheet, tray calibration from an empty tray, and the check roll."""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
from pathlib import Path

from calibration.errors import CalibrationError
from calibration.markers import write_marker_sheet
from calibration.procedure import calibrate, check
from calibration.profile import (
    PACKAGED_PROFILES_DIR,
    Profile,
    check_profile_name,
    load_profile,
    save_profile,
    user_profiles_dir,
)
from table.commands._live import add_profile_options, add_reader_option, event_line, make_reader
from vision.sources import open_source
from vision.tray import MarkerLayout


def _pair(text: str, what: str) -> tuple[float, float]:
    try:
        a, b = (float(v) for v in text.lower().replace("x", ",").split(","))
    except ValueError:
        raise ValueError(f"{what} must be two numbers like 200x150, got {text!r}") from None
    return a, b


def _corners(text: str) -> list[tuple[float, float]]:
    parts = text.replace(";", " ").split()
    if len(parts) != 4:
        raise ValueError(
            f"--corners needs 4 points 'x,y x,y x,y x,y' (top-left, top-right, bottom-right, "
            f"bottom-left, image pixels), got {text!r}"
        )
    return [_pair(p, "each corner") for p in parts]


def _hold(text: str) -> tuple[float, float, float, float]:
    try:
        x, y, w, h = (float(v) for v in text.split(","))
    except ValueError:
        raise ValueError(f"--hold must be X,Y,W,H in tray mm (e.g. 160,0,40,150), got {text!r}") from None
    return x, y, w, h


#: Ranges of the numbers a profile holds (:mod:`calibration.profile.reading` refuses a profile outside
#: them): option -> (attribute, least, most, what it is).
RANGES = {
    "--dice": ("dice", 1, 30, "dice in play"),
    "--die-mm": ("die_mm", 4, 60, "the side of a die in mm"),
    "--px-per-mm": ("px_per_mm", 0.25, 20, "rectified pixels per mm"),
}


def _check_ranges(args: argparse.Namespace, width: float, height: float) -> None:
    """Refuse numbers the saved profile could not be read back with (checked before the camera is opened).

    Raises
    ------
    ValueError
        Naming the option, its range and the value given.
    """
    for option, (attr, lo, hi, what) in RANGES.items():
        value = getattr(args, attr)
        if not lo <= value <= hi:  # NaN too
            raise ValueError(f"{option} must be {lo:g} to {hi:g} ({what}), got {value}")
    if not (10 <= width <= 2000 and 10 <= height <= 2000):
        raise ValueError(f"--tray-mm must be two sides of 10 to 2000 mm, like 200x150, got {args.tray_mm!r}")


#: ``--check`` gives up after this many frames unless given ``--max-frames``.
MAX_FRAMES = 900
#: Options that only the check step uses, and those that only making a profile uses (attribute, option).
CHECK_ONLY = (
    ("profile", "--profile"),
    ("min_confidence", "--min-confidence"),
    ("save", "--save"),
    ("max_frames", "--max-frames"),
    ("reader", "--reader"),
)
MAKE_ONLY = (
    ("name", "--name"),
    ("corners", "--corners"),
    ("hold", "--hold"),
    ("lens_position", "--lens-position"),
    ("tray_mm", "--tray-mm"),
    ("px_per_mm", "--px-per-mm"),
    ("die_mm", "--die-mm"),
    ("dice", "--dice"),
    ("marker_mm", "--marker-mm"),
)
#: Defaults of the options that only one step uses. They are None in the parser, so that an option
#: given for the other step can be told from one not given (:func:`_refuse_misplaced_options`), and
#: are filled in once it is known which step runs.
DEFAULTS = {
    "tray_mm": "200x150",
    "px_per_mm": 2.8,
    "die_mm": 16.0,
    "dice": 5,
    "marker_mm": 16.0,
    "dpi": 300,
    "max_frames": MAX_FRAMES,
    "profile": "default",
    "reader": "model",
}


def _fill_defaults(args: argparse.Namespace) -> None:
    """Give the options of :data:`DEFAULTS` that were not given their defaults."""
    for attr, default in DEFAULTS.items():
        if getattr(args, attr) is None:
            setattr(args, attr, default)


def _refuse_misplaced_options(args: argparse.Namespace) -> None:
    """Refuse options that the step asked for would ignore; nothing is done or written.

    Raises
    ------
    ValueError
        If a check-only option is given without ``--check`` (e.g. ``--profile t1 --save``, which would
        otherwise make the profile 'default'), or an option for making a profile is given with ``--check``.
    """
    if args.check:
        given = [opt for attr, opt in MAKE_ONLY if getattr(args, attr) is not None]
        if given:
            raise ValueError(
                f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for making a profile, "
                f"not for --check, which checks the profile named by --profile; drop "
                f"{', '.join(given)} or --check"
            )
        return
    given = [opt for attr, opt in CHECK_ONLY if getattr(args, attr) not in (None, False)]
    if given:
        try:
            name = check_profile_name(args.name or args.profile or "")
        except ValueError:
            name = "NAME"
        raise ValueError(
            f"{', '.join(given)} only work{'s' if len(given) == 1 else ''} with --check, and nothing "
            f"was done: to check a profile add --check; to make one from the empty tray, name it "
            f"with --name: dicetable calibrate --camera {args.camera} --name {name}"
        )


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``calibrate`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "calibrate",
        help="print tray markers, calibrate the camera on the empty tray, check a roll",
        description="Three steps. 1: 'dicetable calibrate --markers sheet.pdf' writes the four corner markers "
        "to print (at 100% scale) and stick on the tray corners. 2: with the tray EMPTY, "
        "'dicetable calibrate --camera SOURCE --name NAME' locks the camera, finds the markers (or "
        "takes --corners), keeps an empty-tray image and saves NAME.toml in the user's profiles folder "
        "(~/.local/share/dicetable/profiles, or $XDG_DATA_HOME/dicetable/profiles; --profiles-dir "
        "to choose another), which an upgrade of dicetable leaves alone; a profile of that name "
        "already there is replaced, its old TOML kept as NAME.toml.bak and its empty-tray image as "
        "NAME.empty.png.bak. "
        "3: 'dicetable calibrate --check --camera SOURCE --profile NAME', roll the dice, see the reading; "
        "adjust --min-confidence and --save it.",
    )
    p.add_argument("--markers", metavar="FILE", help="write the marker sheet to FILE (.pdf or .png) and stop")
    p.add_argument("--marker-mm", type=float, default=None, help="printed marker side in mm (default 16)")
    p.add_argument("--dpi", type=int, default=None, help="marker sheet resolution (default 300)")
    p.add_argument("--camera", metavar="SOURCE", help="camera source (see 'dicetable watch --help')")
    p.add_argument(
        "--name", default=None, help="name of the profile to make: letters, digits, '-' and '_' (default: default)"
    )
    p.add_argument("--tray-mm", default=None, help="tray floor WIDTHxHEIGHT in mm (default 200x150)")
    p.add_argument("--px-per-mm", type=float, default=None, help="rectified scale (default 2.8: a 16 mm die is 45 px)")
    p.add_argument("--die-mm", type=float, default=None, help="die side in mm (default 16)")
    p.add_argument("--dice", type=int, default=None, help="dice in play (default 5)")
    p.add_argument("--hold", default=None, metavar="X,Y,W,H", help="hold area in tray mm (default: none)")
    p.add_argument("--no-hold", action="store_true", help=argparse.SUPPRESS)
    p.add_argument(
        "--corners",
        default=None,
        metavar="'x,y x,y x,y x,y'",
        help="floor corners by hand in image px (TL TR BR BL) instead of markers",
    )
    p.add_argument("--lens-position", type=float, default=None, help="manual focus in dioptres (Camera Module 3)")
    p.add_argument("--check", action="store_true", help="check a profile: roll the dice and see the reading")
    p.add_argument("--min-confidence", type=float, default=None, help="with --check: reader threshold to try (0-1)")
    p.add_argument("--save", action="store_true", help="with --check: save --min-confidence into the profile")
    p.add_argument(
        "--max-frames", type=int, default=None, help=f"with --check: give up after N frames (default {MAX_FRAMES})"
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    add_profile_options(p)
    add_reader_option(p)
    # --profile and --reader are for --check only; None tells that they were not given.
    p.set_defaults(func=run, profile=None, reader=None)


def run(args: argparse.Namespace) -> int:
    """Run the step the options ask for; exit status 0 (1 when the check roll was unreadable)."""
    if args.markers and args.check:
        raise ValueError(
            "--markers writes the marker sheet and stops, and nothing was checked; "
            "drop --check to print markers, or --markers to check a profile"
        )
    if args.dpi is not None and not args.markers:
        raise ValueError("--dpi is the marker sheet's resolution and only works with --markers FILE")
    if args.markers:
        _fill_defaults(args)
        layout = MarkerLayout.at_corners(*_pair(args.tray_mm, "--tray-mm"), size_mm=args.marker_mm)
        path = write_marker_sheet(args.markers, layout, dpi=args.dpi)
        info = {
            "file": str(path),
            "dictionary": layout.dictionary,
            "ids": list(layout.ids),
            "marker_mm": layout.size_mm,
            "centres_mm": [list(c) for c in layout.centres_mm],
        }
        if args.json:
            print(json.dumps(info))
        else:
            print(
                f"wrote {path}: 4 ArUco markers ({layout.dictionary}, ids 0-3), {layout.size_mm:g} mm each; "
                "print at 100% and check the 50 mm bar"
            )
            for name, mid, c in zip(
                ("top-left", "top-right", "bottom-right", "bottom-left"), layout.ids, layout.centres_mm
            ):
                print(f"  id {mid}: {name} corner, centre at ({c[0]:g}, {c[1]:g}) mm from the floor's top-left corner")
        return 0
    if not args.camera:
        raise ValueError("give --markers FILE to print markers, or --camera SOURCE to calibrate or --check")
    _refuse_misplaced_options(args)
    _fill_defaults(args)
    if args.check:
        return _check(args)
    name = check_profile_name("default" if args.name is None else args.name)  # before the camera is opened
    folder = args.profiles_dir if args.profiles_dir is not None else user_profiles_dir()
    width, height = _pair(args.tray_mm, "--tray-mm")
    _check_ranges(args, width, height)
    hold = _hold(args.hold) if args.hold else None
    corners = _corners(args.corners) if args.corners else None
    layout = MarkerLayout.at_corners(width, height, size_mm=args.marker_mm)
    from vision.reader import read_image

    with open_source(args.camera, lens_position=args.lens_position) as source:
        profile, reference = calibrate(
            source,
            name=name,
            source_spec=args.camera,
            width_mm=width,
            height_mm=height,
            px_per_mm=args.px_per_mm,
            die_mm=args.die_mm,
            dice_count=args.dice,
            hold_area_mm=hold,
            corners_px=corners,
            markers=layout,
            lens_position=args.lens_position,
            folder=folder,
            save=False,
            reader=read_image,
        )
    path = folder / f"{name}.toml"
    backup = path.with_name(f"{name}.toml.bak") if path.is_file() else None
    old_image = path.with_name(f"{name}.empty.png")  # save_profile's name for the empty-tray image
    image_backup = old_image.with_name(f"{old_image.name}.bak") if backup and old_image.is_file() else None
    if backup is not None:  # recalibrating replaces the profile; a hand-edited one is kept, not lost
        shutil.copy2(path, backup)
        if image_backup is not None:  # the old TOML's empty-tray image: the camera may have moved since
            shutil.copy2(old_image, image_backup)
    save_profile(profile, folder, reference=reference)
    if args.json:
        print(
            json.dumps(
                {
                    "profile": str(path),
                    "corners_px": [list(c) for c in profile.corners_px],
                    "corners_from": profile.corners_from,
                    "rectified_px": list(profile.geometry.size_px),
                    "replaced": backup is not None,
                    "backup": str(backup) if backup else None,
                    "backup_empty_tray": str(image_backup) if image_backup else None,
                }
            )
        )
    else:
        print(
            f"saved {path} (tray from {profile.corners_from}; rectified {profile.geometry.size_px[0]}x"
            f"{profile.geometry.size_px[1]} px at {profile.px_per_mm:g} px/mm)"
        )
        if backup is not None:
            if image_backup is None:
                print(
                    f"replaced the profile {name!r} that was there; the old one is kept as {backup} "
                    f"(rename it to {name}.toml to go back)"
                )
            else:
                print(
                    f"replaced the profile {name!r} that was there; the old one is kept as {backup} "
                    f"and its empty-tray image as {image_backup} (to go back, rename them to "
                    f"{name}.toml and {old_image.name})"
                )
        where = f" --profiles-dir {args.profiles_dir}" if args.profiles_dir is not None else ""
        print(f"next: dicetable calibrate --check --camera {args.camera} --profile {name}{where}")
    return 0


def _check(args: argparse.Namespace) -> int:
    profile = load_profile(args.profile, args.profiles_dir)
    if args.min_confidence is not None:
        if not 0.0 <= args.min_confidence <= 1.0:
            raise ValueError(f"--min-confidence must be 0-1, got {args.min_confidence}")
        profile = dataclasses.replace(profile, min_confidence=args.min_confidence)
    print("roll the dice into the tray...", file=sys.stderr)
    with open_source(args.camera, **profile.camera.source_options()) as source:
        reader, see = make_reader(args.reader, source, profile.geometry)
        events = check(profile, source, reader, max_frames=args.max_frames, on_frame=see)
    verdict = events[-1] if events and events[-1].kind.value in ("settled", "unreadable") else None
    if args.json:
        print(json.dumps({"events": [e.to_json() for e in events], "min_confidence": profile.min_confidence}))
    else:
        for e in events:
            print(event_line(e))
    if verdict is None:
        raise CalibrationError(
            f"no roll settled within {args.max_frames} frames; roll the dice and keep hands out "
            "of the tray, or raise --max-frames"
        )
    if args.save:
        path = _save_checked(profile)
        print(
            f"saved min_confidence = {profile.min_confidence:g} into profile {profile.name!r} ({path})", file=sys.stderr
        )
    return 0 if verdict.kind.value == "settled" else 1


def _save_checked(profile: Profile) -> Path:
    """Save a checked profile where it came from; a shipped one goes to the user's folder.

    The shipped folder is replaced by an upgrade, so a shipped profile (and its
    empty-tray image, if any) is saved as the user's own instead.
    """
    folder = profile.folder
    if folder is None or folder.resolve() == PACKAGED_PROFILES_DIR:
        folder = user_profiles_dir()
    moved = profile.folder is None or folder.resolve() != profile.folder.resolve()
    reference = profile.load_reference() if moved and profile.reference else None
    return save_profile(profile, folder, reference=reference)
