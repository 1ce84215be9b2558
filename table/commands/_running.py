"""How a long-running command (``play``, ``leaderboard``) waits to be stopped: Ctrl-C, SIGTERM or ``--duration``."""

from __future__ import annotations

import signal
import threading
import time

#: Seconds between looks at the clock for ``--duration``.
POLL_S = 0.2


def run_until_stopped(duration: float | None) -> None:
    """Return on Ctrl-C, on SIGTERM (how systemd stops a service) or after `duration` seconds (None: never).

    SIGTERM is caught only when called on the main thread (``signal.signal`` works only there; a
    command run on another thread, as some tests do, is stopped by `duration`).
    """
    stop = threading.Event()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *a: stop.set())
    t0 = time.monotonic()
    try:
        while not stop.wait(POLL_S):
            if duration is not None and time.monotonic() - t0 >= duration:
                break
    except KeyboardInterrupt:
        pass
