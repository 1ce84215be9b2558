"""What every benchmark script's command line shares: mistakes said in one line (exit 2), and checks of given paths.

``parser(__file__, ...)`` is :class:`table.cli_parser.OneLineParser` (no usage block, "see python
benchmarks/NAME.py --help"); the ``type=`` checks below refuse a bad path before minutes of measuring, and
``run(main)`` says a bad file met later (a VisionError, an OSError) in one line instead of a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import _checkout  # noqa: F401  (this checkout's vision/ and table/ first on sys.path)

from table.cli_parser import OneLineParser
from table.errors import DicetableError
from vision.errors import VisionError


def parser(script: str, description: str | None = None, **kwargs) -> OneLineParser:
    """The parser of the script at path `script` (pass ``__file__``)."""
    name = Path(script).name
    return OneLineParser(prog=name, description=description, help_hint=f"python benchmarks/{name} --help", **kwargs)


def positive(kind: type = int) -> Callable[[str], int | float]:
    """``type=`` of a count or a duration: a number above 0 (``positive()`` an int, ``positive(float)`` a float)."""

    def check(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {'whole ' if kind is int else ''}number") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text} must be above 0")
        return value

    return check


def labelled_dir(text: str) -> Path:
    """``type=`` of a labelled photo set: a folder holding labels.json."""
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a folder (the default is ../shared/dice-images/dev beside this checkout); give the "
            "folder holding labels.json and its photos, e.g. /path/to/dice-images/dev"
        )
    if not (path / "labels.json").is_file():
        raise argparse.ArgumentTypeError(
            f"{text!r} has no labels.json; give a folder holding labels.json and its photos"
        )
    return path


def dataset_argument(parser: argparse.ArgumentParser) -> None:
    """Add the positional ``dataset``: a labelled photo set (:func:`labelled_dir`), by default DEV."""
    from vision.lab.dataset import DEFAULT_DEV_DIR

    parser.add_argument(
        "dataset", nargs="?", default=str(DEFAULT_DEV_DIR), type=labelled_dir, help="labelled photos (default DEV)"
    )


def out_file(text: str) -> str:
    """``type=`` of a file to write (``--json F``): its folder must exist, and it must not be a folder."""
    if not text:  # the default "": no file
        return text
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder; give a file name, e.g. {str(path / 'out.json')!r}")
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(
            f"folder {str(path.parent)!r} does not exist; make it first or write elsewhere"
        )
    return text


def out_dir(text: str) -> str:
    """``type=`` of a folder to write pictures into (``--save DIR``; made if missing): not an existing file."""
    if not text:  # the default "": no folder
        return text
    path = Path(text)
    blocker = next((p for p in (path, *path.parents) if p.exists()), None)
    if blocker is not None and not blocker.is_dir():
        raise argparse.ArgumentTypeError(f"{str(blocker)!r} is a file; give a folder (it is made if missing)")
    return text


def run(main: Callable[[], int | None]) -> None:
    """Run `main` and exit with its status; a bad file or model met while measuring is one line on stderr, exit 2."""
    try:
        status = main()
    except (VisionError, DicetableError, OSError) as exc:
        print(f"{Path(sys.argv[0]).name}: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print(f"{Path(sys.argv[0]).name}: interrupted", file=sys.stderr)
        sys.exit(130)
    sys.exit(int(status or 0))
