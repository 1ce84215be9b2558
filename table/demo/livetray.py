"""A synthetic tray that throws on request: the camera of ``dicetable demo`` and the app's tests.

:class:`vision.sources.synthetic.SyntheticSource` plays a fixed script.  Here
the script grows one roll at a time: :meth:`LiveTray.throw` appends a
:class:`~vision.sources.synthetic.ScriptedRoll` (held dice go to the hold area,
the others tumble anew) and the frames of that roll follow; between throws the
tray shows its last still frame.  The same seed and the same throws give the
same frames: each throw is planned after the last one with the random stream
carried on, as a :class:`SyntheticSource` of the whole script would play it,
and only the last throw's states are kept.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from table.commands._live import make_reader
from vision.sources.base import FrameSource
from vision.sources.roll_script import RollPlan, _Planner
from vision.sources.synthetic import ScriptedRoll, SyntheticSource

_IDLE_FRAMES = 2
#: Angle (degrees) of a held die laid in the hold area. Square (0) the pip reader boxes a held 6 tall
#: (50 x 68 px): box aspect over the watcher's lean_box_aspect (1.3), "the held die is leaning" on 11 of 54
#: held dice (6 seeds, a held 6 in half of them, the model reader); at 15 degrees on none.
HOLD_ANGLE = 15.0


def _trim() -> None:
    """Give freed heap back to the OS (glibc only): building a tray leaves ~65 MB of freed temporaries."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


class _Tail:
    """The last items of a stream addressed by their global index: ``len()`` counts them all, only the
    kept ones (from ``base``) can be read; an older index raises IndexError."""

    def __init__(self, items: Sequence[Any], base: int = 0) -> None:
        self.items, self.base = list(items), base

    def __len__(self) -> int:
        return self.base + len(self.items)

    def __getitem__(self, k: int) -> Any:
        if k < 0:
            k += len(self)
        if not self.base <= k < len(self):
            raise IndexError(f"item {k} is no longer kept (kept: {self.base}-{len(self) - 1})")
        return self.items[k - self.base]

    def __iter__(self) -> Any:
        return iter(self.items)


class _GrowingSource(SyntheticSource):
    """A :class:`SyntheticSource` that plans one more roll at a time, keeping its rendered tray and noise.

    Only the last roll's states (and the state before them, which rendering and truth look back at) are
    kept, so memory and time per throw stay constant; the rolls are those a :class:`SyntheticSource` of
    the whole script would play (the same random stream, carried by the planner); a test checks it.
    """

    def __init__(self, *, script: Sequence[ScriptedRoll], idle_frames: int, **kw: Any) -> None:
        super().__init__(script=script[:1], idle_frames=idle_frames, **kw)
        self._planner = _Planner(np.random.default_rng(self._seed), idle_frames)
        states, plan = self._planner.add(script[0])
        self._states, self._plans = _Tail(self._planner.idle + states), _Tail([plan])
        self._square_holds()
        for roll in script[1:]:
            self.add(roll)

    def add(self, roll: ScriptedRoll) -> RollPlan:
        """Plan `roll` after the others; return its plan."""
        before = self._states[-1]
        states, plan = self._planner.add(roll)
        self._script = (roll,)
        self._states = _Tail([before, *states], plan.start_index - 1)
        self._plans = _Tail([plan], plan.roll)
        self._static_key = None
        self._square_holds()
        return plan

    def _square_holds(self) -> None:
        """Lay held dice square in the hold area, as a player lines them up.

        A held die keeps the angle it landed at; at some angles the watcher's shape
        check takes a die in the hold area's first or last slot for a leaning one,
        and the demo would re-throw forever (the held die never moves); all at
        :data:`HOLD_ANGLE`.
        """
        tail = self._states
        tail.items = [
            replace(st, dice=tuple(replace(d, angle=HOLD_ANGLE) if d.held else d for d in st.dice))
            if any(d.held for d in st.dice)
            else st
            for st in tail.items
        ]


class LiveTray(FrameSource):
    """Synthetic frames of five dice thrown on request.

    Parameters
    ----------
    seed : int, optional
        Seed of the tray, the dice positions and the values thrown.
    fps : float, optional
        Frame rate of the timestamps, in frames per second.
    tumble_frames, rest_frames : int, optional
        Frames of each throw's tumble and of the still rest after it.

    Examples
    --------
    >>> tray = LiveTray(seed=1)
    >>> tray.throw(())                       # all five dice
    >>> frames = [tray.read() for _ in range(80)]
    >>> len(tray.truth_dice())
    5
    """

    carries_truth = True

    kind = "synthetic-live"

    def __init__(self, *, seed: int = 0, fps: float = 30.0, tumble_frames: int = 20, rest_frames: int = 12) -> None:
        super().__init__()
        self.seed = int(seed)
        self.rng = np.random.default_rng(self.seed + 101)
        self._fps = float(fps)
        self._tumble = int(tumble_frames)
        self._rest = int(rest_frames)
        self._last: ScriptedRoll | None = None  # the last throw: the next keeps its held dice
        self._src: SyntheticSource | None = None
        self._k = 0
        self._end = 0
        self._lock = threading.Lock()
        self._idle_image: np.ndarray | None = None
        self.throws = 0

    @property
    def fps(self) -> float:
        return self._fps

    @property
    def describe(self) -> str:
        return f"synthetic-live:{self.seed} ({self.throws} throws)"

    @property
    def busy(self) -> bool:
        """True while a throw's frames are still playing."""
        return self._src is not None and self._k < self._end

    def throw(self, keep: Sequence[int], values: Sequence[int] | None = None) -> None:
        """Throw every die but those in `keep` (script die indexes, 0-4).

        Parameters
        ----------
        keep : sequence of int
            Dice left in (or moved to) the hold area.
        values : sequence of int, optional
            The five values after the throw (kept dice keep theirs); random when None.
        """
        with self._lock:
            old = list(self._last.values) if self._last is not None else None
            kept = sorted(set(int(i) for i in keep)) if old is not None else []
            if old is not None and 4 in kept and len(kept) < 5:
                # The synthetic world's lowest hold slot is read as a leaning die by the watcher's
                # shape check; hold dice in slots 1-4 only: the die is moved to a free slot instead.
                j = min(i for i in range(5) if i not in kept)
                old[j], old[4] = old[4], old[j]
                kept = sorted(j if i == 4 else i for i in kept)
            if values is None:
                new = [int(v) for v in self.rng.integers(1, 7, 5)]
                if old is not None:
                    new = [old[i] if i in kept else new[i] for i in range(5)]
            else:
                new = [int(v) for v in values]
            hold = tuple(kept)
            self._last = ScriptedRoll(values=tuple(new), hold=hold, tumble_frames=self._tumble, rest_frames=self._rest)
            if self._src is None:
                self._src = _GrowingSource(seed=self.seed, script=[self._last], fps=self._fps, idle_frames=_IDLE_FRAMES)
                plan = self._src.plan[-1]
                _trim()
            else:
                plan = self._src.add(self._last)
            self._k, self._end = plan.start_index, plan.end_index
            self._idle_image = None
            self.throws += 1

    def reopen(self) -> LiveTray:
        """Open the tray again after :meth:`close` and return it: the camera loop closes a camera that
        failed before it opens it anew, and the synthetic tray is the same one plugged in again."""
        self._closed = False
        return self

    def truth_dice(self) -> list[tuple[int, tuple[float, float]]]:
        """``(value, (x, y) mm)`` of each script die as it lies now (empty before the first throw)."""
        with self._lock:
            if self._src is None:
                return []
            k = min(self._k, self._src.frame_count - 1)
            return [(d.value, d.centre_mm) for d in self._src.truth(k).dice]

    def nearest_die(self, xy_mm: tuple[float, float]) -> int:
        """Index of the script die lying nearest `xy_mm` (tray mm)."""
        dice = self.truth_dice()
        return min(range(len(dice)), key=lambda i: math.dist(dice[i][1], xy_mm))

    def _grab(self) -> tuple[np.ndarray, float, Any]:
        with self._lock:
            src = self._src
            if src is None:
                if self._idle_image is None:
                    self._idle_image = SyntheticSource(
                        seed=self.seed, script=[ScriptedRoll(values=(1,) * 5)], fps=self._fps, idle_frames=_IDLE_FRAMES
                    ).render_state(0)
                    _trim()
                return self._idle_image, self._index / self._fps, None
            k = min(self._k, src.frame_count - 1)
            if self._k < self._end:
                self._k += 1
                image = src.render_state(k)
            else:
                if self._idle_image is None:
                    self._idle_image = src.render_state(k)
                image = self._idle_image
            return image, self._index / self._fps, src.truth(k)


#: Kept under its old name for callers of the live tray; the reader choice lives in one place.
make_live_reader = make_reader
