"""Dice values and the patterns the rulesets test for.

Dice are five ints in 1..6; order never matters for scoring.  Sources:
``shared/specs/rulesets.md`` section 1 (terms and notation).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from table.rules.errors import InvalidDiceError

#: Five face values, each 1..6 (order does not matter for scoring).
Dice = tuple[int, ...]
#: A face value, 1..6.
Face = int

N_DICE = 5
FACES = (1, 2, 3, 4, 5, 6)

_NUMBER_WORDS = {
    0: "no",
    1: "one",
    2: "two",
    3: "three",
    4: "four",
    5: "five",
    6: "six",
    7: "seven",
    8: "eight",
    9: "nine",
    10: "ten",
}


def _count_words(n: int) -> str:
    return f"{_NUMBER_WORDS.get(n, str(n))} {'die' if n == 1 else 'dice'}"


def check_dice(values: Iterable[object]) -> Dice:
    """Validate a sequence of five faces and return it as a tuple.

    Parameters
    ----------
    values : iterable of int
        The face values, in any order.

    Returns
    -------
    dice : tuple of int, length 5
        The same values, in the given order.

    Raises
    ------
    InvalidDiceError
        If there are not exactly five values, or one is not an int in 1..6
        (bools are refused).
    """
    try:
        items = list(values)
    except TypeError:
        raise InvalidDiceError(f"dice must be a list of five faces 1-6, got {values!r}") from None
    for value in items:
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidDiceError(f"die {value!r} is not a face value; give five whole numbers 1-6, e.g. 6,6,6,6,6")
    if len(items) != N_DICE:
        raise InvalidDiceError(f"got {_count_words(len(items))} {items}, need exactly five dice (faces 1-6)")
    for value in items:
        if not 1 <= value <= 6:  # type: ignore[operator]
            raise InvalidDiceError(f"face {value} is impossible on a d6; every die shows 1-6 (got {items})")
    return tuple(items)  # type: ignore[arg-type]


def parse_dice(text: str) -> Dice:
    """Parse dice written as ``"6,6,6,6,6"``, ``"6 6 6 6 6"`` or ``"66666"``.

    Parameters
    ----------
    text : str
        Five faces separated by commas and/or spaces, or five digits run
        together.

    Returns
    -------
    dice : tuple of int, length 5
        The faces in the order written.

    Raises
    ------
    InvalidDiceError
        If the text is not five faces 1-6 (e.g. ``"0,1,2,3,4"`` or seven dice).

    Examples
    --------
    >>> parse_dice("4 4 2 3 5")
    (4, 4, 2, 3, 5)
    >>> parse_dice("66666")
    (6, 6, 6, 6, 6)
    """
    if not isinstance(text, str):
        raise InvalidDiceError(f"dice must be text like '6,6,6,6,6', got {text!r}")
    stripped = text.strip()
    if not stripped:
        raise InvalidDiceError("no dice given; write five faces 1-6, e.g. 6,6,6,6,6")
    if re.fullmatch(r"\d+", stripped):
        parts = list(stripped)
    else:
        parts = [p for p in re.split(r"[\s,;]+", stripped) if p]
    values: list[int] = []
    for part in parts:
        if not re.fullmatch(r"[+-]?\d+", part):
            raise InvalidDiceError(
                f"cannot read {part!r} in dice {text!r} as a face; write five faces 1-6, e.g. 6,6,6,6,6"
            )
        values.append(int(part))
    return check_dice(values)


def format_dice(dice: Sequence[int]) -> str:
    """Return dice as the compact text form, e.g. ``"44235"`` (round-trips with :func:`parse_dice`)."""
    return "".join(str(d) for d in dice)


def counts(dice: Dice) -> tuple[int, ...]:
    """Return ``count(f)`` for f in 1..6 as a tuple of 6 ints (index 0 is face 1)."""
    return tuple(dice.count(f) for f in FACES)


def has_n_of_a_kind(dice: Dice, n: int) -> bool:
    """True if some face shows on at least ``n`` dice."""
    return max(counts(dice)) >= n


def face_with_at_least(dice: Dice, n: int) -> Face | None:
    """The highest face shown on at least ``n`` dice, or None."""
    found = [f for f in FACES if dice.count(f) >= n]
    return max(found) if found else None


def is_strict_full_house(dice: Dice) -> bool:
    """True if the counts are exactly {3, 2}: three of one face, two of another."""
    return sorted(c for c in counts(dice) if c) == [2, 3]


def is_five_of_a_kind(dice: Dice) -> bool:
    """True if all five dice show one face."""
    return len(set(dice)) == 1


def has_run(dice: Dice, length: int) -> bool:
    """True if ``length`` consecutive faces are all present (duplicates allowed)."""
    present = set(dice)
    return any(all(f in present for f in range(start, start + length)) for start in range(1, 8 - length))


def is_exactly(dice: Dice, faces: Iterable[int]) -> bool:
    """True if the dice are exactly the given five faces, in any order."""
    return sorted(dice) == sorted(faces)
