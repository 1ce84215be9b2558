"""Shared parts of the live commands (``calibrate``, ``watch``, ``play``, ``demo``): profiles folder, readers, port."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from table.errors import UsageError
from vision.reading import ImageReading
from vision.sources.base import Frame, FrameSource

READERS = ("model", "truth")


def check_port(port: int) -> None:
    """Check a ``--port`` value (``play``, ``demo``, ``watch``).

    Raises
    ------
    UsageError
        If the port is not 0-65535.
    """
    if not 0 <= port <= 65535:
        raise UsageError(f"--port must be 0-65535 (0: any free port), got {port}")


def add_profile_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--profile`` and ``--profiles-dir``."""
    parser.add_argument(
        "--profile", default="default", metavar="NAME", help="calibration profile name or .toml path (default: default)"
    )
    parser.add_argument(
        "--profiles-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="folder of profiles (default: the user's, ~/.local/share/dicetable/profiles, then the shipped ones)",
    )


def add_reader_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--reader``."""
    parser.add_argument(
        "--reader",
        choices=READERS,
        default="model",
        help="pip reader: the trained model (default), or 'truth' (synthetic camera only: "
        "the script's own values, to test the watcher alone)",
    )


def make_reader(
    kind: str, source: FrameSource, geometry: Any
) -> tuple[Callable[[np.ndarray], ImageReading], Callable[[Frame], Any]]:
    """The reader to use and a hook to call with each frame before it is watched.

    Raises
    ------
    ValueError
        If 'truth' is asked for with a source whose frames carry no truth
        (only the synthetic sources do).
    """
    if kind == "truth":
        from vision.sources.synthetic import TruthReader

        if not source.carries_truth:
            raise ValueError("--reader truth works only with --camera synthetic[:SEED]; use --reader model")
        reader = TruthReader(geometry)
        return reader, reader.see
    from vision.reader import read_image

    return read_image, lambda frame: None


def event_line(event: Any) -> str:
    """One human line for an event."""
    t = f"[{event.frame_index:5d} {event.timestamp_s:7.2f}s]"
    if event.kind.value in ("settled", "unreadable"):
        vals = " ".join("?" if v is None else str(v) for v in event.values)
        held = [i + 1 for i, h in enumerate(event.held) if h]
        text = f"{t} {event.kind.value}: {vals}" + (f" (held: dice {', '.join(map(str, held))})" if held else "")
        extra = list(event.problems) + [f.message for f in event.flags]
        return text + "".join(f"\n    - {p}" for p in extra)
    return f"{t} {event.kind.value}" + "".join(f": {p}" for p in event.problems)
