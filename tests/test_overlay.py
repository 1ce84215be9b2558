"""The snapshot's win chances and best box, and the stream overlay's read-only page and socket (no browser)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="fastapi is not installed: pip install .")
pytest.importorskip("httpx", reason="httpx is not installed: pip install '.[test]'")
from starlette.testclient import TestClient  # noqa: E402
from starlette.websockets import WebSocketDisconnect  # noqa: E402

from table.app import TableApp  # noqa: E402
from table.app.live_chances import LiveChances  # noqa: E402
from table.display.server import create_app  # noqa: E402
from table.display.snapshot import Setup  # noqa: E402
from table.strategy import advise_boxes, get_table  # noqa: E402
from table.strategy.win_chances import win_chances_for  # noqa: E402
from vision.watch import EventKind, RollEvent, TrayDie  # noqa: E402


def settled(values):
    dice = tuple(TrayDie(v, (30.0 + 30 * i, 100.0), (0, 0, 10, 10), 0.99) for i, v in enumerate(values))
    return RollEvent(EventKind.SETTLED, 0, 0.0, dice=dice)


@pytest.fixture
def app(tmp_path):
    a = TableApp(
        tmp_path / "games.sqlite3",
        setup=Setup("yacht", "forced", ["Ann", "Bo", "Cy"]),
        autostart=True,
        pin="2468",
        clock=lambda: 1_700_000_000.0,
    ).start()
    yield a
    a.close()


def game_when(app, ready, wait_s=20.0):
    """The snapshot's game once ``ready(game)`` holds (the chances come from a helper thread)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        game = (app.snapshot or {}).get("game")
        if game and ready(game):
            return game
        time.sleep(0.02)
    raise AssertionError(f"the snapshot never got there: {app.snapshot.get('game')}")


def test_snapshot_carries_each_players_win_chance_and_the_best_box(app):
    game = game_when(app, lambda g: g["win_chances"] is not None)
    assert game["win_chances"] == pytest.approx([1 / 3] * 3, abs=1e-3) and game["best_box"] is None
    app.roll_event(settled((6, 6, 6, 6, 6))).result(timeout=5)
    game = game_when(app, lambda g: g["roll"] == 1 and g["best_box"] is not None)
    want = win_chances_for(app.state)
    assert game["win_chances"] == pytest.approx(want, abs=1e-3) and game["win_chances"][0] > 0.5
    table = get_table("yacht", build=False)
    assert game["best_box"] == advise_boxes(table, app.state.cards[0], (6, 6, 6, 6, 6), 1)[0].box == "yacht"


def test_live_chances_never_wait_and_say_none_without_a_game():
    calls = []
    live = LiveChances(lambda: calls.append(1))
    assert live.get(None) == {"win_chances": None, "best_box": None}


def overlay_client(app, host="192.168.1.30"):
    return TestClient(create_app(app, host_names={"testserver"}), client=(host, 50000))


def test_overlay_page_is_served_and_names_its_files(app):
    page = overlay_client(app).get("/overlay?layout=lower-third")
    assert page.status_code == 200 and "/static/overlay.js" in page.text and "/static/overlay.css" in page.text
    assert (
        "/static/win-percent.js" in page.text and overlay_client(app).get("/static/win-percent.js").status_code == 200
    )
    assert "no-store" in page.headers["cache-control"]
    for layout in ("1280x720", "1920x1080"):
        assert overlay_client(app).get(f"/overlay?layout={layout}").status_code == 200
    bogus = overlay_client(app).get("/overlay?layout=bogus")
    assert bogus.status_code == 400 and bogus.text.count("\n") == 1
    assert "'bogus' is not one of 1280x720, 1920x1080, lower-third" in bogus.text
    state = overlay_client(app).get("/api/state").json()
    assert "pin" not in state and state["game"]["players"][0]["name"] == "Ann"


@pytest.mark.parametrize("host", ["127.0.0.1", "192.168.1.30"])
@pytest.mark.parametrize(
    "message",
    [
        {"type": "command", "command": "hold_1", "seen": 0, "pin": "2468"},
        {"type": "unlock", "pin": "2468"},
        {"type": "menu", "item": "new", "seen": 0},
    ],
)
def test_overlay_socket_sends_snapshots_without_pin_and_closes_on_any_message(app, host, message):
    app.roll_event(settled((2, 3, 4, 5, 6))).result(timeout=5)
    before = app.state
    with overlay_client(app, host).websocket_connect("/overlay/ws") as ws:
        snap = json.loads(ws.receive_text())
        assert snap["game"]["roll"] == 1 and not snap["can_command"] and "pin" not in snap
        ws.send_text(json.dumps(message))
        with pytest.raises(WebSocketDisconnect) as closed:
            for _ in range(10):  # (a snapshot sent before the message was read may come first)
                assert "pin" not in json.loads(ws.receive_text())
        assert closed.value.code == 1008
    app.submit(lambda: None).result(timeout=5)  # anything the message did would be applied by now
    assert app.state == before and not app.menu_open and app.state.turn.holds == (False,) * 5


def test_overlay_socket_refuses_another_sites_page(app):
    with pytest.raises(WebSocketDisconnect) as refused:
        with overlay_client(app).websocket_connect("/overlay/ws", headers={"origin": "http://evil.example"}):
            pass
    assert refused.value.code == 1008


NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="node is not installed (`sudo apt install nodejs`)")
def test_win_percents_add_up_to_100_by_largest_remainder():
    """static/win-percent.js (the table page, the overlay and the leaderboard show its strings), run by node."""
    script = Path(create_app.__code__.co_filename).with_name("static") / "win-percent.js"
    rng = random.Random(5)
    cases = [[0.335, 0.665], [1 / 3, 1 / 3, 1 / 3], [0.996, 0.004], [0.5, 0.5], [0.0, 1.0], [0.2, None, 0.8]]
    for n in (2, 3, 4, 6, 8):
        for _ in range(40):
            w = [rng.random() ** 3 for _ in range(n)]
            cases.append([x / sum(w) for x in w])
    code = f"const f = require({str(script)!r}); console.log(JSON.stringify(JSON.parse(process.argv[1]).map(f)));"
    out = json.loads(subprocess.run([NODE, "-e", code, json.dumps(cases)], capture_output=True, check=True).stdout)
    assert out[:6] == [
        ["34%", "66%"],  # plain rounding: 34 % + 67 %; two .5 remainders: the earlier seat gets the point
        ["34%", "33%", "33%"],
        [">99%", "<1%"],
        ["50%", "50%"],
        ["0%", "100%"],
        ["20%", "", "80%"],
    ]
    for chances, shown in zip(cases[6:], out[6:]):
        whole = [int(s.strip("%<>")) if s[0].isdigit() else (100 if s == ">99%" else 0) for s in shown]
        assert sum(whole) == 100, (chances, shown)
        assert all(abs(w - 100 * p) < 1 for w, p in zip(whole, chances)), (chances, shown)
