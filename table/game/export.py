"""A game's state written out: the whole-game replay JSON and CSV scorecards.

The JSON follows the whole-game format of ``shared/specs/vectors_dev.json``
(read by ``dicetable replay``): players in play order (the starting player
first), each with their turns (final dice, box, roll, ``expected_points`` =
box points + Yahtzee bonus) and ``expected_final_total``; then
``expected_winners``.  Free-roll games export their rolls instead.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from table.game.events import GameMode
from table.game.state import GameState
from table.rules import find_ruleset, upper_bonus, upper_sum, yahtzee_bonus_points


def _play_order(state: GameState) -> list[int]:
    n = len(state.players)
    return [(state.first_player + k) % n for k in range(n)]


def game_to_json(state: GameState, game_id: str) -> dict[str, Any]:
    """Return the replay-format dict of ``state`` (``json.dumps`` it to write).

    Parameters
    ----------
    state : GameState
        Any state (finished or not; an unfinished game's totals are the standings so far).
    game_id : str
        The ``id`` field of the output.

    Returns
    -------
    dict
        ``{"id", "ruleset", "joker", "status", "players": [{"name", "turns": [{"dice", "box",
        "roll", "expected_points"}], "expected_final_total"}], "expected_winners"}``;
        free-roll games give ``{"id", "mode", "players", "status", "rolls": [{"values", "sum",
        "counts", "at"}]}``.
    """
    status = "playing" if state.ended is None else state.ended.value
    if state.mode is GameMode.FREE_ROLL:
        return {
            "id": game_id,
            "mode": state.mode.value,
            "players": list(state.players),
            "status": status,
            "rolls": [
                {"values": list(r.values), "sum": r.total, "counts": list(r.counts), "at": r.at} for r in state.rolls
            ],
        }
    order = _play_order(state)
    totals = state.totals()
    top = max(totals)
    players = []
    for seat in order:
        turns = [
            {"dice": list(t.dice), "box": t.box, "roll": t.roll, "expected_points": t.points + t.yahtzee_bonus}
            for t in state.history
            if t.player == seat
        ]
        players.append({"name": state.players[seat], "turns": turns, "expected_final_total": totals[seat]})
    return {
        "id": game_id,
        "ruleset": state.ruleset,
        "joker": state.joker,
        "status": status,
        "players": players,
        "expected_winners": [k for k, seat in enumerate(order) if totals[seat] == top],
    }


def game_to_csv(state: GameState) -> str:
    """Return the scorecards as CSV: one row per box, one column per player (seat order).

    Rows: a header (``box``, player names), every box in card order (empty when
    open), then ``upper_sum`` and ``upper_bonus`` (rulesets with an upper
    bonus), ``yahtzee_bonus`` (Yahtzee), ``total``.  Free-roll games give one
    row per roll: ``roll, values, sum, count_1 .. count_6``.
    """
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    if state.mode is GameMode.FREE_ROLL:
        out.writerow(["roll", "values", "sum", *(f"count_{f}" for f in range(1, 7))])
        for k, r in enumerate(state.rolls, start=1):
            out.writerow([k, " ".join(map(str, r.values)), r.total, *r.counts])
        return buf.getvalue()
    rs = find_ruleset(state.ruleset)
    out.writerow(["box", *state.players])
    for box in rs.boxes:
        out.writerow([box, *(c.boxes.get(box, "") for c in state.cards)])
    if rs.upper_bonus_threshold is not None:
        out.writerow(["upper_sum", *(upper_sum(rs, c) for c in state.cards)])
        out.writerow(["upper_bonus", *(upper_bonus(rs, c) for c in state.cards)])
    if rs.has_yahtzee_bonus:
        out.writerow(["yahtzee_bonus", *(yahtzee_bonus_points(rs, c) for c in state.cards)])
    out.writerow(["total", *state.totals()])
    return buf.getvalue()


def history_to_json(turns: list[dict[str, Any]]) -> dict[str, Any]:
    """Return a game's history (:func:`table.game.history.turns_of`) for the JSON export, numbered as the CSV is.

    ``turn`` counts from 1, ``rerolled`` and the corrections' ``die`` name dice 1-5 (``turns_of`` keeps them
    0-based for the page); ``held`` stays five bools, one per die.
    """
    out = []
    for t in turns:
        throws = [{**th, "rerolled": [i + 1 for i in th["rerolled"]]} for th in t["throws"]]
        fixes = [{**c, "die": c["die"] + 1} for c in t["corrections"]]
        out.append({**t, "turn": t["turn"] + 1, "throws": throws, "corrections": fixes})
    return {"turns": out}


def history_to_csv(turns: list[dict[str, Any]]) -> str:
    """Return a game's history (:func:`table.game.history.turns_of`) as CSV: one row per throw.

    Columns: ``turn, round, player, roll, dice, held, rerolled, box, points, cause, corrections, timer``;
    ``held`` and ``rerolled`` name dice 1-5 (``held``: kept out of that throw); the box, points and cause
    are on the turn's last row; a turn with no throw (the timer ran out first) has one row without dice.
    """
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(
        ["turn", "round", "player", "roll", "dice", "held", "rerolled", "box", "points", "cause"]
        + [
            "corrections",
            "timer",
        ]
    )
    for t in turns:
        throws = t["throws"] or [None]
        for k, th in enumerate(throws):
            last = k == len(throws) - 1
            roll = "" if th is None else th["roll"]
            fixes = [c for c in t["corrections"] if th is not None and c["roll"] == th["roll"]]
            timer = [
                "expired after the roll" if x["rolled"] else "expired before a roll"
                for x in t["timer"]
                if last or not x["rolled"]
            ]
            out.writerow(
                [
                    t["turn"] + 1,
                    t["round"],
                    t["name"],
                    roll,
                    "" if th is None else " ".join(map(str, th["dice"])),
                    "" if th is None else " ".join(str(i + 1) for i, h in enumerate(th["held"]) if h),
                    "" if th is None else " ".join(str(i + 1) for i in th["rerolled"]),
                    t["box"] or "" if last else "",
                    "" if not last or t["points"] is None else t["points"],
                    t["cause"] or "" if last else "",
                    "; ".join(f"die {c['die'] + 1}: {c['was']} -> {c['value']} by {c['by']}" for c in fixes),
                    "; ".join(timer) if (last or th is None) else "",
                ]
            )
    return buf.getvalue()
