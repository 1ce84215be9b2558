"""Shared fixtures: a real Mosquitto broker on a free loopback port, and the same broker restarted keeping
sessions (``persistent``), with logins (``locked_broker``) or with TLS (``tls_broker``); tests/_mqtt.py has the
clients and waits the café tests share.

CI installs Mosquitto from apt (``.ci/run``); where it is absent the tests that
need it skip with the one line that says how to get it.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
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


@pytest.fixture
def broker_dir() -> Iterator[Path]:
    """A folder the broker can use: mosquitto started as root drops to its own user, which cannot enter pytest's."""
    keep = Path(tempfile.mkdtemp(prefix="dicetable-broker-"))
    keep.chmod(0o777)
    yield keep
    shutil.rmtree(keep, ignore_errors=True)


@pytest.fixture
def persistent(mosquitto: Broker, broker_dir: Path) -> Iterator[Broker]:
    """The fixture's broker keeping sessions, queued QoS 1 messages and retained ones across its restarts
    (``persistence true``, as a café's broker should run)."""
    from tests._mqtt import restart

    restart(mosquitto, f"allow_anonymous true\npersistence true\npersistence_location {broker_dir}/\n")
    yield mosquitto
    mosquitto.stop()


@pytest.fixture
def locked_broker(mosquitto: Broker, broker_dir: Path) -> Broker:
    """The fixture's broker, restarted with logins required: only ``tests._mqtt.LOGIN``, no anonymous login."""
    if shutil.which("mosquitto_passwd") is None and not Path("/usr/bin/mosquitto_passwd").exists():
        pytest.skip("mosquitto_passwd is not installed: `sudo apt install mosquitto`")
    from tests._mqtt import lock

    lock(mosquitto, broker_dir)
    return mosquitto


@pytest.fixture
def tls_broker(mosquitto: Broker, broker_dir: Path) -> Iterator[tuple[Broker, Path]]:
    """``(broker, folder)``: the fixture's broker restarted with TLS only; its certificate (for 127.0.0.1) is
    signed by ``folder/ca.pem``; ``folder/other-ca.pem`` is a CA that signed nothing."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed: `sudo apt install openssl`")
    from tests._mqtt import make_ca, serve_tls

    broker_dir.chmod(0o755)
    make_ca(broker_dir, "other-ca")
    serve_tls(mosquitto, broker_dir)
    yield mosquitto, broker_dir
    mosquitto.stop()
