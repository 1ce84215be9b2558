"""The :class:`Ruleset` value: a scorecard layout plus its box scorer."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from table.rules.dice import Dice

#: ``scorer(dice, box, filled, roll) -> points``: the points ``box`` scores for
#: ``dice`` *without* any joker rule; ``filled`` maps already-filled boxes to
#: points (Generala's Doble needs it), ``roll`` is the throw number 1..3.
Scorer = Callable[[Dice, str, Mapping[str, int], int], int]


@dataclass(frozen=True, slots=True)
class Ruleset:
    """One scoresheet dice game: its boxes, bonuses and normal box scores.

    Parameters
    ----------
    id : str
        Stable ruleset id, one of ``yahtzee``, ``yacht``, ``chaser``,
        ``yatzy``, ``generala``.
    boxes : tuple of str
        Box ids in scorecard order; one turn per box.
    upper_boxes : tuple of str
        The "count one face" boxes that feed the upper bonus, for faces 1..6
        in order (``aces`` .. ``sixes``); empty for a ruleset without an upper
        section.
    upper_bonus_threshold : int or None
        Upper sum (points) at or above which the upper bonus is paid; None if
        the ruleset has no upper bonus.
    upper_bonus_points : int
        Points of the upper bonus (0 when there is none).
    display_names : Mapping of str to str
        Box id -> human name, e.g. ``"full_house" -> "Full House"``.
    has_yahtzee_bonus : bool
        True only for ``yahtzee``: +100 per bonus Yahtzee and the joker rules.
    scorer : Scorer
        Normal (non-joker) points of a box; see :data:`Scorer`.
    title : str
        Human name of the game.

    Notes
    -----
    Equality and hashing use ``id`` only.  Source: ``shared/specs/rulesets.md``.
    """

    id: str
    boxes: tuple[str, ...] = field(compare=False)
    upper_boxes: tuple[str, ...] = field(compare=False)
    upper_bonus_threshold: int | None = field(compare=False)
    upper_bonus_points: int = field(compare=False)
    display_names: Mapping[str, str] = field(compare=False)
    has_yahtzee_bonus: bool = field(compare=False, default=False)
    scorer: Scorer = field(compare=False, default=lambda d, b, f, r: 0, repr=False)
    title: str = field(compare=False, default="")

    def __post_init__(self) -> None:
        object.__setattr__(self, "display_names", MappingProxyType(dict(self.display_names)))
        if set(self.display_names) != set(self.boxes):
            raise ValueError(f"ruleset {self.id!r}: display_names must name every box")
        if not set(self.upper_boxes) <= set(self.boxes):
            raise ValueError(f"ruleset {self.id!r}: upper_boxes must be boxes")

    def __repr__(self) -> str:
        return f"find_ruleset({self.id!r})"

    def display_name(self, box: str) -> str:
        """Return the human name of ``box`` (the id itself if unknown)."""
        return self.display_names.get(box, box)

    @property
    def lower_boxes(self) -> tuple[str, ...]:
        """Boxes not in the upper section, in scorecard order."""
        return tuple(b for b in self.boxes if b not in self.upper_boxes)

    def upper_box_for(self, face: int) -> str | None:
        """The upper box that counts ``face`` (1..6), or None without an upper section."""
        return self.upper_boxes[face - 1] if self.upper_boxes else None

    def score_box(self, dice: Dice, box: str, filled: Mapping[str, int] | None = None, roll: int = 3) -> int:
        """Normal points of ``box`` for ``dice`` (no joker rule, no legality check)."""
        return self.scorer(dice, box, filled or {}, roll)
