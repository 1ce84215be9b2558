"""The solver's view of a ruleset: states, variants and score tables from :mod:`table.rules`.

A *turn-start state* is ``(mask, flag, upper)``:

``mask``
    Bit ``i`` set when box ``ruleset.boxes[i]`` is filled.
``flag``
    1 when the ruleset's *flag box* holds 50, else 0.  The flag box is the one
    box whose value changes later scores: ``yahtzee`` in Yahtzee with the
    Yahtzee bonus (+100 per bonus Yahtzee), ``generala`` in Generala (Doble
    Generala scores 100 only over a 50).  Rulesets without one have a single
    flag value, 0.
``upper``
    The upper sum capped at the upper-bonus threshold (0..63), for rulesets
    with an upper bonus; always 0 otherwise.

Every score the solver uses comes from :mod:`table.rules` (``Ruleset.score_box``
and :func:`table.rules.score_options` for bonus Yahtzees), tabulated once.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import numpy.typing as npt

from table.rules import (
    RULESET_IDS,
    Card,
    Ruleset,
    find_ruleset,
    place,
    score_options,
    yahtzee_bonus_for,
)
from table.strategy._dice import FACES, ROLLS
from table.strategy.errors import UnknownVariantError

#: Version of the rules document the tables follow (``shared/specs/rulesets.md``).
SPEC_VERSION = "1.0"

#: Yahtzee solver variants: the three joker rules of the spec, plus ``none``:
#: no Yahtzee bonus and no joker (a bonus Yahtzee scores like any roll), the
#: rules used by Glenn (2006) for the published 245.87.
YAHTZEE_VARIANTS: tuple[str, ...] = ("forced", "free", "free_choice", "none")
#: The only variant of the other rulesets.
STANDARD = "standard"


def variants_for(ruleset: Ruleset | str) -> tuple[str, ...]:
    """Solver variants of ``ruleset``: the joker variants for Yahtzee, else ``standard``."""
    rs = find_ruleset(ruleset) if isinstance(ruleset, str) else ruleset
    return YAHTZEE_VARIANTS if rs.has_yahtzee_bonus else (STANDARD,)


def check_variant(ruleset: Ruleset | str, variant: str | None) -> str:
    """Return a valid variant for ``ruleset`` (None: ``forced`` for Yahtzee, else ``standard``).

    Raises
    ------
    UnknownVariantError
        If ``variant`` is not one of :func:`variants_for` ``(ruleset)``.
    """
    rs = find_ruleset(ruleset) if isinstance(ruleset, str) else ruleset
    allowed = variants_for(rs)
    if variant is None:
        return allowed[0]
    if variant not in allowed:
        if rs.has_yahtzee_bonus:
            hint = f"choose one of: {', '.join(allowed)} ('none' = no Yahtzee bonus, no joker)"
        else:
            hint = f"{rs.id} has no joker variants; leave --joker out"
        raise UnknownVariantError(f"unknown {rs.id} variant {variant!r}; {hint}")
    return variant


@dataclass(frozen=True)
class Model:
    """Score tables and state layout of one (ruleset, variant) for the solver.

    Parameters
    ----------
    ruleset : Ruleset
        The rules (from :func:`table.rules.find_ruleset`).
    variant : str
        One of :func:`variants_for` ``(ruleset)``.

    Attributes
    ----------
    n_boxes : int
        Number of boxes (turns).
    flag_box : int or None
        Index of the flag box (see module docstring), or None.
    n_flags : int
        1 or 2.
    cap : int
        Upper-bonus threshold (points), or 0 when the upper sum is not tracked.
    upper_bits : tuple of int
        Box indexes of the upper section when it is tracked, else empty.
    scores : ndarray of shape (3, n_flags, n_boxes, 252), dtype int64
        Normal points of each box for each roll (rows of
        :data:`table.strategy._dice.ROLLS`), by throw number 1..3 (axis 0) and
        flag (axis 1).
    joker : ndarray of shape (2 ** n_boxes, 6, n_boxes), dtype int16, or None
        For Yahtzee with the bonus: points of each box for a bonus Yahtzee of
        face 1..6 on a card with filled-box mask ``mask``; -1 where the joker
        rule forbids the box (or it is filled).  Rows for masks without the
        ``yahtzee`` box are unused.
    bonus : int
        Yahtzee bonus points per bonus Yahtzee over a 50 (0 without).
    """

    ruleset: Ruleset
    variant: str
    scores: npt.NDArray[np.int64] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "variant", check_variant(self.ruleset, self.variant))
        object.__setattr__(self, "scores", self._normal_scores())

    @classmethod
    def of(cls, ruleset: Ruleset | str, variant: str | None = None) -> Model:
        """The model of ``ruleset`` (an id or a :class:`Ruleset`) and ``variant``, built once."""
        rs = find_ruleset(ruleset) if isinstance(ruleset, str) else ruleset
        return _model(cls, rs, check_variant(rs, variant))

    # -- layout -----------------------------------------------------------------
    @property
    def n_boxes(self) -> int:
        """Number of boxes (= turns) of the ruleset."""
        return len(self.ruleset.boxes)

    @property
    def has_bonus(self) -> bool:
        """True for Yahtzee with the Yahtzee bonus and a joker rule."""
        return self.ruleset.has_yahtzee_bonus and self.variant != "none"

    @property
    def joker_variant(self) -> str | None:
        """The :mod:`table.rules` joker variant, or None (no joker rule)."""
        return self.variant if self.has_bonus else None

    @cached_property
    def flag_box(self) -> int | None:
        """Index of the box whose 50 changes later scores (see the module docstring), or None."""
        rs = self.ruleset
        if self.has_bonus:
            return rs.boxes.index("yahtzee")
        found = None
        for b in rs.boxes:
            for c in rs.boxes:
                if c == b:
                    continue
                if any(rs.score_box(d, c, {b: 50}, 3) != rs.score_box(d, c, {}, 3) for d in ROLLS):
                    if found not in (None, b):
                        raise NotImplementedError(f"{rs.id}: more than one box changes other scores")
                    found = b
        return None if found is None else rs.boxes.index(found)

    @property
    def n_flags(self) -> int:
        """2 with a flag box, else 1."""
        return 1 if self.flag_box is None else 2

    @property
    def cap(self) -> int:
        """Upper-bonus threshold in points (upper sums are capped there), 0 without a bonus."""
        t = self.ruleset.upper_bonus_threshold
        return 0 if t is None else t

    @property
    def upper_bits(self) -> tuple[int, ...]:
        """Box indexes of aces..sixes when the upper sum is tracked, else empty."""
        if not self.cap:
            return ()
        return tuple(self.ruleset.boxes.index(b) for b in self.ruleset.upper_boxes)

    @property
    def upper_bonus_points(self) -> int:
        """Points of the upper bonus (0 without one)."""
        return self.ruleset.upper_bonus_points if self.cap else 0

    @property
    def shape(self) -> tuple[int, int, int]:
        """Shape of the value table: (2 ** n_boxes, n_flags, cap + 1)."""
        return (1 << self.n_boxes, self.n_flags, self.cap + 1)

    @cached_property
    def bonus(self) -> int:
        """Points of one Yahtzee bonus (100, from :func:`table.rules.yahtzee_bonus_for`), else 0."""
        if not self.has_bonus:
            return 0
        return yahtzee_bonus_for(self.ruleset, (6,) * 5, Card({"yahtzee": 50}))

    # -- score tables -------------------------------------------------------------
    def _flag_filled(self, flag: int) -> dict[str, int]:
        if self.flag_box is None or not flag:
            return {}
        return {self.ruleset.boxes[self.flag_box]: 50}

    def _normal_scores(self) -> npt.NDArray[np.int64]:
        rs = self.ruleset
        out = np.zeros((3, self.n_flags, self.n_boxes, len(ROLLS)), dtype=np.int64)
        for r in range(3):
            for g in range(self.n_flags):
                filled = self._flag_filled(g)
                for b, box in enumerate(rs.boxes):
                    out[r, g, b] = [rs.score_box(d, box, filled, r + 1) for d in ROLLS]
        return out

    @cached_property
    def float_scores(self) -> npt.NDArray[np.float64]:
        """:attr:`scores` as float64 (what the solver adds to values)."""
        return self.scores.astype(np.float64)

    @cached_property
    def flag_dependent_boxes(self) -> frozenset[int]:
        """Boxes whose normal points depend on the flag (Doble Generala)."""
        if self.n_flags == 1:
            return frozenset()
        return frozenset(
            b for b in range(self.n_boxes) if not np.array_equal(self.scores[:, 0, b], self.scores[:, 1, b])
        )

    def same_stop(self, roll: int) -> bool:
        """True if stopping on throw ``roll`` scores like throw 3 (all but Generala's servida)."""
        return bool(np.array_equal(self.scores[roll - 1], self.scores[2]))

    @cached_property
    def joker(self) -> npt.NDArray[np.int16] | None:
        """Bonus-Yahtzee points per (mask, face, box), -1 where not allowed (see the class)."""
        if not self.has_bonus:
            return None
        rs = self.ruleset
        yb = self.flag_box
        assert yb is not None
        table = np.full((1 << self.n_boxes, 6, self.n_boxes), -1, dtype=np.int16)
        index = {box: i for i, box in enumerate(rs.boxes)}
        for mask in range(1 << self.n_boxes):
            if not mask >> yb & 1:
                continue
            card = self.card_for_mask(mask, flag=1)
            for f in FACES:
                for box, pts in score_options(rs, (f,) * 5, card, joker=self.variant).items():
                    table[mask, f - 1, index[box]] = pts
        return table

    def card_for_mask(self, mask: int, flag: int = 0) -> Card:
        """A card with the boxes of ``mask`` filled (0 points; 50 in the flag box if ``flag``)."""
        boxes = {}
        for i, box in enumerate(self.ruleset.boxes):
            if mask >> i & 1:
                boxes[box] = 50 if (flag and i == self.flag_box) else 0
        return Card(boxes)

    # -- states -------------------------------------------------------------------
    def reachable_upper(self, mask: int) -> npt.NDArray[np.intp]:
        """Capped upper sums reachable with the upper boxes of ``mask`` filled, ascending."""
        if not self.cap:
            return np.zeros(1, dtype=np.intp)
        reach = {0}
        for face, bit in enumerate(self.upper_bits, start=1):
            if mask >> bit & 1:
                reach = {min(self.cap, s + face * k) for s in reach for k in range(6)}
        return np.array(sorted(reach), dtype=np.intp)

    def state_of(self, card: Card) -> tuple[int, int, int]:
        """The turn-start state ``(mask, flag, upper)`` of ``card``."""
        rs = self.ruleset
        mask = 0
        for i, box in enumerate(rs.boxes):
            if box in card.boxes:
                mask |= 1 << i
        flag = 0
        if self.flag_box is not None and card.boxes.get(rs.boxes[self.flag_box]) == 50:
            flag = 1
        upper = 0
        if self.cap:
            upper = min(self.cap, sum(card.boxes.get(b, 0) for b in rs.upper_boxes))
        return mask, flag, upper

    def options(self, card: Card, dice: tuple[int, ...], roll: int = 3) -> dict[str, int]:
        """Legal boxes -> points for ``dice`` on ``card`` under this variant's rules.

        :func:`table.rules.score_options` for every real rule; for Yahtzee's
        ``none`` variant, every open box at its normal points (no joker).
        """
        if self.ruleset.has_yahtzee_bonus and not self.has_bonus:
            rs = self.ruleset
            return {b: rs.score_box(tuple(dice), b, card.boxes, roll) for b in rs.boxes if b not in card.boxes}
        return score_options(self.ruleset, dice, card, roll=roll, joker=self.joker_variant)

    def after(self, card: Card, dice: tuple[int, ...], box: str, roll: int = 3) -> Card:
        """The card after scoring ``dice`` in ``box`` (which must be legal, see :meth:`options`)."""
        if self.ruleset.has_yahtzee_bonus and not self.has_bonus:
            pts = self.options(card, dice, roll)[box]
            boxes = dict(card.boxes)
            boxes[box] = pts
            return Card({b: boxes[b] for b in self.ruleset.boxes if b in boxes})
        return place(self.ruleset, card, dice, box, roll=roll, joker=self.joker_variant)

    def bonus_for(self, card: Card, dice: tuple[int, ...]) -> int:
        """Yahtzee bonus points ``dice`` earn on ``card`` (0 in variant ``none``)."""
        return yahtzee_bonus_for(self.ruleset, dice, card) if self.has_bonus else 0

    def banked(self, card: Card) -> int:
        """Points already on ``card`` that the value table does not count.

        Every box plus the Yahtzee bonuses earned; the upper bonus is left out
        because the value table pays it at the end of the game.
        """
        bonus = self.bonus * card.yahtzee_bonuses if self.has_bonus else 0
        return sum(card.boxes.values()) + bonus

    @cached_property
    def fingerprint(self) -> str:
        """SHA-256 of the score tables (normal and joker): changes when the rules do."""
        h = hashlib.sha256()
        h.update(f"{self.ruleset.id}/{self.variant}/{SPEC_VERSION}".encode())
        h.update(np.ascontiguousarray(self.scores).tobytes())
        if self.has_bonus:
            # A sample of joker situations keeps loading fast; all 24k are used to build.
            card = self.card_for_mask(1 << (self.flag_box or 0), flag=1)
            for f in FACES:
                h.update(repr(score_options(self.ruleset, (f,) * 5, card, joker=self.variant)).encode())
        return h.hexdigest()


@functools.cache
def _model(cls: type[Model], ruleset: Ruleset, variant: str) -> Model:
    return cls(ruleset, variant)


def all_models() -> list[Model]:
    """One model per (ruleset, variant), in :data:`table.rules.RULESET_IDS` order."""
    return [Model.of(r, v) for r in RULESET_IDS for v in variants_for(r)]
