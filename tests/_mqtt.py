"""What the café tests share (tests/test_mqtt*.py, test_leaderboard*.py, test_cafe*.py): polling, plain paho
clients standing in for a table or a board, and restarting the ``mosquitto`` fixture's broker (tests/conftest.py)
with another configuration. Waits poll a condition up to a deadline; nothing is timed.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import paho.mqtt.client as mqtt

from table.cafe import topics

#: The one login :func:`lock` sets up: user, password.
LOGIN = ("t4", "right")


def wait_for(cond, what: str = "the condition", timeout: float = 30.0):
    """Poll `cond` until it returns something true, and return that; AssertionError after `timeout` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"waited {timeout} s for {what}")


def get(url: str, method: str = "GET"):
    """``(status, JSON or text)`` of one request."""
    req = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            body, status = r.read(), r.status
    except urllib.error.HTTPError as err:
        body, status = err.read(), err.code
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body.decode()


def restart(broker, settings: str) -> None:
    """Restart `broker` on its port with `settings` (mosquitto.conf lines after its ``listener`` line)."""
    broker.stop()
    broker.conf.write_text(f"listener {broker.port} 127.0.0.1\n{settings}")
    broker.start()


def lock(broker, folder: Path) -> None:
    """Restart `broker` with logins required: only :data:`LOGIN` (its password file is written in `folder`)."""
    passwd = folder / "passwd"
    passwd.write_text("")
    subprocess.run(["mosquitto_passwd", "-b", str(passwd), *LOGIN], check=True, capture_output=True)
    passwd.chmod(0o644)
    restart(broker, f"allow_anonymous false\npassword_file {passwd}\npersistence false\n")


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_ca(folder: Path, name: str) -> Path:
    """A throw-away CA (EC P-256) in `folder`: ``NAME.pem`` and ``NAME.key``; returns the certificate's path."""
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    openssl("req", "-x509", *ec, "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2",
            "-subj", f"/CN={name}", cwd=folder)  # fmt: skip
    return folder / f"{name}.pem"


def serve_tls(broker, folder: Path) -> None:
    """Restart `broker` with TLS only: a certificate for 127.0.0.1 signed by a new ``folder/ca.pem``.

    `folder` must be readable by the broker's user (mosquitto started as root drops to its own).
    """
    make_ca(folder, "ca")
    (folder / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    openssl("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1", cwd=folder)
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "server.pem", "-days", "2", "-extfile", "san.ext", cwd=folder)  # fmt: skip
    for f in folder.iterdir():
        f.chmod(0o644)
    restart(
        broker,
        f"allow_anonymous true\npersistence false\ncafile {folder}/ca.pem\n"
        f"certfile {folder}/server.pem\nkeyfile {folder}/server.key\n",
    )


class Publisher:
    """A plain paho client standing in for a table: publishes at QoS 1 and waits for each PUBACK."""

    def __init__(self, port: int, client_id: str = "") -> None:
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id)
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()

    def send(self, topic: str, payload: bytes, retain: bool = False) -> None:
        self.client.publish(topic, payload, qos=1, retain=retain).wait_for_publish(10)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


class Subscriber:
    """A paho client collecting ``(topic, payload, retain)`` of ``dicetable/#`` (and more topics)."""

    def __init__(self, broker, name="test-sub", topics_=("dicetable/#",), clean=True, login=None):
        self.got: list[tuple[str, bytes, bool]] = []
        self.lock = threading.Lock()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=name, clean_session=clean)
        self.client.reconnect_delay_set(1, 1)
        self.topics = topics_
        self.client.on_connect = lambda c, u, f, rc, p: [c.subscribe(t, qos=1) for t in self.topics]
        self.client.on_message = self._message
        self.subscribed = threading.Event()
        self.client.on_subscribe = lambda *a: self.subscribed.set()
        if login:
            self.client.username_pw_set(*login)
        self.client.connect("127.0.0.1", broker.port, keepalive=5)
        self.client.loop_start()
        assert self.subscribed.wait(10)

    def _message(self, client, userdata, msg):
        with self.lock:
            self.got.append((msg.topic, bytes(msg.payload), bool(msg.retain)))

    def on(self, topic):
        with self.lock:
            return [(p, r) for t, p, r in self.got if t == topic]

    def events(self, table):
        return [json.loads(p) for p, _ in self.on(topics.events_topic(table))]

    def close(self):
        self.client.disconnect()
        self.client.loop_stop()
