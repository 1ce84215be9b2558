"""The roll watcher's reading of still frames and its vote over them.

Mixed into :class:`vision.watch.RollWatcher`: once the tray is still, the
rectified tray is read on ``vote_frames`` consecutive still frames
(:meth:`_Voting._vote`); the roll is *settled* only when all of them agree,
die by die (:meth:`_Voting._agree`), and *unreadable* otherwise (never a
guess). Against the empty-tray reference, leaning dice, objects the reader did
not read and phantom boxes are found (:meth:`_Voting._inspect`); dice are
matched with the previous settled roll, so a held die that changed value or a
die that did not move is flagged (:meth:`_Voting._match`).

Coordinates: tray millimetres and rectified pixels as in :mod:`vision.tray`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import cv2
import numpy as np

from vision.reading import ImageReading, UnknownReason
from vision.watch_events import EventKind, Flag, FlagKind, RollEvent, TrayDie, WatchState


def _without_nested(reading: ImageReading) -> ImageReading:
    """Drop die boxes whose centre lies inside a box at least twice as large (a pip or a face found twice).

    Seen from above, dice do not overlap: two real dice never have one's centre
    inside the other's box.
    """
    dice = reading.dice
    keep = []
    for k, d in enumerate(dice):
        cx, cy = d.box[0] + d.box[2] / 2, d.box[1] + d.box[3] / 2
        nested = any(
            j != k
            and o.box[0] <= cx <= o.box[0] + o.box[2]
            and o.box[1] <= cy <= o.box[1] + o.box[3]
            and o.box[2] * o.box[3] >= 2 * d.box[2] * d.box[3]
            for j, o in enumerate(dice)
        )
        if not nested:
            keep.append(d)
    return reading if len(keep) == len(dice) else ImageReading(tuple(keep), reading.problems)


def _reading_order(dice: Sequence[TrayDie], die_mm: float) -> list[TrayDie]:
    return sorted(dice, key=lambda d: (round(d.centre_mm[1] / die_mm), d.centre_mm[0]))


class _Voting:
    """The still-frame reading and voting of :class:`vision.watch.RollWatcher` (which holds the state they use)."""

    def _inspect(
        self, rect: np.ndarray, reading: ImageReading
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
            inside = [
                k
                for k, (cx, cy) in enumerate(centres)
                if k not in phantoms and x <= cx < x + w and y <= cy < y + h and labels[int(cy), int(cx)] in (0, i)
            ]
            if len(inside) > 1:
                continue  # dice touching each other
            m = cv2.moments((labels[y : y + h, x : x + w] == i).astype(np.uint8), binaryImage=True)
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
            held = self._in_hold(cx, cy)
            if lean:
                value, reason = None, UnknownReason.LEANING
                problems.append(
                    # a held die is not re-rolled: the one thing to do is to lay it flat
                    f"the held die at ({cx:.0f}, {cy:.0f}) mm is leaning; lay it flat, keep its face up"
                    if held
                    else f"the die at ({cx:.0f}, {cy:.0f}) mm is leaning on the wall or another die; "
                    "lay it flat or re-roll"
                )
            elif value is not None and d.confidence < c.min_confidence:
                value, reason = None, UnknownReason.LOW_CONFIDENCE
            if value is None and not lean:
                problems.append(f"the die at ({cx:.0f}, {cy:.0f}) mm cannot be read ({reason or 'unsure'})")
            out.append(TrayDie(value, (cx, cy), (x, y, w, h), float(d.confidence), held, reason))
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
                f"a held die at ({x:.0f}, {y:.0f}) mm is leaning; lay it flat, keep its face up"
                if tilted and self._in_hold(x, y)
                else f"a die at ({x:.0f}, {y:.0f}) mm is leaning on the wall or another die and cannot be read; lay it "
                "flat or re-roll"
                if tilted
                else f"something at ({x:.0f}, {y:.0f}) mm is not read as a die (on its edge, covered, or not a die?); "
                "lay the dice flat and clear the tray"
            )
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
            verdict.append(
                f"the tray walls do not line up with the calibration (alignment {align:.2f}): the camera "
                "was moved; run 'dicetable calibrate' again, or use corner markers so it is refitted"
            )
        if mismatch:
            verdict.append(
                "the tray does not match the empty-tray reference (camera moved or the light changed "
                "a lot); run 'dicetable calibrate' again"
            )
        if not self._agree([v[0] for v in votes]):
            verdict.append(f"the dice read differently over {len(votes)} still frames; re-roll")
        if self.expected_dice is not None and len(last_dice) != self.expected_dice:
            verdict.append(
                f"found {len(last_dice)} dice, expected {self.expected_dice}; "
                "make sure every die is in the tray and none is covered"
            )
        verdict.extend(p for p in last_problems if p not in verdict)
        self._verdict_given = False
        few = self.expected_dice is not None and len(last_dice) < self.expected_dice
        if (
            (not last_dice or few)
            and not self.camera_problem
            and not mismatch
            and not last_problems
            and self._agree([v[0] for v in votes])
        ):
            # An empty tray, or dice still to be thrown (some in the hand): nothing to report yet.
            self.notice = f"found {len(last_dice)} of {self.expected_dice} dice" if few else "tray empty"
            return []
        self._verdict_given = True
        self._emitted_moving = False
        self.notice = None
        frozen = last_rect
        frozen.setflags(write=False)
        notes = tuple(p for p in self._notes if p not in verdict)  # the reader's advice (e.g. "too dark")
        if verdict or any(d.value is None for d in last_dice):
            event = self._event(
                EventKind.UNREADABLE,
                idx,
                ts,
                dice=tuple(last_dice),
                problems=tuple(verdict) + notes,
                frame=frozen,
                votes=len(votes),
            )
            agreed = self._agree([v[0] for v in votes]) and not self.camera_problem and not mismatch
            self._settled_dice = tuple(d for d in last_dice if d.value is not None) if agreed else None
        else:
            flags = self._match(last_dice)
            notes = tuple(p for p in notes if "unreadable" not in p)  # every die was read in the end
            event = self._event(
                EventKind.SETTLED,
                idx,
                ts,
                dice=tuple(last_dice),
                flags=tuple(flags),
                problems=notes,
                frame=frozen,
                votes=len(votes),
            )
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
                    flags.append(
                        Flag(
                            FlagKind.HELD_CHANGED,
                            i,
                            (
                                f"held die at ({d.centre_mm[0]:.0f}, {d.centre_mm[1]:.0f}) mm changed from {p.value} "
                                f"to {d.value}; held dice must not be turned"
                            ),
                        )
                    )
                elif not d.held and not p.held and dist < c.unmoved_mm and p.value == d.value:
                    flags.append(
                        Flag(
                            FlagKind.UNMOVED,
                            i,
                            (
                                f"die at ({d.centre_mm[0]:.0f}, {d.centre_mm[1]:.0f}) mm "
                                "did not move since the last roll; "
                                "re-roll it or put it in the hold area"
                            ),
                        )
                    )
        return flags
