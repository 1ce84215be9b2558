"""Home Assistant MQTT discovery: one retained config per sensor of a table (docs/mqtt.md, "Home Assistant").

Four sensors per table (current player, last roll, leader, leader's score), all reading the
table's retained state topic with a value template, available while its status topic says
``online``, grouped under one device. Home Assistant announces ``online`` on
:data:`HA_STATUS_TOPIC` when it starts; the publisher sends the configs again then
(https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery).
"""

from __future__ import annotations

import json

from table.cafe import topics
from table.cafe.settings import MqttSettings

#: Home Assistant's birth/last-will topic.
HA_STATUS_TOPIC = "homeassistant/status"
#: Discovery prefix (Home Assistant's default).
PREFIX = "homeassistant"

#: object id -> (name, value template over the state payload, icon).
SENSORS = {
    "current_player": (
        "Current player",
        "{{ value_json.players[value_json.current].name if value_json.current is not none else 'none' }}",
        "mdi:account",
    ),
    "last_roll": (
        "Last roll",
        "{{ value_json.last_roll | join(' ') if value_json.last_roll else 'none' }}",
        "mdi:dice-5",
    ),
    "leader": ("Leader", "{{ value_json.leader if value_json.leader is not none else 'none' }}", "mdi:trophy"),
    "leader_score": (
        "Leader's score",
        "{{ value_json.leader_total if value_json.leader_total is not none else 'none' }}",
        "mdi:counter",
    ),
}


def node_id(table: str) -> str:
    """``dicetable_<table>``: the discovery node id (letters, digits, ``_`` and ``-`` only, as table names)."""
    return f"dicetable_{table}"


def config_topic(table: str, object_id: str) -> str:
    """``homeassistant/sensor/dicetable_<table>/<object_id>/config``."""
    return f"{PREFIX}/sensor/{node_id(table)}/{object_id}/config"


def configs(settings: MqttSettings) -> list[tuple[str, bytes]]:
    """``[(topic, JSON payload)]``: one discovery config per sensor of :data:`SENSORS` (published retained)."""
    table = settings.table
    device = {
        "identifiers": [node_id(table)],
        "name": f"Dice table {table}",
        "manufacturer": "dicetable",
        "model": "dice-reading table",
    }
    out = []
    for object_id, (name, template, icon) in SENSORS.items():
        config = {
            "name": name,
            "unique_id": f"{node_id(table)}_{object_id}",
            "object_id": f"{node_id(table)}_{object_id}",
            "state_topic": topics.state_topic(table),
            "value_template": template,
            "availability_topic": topics.status_topic(table),
            "payload_available": topics.ONLINE,
            "payload_not_available": topics.OFFLINE,
            "icon": icon,
            "device": device,
        }
        out.append((config_topic(table, object_id), json.dumps(config, separators=(",", ":")).encode()))
    return out
