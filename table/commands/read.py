"""``dicetable read``: read the dice in photos and print what was found."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from table.errors import UsageError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``read`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "read",
        help="read the dice in photos (files or folders of photos)",
        description=(
            "Read the face values of the d6 dice in each photo. Folders expand to the photos "
            "they hold (sorted). A die the reader is unsure of is reported unknown ('?'), never guessed."
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="IMAGE_OR_DIR", help="photo files or folders of photos")
    parser.add_argument(
        "--annotate",
        metavar="OUT_DIR",
        type=Path,
        help="write each photo with boxes and values drawn into OUT_DIR (unknown dice in orange)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help='print one JSON array: {"image", "dice": [{"value", "box", "confidence", "reason"}], "problems"} '
        'per photo ("reason": why a value is null)',
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Read every photo; print a table (or JSON); exit 0, or 2 on a bad path or file.

    A path that is missing, an empty folder or a file that is not a readable
    photo does not stop the others: they are read and printed first, then
    every bad path is named on stderr (exit 2). So with ``--annotate``: a file
    given for its folder is refused before anything is read, but a folder
    that cannot be made or written into (permission denied, a full disk)
    only loses the drawings; the readings are printed, then what could not
    be written and why (exit 2).
    """
    from vision.errors import ImageLoadError, OutputError
    from vision.images import expand_image_paths, load_image, output_folder
    from vision.reader import read_image

    paths, unreadable = [], []
    for given in args.paths:  # a missing path or an empty folder does not stop the others either
        try:
            paths.extend(expand_image_paths([given]))
        except ImageLoadError as exc:
            unreadable.append(_photos_in_subfolders(Path(given)) or str(exc))
    annotate = args.annotate is not None
    not_annotated: list[str] = []  # why annotated photos were not written, said after the readings
    if annotate:
        _check_annotate_folder(args.annotate)  # a slip said before any reading
        try:
            output_folder(args.annotate, "--annotate")
        except OutputError as exc:
            if args.annotate.exists() and not args.annotate.is_dir():
                raise UsageError(str(exc)) from None  # a file named for the folder: a slip, said before any reading
            not_annotated.append(str(exc))
            annotate = False
    results = []
    written: set[Path] = set()
    for path in paths:
        try:
            image = load_image(path)
        except ImageLoadError as exc:
            unreadable.append(str(exc))
            continue
        reading = read_image(image)
        results.append((path, reading))
        if annotate:
            try:
                written.add(_write_annotated(args.annotate, path, image, reading, written))
            except OutputError as exc:
                not_annotated.append(str(exc))
    if results and args.json:
        doc = [
            {"image": str(path), "dice": [d.to_json() for d in reading.dice], "problems": list(reading.problems)}
            for path, reading in results
        ]
        # one photo per line: valid JSON that stays readable and greppable
        print("[\n" + ",\n".join(json.dumps(entry) for entry in doc) + "\n]")
    elif results:
        _print_table(results)
    problems = []
    if len(unreadable) == 1:
        problems.append(unreadable[0])
    elif unreadable:
        problems.append(
            f"{len(unreadable)} of {len(results) + len(unreadable)} paths could not be read:\n  "
            + "\n  ".join(unreadable)
        )
    if not_annotated:
        problems.append(_not_annotated_line(not_annotated, annotate, len(results)))
    if problems:
        raise UsageError("\n".join(problems))
    return 0


def _photos_in_subfolders(folder: Path) -> str | None:
    """For a folder with no photo directly in it but some in its subfolders: one line saying which to pass.

    ``read`` does not descend into subfolders (a photo set's ``rejected/`` or ``annotated/`` would be read
    with it); e.g. DEV's ``single/`` keeps its photos in ``1/`` ... ``6/``. None when there is nothing to say.
    """
    from vision.images import IMAGE_SUFFIXES

    if not folder.is_dir():
        return None
    counts = {}
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        n = sum(1 for f in sub.rglob("*") if f.suffix.lower() in IMAGE_SUFFIXES and f.is_file())
        if n:
            counts[sub.name] = n
    if not counts:
        return None
    names = ", ".join(list(counts)[:8]) + (", ..." if len(counts) > 8 else "")
    first = str(folder / next(iter(counts)))
    return (
        f"no photos directly in {str(folder)!r}; its subfolders {names} hold {sum(counts.values())} photos: "
        f"pass one of them (e.g. {first!r}) or several ({str(folder)}/*)"
    )


def _check_annotate_folder(folder: Path) -> None:
    """Refuse an ``--annotate`` folder named like a photo (it would be made as a folder) or a labelled photo set's.

    Raises
    ------
    UsageError
        If `folder` does not exist and ends in a photo's suffix (``out.png``), or holds a ``labels.json``
        (the drawings would be read as photos of the set).
    """
    from vision.images import IMAGE_SUFFIXES

    if not folder.exists() and folder.suffix.lower() in IMAGE_SUFFIXES:
        raise UsageError(
            f"--annotate takes a folder, and {str(folder)!r} is named like a photo; give a folder, e.g. "
            f"--annotate {str(folder.with_suffix(''))!r} (each annotated photo is written into it)"
        )
    if (folder / "labels.json").is_file():
        raise UsageError(
            f"--annotate {str(folder)!r} holds a labels.json: the drawings would join that photo set; "
            "give another folder"
        )


def _not_annotated_line(reasons: list[str], folder_ok: bool, n_read: int) -> str:
    """One line saying which annotated photos were not written and why (the first reason)."""
    if not folder_ok:  # the folder itself failed: nothing was drawn
        return f"{reasons[0]}; the annotated photos were not written (the readings are complete)"
    more = f" ({len(reasons)} of {n_read} annotated photos were not written)" if len(reasons) > 1 else ""
    return f"annotated photo not written: {reasons[0]}{more}; the readings are complete"


def _write_annotated(folder: Path, path: Path, image, reading, taken: set[Path]) -> Path:
    """Write the annotated photo into `folder` and return its path.

    The name is the photo's; a photo of the same name from another folder
    read in the same run gets ``-2``, ``-3`` ..., and the photo itself is never
    overwritten (when `folder` is its own folder the name gets ``-annotated``).
    Raises :class:`vision.errors.OutputError` (saying why) if it cannot be written.
    """
    from vision.annotate import annotate_reading
    from vision.images import save_image

    suffix = path.suffix.lower() if path.suffix.lower() in (".png", ".jpg", ".jpeg") else ".png"
    target = folder / (path.stem + suffix)
    if target.resolve() == path.resolve():
        target = folder / (path.stem + "-annotated" + suffix)
    stem, n = target.stem, 1
    while target in taken or target.resolve() == path.resolve():
        n += 1
        target = folder / f"{stem}-{n}{suffix}"
    return save_image(target, annotate_reading(image, reading))


def _print_table(results) -> None:
    out = sys.stdout
    width = max([len("image")] + [len(str(p)) for p, _ in results])
    rows = [(" ".join("?" if v is None else str(v) for v in reading.values) or "-") for _, reading in results]
    values_width = max([20] + [len(v) for v in rows])  # many dice widen the column instead of pushing the rest
    out.write(f"{'image':<{width}}  dice  {'values':<{values_width}}  unknown  problems\n")
    for (path, reading), values in zip(results, rows):
        unknown = sum(v is None for v in reading.values)
        problems = "; ".join(reading.problems) or "-"
        out.write(f"{str(path):<{width}}  {len(reading.dice):4d}  {values:<{values_width}}  {unknown:7d}  {problems}\n")
