"""Face counts for the fair-dice audit, taken from a game's stored events.

What counts: every die the camera read after it was thrown. On roll 1 all five dice; on a
re-roll only the dice that were not held (a held die lies still, so reading it again would
count the same throw twice); in free-roll mode every die of every throw. Typed dice and a
bot's on-screen (virtual) dice are no test of the real dice and are left out. A die corrected
by hand (:class:`~table.game.DieCorrected`) was misread: it leaves the counts and is tallied
apart, as are the camera's unreadable verdicts (kept in the frames index, see
:mod:`table.audit.frames`). An undone read still counts: the dice were thrown and read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from table.game import DiceRead, DiceSource, GameMode, apply
from table.game.events import DieCorrected, Event, GameStarted


@dataclass(slots=True)
class Tally:
    """Counts of one or more games.

    Attributes
    ----------
    counts : list of int
        Camera-read thrown dice per face (index 0 is face 1); the test's input.
    reads : int
        Camera reads (throws) that gave counts.
    corrected : int
        Dice read by the camera, then corrected by hand: not in `counts`.
    unreadable : int
        Throws the camera could not read (from the frames index): not in `counts`.
    other : int
        Dice typed in or rolled on screen: not in `counts`.
    games : list of int
        The games counted.
    """

    counts: list[int] = field(default_factory=lambda: [0] * 6)
    reads: int = 0
    corrected: int = 0
    unreadable: int = 0
    other: int = 0
    games: list[int] = field(default_factory=list)

    @property
    def n(self) -> int:
        """Dice in the test."""
        return sum(self.counts)

    def as_dict(self) -> dict[str, object]:
        """JSON-able form."""
        return {
            "counts": list(self.counts),
            "dice": self.n,
            "reads": self.reads,
            "corrected": self.corrected,
            "unreadable": self.unreadable,
            "typed_or_virtual": self.other,
            "games": list(self.games),
        }


def add_game(tally: Tally, game_id: int, events: Sequence[Event], unreadable: int = 0) -> Tally:
    """Add the camera-read thrown dice of one game's `events` (in order) to `tally`; return it.

    Raises
    ------
    ValueError
        If the events do not replay (a damaged game; the store reports those first).
    """
    state = None
    # die index -> face it was counted as in this turn (the read that counted it), for corrections
    counted: dict[int, int] = {}
    for event in events:
        before = state
        state = apply(state, event)
        if isinstance(event, GameStarted):
            continue
        if isinstance(event, DiceRead):
            if event.source is not DiceSource.CAMERA:
                tally.other += len(event.values)
                counted = {}
                continue
            free = before is not None and before.mode is GameMode.FREE_ROLL
            turn = None if before is None else before.turn
            if free or turn is None or turn.roll == 0 or event.roll == 1:
                thrown: Iterable[int] = range(len(event.values))
                counted = {}
            else:
                thrown = [i for i in range(len(event.values)) if not turn.holds[i]]
            tally.reads += 1
            for i in thrown:
                tally.counts[event.values[i] - 1] += 1
                counted[i] = event.values[i]
        elif isinstance(event, DieCorrected) and event.die in counted:
            tally.counts[counted.pop(event.die) - 1] -= 1
            tally.corrected += 1
    tally.unreadable += unreadable
    tally.games.append(game_id)
    return tally
