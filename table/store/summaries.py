"""The games list: one :class:`GameSummary` per stored game (a row of the ``games`` table)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from table.game import GameState

#: The ``games`` columns a summary is read from, in :func:`summary_from_row`'s order.
COLUMNS = "id, mode, ruleset, players, status, started_at, updated_at, winners, n_events"


@dataclass(frozen=True, slots=True)
class GameSummary:
    """One line of the games list.

    ``status`` is ``playing``, ``finished`` or ``abandoned``; ``winners`` names
    the players sharing the top total once finished (empty otherwise); times
    are seconds since the Unix epoch.
    """

    id: int
    mode: str
    ruleset: str
    players: tuple[str, ...]
    status: str
    started_at: float
    updated_at: float
    winners: tuple[str, ...]
    events: int


def status_of(state: GameState) -> str:
    """``playing``, ``finished`` or ``abandoned`` for ``state``."""
    return "playing" if state.ended is None else state.ended.value


def summary_from_row(row: tuple[Any, ...]) -> GameSummary:
    """The summary of one row selected as :data:`COLUMNS` (players and winners are JSON lists)."""
    gid, mode, ruleset, players, status, started, updated, winners, n = row
    return GameSummary(
        id=gid,
        mode=mode,
        ruleset=ruleset,
        players=tuple(json.loads(players)),
        status=status,
        started_at=started,
        updated_at=updated,
        winners=tuple(json.loads(winners)),
        events=n,
    )
