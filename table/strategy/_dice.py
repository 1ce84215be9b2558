"""Dice combinatorics shared by the solver and the advisor.

Every multiset of ``k`` dice (``k`` = 0..5) is a sorted tuple of faces and has
an index in its level.  Level 5 holds the 252 distinct rolls of five dice;
levels 0..5 together hold the 462 distinct *keepers* (the dice a player may
hold before a re-roll, holding all five meaning "roll nothing").

Arrays built here (all ``intp`` indexes or ``float64`` probabilities):

``CHILD[k]``  shape (n_k, 6)
    Index in level ``k + 1`` of keeper ``K + (f,)`` for f = 1..6, so the value
    of holding ``K`` before a roll is the mean over ``f`` of the value of
    holding ``K + (f,)`` (rolling the missing dice one at a time).
``PARENT[k]``  shape (n_k, 6), k >= 1
    Index in level ``k - 1`` of ``K`` minus one die, for each distinct face of
    ``K``, padded by repeating the first one; used for the running maximum over
    every sub-multiset of a roll.  Only the first ``N_PARENTS[k][j]`` rows have
    a real j-th parent.
``ROLL_PROB``  shape (252,)
    Probability of each level-5 multiset on a throw of five fair dice.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import numpy.typing as npt

FACES = (1, 2, 3, 4, 5, 6)
N_DICE = 5

#: LEVELS[k]: the sorted multisets of k dice, those with more distinct faces
#: first (then lexicographic), so that rows with a j-th distinct face form a prefix.
LEVELS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(sorted(itertools.combinations_with_replacement(FACES, k), key=lambda m: (-len(set(m)), m)))
    for k in range(N_DICE + 1)
)
#: INDEX[k]: multiset -> its index in LEVELS[k].
INDEX: tuple[dict[tuple[int, ...], int], ...] = tuple({m: i for i, m in enumerate(level)} for level in LEVELS)
#: The 252 distinct five-dice rolls, as sorted tuples.
ROLLS: tuple[tuple[int, ...], ...] = LEVELS[N_DICE]
N_ROLLS = len(ROLLS)

#: Row of each five-of-a-kind roll, for faces 1..6.
FIVE_OF_A_KIND_ROWS: npt.NDArray[np.intp] = np.array([INDEX[N_DICE][(f,) * N_DICE] for f in FACES], dtype=np.intp)


def _multiset_probability(m: tuple[int, ...]) -> float:
    n = len(m)
    ways = math.factorial(n)
    for f in FACES:
        ways //= math.factorial(m.count(f))
    return ways / 6**n


def _child() -> tuple[npt.NDArray[np.intp], ...]:
    out = []
    for k in range(N_DICE):
        table = np.empty((len(LEVELS[k]), 6), dtype=np.intp)
        for i, m in enumerate(LEVELS[k]):
            for j, f in enumerate(FACES):
                table[i, j] = INDEX[k + 1][tuple(sorted(m + (f,)))]
        out.append(table)
    return tuple(out)


def _parent() -> tuple[npt.NDArray[np.intp] | None, ...]:
    out: list[npt.NDArray[np.intp] | None] = [None]
    for k in range(1, N_DICE + 1):
        table = np.empty((len(LEVELS[k]), 6), dtype=np.intp)
        for i, m in enumerate(LEVELS[k]):
            parents = []
            for f in sorted(set(m)):
                rest = list(m)
                rest.remove(f)
                parents.append(INDEX[k - 1][tuple(rest)])
            parents += [parents[0]] * (6 - len(parents))
            table[i] = parents
        out.append(table)
    return tuple(out)


CHILD = _child()
PARENT = _parent()
#: N_PARENTS[k][j]: rows of level k with more than j distinct faces (a prefix).
N_PARENTS: tuple[tuple[int, ...], ...] = tuple(
    tuple(sum(1 for m in level if len(set(m)) > j) for j in range(6)) for level in LEVELS
)
ROLL_PROB: npt.NDArray[np.float64] = np.array([_multiset_probability(m) for m in ROLLS])


def roll_index(dice: tuple[int, ...] | list[int]) -> int:
    """Row of ``dice`` (five faces, any order) among :data:`ROLLS`."""
    return INDEX[N_DICE][tuple(sorted(dice))]


def sub_multisets(dice: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every distinct sub-multiset of ``dice`` (sorted tuples), from none to all five."""
    seen: set[tuple[int, ...]] = set()
    srt = tuple(sorted(dice))
    for mask in range(1 << len(srt)):
        seen.add(tuple(d for i, d in enumerate(srt) if mask >> i & 1))
    return sorted(seen, key=lambda m: (len(m), m))


def hold_mask(dice: tuple[int, ...] | list[int], keep: tuple[int, ...]) -> tuple[bool, ...]:
    """Which positions of ``dice`` to hold so the held faces are the multiset ``keep``.

    Holds the leftmost matching dice.  Raises ValueError if ``keep`` is not a
    sub-multiset of ``dice``.
    """
    wanted = list(keep)
    mask = []
    for d in dice:
        if d in wanted:
            wanted.remove(d)
            mask.append(True)
        else:
            mask.append(False)
    if wanted:
        raise ValueError(f"cannot hold {keep} from dice {tuple(dice)}")
    return tuple(mask)
