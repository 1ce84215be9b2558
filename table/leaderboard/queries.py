"""What the leaderboard shows, read from its store: live tables, high scores, player stats.

Only finished games (every box filled) count for high scores and stats; abandoned games and
free-roll sessions are kept but not ranked. Periods are the leaderboard machine's local calendar:
``day`` from midnight today, ``week`` from Monday's midnight, ``all`` everything; a game counts by
when its last event reached the leaderboard (a table's own clock may be off).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from table.errors import UsageError
from table.leaderboard.store import LeaderboardStore

PERIODS = ("day", "week", "all")

#: Rows in a high-score list and in the player stats.
TOP_N = 10


def period_start(period: str, now: float) -> float:
    """Unix time (s) where ``period`` began, in local time; 0 for ``all``.

    Raises
    ------
    UsageError
        If ``period`` is not ``day``, ``week`` or ``all``.
    """
    if period not in PERIODS:
        raise UsageError(f"period {period[:20]!r} is not one of {', '.join(PERIODS)}")
    if period == "all":
        return 0.0
    midnight = dt.datetime.fromtimestamp(now).replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "week":
        midnight -= dt.timedelta(days=midnight.weekday())
    return midnight.timestamp()


def live_tables(store: LeaderboardStore) -> list[dict[str, Any]]:
    """Every table seen, by name: ``online`` (True, False or None before any status) and its last ``state``."""
    rows = store.read("SELECT name, online, status_at, state, state_at FROM tables ORDER BY name")
    return [
        {
            "table": name,
            "online": None if online is None else bool(online),
            "status_at": status_at,
            "state": json.loads(state) if state else None,
            "state_at": state_at,
        }
        for name, online, status_at, state, state_at in rows
    ]


def high_scores(
    store: LeaderboardStore, ruleset: str, period: str, now: float, limit: int = TOP_N
) -> list[dict[str, Any]]:
    """The best totals of finished ``ruleset`` games in ``period``, best first (ties: earlier first)."""
    rows = store.read(
        "SELECT s.player, s.total, g.tbl, g.id, g.seen_at, g.from_state FROM seats s JOIN games g ON g.id = s.game"
        " WHERE g.finished = 1 AND g.ruleset = ? AND g.seen_at >= ?"
        " ORDER BY s.total DESC, g.seen_at ASC, s.seat ASC LIMIT ?",
        (ruleset, period_start(period, now), limit),
    )
    return [
        {"player": p, "total": t, "table": tb, "game": g, "at": at, "from_state": bool(fs)}
        for p, t, tb, g, at, fs in rows
    ]


def player_stats(store: LeaderboardStore, ruleset: str | None = None, limit: int = TOP_N) -> list[dict[str, Any]]:
    """Per player over finished games (of ``ruleset``, else all): games, wins, mean, best, five-alike boxes.

    Sorted by mean total, best first. A win is a top total of its game (shared tops all win).
    """
    where, params = ("AND g.ruleset = ?", (ruleset,)) if ruleset else ("AND g.ruleset != ''", ())
    rows = store.read(
        "SELECT s.player, COUNT(*), SUM(s.total = (SELECT MAX(total) FROM seats t WHERE t.game = s.game)),"
        " AVG(s.total), MAX(s.total), SUM(s.fives) FROM seats s JOIN games g ON g.id = s.game"
        f" WHERE g.finished = 1 {where} GROUP BY s.player ORDER BY AVG(s.total) DESC, s.player LIMIT ?",
        (*params, limit),
    )
    return [
        {"player": p, "games": n, "wins": w, "mean": round(m, 1), "best": b, "fives": f} for p, n, w, m, b, f in rows
    ]


def recent_games(store: LeaderboardStore, table: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
    """The games last changed, newest first (of ``table``, else all): totals, ``last_seq``, events, state.

    ``missing_events``: seqs up to ``last_seq`` never received (a gap); ``totals_from``: ``"events"``,
    or ``"state"`` when the game was finished from the table's retained state (its events incomplete).
    """
    where, params = ("WHERE tbl = ?", (table,)) if table else ("", ())
    rows = store.read(
        "SELECT id, tbl, ruleset, players, started_at, updated_at, last_seq, events, finished, abandoned, from_state"
        " FROM games"
        f" {where} ORDER BY seen_at DESC, id LIMIT ?",
        (*params, limit),
    )
    totals: dict[str, list[int]] = {}
    if rows:
        marks = ",".join("?" * len(rows))
        for game, total in store.read(
            f"SELECT game, total FROM seats WHERE game IN ({marks}) ORDER BY game, seat", tuple(r[0] for r in rows)
        ):
            totals.setdefault(game, []).append(total)
    return [
        {
            "game": g,
            "table": tb,
            "ruleset": rs,
            "players": json.loads(pl),
            "totals": totals.get(g, []),
            "started_at": st,
            "updated_at": up,
            "last_seq": ls,
            "events": n,
            "finished": bool(f),
            "abandoned": bool(a),
            "missing_events": max(0, ls - n),
            "totals_from": "state" if fs else "events",
        }
        for g, tb, rs, pl, st, up, ls, n, f, a, fs in rows
    ]


def rulesets(store: LeaderboardStore) -> list[str]:
    """The rulesets of the stored finished games, most played first."""
    rows = store.read(
        "SELECT ruleset FROM games WHERE finished = 1 AND ruleset != ''"
        " GROUP BY ruleset ORDER BY COUNT(*) DESC, ruleset"
    )
    return [r[0] for r in rows]


def game_count(store: LeaderboardStore) -> dict[str, int]:
    """Stored games: ``finished``, ``playing`` (neither finished nor abandoned), ``events``,
    ``missing_events`` (seqs never received, over all games) and ``from_state`` (games finished from
    their table's state)."""
    ((fin, playing, events, missing, from_state),) = store.read(
        "SELECT COALESCE(SUM(finished), 0), COALESCE(SUM(finished = 0 AND abandoned = 0), 0),"
        " COALESCE(SUM(events), 0), COALESCE(SUM(MAX(last_seq - events, 0)), 0), COALESCE(SUM(from_state), 0)"
        " FROM games"
    )
    return {"finished": fin, "playing": playing, "events": events, "missing_events": missing, "from_state": from_state}
