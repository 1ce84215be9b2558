"""mqtts:// with the café's own CA (real Mosquitto with a TLS listener, certificates made by openssl)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from table.cafe.publisher import Publisher
from table.cafe.settings import MqttSettings
from table.errors import UsageError
from table.store import open_store

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _ca(folder: Path, name: str) -> None:
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        f"{name}.key",
        "-out",
        f"{name}.pem",
        "-days",
        "2",
        "-subj",
        f"/CN={name}",
        cwd=folder,
    )


@pytest.fixture
def tls_broker(mosquitto):
    """The fixture's broker, restarted with a TLS listener; its certificate (for 127.0.0.1) is signed by ``ca.pem``."""
    folder = Path(tempfile.mkdtemp(prefix="dicetable-tls-"))
    folder.chmod(0o755)  # mosquitto started as root drops to its own user
    _ca(folder, "ca")
    _ca(folder, "other-ca")
    (folder / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    _openssl(
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=127.0.0.1",
        cwd=folder,
    )
    _openssl(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "san.ext",
        cwd=folder,
    )
    for f in folder.iterdir():
        f.chmod(0o644)
    mosquitto.stop()
    mosquitto.conf.write_text(
        f"listener {mosquitto.port} 127.0.0.1\nallow_anonymous true\npersistence false\ncafile {folder}/ca.pem\n"
        f"certfile {folder}/server.pem\nkeyfile {folder}/server.key\n"
    )
    mosquitto.start()
    yield mosquitto, folder
    mosquitto.stop()
    shutil.rmtree(folder, ignore_errors=True)


def _wait(cond, timeout=15.0):
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.02)


def test_tls_with_the_cafes_ca_and_a_wrong_ca_said(tls_broker, tmp_path):
    broker, certs = tls_broker
    db = tmp_path / "g.sqlite3"
    open_store(db).close()
    good = MqttSettings("127.0.0.1", broker.port, "t8", tls=True, ca=certs / "ca.pem")
    with Publisher(good, db) as pub:
        _wait(lambda: pub.sharing[0])
        assert pub.sharing[1] == f"scores shared on mqtts://127.0.0.1:{broker.port} as table t8"
    wrong = MqttSettings("127.0.0.1", broker.port, "t8", tls=True, ca=certs / "other-ca.pem")
    with Publisher(wrong, db) as pub:
        _wait(lambda: pub.sharing[1].startswith("scores not shared: TLS error"))
        assert "CERTIFICATE_VERIFY_FAILED" in pub.sharing[1]
    plain = MqttSettings("127.0.0.1", broker.port, "t8")  # mqtt:// to a TLS port: the broker drops it
    with Publisher(plain, db) as pub:
        _wait(lambda: pub.sharing[1] in ("scores not shared: connection dropped", "scores not shared: broker down"))
    not_pem = tmp_path / "ca.pem"
    not_pem.write_text("not a certificate\n")
    with pytest.raises(UsageError, match="is not a CA certificate"):
        Publisher(MqttSettings("127.0.0.1", broker.port, "t8", tls=True, ca=not_pem), db)


def test_mqtts_to_a_plain_broker_says_it_does_not_speak_tls(mosquitto, tmp_path):
    from table.leaderboard.broker import BrokerOptions
    from table.leaderboard.store import LeaderboardStore
    from table.leaderboard.subscriber import Subscriber

    db = tmp_path / "g.sqlite3"
    open_store(db).close()
    with Publisher(MqttSettings("127.0.0.1", mosquitto.port, "t8", tls=True), db) as pub:
        _wait(lambda: "TLS" in pub.sharing[1] or "network error" in pub.sharing[1])
        assert pub.sharing[1] == "scores not shared: TLS error: the broker does not speak TLS on this port?"
    with LeaderboardStore(":memory:") as store:
        opts = BrokerOptions("127.0.0.1", mosquitto.port, tls=True)
        with Subscriber(store, opts, client_id="lb-tls") as sub:
            _wait(lambda: "TLS" in sub.broker or "cannot reach" in sub.broker)
            assert sub.broker.startswith("broker: TLS error: the broker does not speak TLS on this port?"), sub.broker
