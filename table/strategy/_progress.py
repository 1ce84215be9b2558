"""A plain-text progress bar for long builds (no dependencies)."""

from __future__ import annotations

import time
from typing import TextIO


class TextProgress:
    """Draw ``label [#####.....]  45%  12 s`` on one line of ``stream``.

    Parameters
    ----------
    stream : text stream
        Usually ``sys.stderr``.
    label : str
        Text in front of the bar.
    width : int, optional
        Bar width in characters.
    min_interval : float, optional
        Least time between redraws, in seconds.

    Examples
    --------
    >>> import io
    >>> buf = io.StringIO()
    >>> bar = TextProgress(buf, "yacht", width=4)
    >>> bar(2, 4); bar.close()
    >>> buf.getvalue().splitlines()[-1].startswith("yacht [####]")
    True
    """

    def __init__(self, stream: TextIO, label: str, *, width: int = 30, min_interval: float = 0.2) -> None:
        self.stream = stream
        self.label = label
        self.width = width
        self.min_interval = min_interval
        self.started = time.monotonic()
        self._last = 0.0
        self._fraction = 0.0

    def __call__(self, done: int, total: int) -> None:
        """Record progress ``done`` of ``total`` and redraw if due."""
        self._fraction = done / total if total else 1.0
        now = time.monotonic()
        if now - self._last >= self.min_interval or done >= total:
            self._last = now
            self._draw()

    def _draw(self) -> None:
        filled = int(round(self._fraction * self.width))
        bar = "#" * filled + "." * (self.width - filled)
        elapsed = time.monotonic() - self.started
        self.stream.write(f"\r{self.label} [{bar}] {self._fraction:4.0%} {elapsed:5.1f} s")
        self.stream.flush()

    def close(self) -> None:
        """Draw the final state and end the line."""
        self._fraction = 1.0
        self._draw()
        self.stream.write("\n")
        self.stream.flush()
