"""Rendered stress sets (issue 7 item 5): per-condition accuracy floors and silent-error limits.

Each condition of :data:`vision.render.CONDITIONS` (plus ``random``) is a set of
:data:`N_IMAGES` images of five dice (seed :data:`SEED`; the first images of
``python benchmarks/stress_sets.py --seed 0``), read by the real reader and
scored by :mod:`vision.lab.stress`. Re-measure and update :data:`FLOORS` whenever the
face reader or the reader's thresholds change:
``python benchmarks/stress_sets.py --n 6 --floors`` prints a new dict.
"""

from __future__ import annotations

import functools

import pytest

from vision.lab.stress import StressCounts, run_stress
from vision.render import CONDITIONS

pytestmark = pytest.mark.slow  # about 30 s: 21 sets of 6 renders and reads

N_IMAGES = 6
SEED = 0

#: The aim for silent errors: at most this many in a set of ~30 dice (about 3 %).
SILENT_TARGET = 1

#: condition: (floor of per-die accuracy over readable dice, most silent errors in
#: the set). Measured 2026-12-01 15:30 UTC with the shipped face reader v8 (v7's
#: command plus --streak-prob 0.25), pip finder v3 (blobs and peaks), VALUE_THRESHOLD
#: 0.75 and the detector's containment rule (``python benchmarks/stress_sets.py --n 6
#: --floors``), as "right/readable dice; silent". Floors are the measured
#: accuracy less about 0.1 (sets are small).
FLOORS: dict[str, tuple[float, int]] = {
    "plain": (0.90, 1),  # 30/30; 0
    "dark_dice": (0.90, 1),  # 30/30; 0
    "translucent": (0.90, 1),  # 30/30; 0
    "marbled": (0.66, 1),  # 23/30 (6 unknown, 1 missed); 0 (v7: 19/30; v6: 18/30; v5: 17/30, 2 silent)
    "coloured_pips": (0.86, 1),  # 29/30 (0 unknown, 1 missed); 0
    "rounded": (0.90, 1),  # 30/30; 0
    "felt": (0.90, 1),  # 30/30; 0
    "wood": (0.86, 1),  # 29/30 (0 unknown, 1 missed); 0
    "paper": (0.90, 1),  # 30/30; 0
    "cardboard": (0.90, 1),  # 30/30; 0
    "black_cloth": (0.90, 1),  # 30/30; 0
    "white_card": (0.90, 1),  # 30/30; 0
    "tray": (0.90, 1),  # 30/30; 0
    "glare": (0.83, 1),  # 28/30 (2 unknown, 0 missed); 0 (v7: 27/30; 1)
    "perspective": (0.86, 1),  # 27/28 (1 unknown, 0 missed); 0
    "blur": (0.90, 1),  # 30/30; 0
    "noise": (0.90, 1),  # 30/30; 0
    "jpeg": (0.86, 1),  # 29/30 (1 unknown, 0 missed); 0
    "touching": (0.90, 1),  # 30/30; 0
    # 22/24 (2 flat dice unknown; 21/24 while vision.reader_stacked took a touching neighbour's body for a die's
    # own, before 2026-12-03 evening); 0 (24/24 and 2 of 6 leaning dice given a value before the top-face rule)
    "leaning": (0.85, 0),
    "border": (0.90, 1),  # 24/24; 0
    # clutter: 30/30; 0 (1 phantom: a coin left unknown; before "not a face" counted in the second look's
    # agreement, that coin was read as a 1)
    "clutter": (0.90, 1),
    "random": (0.90, 1),  # 28/29 (0 unknown, 1 missed); 0 (29/29 before translucent dice showed side-face pips)
}

SETS = [*CONDITIONS, "random"]


@functools.cache
def _result(condition: str) -> StressCounts:
    return run_stress(None if condition == "random" else condition, N_IMAGES, seed=SEED)


def test_every_condition_has_a_floor():
    assert set(FLOORS) == set(SETS)


@pytest.mark.parametrize("condition", SETS)
def test_accuracy_floor(condition):
    r = _result(condition)
    assert r.dice >= 4 * N_IMAGES - 2  # the set really holds readable dice
    floor = FLOORS[condition][0]
    assert r.accuracy >= floor, (
        f"{condition}: {r.right}/{r.dice} right ({100 * r.accuracy:.1f}%), floor {100 * floor:.0f}%; "
        f"wrong {r.wrong}, unknown {r.unknown}, missed {r.missed}"
    )


@pytest.mark.parametrize("condition", SETS)
def test_silent_errors_stay_low(condition):
    r = _result(condition)
    assert r.silent <= FLOORS[condition][1], (
        f"{condition}: {r.silent} silent errors (wrong {r.wrong}, unreadable dice given a value "
        f"{r.unreadable_valued}, extra dice with a value {r.extra_valued}); limit {FLOORS[condition][1]}"
    )


def test_cut_dice_are_never_given_a_wrong_value():
    r = _result("border")
    assert r.unreadable >= N_IMAGES - 1 and r.unreadable_valued == 0
