"""A still picture that no longer matches the empty tray (a bump, long shadows, something left) is said, not
an endless silent wait: after ``stuck_s`` seconds of frame time the watcher says what it looks like."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from table.app import TableApp
from table.display.snapshot import Setup
from vision.sources import _world as world
from vision.sources.synthetic import ScriptedRoll, SyntheticSource, TruthReader
from vision.watch import EventKind, RollWatcher


def _shadow(img):
    out = img.astype(np.float32)
    w = img.shape[1]
    out[:, w // 3 : w // 3 + 120] *= 0.45  # a long hard shadow across the tray (a low lamp)
    return out.clip(0, 255).astype(np.uint8)


def _left(img):
    out = img.copy()
    cv2.rectangle(out, (0, 150), (200, 300), (40, 160, 40), -1)  # a phone-sized thing at the tray's edge
    return out


def _bumped(img):
    moved = cv2.warpAffine(img, np.float32([[1, 0, 15], [0, 1, 0]]), img.shape[1::-1], borderMode=cv2.BORDER_REPLICATE)
    return _left(moved)


def _watch(change):
    """Events after a settled roll, once the still picture is changed by `change` for 10 s of frames."""
    src = SyntheticSource(
        seed=4, idle_frames=4, script=[ScriptedRoll(values=(1, 2, 3, 4, 5), tumble_frames=14, rest_frames=14)]
    )
    geo = src.geometry()
    reader = TruthReader(geo)
    watcher = RollWatcher(
        reader, geometry=geo, hold_area_mm=world.HOLD_AREA_MM, reference=src.render_state(0), expected_dice=5
    )
    frames = list(src)
    for f in frames:
        reader.see(f)
        watcher.update(f)
    n, still = len(frames), frames[-1].image
    changed = change(still)
    events = []
    for k in range(n, n + 300):
        events += watcher.update(changed, index=k, timestamp_s=k / 30.0)
    after = []
    for k in range(n + 300, n + 310):  # the picture back as it was
        after += watcher.update(still, index=k, timestamp_s=k / 30.0)
    return events, after


@pytest.mark.parametrize(
    "change, words",
    [
        (_shadow, "long shadows"),
        (_left, "something seems to be left in the tray"),
        (_bumped, "the camera seems to have moved"),
    ],
)
def test_a_still_picture_unlike_the_empty_tray_is_said(change, words):
    events, after = _watch(change)
    blocked = [e for e in events if e.kind == EventKind.BLOCKED]
    assert len(blocked) == 1 and words in blocked[0].problems[0] and "calibrate" in blocked[0].problems[0]
    assert blocked[0].timestamp_s - events[0].timestamp_s >= 8.0 - 0.1  # not before stuck_s of still frames
    assert [e.kind for e in after][:1] == [EventKind.MOVING]  # the change is said, which clears the warning


def test_the_page_says_it_and_clears_it(tmp_path):
    from vision.watch_events import RollEvent

    app = TableApp(tmp_path / "g.sqlite3", setup=Setup("yacht", "forced", ["Ann", "Bo"]), autostart=True).start()
    try:
        app.roll_event(RollEvent(EventKind.BLOCKED, 5, 9.0, problems=("long shadows in the tray look like a hand",)))
        app.game_events().result(timeout=5)
        warnings = {w["kind"]: w["text"] for w in app.snapshot["warnings"]}
        assert "long shadows" in warnings["blocked"]
        app.roll_event(RollEvent(EventKind.MOVING, 6, 9.5)).result(timeout=5)
        assert "blocked" not in {w["kind"] for w in app.snapshot["warnings"]}
    finally:
        app.close()
