"""Synthetic rolls: a marked tray where scripted dice tumble, slide, settle and are held.

The source plays a :class:`ScriptedRoll` list: each roll can bring a camera bump,
a hand that reaches into the tray and rests there, dice moved to the hold area,
a throw (dice tumbling with changing faces, sliding, slowing, stopping at staggered
times), a die that ends leaning on the wall, a die that "should" be rolled but is
not, a held die turned to another face, and a change of light.  Every frame
carries a :class:`FrameTruth` so tests know what the watcher should report.

Examples
--------
>>> from vision.sources.synthetic import SyntheticSource, ScriptedRoll
>>> src = SyntheticSource(seed=1, script=[ScriptedRoll(values=(1, 2, 3, 4, 5))])
>>> plan = src.plan[0]
>>> plan.values, plan.stop_index < plan.end_index
((1, 2, 3, 4, 5), True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import cv2
import numpy as np

from vision.sources import _world as world
from vision.sources.base import FrameSource, SourceEnded
from vision.tray import TrayGeometry

CameraPose = world.CameraPose

#: Phases of a scripted roll, in order.
PHASES = ("idle", "hand", "throw", "rest")


@dataclass(frozen=True, slots=True)
class ScriptedRoll:
    """One roll of the script.

    Parameters
    ----------
    values : tuple of int
        Face value 1-6 of every die after this roll (held dice included: a held
        die given a new value here was turned by hand).
    hold : tuple of int, optional
        Dice (indices into `values`) moved to the hold area and not rolled.
    hand : bool, optional
        A hand reaches into the tray and rests there still before the throw.
    lean : int, optional
        Die that ends leaning on the top wall (its value cannot be read).
    unmoved : tuple of int, optional
        Dice that should be rolled but stay where they lay.
    light_stops : float, optional
        Light change in stops (+1 doubles the brightness) made half-way through
        the rest after the throw; it stays for later rolls.
    camera : CameraPose, optional
        New camera placement from the start of this roll (a bump); None keeps it.
    tumble_frames : int, optional
        Frames from the throw until the last die stops.
    rest_frames : int, optional
        Still frames after the last die stops.
    """

    values: tuple[int, ...]
    hold: tuple[int, ...] = ()
    hand: bool = False
    lean: int | None = None
    unmoved: tuple[int, ...] = ()
    light_stops: float = 0.0
    camera: CameraPose | None = None
    tumble_frames: int = 24
    rest_frames: int = 30

    def __post_init__(self) -> None:
        if not 1 <= len(self.values) <= 6 or any(not 1 <= int(v) <= 6 for v in self.values):
            raise ValueError(f"values must be 1 to 6 face values 1-6, got {self.values!r}")
        n = len(self.values)
        for name, idx in (("hold", self.hold), ("unmoved", self.unmoved)):
            if any(not 0 <= i < n for i in idx):
                raise ValueError(f"{name} indices must be 0-{n - 1}, got {idx!r}")
        if set(self.hold) & set(self.unmoved):
            raise ValueError(f"a die cannot be both held and unmoved: {self.hold!r}, {self.unmoved!r}")
        if self.lean is not None and (not 0 <= self.lean < n or self.lean in self.hold + self.unmoved):
            raise ValueError(f"lean must be a rolled die's index, got {self.lean!r}")
        if not 6 <= self.tumble_frames <= 200 or not 8 <= self.rest_frames <= 600:
            raise ValueError("tumble_frames must be 6-200 and rest_frames 8-600")


@dataclass(frozen=True, slots=True)
class TruthDie:
    """A die as it really is in a synthetic frame (tray mm, see :mod:`vision.tray`)."""

    value: int
    centre_mm: tuple[float, float]
    held: bool = False
    leaning: bool = False
    angle_deg: float = 0.0


@dataclass(frozen=True, slots=True)
class FrameTruth:
    """What is really in one synthetic frame.

    Parameters
    ----------
    roll : int
        Index of the roll in the script (-1 while the tray waits for the first).
    phase : str
        One of :data:`PHASES`.
    dice : tuple of TruthDie
        Dice in view.
    moving : bool
        Something changed since the previous frame (a die, the hand, the camera).
    hand : bool
        A hand is over the tray floor.
    stop_index : int or None
        Index of the first frame in which this roll's dice lie still (None before).
    camera : CameraPose
        Camera placement.
    light_stops : float
        Brightness relative to the start, in stops.
    """

    roll: int
    phase: str
    dice: tuple[TruthDie, ...]
    moving: bool
    hand: bool
    stop_index: int | None
    camera: CameraPose
    light_stops: float


@dataclass(frozen=True, slots=True)
class RollPlan:
    """Where one scripted roll sits in the stream and what should be read.

    ``start_index`` is its first frame, ``stop_index`` the first frame with every
    die still, ``end_index`` one past its last frame.  ``expect_unreadable`` is
    True when a die leans; ``expect_flags`` names the dice a watcher should flag
    (``"held-changed"``, ``"unmoved"``) as ``(kind, die index)`` pairs.
    """

    roll: int
    start_index: int
    stop_index: int
    end_index: int
    values: tuple[int, ...]
    held: tuple[int, ...]
    expect_unreadable: bool
    expect_flags: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class _Die:
    value: int
    x: float
    y: float
    angle: float
    lean: bool = False
    held: bool = False


@dataclass(frozen=True, slots=True)
class _State:
    dice: tuple[_Die, ...]
    hand: tuple[float, float] | None
    camera: CameraPose
    light: float
    roll: int
    phase: str
    settled: tuple[bool, ...] = field(default=())


def _hold_slot(i: int) -> tuple[float, float]:
    x, y, w, h = world.HOLD_AREA_MM
    return x + w / 2, y + 16.0 + i * (h - 32.0) / 5.0


def _free_spot(rng: np.random.Generator, taken: list[tuple[float, float]], lean: bool) -> tuple[float, float]:
    hx = world.HOLD_AREA_MM[0]
    for _ in range(2000):
        if lean:
            p = (float(rng.uniform(30, hx - 30)), 11.0)
        else:
            p = (float(rng.uniform(14, hx - 14)), float(rng.uniform(16, world.FLOOR_MM[1] - 14)))
        if all(math.hypot(p[0] - q[0], p[1] - q[1]) > 27.0 for q in taken):
            return p
    raise ValueError("the scripted dice do not fit on the tray's roll area; roll fewer dice")


def default_script(seed: int = 0) -> tuple[ScriptedRoll, ...]:
    """A script with one roll of each kind: plain, hand and holds, light change, bump, lean, flags."""
    rng = np.random.default_rng(seed)

    def vals() -> tuple[int, ...]:
        return tuple(int(v) for v in rng.integers(1, 7, 5))

    r0 = vals()
    r1 = r0[:2] + vals()[2:]
    r2 = r1[:3] + vals()[3:]
    r3 = vals()
    r4 = r3[:1] + vals()[1:]
    r5 = (r4[0] % 6 + 1,) + r4[1:2] + vals()[2:]
    return (
        ScriptedRoll(values=r0),
        ScriptedRoll(values=r1, hold=(0, 1), hand=True),
        ScriptedRoll(values=r2, hold=(0, 1, 2), light_stops=-1.0),
        ScriptedRoll(values=r3, camera=CameraPose(15.0, -8.0, 2.0)),
        ScriptedRoll(values=r4, hold=(0,), lean=2),
        ScriptedRoll(values=r5, hold=(0,), unmoved=(1,)),
    )


def _plan(script: Sequence[ScriptedRoll], rng: np.random.Generator, idle_frames: int,
          cam: CameraPose = CameraPose()) -> tuple[list[_State], list[RollPlan]]:
    states: list[_State] = []
    plans: list[RollPlan] = []
    light = 0.0
    dice: list[_Die | None] = []
    for _ in range(idle_frames):
        states.append(_State((), None, cam, light, -1, "idle"))
    prev_held: set[int] = set()
    for r, roll in enumerate(script):
        n = len(roll.values)
        if len(dice) != n:
            dice = [None] * n
        start = len(states)
        if roll.camera is not None:
            cam = roll.camera
        current = tuple(d for d in dice if d is not None)
        # Held dice go to the hold area; dice to roll are picked up (under the hand, when there is one).
        finals: list[_Die] = [None] * n  # type: ignore[list-item]
        taken: list[tuple[float, float]] = []
        flags: list[tuple[str, int]] = []
        for i in range(n):
            old = dice[i]
            if i in roll.hold:
                x, y = _hold_slot(i)
                finals[i] = _Die(roll.values[i], x, y, old.angle if old else 10.0, held=True)
                if old is not None and old.held and i in prev_held and old.value != roll.values[i]:
                    flags.append(("held-changed", i))
            elif i in roll.unmoved and old is not None:
                finals[i] = replace(old, value=roll.values[i], held=False)
                taken.append((old.x, old.y))
                flags.append(("unmoved", i))
        for i in range(n):
            if finals[i] is None:
                x, y = _free_spot(rng, taken, roll.lean == i)
                taken.append((x, y))
                finals[i] = _Die(roll.values[i], x, y, float(rng.uniform(0, 360)) if roll.lean != i else 0.0,
                                 lean=roll.lean == i)
        rolled = [i for i in range(n) if i not in roll.hold and not (i in roll.unmoved and dice[i] is not None)]
        kept = tuple(finals[i] for i in range(n) if i not in rolled)
        if roll.hand:
            tip_x = float(rng.uniform(50, 110))
            path = [230 - (230 - 45) * (k + 1) / 8 for k in range(8)] + [45.0] * 14 + \
                   [45 + (230 - 45) * (k + 1) / 8 for k in range(8)]
            for k, y in enumerate(path):
                states.append(_State(current if k < 8 else kept, (tip_x, float(y)), cam, light, r, "hand"))
        durations = {i: roll.tumble_frames - int(rng.integers(0, 8)) for i in rolled}
        if rolled:
            durations[rolled[int(rng.integers(len(rolled)))]] = roll.tumble_frames
        starts = {i: (float(rng.uniform(12, 30)), float(rng.uniform(20, 130)), float(rng.uniform(0, 360)),
                      float(rng.choice([-1, 1]) * rng.uniform(200, 600))) for i in rolled}
        stop_at = None
        for j in range(roll.tumble_frames + 40):
            now: list[_Die] = []
            still = True
            for i in range(n):
                f = finals[i]
                if i not in durations:
                    now.append(f)
                    continue
                x0, y0, a0, spin = starts[i]
                t = min(1.0, (j + 1) / durations[i])
                s = 1 - (1 - t) ** 2
                dist = math.hypot(f.x - x0, f.y - y0)
                if dist * (1 - s) < 0.4 and abs(spin) * (1 - s) < 1.0:
                    now.append(f)
                    continue
                still = False
                face = f.value if s > 0.8 else int(1 + (hash((r, i, j // 3, int(a0))) % 6))
                ang = f.angle - spin * (1 - s)
                now.append(_Die(face, x0 + (f.x - x0) * s, y0 + (f.y - y0) * s, ang))
            states.append(_State(tuple(now), None, cam, light, r, "throw"))
            if still:
                stop_at = len(states) - 1
                break
        assert stop_at is not None
        for k in range(roll.rest_frames - 1):
            if k == roll.rest_frames // 2:
                light += roll.light_stops
            states.append(_State(tuple(finals), None, cam, light, r, "rest"))
        dice = list(finals)
        prev_held = set(roll.hold)
        plans.append(RollPlan(r, start, stop_at, len(states), tuple(roll.values), tuple(roll.hold),
                              roll.lean is not None, tuple(flags)))
    return states, plans


class SyntheticSource(FrameSource):
    """Frames of scripted rolls on a synthetic marked tray (640x480 by default).

    Parameters
    ----------
    seed : int, optional
        Seed of every random choice (positions, dice colour, textures, noise).
    script : sequence of ScriptedRoll, optional
        The rolls to play; :func:`default_script` of `seed` when None.
    size : tuple of 2 int, optional
        ``(width, height)`` of the frames in pixels.
    fps : float, optional
        Frame rate; timestamps are ``index / fps``.
    idle_frames : int, optional
        Frames of the empty tray before the first roll.
    noise : float, optional
        Sensor noise standard deviation in grey levels.
    colour : str, optional
        Dice colour (a key of :data:`vision.render.DICE_COLOURS`).
    loop : bool, optional
        Play the script again instead of ending (live demos).
    camera : CameraPose, optional
        Camera placement at the start (rolls may bump it).

    Raises
    ------
    ValueError
        If the script is empty or its dice do not fit.
    """

    carries_truth = True


    kind = "synthetic"

    def __init__(self, *, seed: int = 0, script: Sequence[ScriptedRoll] | None = None,
                 size: tuple[int, int] = (640, 480), fps: float = 30.0, idle_frames: int = 10,
                 noise: float = 2.0, colour: str = "ivory", loop: bool = False,
                 camera: CameraPose = CameraPose()) -> None:
        super().__init__()
        self._seed = int(seed)
        self._script = tuple(script) if script is not None else default_script(self._seed)
        if not self._script:
            raise ValueError("the script has no rolls; give at least one ScriptedRoll")
        self._size = (int(size[0]), int(size[1]))
        self._fps = float(fps)
        self._loop = bool(loop)
        rng = np.random.default_rng(self._seed)
        self._states, self._plans = _plan(self._script, rng, int(idle_frames), camera)
        self._plane, self._plane_to_mm = world.background_plane(np.random.default_rng(self._seed + 7))
        self._look = world.die_look(colour)
        nrng = np.random.default_rng(self._seed + 11)
        self._noise = [nrng.normal(0, noise, (self._size[1], self._size[0], 3)).astype(np.float32)
                       for _ in range(5)]
        self._bg_key: Any = None
        self._bg: np.ndarray | None = None
        self._static_key: Any = None
        self._static: np.ndarray | None = None
        self._pos = 0

    @property
    def fps(self) -> float:
        return self._fps

    @property
    def describe(self) -> str:
        return f"synthetic:{self._seed} ({len(self._script)} rolls, {len(self._states)} frames)"

    @property
    def plan(self) -> tuple[RollPlan, ...]:
        """Where each scripted roll lies in the stream and what should be read."""
        return tuple(self._plans)

    @property
    def frame_count(self) -> int:
        """Frames in one play of the script."""
        return len(self._states)

    def geometry(self, camera: CameraPose | None = None, px_per_mm: float = 2.8) -> TrayGeometry:
        """The true tray geometry for a camera placement (default: the starting one)."""
        return world.true_geometry(camera or CameraPose(), self._size, px_per_mm)

    def _background(self, cam_pose: CameraPose) -> np.ndarray:
        if self._bg_key != cam_pose or self._bg is None:
            cam = world.camera_matrix(cam_pose, self._size)
            self._bg = world.warp_plane(self._plane, self._plane_to_mm, cam, self._size)
            self._bg_key = cam_pose
            self._static_key = None
        return self._bg

    def render_state(self, k: int) -> np.ndarray:
        """Render state `k` of the stream to a uint8 BGR image (no frame bookkeeping)."""
        st = self._states[k]
        nxt = self._states[k + 1] if k + 1 < len(self._states) else st
        prv = self._states[k - 1] if k > 0 else st
        cam = world.camera_matrix(st.camera, self._size)
        bg = self._background(st.camera)
        static_ids = [i for i, d in enumerate(st.dice)
                      if i < len(nxt.dice) and i < len(prv.dice) and nxt.dice[i] == d and prv.dice[i] == d]
        key = (st.camera, tuple(st.dice[i] for i in static_ids))
        if key != self._static_key or self._static is None:
            img = bg.copy()
            for i in static_ids:
                self._draw_die(img, cam, st.dice[i])
            self._static, self._static_key = img, key
        img = self._static.copy()
        for i, d in enumerate(st.dice):
            if i not in static_ids:
                self._draw_die(img, cam, d)
        if st.hand is not None:
            world.draw_hand(img, cam, st.hand)
        gain = 255.0 * 2.0 ** st.light
        out = cv2.addWeighted(img, gain, self._noise[k % len(self._noise)], 1.0, 0.0)
        return np.clip(out, 0, 255).astype(np.uint8)

    def _draw_die(self, img: np.ndarray, cam: np.ndarray, d: _Die) -> None:
        if d.lean:
            world.draw_leaning_die(img, cam, d.x, d.value, self._look)
        else:
            world.draw_flat_die(img, cam, (d.x, d.y), d.angle, d.value, self._look)

    def truth(self, k: int) -> FrameTruth:
        """The truth about state `k` of the stream."""
        st = self._states[k]
        prv = self._states[k - 1] if k > 0 else st
        over = [h is not None and h[1] < world.FLOOR_MM[1] for h in (st.hand, prv.hand)]
        moving = k > 0 and (st.dice != prv.dice or st.camera != prv.camera or (st.hand != prv.hand and any(over)))
        stop = None
        if st.roll >= 0 and k >= self._plans[st.roll].stop_index:
            stop = self._plans[st.roll].stop_index
        dice = tuple(TruthDie(d.value, (d.x, d.y), d.held, d.lean, d.angle) for d in st.dice)
        return FrameTruth(st.roll, st.phase, dice, moving, over[0], stop, st.camera, st.light)

    def _grab(self) -> tuple[np.ndarray, float, Any]:
        if self._pos >= len(self._states):
            if not self._loop:
                raise SourceEnded(f"{self.describe}: the script is over")
            self._pos = 0
        k = self._pos
        self._pos += 1
        return self.render_state(k), self._index / self._fps, self.truth(k)


class TruthReader:
    """A perfect stand-in for the pip reader on synthetic frames (tests and benchmarks).

    Call :meth:`see` with each frame before handing it to the watcher; calling
    the reader then returns the truth of that frame as an
    :class:`~vision.reading.ImageReading` in rectified pixels of `geometry`.  A
    leaning die is reported like a naive reader would: with its top face's value
    and a box as the camera sees it (longer across the wall), so the watcher's own
    checks must catch it.

    Parameters
    ----------
    geometry : TrayGeometry
        The watcher's geometry (only its ``px_per_mm`` is used).
    flip : callable, optional
        ``flip(call_number) -> bool``: when True that call reports the first die
        one pip higher (a flickering reader, to test voting).
    """

    def __init__(self, geometry: TrayGeometry, *, flip: Any = None) -> None:
        self.ppm = geometry.px_per_mm
        self.truth: FrameTruth | None = None
        self.calls = 0
        self._flip = flip

    def see(self, frame: Any) -> Any:
        """Remember `frame`'s truth; return the frame unchanged."""
        self.truth = frame.truth
        return frame

    def __call__(self, image: np.ndarray) -> Any:
        from vision.reading import DieReading, ImageReading

        self.calls += 1
        dice = []
        for k, d in enumerate(self.truth.dice if self.truth else ()):
            s = world.DIE_MM * self.ppm
            if d.leaning:
                t = math.radians(35.0)
                w, h = s, s * (math.cos(t) + math.sin(t))
                cx, cy = d.centre_mm[0] * self.ppm, h / 2
            else:
                a = math.radians(d.angle_deg)
                w = h = s * (abs(math.cos(a)) + abs(math.sin(a))) * 1.04
                cx, cy = d.centre_mm[0] * self.ppm, d.centre_mm[1] * self.ppm
            value = d.value
            if k == 0 and self._flip is not None and self._flip(self.calls):
                value = value % 6 + 1
            box = (int(round(cx - w / 2)), int(round(cy - h / 2)), int(round(w)), int(round(h)))
            dice.append(DieReading(value, box, 0.97))
        return ImageReading(tuple(dice))
