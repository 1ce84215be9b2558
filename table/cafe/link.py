"""Tie a :class:`~table.cafe.publisher.Publisher` to a running :class:`~table.app.TableApp`.

The app's listener (on its worker thread) hands the publisher each new game state: a
reference swap, nothing more. The publisher's "scores (not) shared" line goes back to the app
through :meth:`TableApp.submit`, so the page's snapshot carries it as ``sharing``
(``{"ok": bool, "text": str}``; None when the table shares nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from table.cafe.publisher import Publisher
from table.cafe.settings import MqttSettings


def share(app: Any, settings: MqttSettings, say: Callable[[str], None] | None = None) -> Publisher:
    """Start publishing `app` (started) to the broker of `settings`; return the publisher (stop it before the app).

    `say` gets one line each time sharing starts or stops working (``dicetable play`` prints it).
    Raises :class:`~table.errors.UsageError` for a CA file that is not a certificate.
    """

    def on_sharing(ok: bool, text: str) -> None:  # the publisher's thread
        app.submit(setattr, app, "sharing", {"ok": ok, "text": text})
        if say is not None:
            say(text)

    publisher = Publisher(settings, app.db_path, on_sharing=on_sharing)
    last: list[Any] = [object(), object()]

    def listener(seq: int, snap: dict[str, Any]) -> None:  # the worker: never waits
        session = app.session
        game, state = (None, None) if session is None else (session.game_id, session.state)
        if game != last[0] or state is not last[1]:
            last[0], last[1] = game, state
            publisher.notify(game, state)

    app.submit(setattr, app, "sharing", {"ok": False, "text": publisher.sharing[1]}).result(timeout=10)
    app.subscribe(listener)
    publisher.start()
    app.submit(lambda: None)  # a snapshot now: the publisher gets the current state
    return publisher
