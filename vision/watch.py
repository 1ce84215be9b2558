"""RollWatcher: from a stream of camera frames to roll events (moving, settled, disturbed).

Per frame the watcher rectifies a small gray view of the tray, measures motion
(the fraction of tray pixels that changed since the last frame, after removing
global brightness changes) and compares the view with the empty-tray reference
(a large blob that is not dice is a hand).  Motion starts above
``start_threshold`` and stops below ``stop_threshold`` (hysteresis); a hand in
the tray counts as motion.  Once still, the full rectified tray is read on
``vote_frames`` consecutive still frames; the roll is *settled* only when all of
them agree, die by die, and *unreadable* otherwise (never a guess).  Dice in the
hold area are marked held; dice are matched with the previous settled roll, so a
held die that changed value or a die that did not move is flagged.  A die whose
outline is not a flat die's (leaning on the wall or another die) is a problem and
is not read.  With corner markers the camera is checked every few frames; when it
was bumped the homography is refitted from the markers, or, when it cannot be,
every roll is unreadable until the camera is recalibrated.

This module holds the per-frame state machine (motion, hand, light, settle);
the reading and voting of still frames are in :mod:`vision.watch_voting`, the
tray views and camera checks in :mod:`vision.watch_camera`, and the events in
:mod:`vision.watch_events`.

Coordinates: tray millimetres and rectified pixels as in :mod:`vision.tray`.

Examples
--------
>>> from vision.sources.synthetic import SyntheticSource, ScriptedRoll, TruthReader
>>> src = SyntheticSource(seed=2, script=[ScriptedRoll(values=(6, 5, 4, 3, 2))])
>>> reader = TruthReader(src.geometry())
>>> watcher = RollWatcher(reader, geometry=src.geometry(), expected_dice=5)
>>> events = [e for f in src for e in watcher.update(reader.see(f))]
>>> [e.kind.value for e in events], events[-1].values
(['moving', 'settled'], (6, 5, 4, 3, 2))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from vision.reading import ImageReading
from vision.sources.base import Frame
from vision.tray import MarkerLayout, TrayGeometry
from vision.watch_camera import _CameraChecks
from vision.watch_events import (  # noqa: F401  (Flag, FlagKind re-exported: their home is vision.watch_events)
    EventKind,
    Flag,
    FlagKind,
    RollEvent,
    TrayDie,
    WatchState,
)
from vision.watch_voting import _Voting

Reader = Callable[[np.ndarray], ImageReading]


@dataclass(frozen=True, slots=True)
class WatchConfig:
    """Thresholds of the :class:`RollWatcher` (the profile's ``[watch]`` table).

    Parameters
    ----------
    start_threshold : float
        Fraction of tray pixels that must change between frames to start motion.
    stop_threshold : float
        Fraction below which a frame counts as still (smaller than `start_threshold`).
    pixel_threshold : float
        Grey-level change (0-255) that counts a pixel as changed.
    vote_frames : int
        Still frames read and compared before a verdict (at least 3).
    motion_scale : float
        Size of the motion view relative to the rectified image.
    min_confidence : float
        Dice read with a lower confidence are unknown.
    foreground_threshold : float
        Grey-level difference from the empty-tray reference that counts as foreground.
    hand_area_dice : float
        A foreground blob larger than this many die areas is a hand.
    hand_edge_dice : float
        A foreground blob touching the tray edge and larger than this many die areas is a hand.
    mismatch_fraction : float
        When more than this fraction of the tray differs from the reference, the
        camera probably moved (or the light changed a lot): nothing is read.
    camera_check_every : int
        Frames between corner-marker checks (0: never).
    camera_shift_px : float
        Marker displacement, in image px, taken as a camera bump.
    alignment_min : float
        Lowest edge alignment with the empty-tray reference (see
        :meth:`RollWatcher.alignment`) accepted; below it the camera moved.
    light_jump : float
        Relative change of the tray's median brightness between frames taken as
        a light change (that frame is neither motion nor still).
    lean_aspect, lean_size : float
        A die whose blob (changed pixels against the empty-tray reference,
        shadows left out) has the second moments of a rectangle with a long/short
        ratio above `lean_aspect` and a long side above `lean_size` die sides is
        leaning.
    lean_box_aspect, lean_box_size : float
        The same from the reader's box alone, used when there is no reference.
    unmoved_mm : float
        A die within this distance of a die of the previous roll, same value, did not move.
    hold_match_mm : float
        Distance within which a held die is the same die as in the previous roll.
    stuck_s : float
        Seconds (frame timestamps) of a still picture taken for a hand before a ``blocked`` event says
        what it looks like; a real hand moves a little within a second or two.
    """

    start_threshold: float = 0.004
    stop_threshold: float = 0.0012
    pixel_threshold: float = 14.0
    vote_frames: int = 3
    motion_scale: float = 0.25
    min_confidence: float = 0.5
    foreground_threshold: float = 32.0
    hand_area_dice: float = 10.0
    hand_edge_dice: float = 3.0
    mismatch_fraction: float = 0.35
    camera_check_every: int = 15
    camera_shift_px: float = 4.0
    light_jump: float = 0.12
    alignment_min: float = 0.78
    lean_aspect: float = 1.3
    lean_size: float = 1.35
    lean_box_aspect: float = 1.3
    lean_box_size: float = 1.75
    unmoved_mm: float = 2.5
    hold_match_mm: float = 8.0
    stuck_s: float = 8.0

    def __post_init__(self) -> None:
        if not 0 < self.stop_threshold < self.start_threshold < 1:
            raise ValueError(
                f"need 0 < stop_threshold < start_threshold < 1 (hysteresis), got stop {self.stop_threshold!r} "
                f"and start {self.start_threshold!r}"
            )
        if int(self.vote_frames) < 3:
            raise ValueError(f"vote_frames must be at least 3 (values agreed over 3 frames), got {self.vote_frames!r}")
        if not 0.05 <= self.motion_scale <= 1.0:
            raise ValueError(f"motion_scale must be 0.05-1, got {self.motion_scale!r}")
        if not 0.0 <= self.min_confidence <= 1.0:
            raise ValueError(f"min_confidence must be 0-1, got {self.min_confidence!r}")


class RollWatcher(_CameraChecks, _Voting):
    """Turn frames into roll events: moving, settled (agreed values), unreadable, disturbed.

    Parameters
    ----------
    reader : callable
        ``reader(rectified_bgr) -> ImageReading``: the still-image pip reader
        (:func:`vision.reader.read_image`), or a fake in tests.  Boxes are in
        pixels of the rectified image it is given.
    geometry : TrayGeometry
        Camera-to-tray homography and rectified scale (from the calibration profile).
    config : WatchConfig, optional
        Thresholds.
    die_mm : float, optional
        Side of a die in mm.
    hold_area_mm : tuple of 4 float, optional
        ``(x, y, w, h)`` hold rectangle in tray mm; None when there is none.
    reference : ndarray of shape (H, W, 3), dtype uint8, optional
        Camera frame of the empty tray taken with `geometry` (at calibration);
        enables hand detection and the check that the camera has not moved.
    markers : MarkerLayout, optional
        Corner markers, enabling camera-bump checks.
    expected_dice : int, optional
        Dice in play; a different count is unreadable.

    Examples
    --------
    See the module docstring.
    """

    def __init__(
        self,
        reader: Reader,
        *,
        geometry: TrayGeometry,
        config: WatchConfig | None = None,
        die_mm: float = 16.0,
        hold_area_mm: tuple[float, float, float, float] | None = None,
        reference: np.ndarray | None = None,
        markers: MarkerLayout | None = None,
        expected_dice: int | None = None,
    ) -> None:
        self.reader = reader
        self.config = config or WatchConfig()
        self.die_mm = float(die_mm)
        self.hold_area_mm = tuple(float(v) for v in hold_area_mm) if hold_area_mm else None
        self.markers = markers
        self.expected_dice = expected_dice
        self._detector = (
            cv2.aruco.ArucoDetector(
                cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, markers.dictionary)),
                cv2.aruco.DetectorParameters(),
            )
            if markers
            else None
        )
        self._ref_small: np.ndarray | None = None
        self._ref_edges: np.ndarray | None = None
        self._ref_log: list[np.ndarray] | None = None
        self._set_geometry(geometry)
        if reference is not None:
            self._set_reference(np.asarray(reference), geometry)
        self.state = WatchState.MOVING
        self.motion = 0.0
        self.hand = False
        self.camera_problem: str | None = None
        self.last_event: RollEvent | None = None
        self.last_reading: ImageReading | None = None
        self._prev: np.ndarray | None = None
        self._anchor: np.ndarray | None = None
        self._level: float | None = None
        self._median: float | None = None
        self._votes: list[tuple[list[TrayDie], tuple[str, ...], np.ndarray]] = []
        self._settled_dice: tuple[TrayDie, ...] | None = None
        self._frames = 0

    # -- the per-frame step ------------------------------------------------------------------
    def update(
        self, frame: Frame | np.ndarray, *, index: int | None = None, timestamp_s: float | None = None
    ) -> list[RollEvent]:
        """Feed one camera frame; return the events it completes (often none).

        Parameters
        ----------
        frame : Frame or ndarray of shape (H, W, 3), dtype uint8
            The camera frame (BGR), unrectified.
        index, timestamp_s : optional
            Frame number and time when `frame` is a bare array.

        Returns
        -------
        list of RollEvent
        """
        if isinstance(frame, Frame):
            image, idx, ts = frame.image, frame.index, frame.timestamp_s
        else:
            image = np.asarray(frame)
            idx = self._frames if index is None else int(index)
            ts = idx / 30.0 if timestamp_s is None else float(timestamp_s)
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise ValueError(f"frame must be (H, W, 3) uint8 BGR, got shape {image.shape}, dtype {image.dtype}")
        self._frames += 1
        events: list[RollEvent] = []
        c = self.config
        geometry_changed = False
        if (
            self._detector is not None
            and c.camera_check_every
            and (self._frames == 1 or self._frames % c.camera_check_every == 0 or self.motion > 0.3)
        ):
            geometry_changed = self._check_camera(image, idx, ts, events)
        small = self._small_view(image)
        med = float(np.median(small)) + 1e-3
        if self._level is None:
            self._level = med
        light_jump = self._median is not None and abs(med / self._median - 1.0) > c.light_jump
        self._median = med
        norm = small * (self._level / med)
        if self._prev is None or geometry_changed:
            motion = (c.stop_threshold + c.start_threshold) / 2  # unknown: neither moving nor still
        else:
            motion = float(np.count_nonzero(cv2.absdiff(norm, self._prev) > c.pixel_threshold)) / norm.size
        self._prev = norm
        self.motion = motion
        hand, mismatch = self._foreground(small, med)
        self.hand = hand
        self._check_stuck(hand and motion < c.stop_threshold, image, small, med, idx, ts, events)
        if light_jump and not hand:
            self._anchor = None if self.state == WatchState.SETTLING else norm
            if self.state == WatchState.SETTLING:
                self.state = WatchState.MOVING
                self._votes.clear()
            return events
        moving = motion > c.start_threshold or hand
        still = motion < c.stop_threshold and not hand
        if self.state == WatchState.SETTLED:
            drift = self._changed(norm, self._anchor)
            if moving or drift > c.start_threshold:
                if self._verdict_given:
                    events.append(self._event(EventKind.DISTURBED, idx, ts))
                    self._verdict_given = False
                if not self._emitted_moving:
                    events.append(self._event(EventKind.MOVING, idx, ts))
                    self._emitted_moving = True
                self.state = WatchState.MOVING
                self._votes.clear()
            return events
        if self.state == WatchState.SETTLING and (not still or self._changed(norm, self._anchor) > c.stop_threshold):
            self.state = WatchState.MOVING
            self._votes.clear()
        if self.state == WatchState.MOVING:
            if moving and self._emitted_moving is False:
                events.append(self._event(EventKind.MOVING, idx, ts))
                self._emitted_moving = True
            if not still:
                return events
            self.state = WatchState.SETTLING
            self._anchor = norm
            self._votes.clear()
        events.extend(self._vote(image, idx, ts, mismatch))
        return events

    _emitted_moving = False
    _verdict_given = False
    _notes: tuple[str, ...] = ()
    #: Why a still tray gave no event (e.g. ``"found 2 of 5 dice"``), for live views; None otherwise.
    notice: str | None = None

    _stuck_since: float | None = None
    _stuck_said = False

    def _check_stuck(
        self,
        stuck: bool,
        image: np.ndarray,
        small: np.ndarray,
        med: float,
        idx: int,
        ts: float,
        events: list[RollEvent],
    ) -> None:
        """A ``blocked`` event once the picture has been still but taken for a hand for ``stuck_s`` seconds."""
        if not stuck:
            if self._stuck_said:  # the picture moved, or the "hand" went: said, which clears the warning
                events.append(self._event(EventKind.MOVING, idx, ts))
                self._emitted_moving = True
            self._stuck_since, self._stuck_said = None, False
            return
        if self._stuck_since is None:
            self._stuck_since = ts
        if not self._stuck_said and ts - self._stuck_since >= self.config.stuck_s:
            self._stuck_said = True
            events.append(self._event(EventKind.BLOCKED, idx, ts, problems=(self._looks_like(image, small, med),)))

    def _looks_like(self, image: np.ndarray, small: np.ndarray, med: float) -> str:
        """What a still picture unlike the empty tray looks like, in words, with what to do."""
        c = self.config
        align = self.alignment(image)
        if align is not None and align < c.alignment_min:
            return (
                f"the camera seems to have moved (the tray walls do not line up with the calibration, alignment "
                f"{align:.2f}); put it back, or run 'dicetable calibrate' again"
            )
        ratio = med / max(self._ref_median, 1e-3)
        if abs(ratio - 1.0) > 0.25:
            return (
                f"the light seems to have changed (the tray is {abs(ratio - 1) * 100:.0f}% "
                f"{'brighter' if ratio > 1 else 'darker'} than at calibration); light it as then, or run "
                "'dicetable calibrate' again in this light"
            )
        diff = small * (self._ref_median / med) - self._ref_small
        changed = np.count_nonzero(np.abs(diff) > c.foreground_threshold)
        darker = np.count_nonzero(diff < -c.foreground_threshold)
        if changed and darker > 0.85 * changed:
            return (
                "the light seems to have changed: long shadows in the tray look like a hand (a low lamp?); light "
                "the tray from above, or run 'dicetable calibrate' again in this light"
            )
        return (
            "something seems to be left in the tray (not a die), or a hand rests in it; clear the tray, and if "
            "it is empty, run 'dicetable calibrate' again"
        )

    def _changed(self, norm: np.ndarray, anchor: np.ndarray | None) -> float:
        if anchor is None:
            return 0.0
        return float(np.count_nonzero(cv2.absdiff(norm, anchor) > self.config.pixel_threshold)) / norm.size

    def _foreground(self, small: np.ndarray, med: float) -> tuple[bool, bool]:
        """(hand in the tray, tray does not match the reference) from the empty-tray reference."""
        if self._ref_small is None:
            return False, False
        c = self.config
        diff = cv2.absdiff(small * (self._ref_median / med), self._ref_small)
        mask = (diff > c.foreground_threshold).astype(np.uint8)
        frac = float(np.count_nonzero(mask)) / mask.size
        if frac > c.mismatch_fraction:
            return False, True
        n, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        h, w = mask.shape
        for i in range(1, n):
            x, y, bw, bh, area = stats[i]
            edge = x <= 0 or y <= 0 or x + bw >= w or y + bh >= h
            if area > c.hand_area_dice * self._die_area_small or (
                edge and area > c.hand_edge_dice * self._die_area_small and not self._held_cluster(x, y, bw, bh)
            ):
                return True, False
        return False, False

    def _event(self, kind: EventKind, idx: int, ts: float, **kw: Any) -> RollEvent:
        event = RollEvent(kind, idx, ts, **kw)
        self.last_event = event
        return event

    def __repr__(self) -> str:
        return f"<RollWatcher {self.state.value} motion={self.motion:.4f} frames={self._frames}>"
