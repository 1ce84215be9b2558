"""Synthetic rolls: a marked tray where scripted dice tumble, slide, settle and are held.

The source plays a :class:`ScriptedRoll` list: each roll can bring a camera bump,
a hand that reaches into the tray and rests there, dice moved to the hold area,
a throw (dice tumbling with changing faces, sliding, slowing, stopping at staggered
times), a die that ends leaning on the wall, a die that "should" be rolled but is
not, a held die turned to another face, and a change of light.  Every frame
carries a :class:`FrameTruth` so tests know what the watcher should report.
The script and its frame-by-frame plan are in :mod:`vision.sources.roll_script`;
this module renders them (:class:`SyntheticSource`) and reads their truth back
(:class:`TruthReader`).

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
from typing import Any

import cv2
import numpy as np

from vision.sources import _world as world
from vision.sources.base import FrameSource, SourceEnded
from vision.sources.roll_script import (  # noqa: F401  (re-exported; _plan for table._livetray)
    DEFAULT_CAMERA_POSE,
    PHASES,
    CameraPose,
    FrameTruth,
    RollPlan,
    ScriptedRoll,
    TruthDie,
    _Die,
    _plan,
    default_script,
)
from vision.tray import TrayGeometry


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
        Frames of the empty tray before the first roll, 0-600 (0: the first frame is the throw).
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
        If the script is empty or its dice do not fit, or `idle_frames` is not a whole number 0-600.
    """

    carries_truth = True

    kind = "synthetic"

    def __init__(
        self,
        *,
        seed: int = 0,
        script: Sequence[ScriptedRoll] | None = None,
        size: tuple[int, int] = (640, 480),
        fps: float = 30.0,
        idle_frames: int = 10,
        noise: float = 2.0,
        colour: str = "ivory",
        loop: bool = False,
        camera: CameraPose = DEFAULT_CAMERA_POSE,
    ) -> None:
        super().__init__()
        self._seed = int(seed)
        self._script = tuple(script) if script is not None else default_script(self._seed)
        if not self._script:
            raise ValueError("the script has no rolls; give at least one ScriptedRoll")
        if (
            isinstance(idle_frames, bool)
            or not isinstance(idle_frames, (int, np.integer))
            or not 0 <= idle_frames <= 600
        ):
            raise ValueError(f"idle_frames must be a whole number of frames 0-600, got {idle_frames!r}")
        self._size = (int(size[0]), int(size[1]))
        self._fps = float(fps)
        self._loop = bool(loop)
        rng = np.random.default_rng(self._seed)
        self._states, self._plans = _plan(self._script, rng, int(idle_frames), camera)
        self._plane, self._plane_to_mm = world.background_plane(np.random.default_rng(self._seed + 7))
        self._look = world.die_look(colour)
        nrng = np.random.default_rng(self._seed + 11)
        self._noise = [nrng.normal(0, noise, (self._size[1], self._size[0], 3)).astype(np.float32) for _ in range(5)]
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
        static_ids = [
            i
            for i, d in enumerate(st.dice)
            if i < len(nxt.dice) and i < len(prv.dice) and nxt.dice[i] == d and prv.dice[i] == d
        ]
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
        gain = 255.0 * 2.0**st.light
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
