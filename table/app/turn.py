"""The turn's orchestration: presses, taps and the camera's roll events into game commands.

A mixin of :class:`table.app.core.TableApp`, run on its worker thread only. How a turn goes:

* The player throws; the camera's :class:`vision.watch.RollWatcher` says *settled*; the values go
  into the game as the next roll (held dice keep their places: :func:`~table.app.dice_slots.assign_slots`).
  A reading with a die that did not move is held back until ROLL/CONFIRM (or a proper re-roll).
* HOLD 1-5 hold dice for the re-roll; PREV/NEXT select a box (the best one is selected after each
  roll); SCORE writes it; a long press on UNDO takes back the last action.
* SCORE waits until thrown dice stop (scored earlier, the throw would be read as the next player's).
* With the synthetic camera (``dicetable demo``), ROLL/CONFIRM throws the dice that are not held.
* A bot's seat (:mod:`table.app.bots`) refuses the players' presses in its turn, but UNDO and, when a
  person throws its dice on the tray, ROLL.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

from table.app.dice_slots import assign_slots
from table.app.texts import ADVICE, END_VIEWS, ROLLING_S
from table.display.snapshot import best_of, options_of
from table.game import DiceSource, GameError, GameMode, ReadDice, ScoreBox, SetHold, Undo
from table.inputs.commands import HOLD_COMMANDS, Command
from table.rules import RulesError, find_ruleset

#: Said when dice lying in the tray are read before the camera saw them thrown (after a start or a camera
#: reconnect): they are not taken for a roll unless confirmed.
UNTHROWN = (
    "The dice were lying in the tray when the camera started: throw them, or press ROLL/CONFIRM to use this reading."
)


class TurnMixin:
    """The turn's part of :class:`~table.app.core.TableApp` (its attributes are set up there)."""

    # Set by TableApp.__init__ (see there).
    session: Any
    screens: Any
    selected: str | None
    warnings: dict[str, str]
    message: str
    pending: Any
    tray: Any
    bots: Any
    verdicts: int
    camera_status: str
    camera_jpeg: bytes | None
    camera_seq: int
    slot_mm: list[tuple[float, float] | None]
    slot_script: list[int]
    seq: int
    #: The audit's frame keeper (:class:`table.audit.frames.FrameKeeper`), set by ``play``; None keeps no frames.
    frames: Any = None
    #: True from the camera's (re)opening (status "opened", sent by CameraLoop) until it sees motion: dice read
    #: before then were lying in the tray (a restart, a resume, a reconnect), not thrown: no roll unless confirmed.
    _unthrown = False

    def _handle(self, command: Any) -> bool:
        """Apply a game command through the session; a refusal is said in :attr:`message` (False)."""
        assert self.session is not None
        try:
            self.session.handle(command)
        except (GameError, RulesError) as exc:
            self.message = str(exc)
            return False
        return True

    def _reselect(self) -> None:
        """Select the best open box after a change, unless the selection is still open."""
        st = self.state
        if st is None or st.mode is not GameMode.SCORECARD:
            self.selected = None
            return
        options = options_of(st)
        if self.selected not in options:
            self.selected = best_of(options, find_ruleset(st.ruleset).boxes)

    def _in_turn(self) -> bool:
        """Whether the game screen shows a turn (no menu over it): where dice and boxes are tapped."""
        st = self.state
        return self.screens.screen == "game" and not self.screens.menu_open and st is not None and st.turn is not None

    def _set_hold(self, die: int, held: bool, seen: int | None, origin: str) -> None:
        self.message = ""
        if not 0 <= die < 5:
            self.message = "Dice are numbered 1 to 5."
        elif not self._in_turn():
            self.message = "Dice are held during a turn."
        elif self._seen_now(seen) and self.state.turn.holds[die] != held:
            self._game_press(HOLD_COMMANDS[die], origin)

    def _tap_box(self, box: str, seen: int | None, origin: str) -> None:
        self.message = ""
        if not self._in_turn():
            self.message = "Boxes are chosen during a turn."
        elif self._seen_now(seen):
            options = options_of(self.state)
            if box not in options:
                self.message = (
                    "That box is not open for these dice." if options else "Roll the dice first; then choose a box."
                )
            elif box == self.selected:
                self._game_press(Command.SCORE, origin)
            elif not self._bots_turn_refuses(Command.NEXT):
                self.selected = box

    def _bots_turn_refuses(self, c: Command) -> bool:
        """Whether `c` is refused because a bot plays this turn (said in :attr:`message`)."""
        st = self.state
        level = st.bot_level(st.turn.player)
        if level and c is not Command.UNDO and not (c is Command.ROLL and self.bots.dice == "tray"):
            who = f"{st.players[st.turn.player]} ({level} bot)"
            self.message = (
                f"{who} rolls on screen; wait for your turn."
                if self.bots.dice == "virtual"
                else f"{who} chooses its holds and box; throw its dice in the tray."
            )
            return True
        return False

    def _game_press(self, c: Command, origin: str, mono: float | None = None) -> None:
        st = self.state
        if st is None or st.turn is None:
            return
        turn = st.turn
        now = self.clock()
        if self._bots_turn_refuses(c):
            return
        if c in HOLD_COMMANDS:
            die = HOLD_COMMANDS.index(c)
            if turn.roll == 0:
                self.message = "Roll the dice first; then HOLD the dice you keep."
            elif turn.roll >= 3:
                self.message = ADVICE["no-rolls"]
            else:
                self._handle(SetHold(at=now, die=die, held=not turn.holds[die]))
        elif c is Command.ROLL:
            if self.pending is not None:
                event, self.pending = self.pending, None
                self.warnings.pop("unmoved", None)
                self.warnings.pop("unthrown", None)
                self._read(event, None, accept_unmoved=True)
            elif self.tray is not None:
                self._throw()
            else:
                self.message = "Roll the dice in the tray: the camera reads them when they stop."
        elif c in (Command.PREV, Command.NEXT):
            options = list(options_of(st))
            if not options:
                self.message = "Roll the dice first; then choose a box."
                return
            k = options.index(self.selected) if self.selected in options else 0
            k = (k + (1 if c is Command.NEXT else -1)) % len(options)
            self.selected = options[k]
        elif c is Command.SCORE:
            if turn.roll == 0 or self.selected is None:
                self.message = "Roll the dice first; then choose a box and press SCORE."
                return
            if turn.roll < 3 and self._dice_rolling(
                time.monotonic() if mono is None else mono
            ):  # scored now, the throw would be read as the next's
                self.message = "The dice are still rolling: SCORE once they stop."
                return
            box = self.selected
            if self._handle(ScoreBox(at=now, box=box)):
                self._after_score()
        elif c is Command.UNDO:
            self._undo(origin)

    def _undo(self, origin: str) -> None:
        """Take back the last action (an ``Undo`` event); a finished game's refusal is said in :attr:`message`."""
        if self._handle(Undo(at=self.clock(), by=origin)):
            self.warnings.clear()
            self.pending = None
            self._reselect()

    def _dice_rolling(self, mono: float) -> bool:
        """Whether thrown dice are still rolling at `mono` (time.monotonic): the synthetic tray's throw is
        unread, or the camera has seen motion for less than :data:`ROLLING_S` (dice taken out of the tray
        leave it seeing motion with no reading to follow, which must not block SCORE)."""
        if self.tray is not None:
            return self.tray.busy and self.verdicts == self._verdicts_at_throw
        return self.camera_status == "moving" and mono - self._moving_since < ROLLING_S

    def _after_score(self) -> None:
        self.selected = None
        self.warnings.clear()
        self.pending = None
        self.slot_mm = [None] * 5
        st = self.state
        if st.finished:
            self.screens = replace(self.screens, screen="end", end_view=END_VIEWS[0])
            names = [st.players[i] for i in st.winners()]
            self.message = f"{' and '.join(names)} won!"
            self._analyse()
        else:
            self.message = f"{st.players[st.turn.player]} to roll."

    def _throw(self) -> None:
        st = self.state
        turn = st.turn
        if turn.roll >= 3:
            self.message = ADVICE["no-rolls"]
            return
        if turn.roll and all(turn.holds):
            self.message = "All five dice are held: release one, or choose a box and SCORE."
            return
        if self._dice_rolling(time.monotonic()):
            self.message = "The dice are still rolling."
            return  # the last throw has not been read yet
        keep = [self.slot_script[i] for i in range(5) if turn.roll and turn.holds[i]]
        self.tray.throw(keep)
        self._verdicts_at_throw = self.verdicts

    def _roll_event(self, event: Any, mono: float, frame: bytes | None = None) -> None:
        kind = str(getattr(event.kind, "value", event.kind))
        st = self.state
        in_game = self.screens.screen == "game" and st is not None and st.turn is not None
        if in_game and self.bots.virtual_turn():
            if kind == "settled":
                self.verdicts += 1
            return  # a bot rolls on screen: the tray is not read
        if kind == "moving":
            self._unthrown = False
            if self.camera_status != "moving":
                self._moving_since = mono
            self.camera_status = "moving"
            for k in ("leaning", "stacked", "unreadable", "count", "unmoved", "moved", "unthrown", "blocked"):
                self.warnings.pop(k, None)
            self.pending = None
        elif kind == "disturbed":
            if in_game and st.turn.roll >= 3:
                self.warnings["moved"] = ADVICE["moved"] + " " + ADVICE["no-rolls"]
        elif kind == "blocked":  # a still picture unlike the empty tray, no verdict: say what it looks like
            self.warnings["blocked"] = f"Nothing can be read: {'; '.join(event.problems)}."
        elif kind == "camera-moved":
            text = "; ".join(event.problems)
            if "calibrat" in text:
                self.warnings["recalibrate"] = ADVICE["recalibrate"]
        elif kind == "unreadable":
            self.camera_status = "unreadable"
            text = " ".join(event.problems).lower()
            if "leaning" in text:
                self.warnings["leaning"] = ADVICE["leaning"]
            if "stacked" in text:
                self.warnings["stacked"] = ADVICE["stacked"]
            if "calibrat" in text:
                self.warnings["recalibrate"] = ADVICE["recalibrate"]
            if "expected" in text and "found" in text:
                self.warnings["count"] = ADVICE["count"]
            if any(v is None for v in event.values) or not self.warnings:
                self.warnings["unreadable"] = ADVICE["unreadable"]
            if in_game:
                self._keep_frame(frame, "unreadable", tuple(event.values))
        elif kind == "settled":
            self.camera_status = "settled"
            self.warnings.pop("recalibrate", None)
            if self.screens.screen == "rolloff" or (in_game and st.mode is GameMode.FREE_ROLL):
                faces = tuple(d.value for d in sorted(event.dice, key=lambda d: d.centre_mm[0]))  # left to right
                self._rolloff_faces(faces) if self.screens.screen == "rolloff" else self._free_read(faces)
            elif in_game and self._unthrown:
                self._lying(event)
            elif in_game:
                self._read(event, mono, frame=frame)
        if kind in ("settled", "unreadable"):
            self.verdicts += 1

    def _lying(self, event: Any) -> None:
        """Dice read before the camera saw any motion since it opened: not a roll. Held back until
        ROLL/CONFIRM (as a die that did not move), or forgotten at the next throw; with the synthetic
        tray, ROLL throws, so the reading is just left out."""
        if self.tray is None and sorted(event.values) != sorted(self.state.turn.dice):
            self.pending = event
            self.warnings["unthrown"] = UNTHROWN

    def _keep_frame(self, frame: bytes | None, kind: str, values: tuple[Any, ...]) -> None:
        """Queue `frame` for the audit (:mod:`table.audit.frames`) under the game's last event; never waits."""
        if self.frames is not None and frame and self.session is not None:
            st = self.session.state
            self.frames.keep(
                frame, game_id=self.session.game_id, seq=st.events - 1, at=st.last_at, kind=kind, values=values
            )

    def _read(self, event: Any, mono: float | None, accept_unmoved: bool = False, frame: bytes | None = None) -> None:
        st = self.state
        turn = st.turn
        values = tuple(event.values)
        if len(values) != 5 or any(v is None for v in values):
            self.warnings["count"] = ADVICE["count"]
            return
        if turn.roll >= 3:
            if sorted(values) != sorted(turn.dice):
                self.warnings["no-rolls"] = ADVICE["no-rolls"]
            return
        flags = {str(getattr(f.kind, "value", f.kind)) for f in event.flags}
        if "unmoved" in flags and not accept_unmoved:
            moved = [d for d in event.dice if not d.held]
            if (
                turn.roll
                and sorted(values) == sorted(turn.dice)
                and all(any(math.dist(d.centre_mm, p) < 3.0 for p in self.slot_mm if p) for d in moved)
            ):
                return  # nothing moved: a nudge, not a roll
            self.pending = event
            self.warnings["unmoved"] = ADVICE["unmoved"]
            return
        slots = assign_slots(
            turn.dice if turn.roll else (),
            turn.holds if turn.roll else (False,) * 5,
            self.slot_mm,
            [(d.value, d.held, d.centre_mm) for d in event.dice],
        )
        ordered = tuple(values[j] for j in slots)
        if self._handle(ReadDice(at=self.clock(), values=ordered, source=DiceSource.CAMERA)):
            self._keep_frame(frame, "settled", ordered)
            self.slot_mm = [event.dice[j].centre_mm for j in slots]
            if self.tray is not None:
                self.slot_script = [self.tray.nearest_die(p) for p in self.slot_mm]
            if self.state.turn.flagged:
                self.warnings["held-changed"] = ADVICE["held-changed"]
            else:
                self.warnings.pop("held-changed", None)
            self.selected = None
            self._reselect()
            if mono is not None:
                self._stamps[self.seq + 1] = mono

    def _camera_update(self, jpeg: bytes | None, status: str | None, warning: tuple[str, str | None] | None) -> None:
        if jpeg is not None:
            self.camera_jpeg = jpeg
            self.camera_seq += 1
        if status is not None:
            self.camera_status = status
            if status == "opened":  # a new watcher (CameraLoop): whatever lies in the tray was not thrown
                self._unthrown = True
        if warning is not None:
            kind, text = warning
            if text is None:
                self.warnings.pop(kind, None)
            else:
                self.warnings[kind] = text
