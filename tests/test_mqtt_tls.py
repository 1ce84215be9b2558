"""mqtts:// with the café's own CA (real Mosquitto with a TLS listener, certificates made by openssl)."""

from __future__ import annotations

import shutil

import pytest

from table.cafe.publisher import Publisher
from table.cafe.settings import MqttSettings
from table.errors import UsageError
from table.store import open_store
from tests._mqtt import wait_for

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")


def test_tls_with_the_cafes_ca_and_a_wrong_ca_said(tls_broker, tmp_path):
    broker, certs = tls_broker
    db = tmp_path / "g.sqlite3"
    open_store(db).close()
    good = MqttSettings("127.0.0.1", broker.port, "t8", tls=True, ca=certs / "ca.pem")
    with Publisher(good, db) as pub:
        wait_for(lambda: pub.sharing[0])
        assert pub.sharing[1] == f"scores shared on mqtts://127.0.0.1:{broker.port} as table t8"
    wrong = MqttSettings("127.0.0.1", broker.port, "t8", tls=True, ca=certs / "other-ca.pem")
    with Publisher(wrong, db) as pub:
        wait_for(lambda: pub.sharing[1].startswith("scores not shared: TLS error"))
        assert "CERTIFICATE_VERIFY_FAILED" in pub.sharing[1]
    plain = MqttSettings("127.0.0.1", broker.port, "t8")  # mqtt:// to a TLS port: the broker drops it
    with Publisher(plain, db) as pub:
        wait_for(lambda: pub.sharing[1] in ("scores not shared: connection dropped", "scores not shared: broker down"))
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
        wait_for(lambda: "TLS" in pub.sharing[1] or "network error" in pub.sharing[1])
        assert pub.sharing[1] == "scores not shared: TLS error: the broker does not speak TLS on this port?"
    with LeaderboardStore(":memory:") as store:
        opts = BrokerOptions("127.0.0.1", mosquitto.port, tls=True)
        with Subscriber(store, opts, client_id="lb-tls") as sub:
            wait_for(lambda: "TLS" in sub.broker or "cannot reach" in sub.broker)
            assert sub.broker.startswith("broker: TLS error: the broker does not speak TLS on this port?"), sub.broker
