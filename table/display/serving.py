"""uvicorn serving a page's app in a thread, on a socket bound beforehand: the table's page and the leaderboard's.

The socket comes from :func:`table.display.listening.bind_listener` (so a bad ``--listen`` or
``--port`` is told before anything else starts); the server runs behind
:class:`~table.display.connections.ConnectionLimits`. Imports no FastAPI, numpy or OpenCV.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any, Self

from table.display.connections import ConnectionLimits, server_config

#: Seconds :meth:`ThreadedServer.start` waits for uvicorn to accept connections (it takes ~0.1 s).
START_WAIT_S = 10.0


class ThreadedServer:
    """uvicorn serving `app` on `sock` in a daemon thread named `name`; a context manager.

    Parameters
    ----------
    app : ASGI app
    sock : socket.socket
        Bound, not listening yet (:func:`~table.display.listening.bind_listener`); closed by :meth:`close`.
    host : str
        The address `sock` is bound to, for :attr:`url`.
    name : str
        The thread's name.
    """

    def __init__(self, app: Any, sock: socket.socket, host: str, name: str) -> None:
        import uvicorn

        self.app, self.host = app, host
        self._sock = sock
        self.port = sock.getsockname()[1]
        self.limits = ConnectionLimits()
        self.server = uvicorn.Server(server_config(app, self.limits))
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, name=name, daemon=True)

    @property
    def url(self) -> str:
        """The page's address (``http://127.0.0.1:PORT/`` when listening on every address)."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host
        return f"http://{host}:{self.port}/"

    def start(self) -> Self:
        """Serve in the thread; return once it accepts connections (or it stopped, or after :data:`START_WAIT_S`)."""
        self._thread.start()
        deadline = time.monotonic() + START_WAIT_S
        while not self.server.started and time.monotonic() < deadline and self._thread.is_alive():
            time.sleep(0.01)
        return self

    def close(self) -> None:
        """Stop serving and close the socket."""
        self.server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self._sock.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
