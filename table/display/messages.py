"""Messages from the page over the WebSocket: JSON objects whose known fields have the right types."""

from __future__ import annotations

import json
from typing import Any

#: Types of the fields a client message may carry (others are ignored; the setup's are checked by the app).
FIELDS: dict[str, type] = {
    "type": str,
    "pin": str,
    "token": str,
    "command": str,
    "seq": int,
    "item": str,
    "box": str,
    "seen": int,
    "die": int,
    "value": int,
    "face": int,
}

#: Longest message taken, in characters: the page's longest, a setup of 8 names of 40 characters, is under
#: 2,000. A longer one is refused before it is parsed (16 MiB messages were parsed before any PIN check).
MAX_MESSAGE_CHARS = 8192


class MessageTooLong(ValueError):
    """A message over :data:`MAX_MESSAGE_CHARS` (the socket closes with 1009, "message too big")."""


def _json_kind(value: Any) -> str:
    """What a JSON value is, in the words of a message (``a list``, ``a number``, ``null``...)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    kinds: dict[type, str] = {dict: "an object", list: "a list", str: "a string"}
    return kinds.get(type(value), "a number")


def parse_message(text: str | None) -> dict[str, Any]:
    """One message from a page: a JSON object whose fields in :data:`FIELDS` have the right types.

    Raises
    ------
    ValueError
        Saying what is wrong (in at most 120 characters, to fit a WebSocket close reason): not
        text, not JSON, not an object, or a field of the wrong type; :class:`MessageTooLong`
        (checked before parsing) for one over :data:`MAX_MESSAGE_CHARS`.
    """
    if text is None:
        raise ValueError('send text frames of JSON, e.g. {"type": "command", "command": "roll"}')
    if len(text) > MAX_MESSAGE_CHARS:
        raise MessageTooLong(f"message of {len(text)} characters; send at most {MAX_MESSAGE_CHARS}")
    try:
        msg = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested thousands deep
        raise ValueError('not JSON; send an object, e.g. {"type": "command", "command": "roll"}') from None
    if not isinstance(msg, dict):
        raise ValueError(f'got {_json_kind(msg)}; send an object, e.g. {{"type": "command", "command": "roll"}}')
    for key, kind in FIELDS.items():
        value = msg.get(key)
        if key in msg and (not isinstance(value, kind) or isinstance(value, bool)):
            raise ValueError(
                f"field {key!r} must be {'a whole number' if kind is int else 'a string'}, got {_json_kind(value)}"
            )
    return msg
