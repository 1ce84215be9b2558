"""Topic names and payloads of schema version 1 (docs/mqtt.md): pure functions, no I/O.

``dicetable/<table>/status`` (retained text), ``dicetable/<table>/state`` (retained JSON) and
``dicetable/<table>/events`` (JSON, QoS 1). A game's id is ``<table>:<store_id>:<game>``; an
event's id is ``<game id>:<seq>``, ``seq`` counting the game's events from 1 (the store counts
from 0: the game's start is stored as 0 and sent as 1).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from table.game import GameMode, GameState
from table.rules import find_ruleset

log = logging.getLogger(__name__)

#: Payload schema version, ``"v"`` in every JSON payload.
SCHEMA = 1
#: Text payloads of the status topic.
ONLINE, OFFLINE = "online", "offline"


def status_topic(table: str) -> str:
    """``dicetable/<table>/status``."""
    return f"dicetable/{table}/status"


def state_topic(table: str) -> str:
    """``dicetable/<table>/state``."""
    return f"dicetable/{table}/state"


def events_topic(table: str) -> str:
    """``dicetable/<table>/events``."""
    return f"dicetable/{table}/events"


def game_id(table: str, store_id: str, game: int) -> str:
    """``<table>:<store_id>:<game>``: unique across tables and stores."""
    return f"{table}:{store_id}:{game}"


def round_of(state: GameState) -> int:
    """The round being played (1 .. number of boxes; the last one once the cards are full); 0 in free roll."""
    if state.mode is not GameMode.SCORECARD:
        return 0
    boxes = len(find_ruleset(state.ruleset).boxes)
    filled = sum(len(c.boxes) for c in state.cards)
    return min(boxes, filled // max(1, len(state.players)) + 1)


def win_chances(state: GameState | None) -> list[float] | None:
    """Each player's chance to win from `state`, in seat order; None where the table has no value tables.

    The one place the state payload gets it from (issue 36, item 5 fills it in).
    """
    return None


def _win_chances_or_none(state: GameState) -> list[float] | None:
    """:func:`win_chances`, or None (logged) if it fails: the state is published all the same."""
    try:
        return win_chances(state)
    except Exception:
        log.exception("no win chances for this state")
        return None


def event_payload(table: str, store_id: str, game: int, seq: int, event_json: str, state: GameState) -> bytes:
    """The events topic's payload for stored event `seq` (from 0) of `game`, `state` being the game after it.

    Parameters
    ----------
    event_json : str
        The event as stored (:func:`table.game.event_to_json`).

    Returns
    -------
    bytes
        Compact UTF-8 JSON (docs/mqtt.md, "events payload").
    """
    gid = game_id(table, store_id, game)
    event = json.loads(event_json)
    scorecard = state.mode is GameMode.SCORECARD
    return _dump(
        {
            "v": SCHEMA,
            "id": f"{gid}:{seq + 1}",
            "game": gid,
            "seq": seq + 1,
            "table": table,
            "type": event.get("type", ""),
            "at": event.get("at"),
            "event": event,
            "ruleset": state.ruleset if scorecard else "",
            "players": list(state.players),
            "totals": list(state.totals()) if scorecard else [],
            "round": round_of(state),
            "finished": state.finished,
        }
    )


def state_payload(table: str, store_id: str, game: int | None, state: GameState | None, at: float) -> bytes:
    """The state topic's payload: the table now (`state` None and `game` None while no game is on).

    `at` is the time of the snapshot, seconds since the Unix epoch (``updated``).
    """
    out: dict[str, Any] = {
        "v": SCHEMA,
        "table": table,
        "game": None,
        "ruleset": "",
        "players": [],
        "current": None,
        "round": 0,
        "rounds": 0,
        "roll": 0,
        "dice": [],
        "held": [],
        "finished": False,
        "win_chances": None,
        "updated": at,
    }
    if state is None or game is None:
        return _dump(out)
    scorecard = state.mode is GameMode.SCORECARD
    totals = state.totals() if scorecard else ()
    turn = state.turn
    leader = max(range(len(totals)), key=lambda i: (totals[i], -i)) if totals else None  # first seat on a tie
    out.update(
        game=game_id(table, store_id, game),
        ruleset=state.ruleset if scorecard else "",
        players=[
            {"name": n, "total": totals[i] if totals else None, "bot": bool(state.bot_level(i))}
            for i, n in enumerate(state.players)
        ],
        current=state.current_player,
        round=round_of(state),
        rounds=len(find_ruleset(state.ruleset).boxes) if scorecard else 0,
        roll=0 if turn is None else turn.roll,
        dice=list(turn.dice) if turn is not None and turn.roll else [],
        held=list(turn.holds) if turn is not None and turn.roll else [],
        finished=state.finished,
        win_chances=_win_chances_or_none(state) if scorecard else None,
        last_roll=_last_roll(state),
        leader=state.players[leader] if leader is not None else None,
        leader_total=totals[leader] if leader is not None else None,
    )
    return _dump(out)


def _last_roll(state: GameState) -> list[int]:
    """The dice of the latest throw: the current turn's, else the last scored turn's (or free roll's); ``[]``."""
    if state.turn is not None and state.turn.roll:
        return list(state.turn.dice)
    if state.history:
        return list(state.history[-1].dice)
    if state.rolls:
        return list(state.rolls[-1].values)
    return []


def _dump(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), allow_nan=False).encode()
