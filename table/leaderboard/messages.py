"""Parse and check the messages of MQTT schema v1 (``docs/mqtt.md``): topic, status, state, events.

A message that does not fit the schema raises :class:`BadMessage` with a one-line reason; the
subscriber logs it (rate-limited) and drops it. Nothing here touches the network or the store.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from table.errors import DicetableError

#: The schema version this leaderboard reads (``"v"`` of every JSON payload).
SCHEMA_VERSION = 1

#: A payload over this is dropped unread: a state or event of 8 players is about 2 KiB.
MAX_PAYLOAD_BYTES = 64 * 1024

#: Table names, as docs/mqtt.md gives them.
TABLE_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")

#: What the leaderboard subscribes to.
SUBSCRIPTION = "dicetable/+/#"

TOPIC_KINDS = ("status", "state", "events")


class BadMessage(DicetableError, ValueError):
    """Raised when a message on ``dicetable/...`` does not fit schema v1 (the text says how)."""


@dataclass(frozen=True, slots=True)
class Status:
    """``dicetable/<table>/status``: ``online`` or ``offline``."""

    table: str
    online: bool


@dataclass(frozen=True, slots=True)
class TableState:
    """``dicetable/<table>/state``: the table's snapshot, as the checked JSON dict and as received (``raw``)."""

    table: str
    data: dict[str, Any]
    raw: str = ""


@dataclass(frozen=True, slots=True)
class GameEvent:
    """``dicetable/<table>/events``: one accepted game event with the game's totals after it.

    ``box``, ``player`` and ``points`` are set for a ``box_scored`` event (else ``""``, -1, 0).
    ``raw`` is the payload as received (UTF-8 JSON text).
    """

    id: str
    game: str
    seq: int
    table: str
    type: str
    at: float
    ruleset: str
    players: tuple[str, ...]
    totals: tuple[int, ...]
    round: int
    finished: bool
    box: str
    player: int
    points: int
    raw: str


Message = Status | TableState | GameEvent


def parse_topic(topic: str) -> tuple[str, str]:
    """``(table, kind)`` of a topic ``dicetable/<table>/<kind>``.

    Raises
    ------
    BadMessage
        If the topic is not one of schema v1's three topics for a valid table name.
    """
    parts = topic.split("/")
    if len(parts) != 3 or parts[0] != "dicetable" or parts[2] not in TOPIC_KINDS:
        raise BadMessage(f"topic {topic[:80]!r} is not dicetable/<table>/status|state|events")
    if not TABLE_NAME.fullmatch(parts[1]):
        raise BadMessage(f"topic {topic[:80]!r}: table names are 1-32 letters, digits, '-' or '_'")
    return parts[1], parts[2]


def _need(data: dict[str, Any], key: str, kind: type | tuple[type, ...], what: str) -> Any:
    value = data.get(key)
    # bool is an int to Python; a count given as true is not a count
    if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, (int, float))):
        raise BadMessage(f"{what}: field {key!r} is missing or not {_name(kind)} (got {str(value)[:40]!r})")
    if isinstance(value, float) and not math.isfinite(value):
        raise BadMessage(f"{what}: field {key!r} is not a finite number")
    return value


def _name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(
        {
            "str": "a string",
            "int": "an integer",
            "float": "a number",
            "bool": "true/false",
            "list": "a list",
            "dict": "an object",
            "NoneType": "null",
        }[k.__name__]
        for k in kinds
    )


def _json(payload: bytes, what: str) -> dict[str, Any]:
    try:
        data = json.loads(payload)
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadMessage(f"{what}: not JSON ({str(exc)[:60]})") from None
    if not isinstance(data, dict):
        raise BadMessage(f"{what}: the payload is JSON but not an object")
    if data.get("v") != SCHEMA_VERSION or isinstance(data.get("v"), bool):
        raise BadMessage(f"{what}: schema version {str(data.get('v'))[:20]}, this leaderboard reads v{SCHEMA_VERSION}")
    return data


def _check_table(data: dict[str, Any], table: str, what: str) -> None:
    if _need(data, "table", str, what) != table:
        raise BadMessage(f"{what}: the payload's table {data['table'][:40]!r} is not the topic's")


def parse_status(table: str, payload: bytes) -> Status:
    """The status of ``table`` from its payload (``online`` / ``offline``, surrounding space ignored)."""
    text = payload.decode("utf-8", "replace").strip()
    if text not in ("online", "offline"):
        raise BadMessage(f"dicetable/{table}/status: {text[:40]!r} is neither 'online' nor 'offline'")
    return Status(table, text == "online")


def parse_state(table: str, payload: bytes) -> TableState:
    """The checked state snapshot of ``table`` (the fields the page shows must be there)."""
    what = f"dicetable/{table}/state"
    if not payload:  # a retained message cleared: the table was taken out of service
        return TableState(table, {})
    data = _json(payload, what)
    _check_table(data, table, what)
    if data.get("game") is not None:
        _need(data, "game", str, what)
    _need(data, "ruleset", str, what)
    _need(data, "finished", bool, what)
    for key in ("round", "rounds"):
        _need(data, key, int, what)
    if data.get("current") is not None:
        _need(data, "current", int, what)
    for p in _need(data, "players", list, what):
        if (
            not isinstance(p, dict)
            or not isinstance(p.get("name"), str)
            or not (
                _is_int(p.get("total")) or p.get("total") is None  # null in a free-roll session
            )
        ):
            raise BadMessage(f"{what}: each player needs a 'name' (string) and a 'total' (integer or null)")
    chances = data.get("win_chances")
    if chances is not None and (
        not isinstance(chances, list)
        or len(chances) != len(data["players"])
        or not all(isinstance(c, int | float) and not isinstance(c, bool) and 0 <= c <= 1 for c in chances)
    ):
        raise BadMessage(f"{what}: 'win_chances' must be null or one number in [0, 1] per player")
    return TableState(table, data, payload.decode("utf-8"))


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_event(table: str, payload: bytes) -> GameEvent:
    """The checked event of ``table``; its id must be ``<game>:<seq>`` and its game ``<table>:...``."""
    what = f"dicetable/{table}/events"
    data = _json(payload, what)
    _check_table(data, table, what)
    game, seq, eid = _need(data, "game", str, what), _need(data, "seq", int, what), _need(data, "id", str, what)
    if seq < 1 or eid != f"{game}:{seq}" or not game.startswith(f"{table}:") or len(eid) > 200:
        raise BadMessage(f"{what}: id {eid[:80]!r} is not '<table>:<store>:<game>:<seq>' with seq >= 1")
    players = _need(data, "players", list, what)
    totals = _need(data, "totals", list, what)
    if not all(isinstance(p, str) for p in players) or not all(_is_int(t) for t in totals):
        raise BadMessage(f"{what}: 'players' must be strings and 'totals' integers")
    if totals and len(totals) != len(players):
        raise BadMessage(f"{what}: {len(totals)} totals for {len(players)} players")
    event = _need(data, "event", dict, what)
    kind = _need(data, "type", str, what)
    box, player, points = "", -1, 0
    if kind == "box_scored":
        box, player, points = (
            _need(event, k, t, what + " event") for k, t in (("box", str), ("player", int), ("points", int))
        )
    return GameEvent(
        id=eid,
        game=game,
        seq=seq,
        table=table,
        type=kind,
        at=float(_need(data, "at", (int, float), what)),
        ruleset=_need(data, "ruleset", str, what),
        players=tuple(players),
        totals=tuple(totals),
        round=_need(data, "round", int, what),
        finished=_need(data, "finished", bool, what),
        box=box,
        player=player,
        points=points,
        raw=payload.decode("utf-8"),
    )


def parse_message(topic: str, payload: bytes) -> Message:
    """The message on ``topic``, checked against schema v1.

    Raises
    ------
    BadMessage
        One line saying what does not fit (topic, size, JSON, version or a field).
    """
    table, kind = parse_topic(topic)
    if len(payload) > MAX_PAYLOAD_BYTES:
        raise BadMessage(f"{topic}: {len(payload)} bytes, over the {MAX_PAYLOAD_BYTES} a message may have")
    if kind == "status":
        return parse_status(table, payload)
    if kind == "state":
        return parse_state(table, payload)
    return parse_event(table, payload)
