"""Free roll (the table reads and sums any number of dice) and the roll-off (who starts), on the app's worker.

A mixin of :class:`table.app.core.TableApp`. In free-roll mode (``play --rules free``, or the setup's rules
field past the last ruleset) each settled read of 1 to :attr:`max_dice` dice is a throw
(:class:`~table.game.ReadDice` in a :attr:`~table.game.GameMode.FREE_ROLL` game): the page shows each value,
the total and the log of throws. The roll-off (:mod:`table.app.rolloff`) is opened from the setup; its
result rotates the setup's seats so that the winner plays first.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import replace
from typing import Any

from table.app.rolloff import RollOff, RollOffError
from table.app.seats import split_seats
from table.game import DiceSource, GameMode, ReadDice
from table.inputs.commands import Command

#: Throws of a free-roll game shown in the page's log (newest first).
FREE_LOG = 8


def too_many_dice(n: int, limit: int) -> str:
    """The line said for a free roll of `n` dice on a tray that takes `limit`."""
    return (
        f"{n} dice is more than this tray takes: throw 1 to {limit} dice (the calibration's dice_count; "
        "'dicetable calibrate' sets it)."
    )


class FreePlayMixin:
    """Free roll and roll-off: part of :class:`~table.app.core.TableApp` (attributes set up there)."""

    session: Any
    screens: Any
    message: str
    warnings: dict[str, str]
    tray: Any
    max_dice: int
    rolloff: RollOff | None = None

    @property
    def free_dice(self) -> bool:
        """Whether the camera should take any number of dice (free roll, roll-off) rather than five."""
        st = self.state  # type: ignore[attr-defined]
        free = st is not None and st.mode is GameMode.FREE_ROLL and st.turn is not None
        return free or self.screens.screen == "rolloff"

    def start_rolloff(self) -> Future[Any]:
        """Open the roll-off for the setup's players (the page's button; on the setup screen only)."""
        return self.submit(self._rolloff_from_page)  # type: ignore[attr-defined]

    def _rolloff_from_page(self) -> None:
        if self.screens.screen != "setup":
            self.message = "The roll-off is on the setup screen: end or finish this game first."
            return
        self._start_rolloff()

    def rolloff_face(self, face: object) -> Future[Any]:
        """A face typed on the page for the next player of the roll-off (1-6; else one line says so)."""
        return self.submit(self._rolloff_faces, (face,), DiceSource.TYPED)  # type: ignore[attr-defined]

    def free_values(self, values: list[Any]) -> Future[Any]:
        """Dice typed for a free roll (as the camera would read them); a bad list is said in one line."""
        return self.submit(self._free_read, tuple(values), DiceSource.TYPED)  # type: ignore[attr-defined]

    # -- worker side ---------------------------------------------------------------------------

    def _free_read(self, values: tuple[Any, ...], source: DiceSource = DiceSource.CAMERA) -> None:
        """A read in free-roll mode: 1 to :attr:`max_dice` faces 1-6 become a throw."""
        if any(v is None for v in values):
            self.warnings["unreadable"] = "Some dice could not be read: lay them flat, apart, and throw again."
            return
        self.warnings.pop("unreadable", None)
        if not values or any(isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 6 for v in values):
            self.message = f"A free roll is 1 to {self.max_dice} faces 1-6; got {list(values)}."
            return
        if len(values) > self.max_dice:
            self.message = too_many_dice(len(values), self.max_dice)
            return
        if self._handle(ReadDice(at=self.clock(), values=tuple(values), source=source)):  # type: ignore[attr-defined]
            self.message = f"{len(values)} dice, total {sum(values)}."

    def _free_press(self, c: Command) -> None:
        """A button in a free-roll game: ROLL throws the synthetic dice; the rest say what to do."""
        if c is Command.ROLL and self.tray is not None:
            self._tray_throw()
        elif c is Command.ROLL:
            self.message = "Throw the dice in the tray: the camera reads and sums them."
        else:
            self.message = "Free roll: throw the dice; MENU: history, fix a die, or a new game."

    def _tray_throw(self) -> None:
        """Throw all the synthetic tray's dice, unless the last throw is still rolling unread: a new throw
        would replace it mid-tumble and it would never be read (three quick ROLLs logged two throws)."""
        if self._dice_rolling(0.0):  # type: ignore[attr-defined]
            self.message = "The dice are still rolling."
            return
        self.tray.throw([])
        self._verdicts_at_throw = self.verdicts  # type: ignore[attr-defined]

    def _start_rolloff(self) -> None:
        names, _ = split_seats(self.screens.setup.names)
        if len(names) < 2:
            self.message = "A roll-off needs at least two players: add a player first."
            return
        self.rolloff = RollOff(tuple(names))
        self.screens = replace(self.screens, screen="rolloff", menu_open=False)
        self.message = f"Roll-off: {names[0]} throws one die (or every player one die, read left to right)."

    def _rolloff_press(self, c: Command) -> None:
        r = self.rolloff
        if c in (Command.MENU, Command.UNDO) or (c is Command.ROLL and r is not None and r.winner):
            if c is Command.ROLL and r is not None and r.winner:
                entries = list(self.screens.setup.names)
                k = list(r.players).index(r.winner)
                seats = entries[k:] + entries[:k]
                start = type(self.screens.setup).FIELDS.index("start")  # next: Start, in the new order
                self.screens = replace(self.screens, setup=replace(self.screens.setup, names=seats, field=start))
                self.message = f"{r.winner} starts: the seats now go {', '.join(r.seating())}."
            else:
                self.message = "Roll-off left: the seats are as they were."
            self.rolloff = None
            self.screens = replace(self.screens, screen="setup")
        elif c is Command.ROLL and self.tray is not None and r is not None:
            self._tray_throw()
        elif r is not None:
            self.message = f"Throw one die for {r.waiting[0]}; MENU leaves the roll-off." if r.waiting else ""

    def _rolloff_faces(self, faces: tuple[Any, ...], source: DiceSource = DiceSource.CAMERA) -> None:
        r = self.rolloff
        if r is None or self.screens.screen != "rolloff":
            self.message = "No roll-off is open: choose Roll-off on the setup screen."
            return
        if self.tray is not None and source is DiceSource.CAMERA and len(faces) > len(r.waiting):
            faces = faces[: len(r.waiting)]  # the synthetic tray throws five: the first ones, left to right
        try:
            self.rolloff = r.read(tuple(faces))
        except RollOffError as exc:
            self.message = str(exc)
            return
        r = self.rolloff
        if r.winner:
            self.message = f"{r.winner} starts! ROLL/CONFIRM takes this order; MENU leaves it as it was."
        elif r.round > 1 and not r.thrown:
            self.message = f"A tie: {', '.join(r.throwing)} throw again."
        else:
            self.message = f"{r.waiting[0]} to throw."

    def free_json(self) -> dict[str, Any]:
        """The free-roll and roll-off part of the snapshot (``free``, ``rolloff``: None when not shown)."""
        st = self.state  # type: ignore[attr-defined]
        free = None
        if st is not None and st.mode is GameMode.FREE_ROLL:
            rolls = st.rolls
            free = {
                "players": list(st.players),
                "count": len(rolls),
                "max_dice": self.max_dice,
                "last": None if not rolls else {"values": list(rolls[-1].values), "total": rolls[-1].total},
                "log": [
                    {"n": len(rolls) - k, "values": list(r.values), "total": r.total}
                    for k, r in enumerate(reversed(rolls[-FREE_LOG:]))
                ],
                "ended": st.ended is not None,
            }
        rolloff = self.rolloff.to_json() if self.rolloff is not None and self.screens.screen == "rolloff" else None
        return {"free": free, "rolloff": rolloff}
