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

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import cv2
import numpy as np

from vision.reading import ImageReading, UnknownReason
from vision.sources.base import Frame
from vision.tray import MarkerLayout, TrayGeometry, detect_markers, fit_tray, marker_shift_px

Reader = Callable[[np.ndarray], ImageReading]

#: Margin around the floor, in mm, of the edge view used to check the camera against the reference.
_EDGE_PAD_MM = 25.0


class WatchState(StrEnum):
    """What the watcher believes the tray is doing."""

    MOVING = "moving"
    """Dice (or a hand) are moving; nothing is read."""
    SETTLING = "settling"
    """Everything is still; frames are being read and voted on."""
    SETTLED = "settled"
    """A reading (or an unreadable verdict) was given for this still period."""


class EventKind(StrEnum):
    """Kinds of :class:`RollEvent`."""

    MOVING = "moving"
    """Motion started (dice thrown, a hand reached in)."""
    SETTLED = "settled"
    """The dice are still and read, agreed over the voting frames."""
    UNREADABLE = "unreadable"
    """The dice are still but cannot be read for sure: re-roll (problems say why)."""
    DISTURBED = "disturbed"
    """Something moved after a settled or unreadable verdict."""
    CAMERA_MOVED = "camera-moved"
    """The corner markers moved: the geometry was refitted, or recalibration is needed."""


class FlagKind(StrEnum):
    """Kinds of :class:`Flag` raised by matching dice across rolls."""

    HELD_CHANGED = "held-changed"
    """A die in the hold area shows another value than in the previous roll."""
    UNMOVED = "unmoved"
    """A die outside the hold area lies exactly where it lay, with the same value."""


@dataclass(frozen=True, slots=True)
class TrayDie:
    """One die of a reading, on the tray.

    Parameters
    ----------
    value : int or None
        Face value 1-6; None when unknown (see `reason`).
    centre_mm : tuple of 2 float
        Centre ``(x, y)`` of the die's box in tray mm.
    box_px : tuple of 4 int
        ``(x, y, w, h)`` box in rectified pixels.
    confidence : float
        Reader confidence in ``[0, 1]``.
    held : bool
        The die lies in the hold area.
    reason : str or None
        Why the value is unknown.
    """

    value: int | None
    centre_mm: tuple[float, float]
    box_px: tuple[int, int, int, int]
    confidence: float
    held: bool = False
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON object of this die (``dicetable watch --json``)."""
        return {"value": self.value, "centre_mm": [round(self.centre_mm[0], 1), round(self.centre_mm[1], 1)],
                "box_px": list(self.box_px), "confidence": round(float(self.confidence), 3),
                "held": self.held, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Flag:
    """A die that did not behave as a roll should (matched with the previous roll)."""

    kind: FlagKind
    die: int
    message: str


@dataclass(frozen=True, slots=True)
class RollEvent:
    """One thing the watcher noticed.

    Parameters
    ----------
    kind : EventKind
    frame_index : int
        Index of the frame that completed the event.
    timestamp_s : float
        That frame's timestamp, in seconds.
    dice : tuple of TrayDie, optional
        The reading (settled and unreadable events), ordered top to bottom, then left to right.
    problems : tuple of str, optional
        What prevents a reading, or what happened to the camera, in words; on a
        settled event only the reader's advice (e.g. a dark frame), which did not
        stop the dice from being read.
    flags : tuple of Flag, optional
        Dice flagged by matching with the previous roll (settled events).
    frame : ndarray of shape (H, W, 3), dtype uint8, optional
        The rectified tray image the reading came from, kept for the audit.
    votes : int, optional
        Frames the reading was agreed over.
    """

    kind: EventKind
    frame_index: int
    timestamp_s: float
    dice: tuple[TrayDie, ...] = ()
    problems: tuple[str, ...] = ()
    flags: tuple[Flag, ...] = ()
    frame: np.ndarray | None = field(default=None, repr=False, compare=False)
    votes: int = 0

    @property
    def values(self) -> tuple[int | None, ...]:
        """Face values of the dice, None where unknown."""
        return tuple(d.value for d in self.dice)

    @property
    def held(self) -> tuple[bool, ...]:
        """Whether each die lies in the hold area."""
        return tuple(d.held for d in self.dice)

    def to_json(self) -> dict[str, Any]:
        """JSON object of this event (without the frame)."""
        out: dict[str, Any] = {"event": self.kind.value, "frame": self.frame_index,
                               "t": round(self.timestamp_s, 4)}
        if self.kind in (EventKind.SETTLED, EventKind.UNREADABLE):
            out["values"] = list(self.values)
            out["held"] = list(self.held)
            out["dice"] = [d.to_json() for d in self.dice]
            out["votes"] = self.votes
        if self.problems:
            out["problems"] = list(self.problems)
        if self.flags:
            out["flags"] = [{"kind": f.kind.value, "die": f.die, "message": f.message} for f in self.flags]
        return out


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


def _without_nested(reading: ImageReading) -> ImageReading:
    """Drop die boxes whose centre lies inside a box at least twice as large (a pip or a face found twice).

    Seen from above, dice do not overlap: two real dice never have one's centre
    inside the other's box.
    """
    dice = reading.dice
    keep = []
    for k, d in enumerate(dice):
        cx, cy = d.box[0] + d.box[2] / 2, d.box[1] + d.box[3] / 2
        nested = any(j != k and o.box[0] <= cx <= o.box[0] + o.box[2] and o.box[1] <= cy <= o.box[1] + o.box[3]
                     and o.box[2] * o.box[3] >= 2 * d.box[2] * d.box[3] for j, o in enumerate(dice))
        if not nested:
            keep.append(d)
    return reading if len(keep) == len(dice) else ImageReading(tuple(keep), reading.problems)


def _reading_order(dice: Sequence[TrayDie], die_mm: float) -> list[TrayDie]:
    return sorted(dice, key=lambda d: (round(d.centre_mm[1] / die_mm), d.centre_mm[0]))


class RollWatcher:
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

    def __init__(self, reader: Reader, *, geometry: TrayGeometry, config: WatchConfig | None = None,
                 die_mm: float = 16.0, hold_area_mm: tuple[float, float, float, float] | None = None,
                 reference: np.ndarray | None = None, markers: MarkerLayout | None = None,
                 expected_dice: int | None = None) -> None:
        self.reader = reader
        self.config = config or WatchConfig()
        self.die_mm = float(die_mm)
        self.hold_area_mm = tuple(float(v) for v in hold_area_mm) if hold_area_mm else None
        self.markers = markers
        self.expected_dice = expected_dice
        self._detector = (cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(
            getattr(cv2.aruco, markers.dictionary)), cv2.aruco.DetectorParameters()) if markers else None)
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

    # -- geometry and reference --------------------------------------------------------------
    def _set_geometry(self, geometry: TrayGeometry) -> None:
        self.geometry = geometry
        c = self.config
        self._small_geo = geometry.scaled_input(0.5)
        w, h = geometry.size_px
        self._small_size = (max(8, int(round(w * c.motion_scale))), max(8, int(round(h * c.motion_scale))))
        side = self.die_mm * geometry.px_per_mm * c.motion_scale
        self._die_area_small = side * side
        pad = _EDGE_PAD_MM
        bw, bh = int(geometry.width_mm + 2 * pad), int(geometry.height_mm + 2 * pad)
        band = np.zeros((bh, bw), np.uint8)
        cv2.rectangle(band, (int(pad - 10), int(pad - 10)), (int(bw - pad + 10), int(bh - pad + 10)), 1, -1)
        cv2.rectangle(band, (int(pad + 10), int(pad + 10)), (int(bw - pad - 10), int(bh - pad - 10)), 0, -1)
        self._band = band.astype(bool)

    def _set_reference(self, reference: np.ndarray, geometry: TrayGeometry) -> None:
        if reference.ndim != 3 or reference.shape[2] != 3 or reference.dtype != np.uint8:
            raise ValueError(f"reference must be an (H, W, 3) uint8 BGR camera frame of the empty tray, "
                             f"got shape {reference.shape}, dtype {reference.dtype}")
        small = self._small_view(reference)
        self._ref_small = small
        self._ref_median = float(np.median(small))
        self._ref_edges = self._edges(reference, geometry)
        ref_rect = geometry.rectify(reference)
        half = cv2.resize(ref_rect, (ref_rect.shape[1] // 2, ref_rect.shape[0] // 2), interpolation=cv2.INTER_AREA)
        self._ref_log = [cv2.log(ch.astype(np.float32) + 4.0) for ch in cv2.split(half)]

    def _small_view(self, image: np.ndarray) -> np.ndarray:
        gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        half = cv2.resize(gray, (gray.shape[1] // 2, gray.shape[0] // 2), interpolation=cv2.INTER_AREA)
        scale = self._small_size[0] / self.geometry.size_px[0]
        m = np.diag([scale, scale, 1.0]) @ self._small_geo.matrix
        return cv2.warpPerspective(half, m, self._small_size, flags=cv2.INTER_LINEAR,
                                   borderMode=cv2.BORDER_REPLICATE).astype(np.float32)

    # -- the per-frame step ------------------------------------------------------------------
    def update(self, frame: Frame | np.ndarray, *, index: int | None = None,
               timestamp_s: float | None = None) -> list[RollEvent]:
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
        if self._detector is not None and c.camera_check_every and (
                self._frames == 1 or self._frames % c.camera_check_every == 0 or self.motion > 0.3):
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
                    edge and area > c.hand_edge_dice * self._die_area_small):
                return True, False
        return False, False

    def _edges(self, image: np.ndarray, geometry: TrayGeometry) -> np.ndarray:
        """Blurred gradient magnitude of the tray and its walls at 1 px/mm, float32."""
        pad = _EDGE_PAD_MM
        k = 1.0 / geometry.px_per_mm
        m = np.array([[k, 0, pad], [0, k, pad], [0, 0, 1]], np.float64) @ geometry.matrix
        size = (int(geometry.width_mm + 2 * pad), int(geometry.height_mm + 2 * pad))
        gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        view = cv2.warpPerspective(gray, m, size, flags=cv2.INTER_AREA).astype(np.float32)
        mag = cv2.magnitude(cv2.Sobel(view, cv2.CV_32F, 1, 0), cv2.Sobel(view, cv2.CV_32F, 0, 1))
        return cv2.GaussianBlur(mag, (0, 0), 1.0)[self._band]

    def alignment(self, image: np.ndarray) -> float | None:
        """How well the tray walls in `image` line up with the empty-tray reference (1 is perfect).

        Normalised correlation of edge images in a band along the walls (a 10 mm
        band either side, in tray coordinates); None without a reference.  Below
        ``config.alignment_min`` the camera has moved since calibration.
        """
        if self._ref_edges is None:
            return None
        cur = self._edges(image, self.geometry)
        ref = self._ref_edges
        return float((cur * ref).sum() / (math.sqrt(float((cur * cur).sum()) * float((ref * ref).sum())) + 1e-9))

    def _markers_near_expected(self, image: np.ndarray) -> dict[int, np.ndarray]:
        """Markers found in small windows around where the geometry expects them (cheap)."""
        assert self.markers is not None and self._detector is not None
        h, w = image.shape[:2]
        found: dict[int, np.ndarray] = {}
        for i, mid in enumerate(self.markers.ids):
            pts = self.geometry.tray_to_image(self.markers.corners_mm(i))
            side = float(np.max(np.ptp(pts, axis=0)))
            (x0, y0), (x1, y1) = pts.min(axis=0) - side, pts.max(axis=0) + side
            x0, y0 = max(0, int(x0)), max(0, int(y0))
            x1, y1 = min(w, int(math.ceil(x1))), min(h, int(math.ceil(y1)))
            if x1 - x0 < 16 or y1 - y0 < 16:
                continue
            got = detect_markers(image[y0:y1, x0:x1], detector=self._detector)
            if mid in got:
                found[mid] = got[mid] + (x0, y0)
        return found

    def _check_camera(self, image: np.ndarray, idx: int, ts: float, events: list[RollEvent]) -> bool:
        assert self.markers is not None and self._detector is not None
        found = self._markers_near_expected(image)
        if len(found) < 4:
            found = detect_markers(image, detector=self._detector)
        shift = marker_shift_px(self.geometry, self.markers, found)
        if shift is None or shift <= self.config.camera_shift_px:
            if shift is not None and self.camera_problem and len(
                    [m for m in self.markers.ids if m in found]) == 4:
                self.camera_problem = None
            return False
        fit = fit_tray(found, self.markers, width_mm=self.geometry.width_mm, height_mm=self.geometry.height_mm,
                       px_per_mm=self.geometry.px_per_mm)
        if fit:
            self._set_geometry(fit)
            self.camera_problem = None
            events.append(self._event(EventKind.CAMERA_MOVED, idx, ts, problems=(
                f"camera moved by {shift:.0f} px; tray geometry refitted from the corner markers",)))
            self._prev = None
            self._level = None
            if self.state != WatchState.MOVING:
                if self.state == WatchState.SETTLED and self._verdict_given:
                    events.append(self._event(EventKind.DISTURBED, idx, ts))
                    self._verdict_given = False
                self.state = WatchState.MOVING
                self._votes.clear()
            return True
        problem = (f"camera moved by {shift:.0f} px and the markers cannot be refitted ({fit}); "
                   "run 'dicetable calibrate' again")
        if problem != self.camera_problem:
            events.append(self._event(EventKind.CAMERA_MOVED, idx, ts, problems=(problem,)))
        self.camera_problem = problem
        return False

    # -- reading and voting ------------------------------------------------------------------
    def _inspect(self, rect: np.ndarray, reading: ImageReading
                 ) -> tuple[set[int], list[tuple[float, float, bool]], set[int]]:
        """Leaning dice (indices into ``reading.dice``) and unexplained objects (tray mm) in a still frame.

        Compares the rectified frame with the rectified empty-tray reference: pixels
        that changed colour (not just darker, as in a shadow), after removing the
        global brightness change, are die pixels.  Each blob holding exactly one
        reader box is measured: a flat die is a square
        of about one die side, a leaning die a longer rectangle (its top face plus
        a side face); the rectangle is the blob's equivalent from its second moments
        (robust to a few stray pixels).  A die-sized blob holding no reader box is an object the reader
        did not read (a die on its edge, covered, or not a die); it comes with
        ``(x_mm, y_mm, tilted)``.  A reader box over the unchanged empty tray is a
        phantom (returned third) and is left out of the reading.
        """
        c = self.config
        ppm = self.geometry.px_per_mm / 2  # the check runs at half the rectified resolution
        side = self.die_mm * ppm
        assert self._ref_log is not None
        half = cv2.resize(rect, self._ref_log[0].shape[::-1], interpolation=cv2.INTER_AREA)
        chans = []
        for ch, ref in zip(cv2.split(half), self._ref_log):
            d = cv2.log(ch.astype(np.float32) + 4.0) - ref
            chans.append(d - float(np.median(d[::2, ::2])))
        hi = cv2.max(cv2.max(chans[0], chans[1]), chans[2])
        lo = cv2.min(cv2.min(chans[0], chans[1]), chans[2])
        changed = cv2.max(hi, -lo) > math.log(1.4)
        shadow = (hi < 0) & ((hi - lo) < math.log(1.25))
        mask = cv2.morphologyEx((changed & ~shadow).astype(np.uint8), cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
        n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        centres = [((d.box[0] + d.box[2] / 2) / 2, (d.box[1] + d.box[3] / 2) / 2) for d in reading.dice]
        phantoms: set[int] = set()
        for k, d in enumerate(reading.dice):
            x0, y0 = max(0, int(d.box[0] / 2)), max(0, int(d.box[1] / 2))
            x1, y1 = int(math.ceil((d.box[0] + d.box[2]) / 2)), int(math.ceil((d.box[1] + d.box[3]) / 2))
            if np.count_nonzero(mask[y0:y1, x0:x1]) < 0.2 * side * side:
                phantoms.add(k)  # nothing there but the empty tray
        leaning: set[int] = set()
        unexplained: list[tuple[float, float, bool]] = []
        for i in range(1, n):
            x, y, w, h, area = (int(v) for v in stats[i])
            if area < 0.4 * side * side:
                continue
            inside = [k for k, (cx, cy) in enumerate(centres) if k not in phantoms
                      and x <= cx < x + w and y <= cy < y + h and labels[int(cy), int(cx)] in (0, i)]
            if len(inside) > 1:
                continue  # dice touching each other
            m = cv2.moments((labels[y:y + h, x:x + w] == i).astype(np.uint8), binaryImage=True)
            a, b, cc = m["mu20"] / m["m00"], m["mu02"] / m["m00"], m["mu11"] / m["m00"]
            spread = math.sqrt(((a - b) / 2) ** 2 + cc * cc)
            lam1, lam2 = (a + b) / 2 + spread, max((a + b) / 2 - spread, 1e-6)
            long = math.sqrt(12.0 * lam1)  # side of the equivalent rectangle along its long axis
            tilted = math.sqrt(lam1 / lam2) > c.lean_aspect and long > c.lean_size * side
            if not inside:
                unexplained.append(((x + w / 2) / ppm, (y + h / 2) / ppm, tilted))
            elif tilted:
                leaning.add(inside[0])
        return leaning, unexplained, phantoms

    def _tray_dice(self, reading: ImageReading, leaning: set[int] | None = None) -> tuple[list[TrayDie], list[str]]:
        ppm = self.geometry.px_per_mm
        side = self.die_mm * ppm
        c = self.config
        out: list[TrayDie] = []
        problems: list[str] = []
        for k, d in enumerate(reading.dice):
            x, y, w, h = (int(v) for v in d.box)
            cx, cy = (x + w / 2) / ppm, (y + h / 2) / ppm
            value, reason = d.value, d.reason
            if leaning is not None:
                lean = k in leaning
            else:  # no reference image: judge by the reader's box alone
                lean = max(w, h) > c.lean_box_size * side or max(w, h) / max(1, min(w, h)) > c.lean_box_aspect
            lean = lean or (reason is not None and "lean" in reason.lower())
            if lean:
                value, reason = None, UnknownReason.LEANING
                problems.append(f"the die at ({cx:.0f}, {cy:.0f}) mm is leaning on the wall or another die; "
                                "lay it flat or re-roll")
            elif value is not None and d.confidence < c.min_confidence:
                value, reason = None, UnknownReason.LOW_CONFIDENCE
            if value is None and not lean:
                problems.append(f"the die at ({cx:.0f}, {cy:.0f}) mm cannot be read ({reason or 'unsure'})")
            out.append(TrayDie(value, (cx, cy), (x, y, w, h), float(d.confidence), self._in_hold(cx, cy), reason))
        return _reading_order(out, self.die_mm), problems

    def _in_hold(self, x: float, y: float) -> bool:
        if self.hold_area_mm is None:
            return False
        hx, hy, hw, hh = self.hold_area_mm
        return hx <= x <= hx + hw and hy <= y <= hy + hh

    def _vote(self, image: np.ndarray, idx: int, ts: float, mismatch: bool) -> list[RollEvent]:
        c = self.config
        rect = self.geometry.rectify(image)
        reading = _without_nested(self.reader(rect))
        self.last_reading = reading
        leaning: set[int] | None = None
        unexplained: list[tuple[float, float, bool]] = []
        if self._ref_log is not None:
            leaning, unexplained, phantoms = self._inspect(rect, reading)
            if phantoms:
                keep = [k for k in range(len(reading.dice)) if k not in phantoms]
                leaning = {keep.index(k) for k in leaning}
                reading = ImageReading(tuple(reading.dice[k] for k in keep), reading.problems)
        dice, problems = self._tray_dice(reading, leaning)
        for x, y, tilted in unexplained:
            problems.append(
                f"a die at ({x:.0f}, {y:.0f}) mm is leaning on the wall or another die and cannot be read; lay it "
                "flat or re-roll" if tilted else
                f"something at ({x:.0f}, {y:.0f}) mm is not read as a die (on its edge, covered, or not a die?); "
                "lay the dice flat and clear the tray")
        self._votes.append((dice, tuple(problems), rect))
        self._notes = tuple(reading.problems)
        if len(self._votes) < c.vote_frames:
            return []
        votes = self._votes
        self._votes = []
        self.state = WatchState.SETTLED
        last_dice, last_problems, last_rect = votes[-1]
        verdict: list[str] = []
        if self.camera_problem:
            verdict.append(self.camera_problem)
        align = self.alignment(image)
        if align is not None and align < c.alignment_min:
            verdict.append(f"the tray walls do not line up with the calibration (alignment {align:.2f}): the camera "
                           "was moved; run 'dicetable calibrate' again, or use corner markers so it is refitted")
        if mismatch:
            verdict.append("the tray does not match the empty-tray reference (camera moved or the light changed "
                           "a lot); run 'dicetable calibrate' again")
        if not self._agree([v[0] for v in votes]):
            verdict.append(f"the dice read differently over {len(votes)} still frames; re-roll")
        if self.expected_dice is not None and len(last_dice) != self.expected_dice:
            verdict.append(f"found {len(last_dice)} dice, expected {self.expected_dice}; "
                           "make sure every die is in the tray and none is covered")
        verdict.extend(p for p in last_problems if p not in verdict)
        self._verdict_given = False
        few = self.expected_dice is not None and len(last_dice) < self.expected_dice
        if ((not last_dice or few) and not self.camera_problem and not mismatch and not last_problems
                and self._agree([v[0] for v in votes])):
            # An empty tray, or dice still to be thrown (some in the hand): nothing to report yet.
            self.notice = (f"found {len(last_dice)} of {self.expected_dice} dice" if few else "tray empty")
            return []
        self._verdict_given = True
        self._emitted_moving = False
        self.notice = None
        frozen = last_rect
        frozen.setflags(write=False)
        notes = tuple(p for p in self._notes if p not in verdict)  # the reader's advice (e.g. "too dark")
        if verdict or any(d.value is None for d in last_dice):
            event = self._event(EventKind.UNREADABLE, idx, ts, dice=tuple(last_dice), problems=tuple(verdict) + notes,
                                frame=frozen, votes=len(votes))
            agreed = self._agree([v[0] for v in votes]) and not self.camera_problem and not mismatch
            self._settled_dice = tuple(d for d in last_dice if d.value is not None) if agreed else None
        else:
            flags = self._match(last_dice)
            notes = tuple(p for p in notes if "unreadable" not in p)  # every die was read in the end
            event = self._event(EventKind.SETTLED, idx, ts, dice=tuple(last_dice), flags=tuple(flags),
                                problems=notes, frame=frozen, votes=len(votes))
            self._settled_dice = tuple(last_dice)
        return [event]

    def _agree(self, readings: list[list[TrayDie]]) -> bool:
        first = readings[0]
        tol = self.die_mm / 2
        for other in readings[1:]:
            if len(other) != len(first):
                return False
            for d in first:
                near = [o for o in other if math.dist(o.centre_mm, d.centre_mm) < tol]
                if len(near) != 1 or near[0].value != d.value:
                    return False
        return True

    def _match(self, dice: list[TrayDie]) -> list[Flag]:
        if self._settled_dice is None:
            return []
        c = self.config
        flags: list[Flag] = []
        for i, d in enumerate(dice):
            for p in self._settled_dice:
                dist = math.dist(p.centre_mm, d.centre_mm)
                if d.held and p.held and dist < c.hold_match_mm and p.value != d.value:
                    flags.append(Flag(FlagKind.HELD_CHANGED, i, (
                        f"held die at ({d.centre_mm[0]:.0f}, {d.centre_mm[1]:.0f}) mm changed from {p.value} "
                        f"to {d.value}; held dice must not be turned")))
                elif not d.held and not p.held and dist < c.unmoved_mm and p.value == d.value:
                    flags.append(Flag(FlagKind.UNMOVED, i, (
                        f"die at ({d.centre_mm[0]:.0f}, {d.centre_mm[1]:.0f}) mm did not move since the last roll; "
                        "re-roll it or put it in the hold area")))
        return flags

    def _event(self, kind: EventKind, idx: int, ts: float, **kw: Any) -> RollEvent:
        event = RollEvent(kind, idx, ts, **kw)
        self.last_event = event
        return event

    def __repr__(self) -> str:
        return f"<RollWatcher {self.state.value} motion={self.motion:.4f} frames={self._frames}>"
