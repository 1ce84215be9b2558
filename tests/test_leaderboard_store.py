"""The leaderboard's checks of schema v1, its SQLite store and its rankings (no broker here).

Games are real: played by the engine with bots or random legal play (undos and corrections
included), turned into the payloads of docs/mqtt.md by :mod:`table.leaderboard.simulated_table`.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import sqlite3

import pytest

from table.errors import UsageError
from table.game import ReadDice, ScoreBox, StartGame, Undo, execute
from table.leaderboard import queries
from table.leaderboard.fives import FIVE_ALIKE_BOXES
from table.leaderboard.messages import MAX_PAYLOAD_BYTES, BadMessage, GameEvent, Status, parse_message
from table.leaderboard.simulated_table import event_payload, play_game
from table.leaderboard.store import LeaderboardStore, LeaderboardStoreError


def game(ruleset: str, seed: int, players=("Ann", "Bo"), **kw):
    """``(events, final state)`` of one real game: events as ``GameEvent``s, parsed from their payloads."""
    pairs = list(play_game(ruleset, players, random.Random(seed), **kw))
    events = [
        parse_message("dicetable/t1/events", event_payload("t1", "ab12", seed, k, s, e))
        for k, (s, e) in enumerate(pairs, 1)
    ]
    return events, pairs[-1][0]


def fives_on_cards(state) -> list[int]:
    return [sum(1 for box, pts in card.boxes.items() if box in FIVE_ALIKE_BOXES and pts > 0) for card in state.cards]


def good_event() -> dict:
    return {
        "v": 1,
        "id": "t1:ab:1:1",
        "game": "t1:ab:1",
        "seq": 1,
        "table": "t1",
        "type": "game_started",
        "at": 1.0,
        "event": {"type": "game_started"},
        "ruleset": "yacht",
        "players": ["A"],
        "totals": [0],
        "round": 1,
        "finished": False,
    }


@pytest.mark.parametrize(
    ("topic", "change", "why"),
    [
        ("dicetable/t1/events", b"{not json", "not JSON"),
        ("dicetable/t1/events", {"v": 2}, "schema version 2"),
        ("dicetable/t1/events", {"v": True}, "schema version"),
        ("dicetable/t1/events", {"seq": None}, "'seq' is missing"),
        ("dicetable/t1/events", {"totals": [1, 2]}, "2 totals for 1 players"),
        ("dicetable/t1/events", {"id": "t1:ab:1:9"}, "is not '<table>"),
        ("dicetable/t1/events", {"game": "t2:ab:1", "id": "t2:ab:1:1"}, "is not '<table>"),
        ("dicetable/t1/events", {"table": "t2"}, "not the topic's"),
        ("dicetable/t1/events", {"at": float("nan")}, "not a finite number"),
        ("dicetable/t1/events", b"[1, 2]", "not an object"),
        ("dicetable/t1/events", b"x" * (MAX_PAYLOAD_BYTES + 1), "bytes, over the"),
        ("dicetable/t1/other", {}, "is not dicetable/<table>/"),
        ("dicetable/t1/events/x", {}, "is not dicetable/<table>/"),
        ("homeassistant/sensor/config", {}, "is not dicetable/<table>/"),
        ("dicetable/" + "a" * 33 + "/events", {}, "table names are"),
        ("dicetable/t1/status", b"maybe", "neither 'online' nor 'offline'"),
        ("dicetable/t1/state", {"v": 1, "table": "t1", "ruleset": "", "players": [{"name": "A"}]}, "missing or not"),
    ],
)
def test_bad_messages_are_refused_with_their_reason(topic, change, why):
    payload = change if isinstance(change, bytes) else json.dumps({**good_event(), **change}).encode()
    with pytest.raises(BadMessage, match=why) as err:
        parse_message(topic, payload)
    assert "\n" not in str(err.value)


def test_good_messages_parse():
    ev = parse_message("dicetable/t1/events", json.dumps(good_event()).encode())
    assert isinstance(ev, GameEvent) and (ev.game, ev.seq, ev.totals) == ("t1:ab:1", 1, (0,))
    assert parse_message("dicetable/t1/status", b"offline\n") == Status("t1", False)
    assert parse_message("dicetable/t1/state", b"").data == {}  # a cleared retained state


@pytest.mark.parametrize("seed", range(6))
def test_five_alike_boxes_follow_the_engine_through_undos(seed):
    """Random legal play undoes and corrects: the stored counts equal the engine's final cards."""
    events, final = game("yahtzee" if seed % 2 else "yacht", seed, autoplay=True)
    assert any(e.type == "undone" for e in events)
    with LeaderboardStore(":memory:") as store:
        for e in events:
            assert store.add_event(e)
        rows = store.read("SELECT fives, total FROM seats ORDER BY seat")
    assert [r[0] for r in rows] == fives_on_cards(final)
    assert [r[1] for r in rows] == list(final.totals())


def test_an_undone_yacht_is_not_counted():
    """A Yacht scored, undone and written in Sixes instead; then a Yacht that stands; then a scratch."""
    cmds = [
        StartGame(0.0, "yacht", ("A",)),
        ReadDice(1.0, (6,) * 5),
        ScoreBox(2.0, "yacht"),
        Undo(3.0),
        ScoreBox(4.0, "sixes"),
        ReadDice(5.0, (5,) * 5),
        ScoreBox(6.0, "yacht"),
        ReadDice(7.0, (4,) * 5),
        Undo(8.0),
        ReadDice(9.0, (4,) * 5),
        ScoreBox(10.0, "fours"),
    ]
    state, events = None, []
    for cmd in cmds:
        state, new = execute(state, cmd)
        events += [(state, e) for e in new]
    with LeaderboardStore(":memory:") as store:
        for k, (s, e) in enumerate(events, 1):
            store.add_event(parse_message("dicetable/t1/events", event_payload("t1", "a", 1, k, s, e)))
        assert store.read("SELECT fives, total FROM seats") == [(1, 30 + 50 + 20)]
    assert fives_on_cards(state) == [1]


def test_duplicates_and_any_order_give_the_table_totals_once():
    events, final = game("yahtzee", 11, level="easy")
    shuffled = events + events[::3]
    random.Random(0).shuffle(shuffled)
    with LeaderboardStore(":memory:") as store:
        kept = [store.add_event(e) for e in shuffled]
        assert sum(kept) == len(events)  # every duplicate refused
        assert store.game_totals() == {"t1:ab12:11": list(final.totals())}
        assert store.read("SELECT events, last_seq, finished, abandoned FROM games") == [
            (len(events), len(events), 1, 0)
        ]
        assert [r[0] for r in store.read("SELECT fives FROM seats ORDER BY seat")] == fives_on_cards(final)


def test_an_abandoned_game_is_kept_but_not_ranked():
    events, _ = game("yacht", 3, autoplay=True)
    cut = events[:20]
    ended = json.loads(cut[-1].raw)
    ended.update(
        seq=21,
        id=f"{ended['game']}:21",
        type="game_ended",
        finished=True,
        event={"type": "game_ended", "at": ended["at"], "reason": "abandoned", "by": ""},
    )
    with LeaderboardStore(":memory:") as store:
        for e in cut + [parse_message("dicetable/t1/events", json.dumps(ended).encode())]:
            store.add_event(e)
        assert store.read("SELECT finished, abandoned FROM games") == [(0, 1)]
        assert queries.high_scores(store, "yacht", "all", 2e9) == []
        assert queries.player_stats(store) == []


def test_periods_rankings_and_player_stats():
    wednesday_noon = dt.datetime(2026, 12, 2, 12, 0).timestamp()  # a Wednesday, local time
    starts = {
        "today": wednesday_noon - 3 * 3600,
        "monday": dt.datetime(2026, 11, 30, 10, 0).timestamp(),
        "last week": dt.datetime(2026, 11, 28, 10, 0).timestamp(),
    }
    finals = {}
    with LeaderboardStore(":memory:") as store:
        for seed, (name, start) in enumerate(starts.items()):
            pairs = list(play_game("yahtzee", ("Ann", "Bo"), random.Random(seed), start=start))
            assert pairs[-1][1].at < wednesday_noon
            for k, (s, e) in enumerate(pairs, 1):
                store.add_event(parse_message("dicetable/t1/events", event_payload("t1", "ab", seed, k, s, e)), e.at)
            finals[name] = pairs[-1][0]
        for period, names in (("day", ["today"]), ("week", ["today", "monday"]), ("all", list(starts))):
            want = sorted((t for n in names for t in finals[n].totals()), reverse=True)
            got = queries.high_scores(store, "yahtzee", period, wednesday_noon)
            assert [r["total"] for r in got] == want, period
        assert queries.high_scores(store, "yacht", "all", wednesday_noon) == []
        stats = {r["player"]: r for r in queries.player_stats(store, "yahtzee")}
        for seat, name in enumerate(("Ann", "Bo")):
            mine = [finals[n].totals()[seat] for n in starts]
            wins = sum(1 for n in starts if finals[n].totals()[seat] == max(finals[n].totals()))
            fives = sum(fives_on_cards(finals[n])[seat] for n in starts)
            assert stats[name] == {
                "player": name,
                "games": 3,
                "wins": wins,
                "mean": round(sum(mine) / 3, 1),
                "best": max(mine),
                "fives": fives,
            }
        assert queries.player_stats(store, "chaser") == []
        assert queries.rulesets(store) == ["yahtzee"]
    with pytest.raises(UsageError, match="period 'month' is not one of day, week, all"):
        queries.period_start("month", wednesday_noon)


def test_status_changes_and_state_are_kept():
    with LeaderboardStore(":memory:") as store:
        for online in (True, True, False, True):
            store.set_status("t1", online)
        store.set_state("t1", {"game": None})
        assert store.status_changes("t1") == [True, False, True]
        (row,) = queries.live_tables(store)
        assert (row["table"], row["online"], row["state"]) == ("t1", True, {"game": None})


def test_another_programs_sqlite_file_is_refused(tmp_path):
    other = tmp_path / "games.sqlite3"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE games (id INTEGER)")
    with pytest.raises(LeaderboardStoreError, match="another program's SQLite file"):
        LeaderboardStore(other)
    (tmp_path / "junk.sqlite3").write_bytes(b"not a database at all" * 100)
    with pytest.raises(LeaderboardStoreError, match="give --db another file"):
        LeaderboardStore(tmp_path / "junk.sqlite3")


def test_a_finished_state_finishes_a_game_whose_events_are_incomplete_and_nothing_else():
    from table.leaderboard.simulated_table import state_payload

    events, final = game("yatzy", 5)
    state = json.loads(state_payload("t1", "ab12", 5, final, 1.7e9))
    with LeaderboardStore(":memory:") as store:
        assert "no events" in store.reconcile("t1", state)  # not one event came
        assert store.game_totals() == {"t1:ab12:5": list(final.totals())}
        assert store.read("SELECT finished, from_state, events FROM games") == [(1, 1, 0)]
        ranked = queries.high_scores(store, "yatzy", "all", 2e9)
        assert sorted(r["total"] for r in ranked) == sorted(final.totals()) and all(r["from_state"] for r in ranked)
    with LeaderboardStore(":memory:") as store:
        for e in events:
            store.add_event(e)
        assert store.reconcile("t1", state) is None  # complete: its own finishing event counts
        assert store.read("SELECT from_state FROM games") == [(0,)]
    with LeaderboardStore(":memory:") as store:
        for e in events[:-1]:
            store.add_event(e)
        assert store.reconcile("t1", {**state, "finished": False}) is None  # a game on: nothing to do
        assert store.reconcile("t1", {**state, "players": [{"name": "Ann", "total": None}]}) is None
        line = store.reconcile("t1", state)
        assert f"{len(events) - 1} events up to seq {len(events) - 1}, no finishing event" in line
        store.add_event(events[-1])
        assert store.read("SELECT finished, from_state FROM games") == [(1, 0)]
        assert store.take_notes() == []  # the finishing event came and nothing is missing below it
