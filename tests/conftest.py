"""Shared fixtures: a real Mosquitto broker on a free loopback port.

CI installs Mosquitto from apt (``.ci/run``); where it is absent the tests that
need it skip with the one line that says how to get it.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

#: Debian's package puts the broker in /usr/sbin, which is not on every user's PATH.
_MOSQUITTO = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin:/usr/local/sbin")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Broker:
    """A running Mosquitto: ``url`` is ``mqtt://127.0.0.1:PORT``; ``stop()``/``start()`` simulate an outage."""

    port: int
    conf: Path
    log: Path
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start (or restart) the broker on the same port; returns once it accepts connections."""
        assert self.proc is None, "broker already running"
        out = self.log.open("ab")
        self.proc = subprocess.Popen([str(_MOSQUITTO), "-c", str(self.conf)], stdout=out, stderr=out)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mosquitto exited: {self.log.read_text()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("mosquitto did not accept connections within 10 s")

    def stop(self) -> None:
        """Stop the broker (SIGTERM, then SIGKILL); retained messages are not persisted across this."""
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        self.proc = None


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Broker]:
    """A fresh Mosquitto on 127.0.0.1 and a free port, anonymous access, no persistence."""
    if _MOSQUITTO is None:
        pytest.skip("mosquitto is not installed: `sudo apt install mosquitto` (CI installs it in .ci/run)")
    port = _free_port()
    conf = tmp_path / "mosquitto.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
    broker = Broker(port=port, conf=conf, log=tmp_path / "mosquitto.log")
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()
