"""Playing through store faults: a command whose write fails stays unapplied, the page says so, play goes on after.

The app's worker runs each submitted call through :meth:`StoreFaults.call`. When the game store
does not take a command's write (:class:`~table.store.StoreWriteError`: a full disk, a read-only
disk, an I/O error; or another :class:`~table.store.StoreError`, a damaged file say), nothing of
it was stored and the session did not fold it (:meth:`~table.app.session.GameSession.handle` swaps
in the new state only after the commit). The app's own state that the call changed first (the
screen, the selected box, a reading held back, the warnings, ...: :data:`UNDO_ATTRS`) is put back,
so the command is as if never given. The page shows a ``store`` warning with why and what to do,
the log says so once per fault, and while the fault lasts the worker tries a write every
:data:`RETRY_S` seconds (:meth:`~table.store.Store.probe`); each new command tries too. Once a
write goes through, the warning goes, the log says so and play goes on where it stopped; bot seats
re-arm when the warning comes and goes (:meth:`~table.app.bots.BotSeats.kick`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from table.store import StoreError, UnknownGameError

log = logging.getLogger(__name__)

#: Seconds between the worker's tries of a store that failed a write (a 4 KiB test write each).
RETRY_S = 5.0
#: Warning kind of a store fault in the page's snapshot.
KIND = "store"
#: The app's attributes a call may change before its write fails: put back when it fails.
UNDO_ATTRS = (
    "screens",
    "session",
    "selected",
    "pending",
    "warnings",
    "message",
    "resumed",
    "slot_mm",
    "slot_script",
    "camera_status",
    "_moving_since",
    "verdicts",
    "_verdicts_at_throw",
    "_stamps",
    "analysis",
    "analysis_status",
    "_analysis_key",
)


def _copied(value: Any) -> Any:
    """A copy of a dict or list the call may change in place; anything else as it is."""
    return dict(value) if isinstance(value, dict) else list(value) if isinstance(value, list) else value


class StoreFaults:
    """The store's write faults of :class:`~table.app.core.TableApp`, seen and cleared on its worker thread.

    Attributes
    ----------
    fault : StoreError or None
        The last failed write's error while the fault lasts.
    failures : int
        Commands not applied because their write failed (all faults together).
    """

    def __init__(self, app: Any) -> None:
        self.app = app
        self.fault: StoreError | None = None
        self.failures = 0
        self._since = 0.0  # time.monotonic() when the fault began
        self._during = 0  # commands not applied in this fault
        self._next_try = 0.0  # time.monotonic() of the worker's next try while the fault lasts

    @property
    def retry_s(self) -> float | None:
        """How long the worker waits for work before it tries the store again (None: no fault, no tries)."""
        return None if self.fault is None else max(0.0, self._next_try - time.monotonic())

    def due(self) -> bool:
        """Whether a fault lasts and :data:`RETRY_S` passed since the last try: the worker tries between calls
        too (a busy worker, with camera views every 0.5 s, was never idle long enough and never tried)."""
        return self.fault is not None and time.monotonic() >= self._next_try

    def call(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        """Run ``fn(*args)``; if its write fails, put the app's state back, say so and re-raise.

        The error re-raised is the :class:`StoreError`.
        """
        app = self.app
        saved = {k: _copied(getattr(app, k)) for k in UNDO_ATTRS if hasattr(app, k)}
        commits = app._store.commits
        try:
            result = fn(*args)
        except StoreError as exc:
            if isinstance(exc, UnknownGameError):  # a read that named no game: not a fault of the store
                raise
            if app._store.commits == commits:  # nothing of the call was stored: undo what it changed first
                for k, v in saved.items():
                    setattr(app, k, v)
            self._failed(exc)
            raise
        if self.fault is not None and app._store.commits != commits:
            self._cleared(by_command=True)
        return result

    def retry(self) -> bool:
        """Try a write while a fault lasts (worker thread); True when it went through and the fault is cleared."""
        if self.fault is None:
            return False
        self._next_try = time.monotonic() + RETRY_S
        try:
            self.app._store.probe()
        except StoreError as exc:
            log.debug("game store still cannot be written: %s", exc)
            return False
        self._cleared(by_command=False)
        return True

    def _failed(self, exc: StoreError) -> None:
        app = self.app
        why = getattr(exc, "why", "") or str(exc)
        todo = getattr(exc, "todo", "")
        todo = f" {todo[:1].upper()}{todo[1:]}." if todo else ""
        app.warnings[KIND] = (
            f"Not saved: {why}.{todo} The table tries again every {RETRY_S:g} s; "
            "the game goes on from here once it can be saved."
        )
        app.message = f"Not saved: {why}."
        self.failures += 1
        if self.fault is None:
            self._since, self._during = time.monotonic(), 0
            self._next_try = self._since + RETRY_S
            log.warning(
                "the game store %s cannot be written: %s; commands are not applied until it can "
                "(trying again every %g s)",
                app.db_path,
                exc,
                RETRY_S,
            )
        else:
            log.debug("not applied, the game store still cannot be written: %s", exc)
        self._during += 1
        self.fault = exc

    def _cleared(self, *, by_command: bool) -> None:
        app = self.app
        app.warnings.pop(KIND, None)
        if not by_command:
            app.message = "The game store can be written again: play on."
        log.warning(
            "the game store %s can be written again after %.0f s; play goes on (%d commands were not applied)",
            app.db_path,
            time.monotonic() - self._since,
            self._during,
        )
        self.fault = None
