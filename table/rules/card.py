"""The immutable scorecard value, :class:`Card`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from table.rules.errors import InvalidCardError, UnknownBoxError
from table.rules.registry import possible_points, resolve_ruleset
from table.rules.ruleset import Ruleset


@dataclass(frozen=True, slots=True)
class Card:
    """One player's scorecard: filled boxes and the count of Yahtzee bonuses.

    Parameters
    ----------
    boxes : Mapping of str to int
        Filled box id -> points written there (0 is a scratch).  Stored as a
        read-only mapping; boxes not in it are open.
    yahtzee_bonuses : int, optional
        Number of +100 Yahtzee bonuses earned (Yahtzee only), default 0.

    Notes
    -----
    A card knows nothing of its ruleset; :meth:`from_mapping` validates one
    against a ruleset.  Upper sum, bonus and total are derived
    (:func:`table.rules.card_total`).  Immutable: :func:`table.rules.place`
    returns a new card.

    Examples
    --------
    >>> Card.empty().boxes
    mappingproxy({})
    """

    boxes: Mapping[str, int] = field(default_factory=dict)
    yahtzee_bonuses: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "boxes", MappingProxyType(dict(self.boxes)))

    def __hash__(self) -> int:
        return hash((frozenset(self.boxes.items()), self.yahtzee_bonuses))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return dict(self.boxes) == dict(other.boxes) and self.yahtzee_bonuses == other.yahtzee_bonuses

    def __repr__(self) -> str:
        return f"Card({dict(self.boxes)!r}, yahtzee_bonuses={self.yahtzee_bonuses})"

    def __contains__(self, box: object) -> bool:
        return box in self.boxes

    def __iter__(self) -> Iterator[str]:
        return iter(self.boxes)

    def __len__(self) -> int:
        return len(self.boxes)

    @classmethod
    def empty(cls) -> Card:
        """Return a card with every box open and no bonuses."""
        return cls({}, 0)

    @classmethod
    def from_mapping(cls, ruleset: Ruleset | str, mapping: Mapping[str, object], yahtzee_bonuses: int = 0) -> Card:
        """Build a card for ``ruleset`` from filled boxes -> points, validating both.

        Parameters
        ----------
        ruleset : Ruleset or str
            The ruleset (or its id) the card belongs to.
        mapping : Mapping of str to int
            Filled box id -> points; every id must be a box of ``ruleset`` and
            every value an int the box can actually hold (0 always allowed).
        yahtzee_bonuses : int, optional
            Yahtzee bonuses earned; must be 0 unless the ruleset is ``yahtzee``
            and the ``yahtzee`` box holds 50.

        Returns
        -------
        card : Card
            Boxes ordered as on the ruleset's scorecard.

        Raises
        ------
        UnknownBoxError
            If a key is not one of the ruleset's boxes (the message lists them).
        InvalidCardError
            If ``mapping`` is not a mapping, a value is not a non-negative int
            or cannot be scored in that box, or the bonus count is impossible.
        """
        rs = resolve_ruleset(ruleset)
        if not isinstance(mapping, Mapping):
            raise InvalidCardError(
                f"a {rs.id} card must be an object of box -> points, e.g. "
                f'{{"{rs.boxes[-1]}": 20}}, got {type(mapping).__name__} {mapping!r}'
            )
        for box in mapping:
            if box not in rs.boxes:
                raise UnknownBoxError(f"{box!r} is not a {rs.id} box; the boxes are: {', '.join(rs.boxes)}")
        for box, points in mapping.items():
            if isinstance(points, bool) or not isinstance(points, int):
                raise InvalidCardError(f"points for box {box!r} must be a whole number, got {points!r}")
            if points < 0:
                raise InvalidCardError(f"points for box {box!r} cannot be negative, got {points}")
            allowed = possible_points(rs, box)
            if points not in allowed:
                raise InvalidCardError(
                    f"{rs.id} box {box!r} cannot hold {points} points; possible: {', '.join(map(str, sorted(allowed)))}"
                )
        if isinstance(yahtzee_bonuses, bool) or not isinstance(yahtzee_bonuses, int) or yahtzee_bonuses < 0:
            raise InvalidCardError(f"yahtzee_bonuses must be a whole number 0 or more, got {yahtzee_bonuses!r}")
        if yahtzee_bonuses:
            if not rs.has_yahtzee_bonus:
                raise InvalidCardError(f"{rs.id} has no Yahtzee bonus; yahtzee_bonuses must be 0")
            if mapping.get("yahtzee") != 50:
                raise InvalidCardError(
                    f"Yahtzee bonuses need 50 in the 'yahtzee' box, got {mapping.get('yahtzee', 'an open box')!r}"
                )
            if yahtzee_bonuses > len(rs.boxes) - 1:
                raise InvalidCardError(
                    f"at most {len(rs.boxes) - 1} Yahtzee bonuses fit in a game, got {yahtzee_bonuses}"
                )
        ordered = {b: int(mapping[b]) for b in rs.boxes if b in mapping}  # type: ignore[call-overload]
        return cls(ordered, yahtzee_bonuses)
