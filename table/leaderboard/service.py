"""The leaderboard service: its store, its MQTT subscriber and its web server, started and closed together.

The web server is uvicorn in a thread behind the table page's connection limits, as the table's
page (:class:`table.display.serving.ThreadedServer`); the page keeps serving what the store has
while the broker is away.

Example
-------
>>> with Leaderboard("board.sqlite3", BrokerOptions("127.0.0.1", 1883), port=0) as board:  # doctest: +SKIP
...     print(board.url)
"""

from __future__ import annotations

import hashlib
import socket
from pathlib import Path
from typing import Any

from table.display.listening import bind_listener
from table.display.serving import ThreadedServer
from table.leaderboard.broker import BrokerOptions
from table.leaderboard.server import create_app
from table.leaderboard.store import LeaderboardStore
from table.leaderboard.subscriber import Subscriber


def default_client_id(db: str | Path) -> str:
    """A client id that stays the same for this machine and store: its session outlives restarts."""
    digest = hashlib.sha1(str(Path(db).expanduser().resolve()).encode()).hexdigest()[:8]
    return f"dicetable-leaderboard-{socket.gethostname()[:20]}-{digest}"


class Leaderboard:
    """Store + subscriber + web server; a context manager.

    Parameters
    ----------
    db : str or Path
        The leaderboard's SQLite file (made if missing).
    broker : BrokerOptions
    host : str, optional
        Address the page listens on (``0.0.0.0``: the café's TV and phones on the LAN).
    port : int, optional
        TCP port (0: any free one; :attr:`port` tells which).
    client_id : str, optional
        The MQTT session's name (default :func:`default_client_id`).
    on_stored : callable, optional
        See :class:`~table.leaderboard.subscriber.Subscriber`.

    Raises
    ------
    LeaderboardStoreError, OSError, UsageError
        A store that cannot be used, an address that cannot be listened on, unreadable login files.
    """

    def __init__(
        self,
        db: str | Path,
        broker: BrokerOptions,
        *,
        host: str = "127.0.0.1",
        port: int = 8080,
        client_id: str | None = None,
        on_stored: Any = None,
    ) -> None:
        self._sock = bind_listener(host, port)  # first: a bad --listen makes no store file
        try:
            self.store = LeaderboardStore(db)
        except BaseException:
            self._sock.close()
            raise
        try:
            self.subscriber = Subscriber(
                self.store, broker, client_id=client_id or default_client_id(db), on_stored=on_stored
            )
        except BaseException:
            self.store.close()
            self._sock.close()
            raise
        self.app = create_app(self.store, self.subscriber)
        self.web = ThreadedServer(self.app, self._sock, host, "leaderboard-web")
        self.host, self.port = host, self.web.port

    @property
    def url(self) -> str:
        """The page's address (``http://127.0.0.1:PORT/`` when listening on every address)."""
        return self.web.url

    def start(self) -> Leaderboard:
        """Start the subscriber and the web server; return once the page accepts connections."""
        self.subscriber.start()
        self.web.start()
        return self

    def close(self) -> None:
        """Stop serving, disconnect (the broker keeps the session) and close the store."""
        self.web.close()
        self.subscriber.close()
        self.store.close()

    def __enter__(self) -> Leaderboard:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
