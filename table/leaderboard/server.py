"""The leaderboard's web app: the café TV's page and a read-only JSON API.

Routes (all ``GET``; there is no route that changes anything, and no command, PIN or token is read)
------
``/``                                   the TV page (``static/board.html``; polls ``/api/board``)
``/static/...``                         its JS and CSS
``/api/tables``                         each table's status and state, and the broker line
``/api/leaderboard?ruleset=R&period=P`` high scores of finished ``R`` games in ``P`` (``day``, ``week``, ``all``)
``/api/players?ruleset=R``              per-player stats (games, wins, mean, best, five-alike boxes)
``/api/games?table=T&limit=N``          the games last changed (of table ``T``): totals, events stored, last seq
``/api/board?ruleset=R``                all of the above for the page in one answer
``/health``                             ``{"ok": true, "broker": ..., "stored": N, "duplicates": N, "queued": N, ...}``
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles

from table.errors import UsageError
from table.leaderboard import queries
from table.leaderboard.store import LeaderboardStore

STATIC = Path(__file__).with_name("static")
#: Win chances as percents that add up to 100: one file for the table's page, its overlay and this page.
WIN_PERCENT_JS = Path(__file__).parents[1] / "display" / "static" / "win-percent.js"

#: Rulesets a name may be (the API refuses others in one line rather than answering an empty list).
RULESETS = ("yahtzee", "yacht", "chaser", "yatzy", "generala")


#: The most games one /api/games answer lists.
MAX_GAMES = 1000


def _json(data: Any, status: int = 200) -> Response:
    # ensure_ascii: a name with a lone surrogate never makes a 500
    return Response(
        json.dumps(data, separators=(",", ":")),
        status_code=status,
        media_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


def _bad(text: str) -> Response:
    return _json({"error": text}, 400)


def _ruleset(value: str | None, *, required: bool) -> str | None:
    if value in (None, "") and not required:
        return None
    if value not in RULESETS:
        raise UsageError(f"ruleset {str(value)[:20]!r} is not one of {', '.join(RULESETS)}")
    return value


def validation_line(exc: RequestValidationError) -> str:
    """One line for FastAPI's validation error: the first parameter that does not fit, its value and why."""
    errors = exc.errors()
    if not errors:
        return "bad request"
    first = errors[0]
    name = str(first.get("loc", ("?",))[-1])
    value = first.get("input")
    return f"{name} {str(value)[:40]!r}: {str(first.get('msg', 'not valid')).lower()}"


def create_app(store: LeaderboardStore, subscriber: Any, *, clock: Any = time.time) -> FastAPI:
    """Build the app over ``store`` (read) and ``subscriber`` (its ``broker`` line and counters).

    Parameters
    ----------
    store : LeaderboardStore
    subscriber : Subscriber
        Its ``broker`` line, ``connected`` flag and counters (``stored``, ``duplicates``,
        ``dropped.count``, ``intake.queued``) go into the answers.
    clock : callable, optional
        Unix time now, in seconds (the periods' "today" and "this week").
    """
    app = FastAPI(title="dicetable leaderboard", docs_url=None, redoc_url=None, openapi_url=None)

    @app.get("/static/win-percent.js")  # the table's own file (before the mount, which would answer 404)
    def win_percent() -> Any:
        return FileResponse(WIN_PERCENT_JS, media_type="text/javascript", headers={"Cache-Control": "no-store"})

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    def tables() -> dict[str, Any]:
        return {
            "broker": subscriber.broker,
            "connected": subscriber.connected,
            "now": clock(),
            "tables": queries.live_tables(store),
        }

    @app.get("/")
    def index() -> Any:
        return FileResponse(STATIC / "board.html", headers={"Cache-Control": "no-store"})

    @app.get("/health")
    def health() -> Any:
        return _json(
            {
                "ok": True,
                "broker": subscriber.broker,
                "connected": subscriber.connected,
                "stored": subscriber.stored,
                "duplicates": subscriber.duplicates,
                "queued": subscriber.intake.queued,
                "dropped": subscriber.dropped.count,
                **queries.game_count(store),
            }
        )

    @app.get("/api/tables")
    def api_tables() -> Any:
        return _json(tables())

    @app.exception_handler(UsageError)
    def bad_query(request: Any, exc: UsageError) -> Response:  # a bad ruleset, period: one line, 400
        return _bad(str(exc))

    @app.exception_handler(RequestValidationError)
    def bad_parameter(request: Any, exc: RequestValidationError) -> Response:  # e.g. limit=abc: one line, 400
        return _bad(validation_line(exc))

    @app.get("/api/leaderboard")
    def api_leaderboard(ruleset: str = "yahtzee", period: str = "all") -> Any:
        rs = _ruleset(ruleset, required=True)
        scores = queries.high_scores(store, rs or "", period, clock())
        return _json({"ruleset": rs, "period": period, "scores": scores})

    @app.get("/api/players")
    def api_players(ruleset: str = "") -> Any:
        rs = _ruleset(ruleset, required=False)
        return _json({"ruleset": rs, "players": queries.player_stats(store, rs)})

    @app.get("/api/games")
    def api_games(table: str = "", limit: int = 100) -> Any:
        if not 1 <= limit <= MAX_GAMES:
            return _bad(f"limit {limit} is not 1-{MAX_GAMES}")
        return _json({"games": queries.recent_games(store, table or None, limit)})

    @app.get("/api/board")
    def api_board(ruleset: str = "") -> Any:
        rs = _ruleset(ruleset, required=False)
        played = queries.rulesets(store)
        rs = rs or (played[0] if played else "yahtzee")
        now = clock()
        return _json(
            {
                **tables(),
                "rulesets": played,
                "ruleset": rs,
                "scores": {p: queries.high_scores(store, rs, p, now, limit=8) for p in queries.PERIODS},
                "players": queries.player_stats(store, rs, limit=10),
            }
        )

    return app
