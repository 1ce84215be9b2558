"""The roll-off: who starts. Each player throws one die; the highest starts; a tie re-rolls the tied players only.

Pure values (no clock, no camera): :meth:`RollOff.read` takes the faces the camera read and returns the next
roll-off. One die read is the throw of the next player to throw; as many dice as players still to throw are
theirs, in the order read (left to right on the tray). The winner's seat starts and the seats keep their order
round the table after it (:meth:`RollOff.seating`).

>>> r = RollOff(("Ann", "Bo", "Cy")).read((4,)).read((6,)).read((6,))
>>> r.throwing, r.round
(('Bo', 'Cy'), 2)
>>> r = r.read((2, 5))
>>> r.winner, r.seating()
('Cy', ('Cy', 'Ann', 'Bo'))
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace


class RollOffError(ValueError):
    """Raised when a read cannot be a roll-off throw (the message says what to throw)."""


@dataclass(frozen=True)
class RollOff:
    """A roll-off among `players` (names, seat order).

    Parameters
    ----------
    players : tuple of str
        Every seat, in seat order.
    throwing : tuple of str
        Who throws in this round (all players in round 1, the tied ones after).
    thrown : dict
        This round's faces so far, by name.
    round : int
        1, then one more per tie.
    log : tuple of (int, str, int)
        Every throw: round, name, face.
    winner : str or None
        Who starts, once decided.
    """

    players: tuple[str, ...]
    throwing: tuple[str, ...] = ()
    thrown: dict[str, int] = field(default_factory=dict)
    round: int = 1
    log: tuple[tuple[int, str, int], ...] = ()
    winner: str | None = None

    def __post_init__(self) -> None:
        if not self.throwing and self.winner is None:
            object.__setattr__(self, "throwing", tuple(self.players))

    @property
    def waiting(self) -> tuple[str, ...]:
        """Who still has to throw in this round, in seat order."""
        return () if self.winner else tuple(n for n in self.throwing if n not in self.thrown)

    def read(self, faces: tuple[int, ...]) -> RollOff:
        """The roll-off after dice showing `faces` were read.

        Raises
        ------
        RollOffError
            If it is decided already, a face is not 1-6, or the count is neither 1 nor the players waiting.
        """
        if self.winner is not None:
            raise RollOffError(f"{self.winner} starts: the roll-off is decided; press ROLL/CONFIRM to go back")
        if any(isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 6 for v in faces):
            raise RollOffError(f"faces {list(faces)} cannot be read as a throw; throw again")
        waiting = self.waiting
        if len(faces) == 1:
            names = waiting[:1]
        elif len(faces) == len(waiting):
            names = waiting
        else:
            raise RollOffError(
                f"{len(faces)} dice read: throw one die for {waiting[0]}, or one die each for "
                f"{', '.join(waiting)} ({len(waiting)} dice)"
            )
        thrown = {**self.thrown, **dict(zip(names, faces))}
        log = self.log + tuple((self.round, n, v) for n, v in zip(names, faces))
        if len(thrown) < len(self.throwing):
            return replace(self, thrown=thrown, log=log)
        top = max(thrown.values())
        best = tuple(n for n in self.throwing if thrown[n] == top)
        if len(best) == 1:
            return replace(self, thrown=thrown, log=log, winner=best[0], throwing=())
        return replace(self, throwing=best, thrown={}, round=self.round + 1, log=log)

    def seating(self) -> tuple[str, ...]:
        """The seats from the winner on, round the table (the players' order before a winner)."""
        if self.winner is None:
            return self.players
        k = self.players.index(self.winner)
        return self.players[k:] + self.players[:k]

    def to_json(self) -> dict[str, object]:
        """The page's roll-off: players, who throws now, this round's faces, the log and the winner."""
        return {
            "players": list(self.players),
            "throwing": list(self.throwing),
            "waiting": list(self.waiting),
            "thrown": dict(self.thrown),
            "round": self.round,
            "log": [{"round": r, "name": n, "face": v} for r, n, v in self.log],
            "winner": self.winner,
        }
