"""The end screen's downloads as the page's server gives them: each made once per game state, one at a time.

``/export/analysis.csv`` prices every decision against optimal play: seconds of Python, and the game's
events read through the game's worker thread. Made anew for each viewer, 20 phones asking at once held
the GIL and queued 20 store reads ahead of the players' presses (a press's round trip went from 2 ms to
97 ms). So :class:`ServedExports` keeps the last answer of each download for the game state it was made
from (the game and its number of events), and makes at most one download at a time, in a thread of its
own: viewers asking for the same state wait for that one answer, never on the game's worker.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from fastapi.responses import Response

from table.display.export import scorecards_csv, scorecards_png
from table.game.export import history_to_csv
from table.game.history import turns_of

#: Downloads: name -> (media type, Content-Disposition).
DOWNLOADS = {
    "scorecards.csv": ("text/csv", 'attachment; filename="scorecards.csv"'),
    "scorecards.png": ("image/png", 'inline; filename="scorecards.png"'),
    "analysis.csv": ("text/csv", 'attachment; filename="analysis.csv"'),
    "history.csv": ("text/csv", 'attachment; filename="history.csv"'),
}


class ServedExports:
    """Makes and keeps the downloads of `table` (a running :class:`~table.app.TableApp`).

    :meth:`answer` runs on a server thread (FastAPI's thread pool), never the event loop.
    """

    def __init__(self, table: Any) -> None:
        self.table = table
        self._lock = threading.Lock()  # one download made at a time
        self._kept: dict[str, tuple[Any, int, bytes]] = {}  # name -> (game state key, status, body)
        self.made = 0  # downloads made (not taken from :attr:`_kept`), for tests

    def _state_key(self) -> Any:
        """``(game id, events)`` of the game shown now, or None before any game."""
        session = self.table.session
        state = None if session is None else session.state
        return None if state is None else (session.game_id, state.events)

    def answer(self, name: str) -> Response:
        """The download `name` (a key of :data:`DOWNLOADS`) for the game shown now; 404 with the reason if none."""
        key = self._state_key()
        if key is None:
            return Response(status_code=404, content=b"no game yet")
        with self._lock:
            kept = self._kept.get(name)
            if kept is None or kept[0] != key:
                status, body = self._make(name)
                self.made += 1
                kept = self._kept[name] = (key, status, body)
        _, status, body = kept
        if status != 200:
            return Response(status_code=status, content=body)
        media_type, disposition = DOWNLOADS[name]
        return Response(content=body, media_type=media_type, headers={"Content-Disposition": disposition})

    def _make(self, name: str) -> tuple[int, bytes]:
        """``(HTTP status, body)`` of `name` made now."""
        if name == "analysis.csv":
            try:
                analysis = self.table.analysis_now()
            except (OSError, ValueError) as exc:  # no value table for this variant, a free-roll session
                return 404, f"no analysis: {exc}".encode()
            if analysis is None:
                return 404, b"no game yet"
            return 200, analysis.to_csv().encode("utf-8")
        if name == "history.csv":
            events = self.table.game_events().result(timeout=30)
            if not events:
                return 404, b"no game yet"
            return 200, history_to_csv(turns_of(events)).encode("utf-8")
        state = self.table.state
        if state is None:
            return 404, b"no game yet"
        make: Callable[[Any], bytes] = scorecards_csv if name == "scorecards.csv" else scorecards_png
        return 200, make(state)
