"""``dicetable play`` and the served ``dicetable demo`` end to end (synthetic camera, page on 127.0.0.1)."""

from __future__ import annotations

import json
import threading
import time
import urllib.request

import pytest

pytest.importorskip("fastapi", reason="fastapi is not installed: pip install .")

from table.cli import main  # noqa: E402


@pytest.mark.parametrize("argv, match", [
    (["--port", "70000"], "--port must be 0-65535"),
    (["--pin", "12"], "--pin must be 4 to 8 digits"),
    (["--rules", "snakes", "--players", "Ann"], "unknown ruleset 'snakes'"),
    (["--players", "Ann,ann"], "two players are called 'ann'"),
    (["--players", ",Bo"], "player name '' cannot be used"),
])
def test_play_bad_input_is_one_line(argv, match, capsys, tmp_path):
    status = main(["play", "--camera", "synthetic", "--no-buttons", "--db", str(tmp_path / "g.sqlite3"), *argv])
    err = capsys.readouterr().err.strip()
    assert status == 2 and err.startswith("dicetable play: error:") and match in err and "\n" not in err


def test_play_bad_camera_is_one_line(capsys, tmp_path):
    status = main(["play", "--camera", "webcam:0", "--no-buttons", "--db", str(tmp_path / "g.sqlite3")])
    err = capsys.readouterr().err
    assert status == 2 and "bad camera source 'webcam:0'" in err


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


def test_play_serves_the_table_and_resumes_after_restart(tmp_path, capsys, monkeypatch):
    """Run play on the synthetic camera; press ROLL over HTTP-less app access; restart; the game is back."""
    import table.app as app_mod

    apps = []
    real_start = app_mod.TableApp.start
    monkeypatch.setattr(app_mod.TableApp, "start", lambda self: apps.append(self) or real_start(self))
    db = str(tmp_path / "games.sqlite3")
    argv = ["play", "--camera", "synthetic:3", "--reader", "truth", "--rules", "yacht", "--players", "Ann,Bo",
            "--port", "0", "--no-buttons", "--db", db, "--pin", "1234"]
    result = {}
    t = threading.Thread(target=lambda: result.setdefault("status", main([*argv, "--duration", "8"])))
    t.start()
    end = time.monotonic() + 10
    while not apps or not apps[0].seq:
        assert time.monotonic() < end
        time.sleep(0.05)
    app = apps[0]
    app.press("roll").result(timeout=5)
    while app.state.turn.roll == 0:
        assert time.monotonic() < end, "the synthetic throw was not read"
        time.sleep(0.05)
    url = None
    while url is None:
        err = capsys.readouterr().err
        for word in err.split():
            if word.startswith("http://127.0.0.1:"):
                url = word
        time.sleep(0.05)
    health = _get(url + "health")
    assert health["ok"] and health["screen"] == "game"
    state = _get(url + "api/state")
    assert [d["value"] for d in state["game"]["dice"]] == list(app.state.turn.dice)
    assert "pin" not in state  # the PIN is only sent to the table's own page
    dice = app.state.turn.dice
    t.join(timeout=30)
    assert result["status"] == 0
    apps.clear()
    t2 = threading.Thread(target=lambda: result.__setitem__("status", main([*argv, "--duration", "1"])))
    t2.start()
    t2.join(timeout=30)
    assert result["status"] == 0 and apps[0].state.turn.dice == dice and apps[0].state.players == ("Ann", "Bo")
    err = capsys.readouterr().err  # --players/--rules were given again: say they wait for a new game
    assert "Resumed the unfinished game of Ann, Bo." in err and "--players/--rules are for a new game" in err


def test_play_on_a_busy_port_fails_before_a_game_is_stored(tmp_path, capsys):
    import socket

    from table.store import open_store

    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    db = tmp_path / "g.sqlite3"
    try:
        status = main(["play", "--camera", "synthetic", "--players", "Ann,HAL:optimal", "--bot-dice", "virtual",
                       "--no-buttons", "--port", str(busy.getsockname()[1]), "--db", str(db), "--duration", "1"])
    finally:
        busy.close()
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "cannot listen on 127.0.0.1" in err
    assert not db.exists() or open_store(db).games() == ()


@pytest.mark.slow
def test_play_served_demo_finishes_by_itself():
    from table.demo_served import serve_demo

    lines = []
    state = serve_demo(rules="yacht", players=2, seed=4, bots=["easy"], reader="truth", speed=20, port=0, linger_s=0,
                       out=lines.append)
    assert state.finished and len(state.history) == 24
    assert any(line.startswith("Winner") for line in lines)
    assert any("backend memory" in line for line in lines)


@pytest.mark.slow
def test_play_readme_demo_command_runs_with_the_pip_reader(capsys):
    """The README's first command, faster: dicetable demo (served page, real pip reader) ends by itself."""
    status = main(["demo", "--rules", "yacht", "--players", "1", "--speed", "20", "--linger", "0", "--port", "0"])
    out = capsys.readouterr().out
    assert status == 0 and "Watch the table at http://127.0.0.1:" in out and "Winner: Player 1" in out
