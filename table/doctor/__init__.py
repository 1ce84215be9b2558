"""``dicetable doctor``'s checks: one small module per part of the table.

Each check is a function returning a :class:`Check`.

==================  ==========================================================================
:mod:`.versions`    Python, numpy, OpenCV, onnxruntime; picamera2 and the numpy clash
:mod:`.camera`      the camera opens, gives frames (size, rate), exposure locked
:mod:`.profile`     the calibration profile; its tray markers seen in a frame now
:mod:`.gpio`        gpiozero's pin factory; every pin of ``pins.toml`` free
:mod:`.models`      the three networks give their recorded answers on fixed probes
:mod:`.store`       the game store opens, integrity ok, writable, room on its disk
:mod:`.pi`          power and heat (``vcgencmd``), clock synchronised (``timedatectl``)
:mod:`.page`        the page answers on its address; the kiosk starts at login
:mod:`.run`         all of them in order (:func:`~table.doctor.run.run_checks`)
==================  ==========================================================================

A check never raises: what it finds is ``ok``, ``warning``, ``fail`` or ``skipped`` (a part that
is not there, e.g. ``vcgencmd`` off a Pi), with what to do. The camera's, the buttons' and the
store's ``fail`` lines are also what ``dicetable play`` shows on the table's screen
(:func:`~table.doctor.camera.camera_problem`, :func:`~table.doctor.gpio.gpio_problem`,
:func:`~table.doctor.store.store_problem`).
"""

from table.doctor.check import STATUSES, Check

__all__ = ["STATUSES", "Check"]
