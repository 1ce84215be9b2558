"""The synthetic live tray: throws planned one at a time, memory per throw bounded, same throws per seed."""

from __future__ import annotations

import gc
import types
from dataclasses import replace

import numpy as np

from table.demo.livetray import _IDLE_FRAMES, HOLD_ANGLE, LiveTray
from vision.sources.roll_script import _plan


def _reachable(root: object) -> int:
    """Objects reachable from `root` (modules, classes and functions not followed)."""
    seen: set[int] = set()
    todo = [root]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, (types.ModuleType, type, types.FunctionType)):
            continue
        seen.add(id(obj))
        todo.extend(gc.get_referents(obj))
    return len(seen)


def _play(tray: LiveTray) -> list:
    """Truth of every frame of the throw just made."""
    out = []
    while tray.busy:
        out.append(tray.read().truth)
    return out


def test_the_trays_state_stays_bounded_as_throws_go_on():
    """The tray keeps only the last throw: what it holds after 80 throws is about what it held after 10
    (the old tray kept and re-planned every throw: about 8 times as much)."""
    tray = LiveTray(seed=2, tumble_frames=10, rest_frames=8)
    counts = {}
    for n in range(1, 81):
        tray.throw((0, 1) if n % 3 == 0 else ())
        tray.read()
        if n in (10, 80):
            counts[n] = _reachable(tray)
    assert tray.throws == 80
    assert counts[80] < 1.5 * counts[10], counts


def test_throws_one_at_a_time_are_those_of_the_whole_script():
    """Each throw's frames are the states the whole script's plan gives for it (same seed, same random
    stream), held dice laid at HOLD_ANGLE: a tray of N throws plays as before, throw for throw."""
    tray = LiveTray(seed=4)
    truths, rolls = [], []
    for n in range(12):
        tray.throw((0, 2) if n % 4 == 3 else (), values=(1, 2, 3, 4, 5) if n == 5 else None)
        rolls.append(tray._last)
        truths.append(_play(tray))
    states, plans = _plan(rolls, np.random.default_rng(4), _IDLE_FRAMES)
    assert [len(t) for t in truths] == [p.end_index - p.start_index for p in plans]
    for plan, got in zip(plans, truths):
        want = states[plan.start_index : plan.end_index]
        for truth, st in zip(got, want):
            assert truth.roll == plan.roll and truth.phase == st.phase
            square = [replace(d, angle=HOLD_ANGLE) if d.held else d for d in st.dice]
            assert [(d.value, d.centre_mm, d.held, d.angle_deg) for d in truth.dice] == [
                (d.value, (d.x, d.y), d.held, d.angle) for d in square
            ]
            assert truth.stop_index in (None, plan.stop_index)
