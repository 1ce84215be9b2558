"""The parts ``dicetable play`` opens before the table starts: the camera and the GPIO buttons."""

from __future__ import annotations

import sys
import threading
import warnings
from typing import TYPE_CHECKING, Any

from table.commands._play_options import led_state

if TYPE_CHECKING:
    from table.inputs.pins import PinMap


def _open_camera(spec: str, profile: Any) -> Any:
    """Open the camera once before the table starts; None when a live camera is not there yet.

    A recording (video file, image folder or glob) that cannot be opened never
    will be: its :class:`~vision.sources.SourceError` is raised (exit status 2,
    as ``dicetable watch``).  A live camera (Pi camera, webcam index, stream URL)
    may come back: one line on stderr says so, and the table keeps trying; so does
    one whose open hangs for :data:`~table.app.camera.OPEN_S` s (it is left to the camera thread).
    """
    from table.app.camera import OPEN_S, RETRY_MAX_S, RETRY_S, camera_retries
    from table.app.camera_guard import open_camera
    from vision.sources import SourceError, open_source

    def opened() -> Any:
        return open_source(spec, **profile.camera.source_options())

    try:
        return open_camera(opened, OPEN_S, threading.Event()) if camera_retries(spec) else opened()
    except SourceError as exc:
        if not camera_retries(spec):
            raise
        print(
            f"dicetable: cannot open the camera: {exc}; the table keeps trying (after {RETRY_S:g} s, then less "
            f"often: every {RETRY_MAX_S:g} s at most); the page says 'Camera lost' until it opens",
            file=sys.stderr,
        )
        return None


def _buttons(app: Any, pin_map: PinMap) -> Any:
    """The GPIO buttons of `pin_map`, or None (with a line saying why) where there are none."""
    from table.errors import DicetableError
    from table.inputs import ButtonPanel

    # gpiozero warns once per pin library it falls back from (four pairs of lines off a Pi): recorded, and shown
    # only when the buttons work (on a Pi, a fallback names a missing library); else our one line says why
    with warnings.catch_warnings(record=True) as fallbacks:
        warnings.simplefilter("always")
        try:
            panel = ButtonPanel(
                pin_map,
                on_command=lambda c: app.press(c, "button"),
                on_short_undo=lambda: app.say("Hold UNDO down for a second to undo."),
            )
        except DicetableError as exc:
            from table.doctor.check import board_model
            from table.doctor.gpio import gpio_problem

            line = gpio_problem(exc, board_model()).screen_line()
            print(f"dicetable: no GPIO buttons: {line}", file=sys.stderr)
            app.trouble("buttons", line)
            return None
    for w in fallbacks:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    app.subscribe(lambda seq, snap: panel.set_holds(*led_state(snap)))
    return panel
