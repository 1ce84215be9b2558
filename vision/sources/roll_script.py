"""The script of synthetic rolls and its plan, frame by frame: where every die is, and what is true.

A :class:`ScriptedRoll` says what one roll brings: a camera bump, a hand that
reaches into the tray and rests there, dice moved to the hold area, a throw
(dice tumbling with changing faces, sliding, slowing, stopping at staggered
times), a die that ends leaning on the wall, a die that "should" be rolled but
is not, a held die turned to another face, and a change of light.
:func:`_plan` turns a script into the state of the tray at every frame and a
:class:`RollPlan` per roll; :class:`vision.sources.synthetic.SyntheticSource`
renders those states, each frame carrying its :class:`FrameTruth`.

Coordinates: tray millimetres, as in :mod:`vision.tray`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from vision.sources import _world as world

CameraPose = world.CameraPose

#: The default camera pose (frozen, so one shared instance is safe as a default argument).
DEFAULT_CAMERA_POSE = CameraPose()

__all__ = ["PHASES", "ScriptedRoll", "TruthDie", "FrameTruth", "RollPlan", "default_script"]

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
    hold_side_by_side : bool, optional
        Held dice lie square and side by side in the hold area, two to a row,
        about 0.5 mm apart (as players push them), not one per slot down it.
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
    hold_side_by_side: bool = False

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


def _hold_slot(i: int, side_by_side: tuple[int, ...] = ()) -> tuple[float, float]:
    """Centre (tray mm) of held die `i`: its own slot down the hold area, or, when `side_by_side`
    lists the held dice, the `i`-th one's place two to a row, 0.5 mm apart."""
    x, y, w, h = world.HOLD_AREA_MM
    if not side_by_side:
        return x + w / 2, y + 16.0 + i * (h - 32.0) / 5.0
    k = side_by_side.index(i)
    step = world.DIE_MM + 0.5
    return x + w / 2 + (k % 2 - 0.5) * step, y + 16.0 + (k // 2) * step


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
        # a lamp turned on: one stop darker took the tray view from a mean level of 68 to 34, under the
        # reader's "too dark" (35) and darker than any real DEV photo (69 and up)
        ScriptedRoll(values=r2, hold=(0, 1, 2), light_stops=1.0),
        ScriptedRoll(values=r3, camera=CameraPose(15.0, -8.0, 2.0)),
        ScriptedRoll(values=r4, hold=(0,), lean=2),
        ScriptedRoll(values=r5, hold=(0,), unmoved=(1,)),
    )


class _Planner:
    """Plans a script one roll at a time: :meth:`add` returns only that roll's states and plan.

    It carries what a roll needs from the ones before (dice, light, camera, held dice, the random
    stream), so rolls added one by one give the same states as :func:`_plan` of the whole script.
    """

    def __init__(self, rng: np.random.Generator, idle_frames: int, cam: CameraPose = DEFAULT_CAMERA_POSE) -> None:
        self.rng = rng
        self.cam = cam
        self.light = 0.0
        self.dice: list[_Die | None] = []
        self.prev_held: set[int] = set()
        self.rolls = 0
        self.idle = [_State((), None, cam, 0.0, -1, "idle") for _ in range(idle_frames)]
        #: Global index of the next state (states of earlier rolls are not kept here).
        self.count = len(self.idle)

    def add(self, roll: ScriptedRoll) -> tuple[list[_State], RollPlan]:
        """States of `roll` (global indexes from ``count`` before the call) and its plan."""
        rng, r, n = self.rng, self.rolls, len(roll.values)
        states: list[_State] = []
        dice = self.dice if len(self.dice) == n else [None] * n
        start = self.count
        if roll.camera is not None:
            self.cam = roll.camera
        cam, light, prev_held = self.cam, self.light, self.prev_held
        current = tuple(d for d in dice if d is not None)
        # Held dice go to the hold area; dice to roll are picked up (under the hand, when there is one).
        finals: list[_Die] = [None] * n  # type: ignore[list-item]
        taken: list[tuple[float, float]] = []
        flags: list[tuple[str, int]] = []
        for i in range(n):
            old = dice[i]
            if i in roll.hold:
                x, y = _hold_slot(i, tuple(sorted(roll.hold)) if roll.hold_side_by_side else ())
                angle = 0.0 if roll.hold_side_by_side else old.angle if old else 10.0
                finals[i] = _Die(roll.values[i], x, y, angle, held=True)
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
                finals[i] = _Die(
                    roll.values[i], x, y, float(rng.uniform(0, 360)) if roll.lean != i else 0.0, lean=roll.lean == i
                )
        rolled = [i for i in range(n) if i not in roll.hold and not (i in roll.unmoved and dice[i] is not None)]
        kept = tuple(finals[i] for i in range(n) if i not in rolled)
        if roll.hand:
            tip_x = float(rng.uniform(50, 110))
            path = (
                [230 - (230 - 45) * (k + 1) / 8 for k in range(8)]
                + [45.0] * 14
                + [45 + (230 - 45) * (k + 1) / 8 for k in range(8)]
            )
            for k, y in enumerate(path):
                states.append(_State(current if k < 8 else kept, (tip_x, float(y)), cam, light, r, "hand"))
        durations = {i: roll.tumble_frames - int(rng.integers(0, 8)) for i in rolled}
        if rolled:
            durations[rolled[int(rng.integers(len(rolled)))]] = roll.tumble_frames
        starts = {
            i: (
                float(rng.uniform(12, 30)),
                float(rng.uniform(20, 130)),
                float(rng.uniform(0, 360)),
                float(rng.choice([-1, 1]) * rng.uniform(200, 600)),
            )
            for i in rolled
        }
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
                stop_at = start + len(states) - 1
                break
        assert stop_at is not None
        for k in range(roll.rest_frames - 1):
            if k == roll.rest_frames // 2:
                light += roll.light_stops
            states.append(_State(tuple(finals), None, cam, light, r, "rest"))
        self.dice, self.light = list(finals), light
        self.prev_held = set(roll.hold)
        self.rolls += 1
        self.count += len(states)
        plan = RollPlan(
            r, start, stop_at, self.count, tuple(roll.values), tuple(roll.hold), roll.lean is not None, tuple(flags)
        )
        return states, plan


def _plan(
    script: Sequence[ScriptedRoll], rng: np.random.Generator, idle_frames: int, cam: CameraPose = DEFAULT_CAMERA_POSE
) -> tuple[list[_State], list[RollPlan]]:
    planner = _Planner(rng, idle_frames, cam)
    states: list[_State] = list(planner.idle)
    plans: list[RollPlan] = []
    for roll in script:
        more, plan = planner.add(roll)
        states += more
        plans.append(plan)
    return states, plans
