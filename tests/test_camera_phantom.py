"""No reading without a throw: dice lying in the tray when the camera (re)opens are not a roll.

After a start, a resume or a camera reconnect the watcher's first verdict comes from dice that were
already lying there (a ``dice_read`` event landed 2.4 s after start). They count only once the camera
has seen motion, or when the player confirms them with ROLL/CONFIRM.
"""

from __future__ import annotations

import threading

import pytest

from table.app import TableApp
from table.app.camera import CameraLoop
from table.display.snapshot import Setup
from vision.watch_events import EventKind, RollEvent, TrayDie

TIMEOUT = 30.0


def settled(values):
    dice = tuple(TrayDie(v, (20.0 + 25 * i, 40.0), (0, 0, 10, 10), 0.99) for i, v in enumerate(values))
    return RollEvent(EventKind.SETTLED, 10, 1.0, dice=dice, votes=3)


@pytest.fixture
def app(tmp_path):
    a = TableApp(tmp_path / "g.sqlite3", setup=Setup("yacht", "forced", ["Ann", "Bo"]), autostart=True).start()
    yield a
    a.close()


def test_dice_lying_when_the_camera_opens_wait_for_a_confirm(app):
    app.camera_update(status="opened")
    app.roll_event(settled((6, 5, 4, 3, 2))).result(timeout=5)
    assert app.state.turn.roll == 0 and app.pending is not None
    assert "unthrown" in {w["kind"] for w in app.snapshot["warnings"]}
    app.press("roll").result(timeout=5)  # the player confirms them
    assert app.state.turn.roll == 1 and app.state.turn.dice == (6, 5, 4, 3, 2)
    assert "unthrown" not in {w["kind"] for w in app.snapshot["warnings"]}


def test_a_throw_seen_after_the_camera_opens_is_read(app):
    app.camera_update(status="opened")
    app.roll_event(settled((6, 5, 4, 3, 2)))
    app.roll_event(RollEvent(EventKind.MOVING, 11, 1.1))
    app.roll_event(settled((1, 1, 2, 2, 3))).result(timeout=5)
    assert app.state.turn.roll == 1 and sorted(app.state.turn.dice) == [1, 1, 2, 2, 3] and app.pending is None
    assert "unthrown" not in {w["kind"] for w in app.snapshot["warnings"]}


def test_a_reconnect_mid_turn_does_not_read_the_lying_dice_again(app):
    app.camera_update(status="opened")
    app.roll_event(RollEvent(EventKind.MOVING, 1, 0.1))
    app.roll_event(settled((6, 5, 4, 3, 2))).result(timeout=5)
    assert app.state.turn.roll == 1
    app.camera_update(status="opened")  # the camera came back: the same dice lie there
    app.roll_event(settled((6, 5, 4, 3, 2))).result(timeout=5)
    assert app.state.turn.roll == 1 and app.pending is None and not app.snapshot["warnings"]


def test_the_synthetic_tray_dice_lying_at_start_are_not_a_roll(tmp_path):
    """End to end: dice thrown before the camera loop starts lie still in front of it; none is read."""
    from calibration.profile import load_profile
    from table.commands.play import watcher_factory
    from table.demo.livetray import LiveTray

    profile = load_profile("default")
    tray = LiveTray(seed=5)
    tray.throw(())
    while tray.busy:  # the throw is over before the table starts: the dice lie in the tray
        tray.read()
    verdicts = threading.Event()
    app = TableApp(
        tmp_path / "g.sqlite3", setup=Setup("yacht", "forced", ["Ann", "Bo"]), autostart=True, tray=tray
    ).start()
    real = app._roll_event

    def seen(event, mono):
        real(event, mono)
        if event.kind.value in ("settled", "unreadable"):
            verdicts.set()

    app._roll_event = seen

    make = watcher_factory(profile, "truth")

    camera = CameraLoop(app, lambda: tray, make, speed=0).start()
    try:
        assert verdicts.wait(TIMEOUT)
        app.game_events().result(timeout=5)
        assert app.state.turn.roll == 0  # was 1: a dice_read 2.4 s after start
        read = threading.Event()
        app.subscribe(lambda seq, snap: read.set() if snap["game"] and snap["game"]["roll"] else None)
        app.press("roll").result(timeout=5)  # the synthetic tray throws: that throw is read
        assert read.wait(TIMEOUT) and app.state.turn.roll == 1
    finally:
        camera.close()
        app.close()
