"""``dicetable play`` and the served ``dicetable demo`` end to end (synthetic camera, page on 127.0.0.1)."""

from __future__ import annotations

import errno
import json
import socket
import threading
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="fastapi is not installed: pip install .")

from table.cli import main  # noqa: E402


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--port", "70000"], "--port must be 0-65535"),
        (["--pin", "12"], "--pin must be 4 to 8 digits"),
        (["--rules", "snakes", "--players", "Ann"], "unknown ruleset 'snakes'"),
        (["--players", "Ann,ann"], "two players are called 'ann'"),
        (["--players", ",Bo"], "player name '' cannot be used"),
        (["--players", "A,B,C,D,E,F,G,H,I"], '9 players given; give 1 to 8 names, e.g. --players "Ann,Bo"'),
        (
            ["--listen", "192.0.2.1"],
            "'192.0.2.1' is not an address of this machine; give --listen an address of this "
            "machine, such as 127.0.0.1",
        ),
    ],
)
def test_play_bad_input_is_one_line(argv, match, capsys, tmp_path):
    status = main(["play", "--camera", "synthetic", "--no-buttons", "--db", str(tmp_path / "g.sqlite3"), *argv])
    err = capsys.readouterr().err.strip()
    assert status == 2 and err.startswith("dicetable play: error:") and match in err and "\n" not in err


def test_play_bad_camera_is_one_line(capsys, tmp_path):
    status = main(["play", "--camera", "webcam:0", "--no-buttons", "--db", str(tmp_path / "g.sqlite3")])
    err = capsys.readouterr().err
    assert status == 2 and "bad camera source 'webcam:0'" in err


#: A truth-read synthetic game of Yacht between A and B (options for :func:`run_play`).
TRUTH_YACHT_AB = ("--reader", "truth", "--rules", "yacht", "--players", "A,B")


def run_play(db, *extra: str, camera: str = "synthetic:1", port: int = 0, duration: float = 1) -> int:
    """``dicetable play`` of `camera` without buttons on `db` and `port` for `duration` s, `extra` options after."""
    argv = ["play", "--camera", camera, "--no-buttons", "--port", str(port), "--db", str(db)]
    return main([*argv, "--duration", str(duration), *extra])


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
    argv = [
        "play",
        "--camera",
        "synthetic:3",
        "--reader",
        "truth",
        "--rules",
        "yacht",
        "--players",
        "Ann,Bo",
        "--port",
        "0",
        "--no-buttons",
        "--db",
        db,
        "--pin",
        "1234",
    ]
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
    _check_audit_frames(Path(db), app.session.game_id, dice, capsys)
    apps.clear()
    t2 = threading.Thread(target=lambda: result.__setitem__("status", main([*argv, "--duration", "1"])))
    t2.start()
    t2.join(timeout=30)
    assert result["status"] == 0 and apps[0].state.turn.dice == dice and apps[0].state.players == ("Ann", "Bo")
    err = capsys.readouterr().err  # --players/--rules were given again: say they wait for a new game
    assert "Resumed the unfinished game of Ann, Bo." in err and "--players/--rules are for a new game" in err


def _check_audit_frames(db: Path, game_id: int, dice: tuple[int, ...], capsys) -> None:
    """The throw's frame was kept beside the store under its event id, and the audit counts its five dice."""
    import cv2
    import numpy as np

    from table.audit.frames import frames_dir, read_index

    rows = read_index(frames_dir(db), [game_id])
    settled = [r for r in rows if r["kind"] == "settled"]
    assert settled and settled[0]["seq"] == 1 and tuple(settled[0]["values"]) == dice
    image = cv2.imdecode(np.frombuffer(Path(settled[0]["file"]).read_bytes(), np.uint8), cv2.IMREAD_COLOR)
    assert max(image.shape[:2]) == 320
    capsys.readouterr()
    assert main(["audit", str(game_id), "--db", str(db), "--json"]) == 0
    audit = json.loads(capsys.readouterr().out)
    assert audit["dice"] == 5 and audit["frames"] == len(rows) and audit["p"] is None


def test_play_on_a_busy_port_fails_before_a_game_is_stored(tmp_path, capsys):
    import socket

    from table.store import open_store

    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    db = tmp_path / "g.sqlite3"
    try:
        status = run_play(
            db, "--players", "Ann,HAL:optimal", "--bot-dice", "virtual", camera="synthetic", port=busy.getsockname()[1]
        )
    finally:
        busy.close()
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "cannot listen on 127.0.0.1" in err
    assert "the port is in use; give another --port, or stop the program using it" in err
    assert not db.exists() or open_store(db).games() == ()


@pytest.mark.parametrize(
    "exc, words",
    [
        (
            socket.gaierror(socket.EAI_NONAME, "Name or service not known"),
            "'999.1.1.1' is not an address of this machine; give --listen an address of this machine, such as "
            "127.0.0.1 (this machine only) or 0.0.0.0",
        ),
        (OSError(errno.EADDRNOTAVAIL, "Cannot assign requested address"), "is not an address of this machine"),
        (OSError(errno.EADDRINUSE, "Address already in use"), "the port is in use; give another --port"),
        (PermissionError(errno.EACCES, "Permission denied"), "ports below 1024 need root; give a --port of 1024"),
    ],
)
def test_regression_listen_errors_give_advice_that_fits_the_cause(exc, words, monkeypatch):
    from table.display import listening

    made = []

    class Refusing:
        def __init__(self, *args):
            self.closed = False
            made.append(self)

        def setsockopt(self, *args):
            pass

        def bind(self, address):
            raise exc

        def close(self):
            self.closed = True

    monkeypatch.setattr(listening.socket, "socket", Refusing)
    with pytest.raises(OSError) as err:
        listening.bind_listener("999.1.1.1", 80)
    text = str(err.value)
    assert text.startswith("cannot listen on 999.1.1.1:80 (") and words in text and "\n" not in text
    assert ("--port" in text) != ("--listen" in text)  # one piece of advice, the one that fits
    assert made and made[0].closed


def test_regression_play_refuses_a_db_that_is_not_a_store_and_leaves_it(tmp_path, capsys):
    photo = tmp_path / "text.jpg"
    photo.write_bytes(b"\xff\xd8\xff\xe0 not a game store")
    status = main(
        ["play", "--camera", "synthetic", "--no-buttons", "--port", "0", "--db", str(photo), "--duration", "1"]
    )
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1
    assert "is not a dicetable game store (not an SQLite database)" in err and "give another --db path" in err
    assert photo.read_bytes() == b"\xff\xd8\xff\xe0 not a game store" and list(tmp_path.iterdir()) == [photo]


def test_regression_second_play_on_a_store_in_use_is_refused(tmp_path, capsys):
    """A second play on the same store (another --port) used to resume the game and drop every roll."""
    import os

    from table.app.session import GameSession
    from table.game import StartGame
    from table.store import open_store

    db = tmp_path / "g.sqlite3"
    with open_store(db) as running:  # the first table (say, the systemd service) has the store open
        session = GameSession.start(running, StartGame(at=1.0, ruleset="yacht", players=("A", "B")))
        status = run_play(db, *TRUTH_YACHT_AB)
        err = capsys.readouterr().err
        assert status == 2 and err.count("\n") == 1 and "page is at" not in err
        assert err.startswith(
            f"dicetable play: error: the game store {str(db)!r} is in use by another "
            f"dicetable (pid {os.getpid()}): stop it first ('sudo systemctl stop dicetable', "
            "or Ctrl-C where it runs) or give another --db"
        )
        assert [g.id for g in running.games()] == [session.game_id]  # nothing resumed, started or written
        assert running.load(session.game_id) == session.state


def test_regression_play_wait_waits_for_the_store_instead_of_exiting(tmp_path, capsys, monkeypatch):
    """Under systemd, a play on a store held by a manual play exited and was restarted every 3 s for as long
    as the manual one ran; with --wait (the service's) it waits, says why once, and starts when it is free."""
    import threading

    from table.commands import play
    from table.store import open_store, store_holder

    monkeypatch.setattr(play, "WAIT_POLL_S", 0.05)
    db = tmp_path / "g.sqlite3"
    assert store_holder(db) is None  # no store yet
    result = {}
    with open_store(db) as manual:  # the manual play
        assert store_holder(db).startswith("another dicetable (pid ")
        t = threading.Thread(
            target=lambda: result.setdefault(
                "status",
                run_play(db, "--wait", *TRUTH_YACHT_AB, duration=0.5),
            )
        )
        t.start()
        t.join(1.0)
        assert t.is_alive() and [g.id for g in manual.games()] == []  # waiting; nothing started or written
    t.join(30)
    assert result == {"status": 0}
    err = capsys.readouterr().err
    assert err.count("waiting until it is free") == 1 and "is in use by another dicetable" in err
    assert "page is at" in err
    with open_store(db, readonly=True) as store:
        assert len(store.games()) == 1  # the waiting play started its game once the store was free


def test_play_wait_waits_for_a_port_in_use_but_not_for_a_bad_address(tmp_path, capsys, monkeypatch):
    import socket

    from table.commands import play

    monkeypatch.setattr(play, "WAIT_POLL_S", 0.05)
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    threading_timer = __import__("threading").Timer(0.5, busy.close)
    threading_timer.start()
    status = run_play(tmp_path / "g.sqlite3", "--wait", *TRUTH_YACHT_AB, port=port, duration=0.3)
    err = capsys.readouterr().err
    assert status == 0 and f"waiting until it is free: port {port} is in use" in err and "page is at" in err
    status = run_play(tmp_path / "h.sqlite3", "--wait", "--listen", "192.0.2.77", port=8123, duration=0.3)
    assert status != 0 and "not an address of this machine" in capsys.readouterr().err


@pytest.mark.parametrize(
    "camera, words",
    [
        ("opencv:{tmp}/nothere.mp4", "could not open opencv:"),
        ("images:{tmp}/empty", "no image files"),
        ("images:{tmp}/nothere/*.jpg", "no image files"),
    ],
)
def test_regression_play_with_a_recording_that_cannot_open_exits_2(camera, words, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    db = tmp_path / "g.sqlite3"
    status = run_play(db, "--rules", "yacht", camera=camera.format(tmp=tmp_path))
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and err.startswith("dicetable play: error:") and words in err
    assert "page is at" not in err and not db.exists()  # told before the page and before a game is stored


def test_regression_play_says_a_live_camera_is_missing_and_keeps_trying(tmp_path, capsys, monkeypatch):
    import vision.sources
    from vision.sources import SourceError

    tries = []

    def no_camera(spec, **options):
        tries.append(spec)
        raise SourceError(f"could not open {spec}: is the camera plugged in?")

    monkeypatch.setattr(vision.sources, "open_source", no_camera)
    status = run_play(tmp_path / "g.sqlite3", camera="opencv:7")
    err = capsys.readouterr().err
    assert status == 0 and len(tries) >= 2  # once before the page, then the camera thread tries again
    assert (
        "dicetable: cannot open the camera: could not open opencv:7: is the camera plugged in?; "
        "the table keeps trying (after 1 s, then less often: every 30 s at most)"
    ) in err
    assert err.index("cannot open the camera") < err.index("page is at")


def test_regression_play_checks_pins_before_the_page_is_up(tmp_path, capsys):
    db = tmp_path / "g.sqlite3"
    status = main(
        [
            "play",
            "--camera",
            "synthetic",
            "--pins",
            str(tmp_path / "nothere.toml"),
            "--port",
            "0",
            "--db",
            str(db),
            "--duration",
            "1",
        ]
    )
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "pin map" in err and "does not exist" in err
    assert "page is at" not in err and not db.exists()


@pytest.mark.parametrize(
    "text, said",
    [
        ("[button]\nroll = 17\n", "unknown table 'button'"),
        ("buttons = 5\n", "buttons = 5 is not a table"),
        ("", "no [buttons] table, so no button would be wired"),
    ],
)
def test_regression_play_refuses_a_pin_map_that_would_unwire_buttons(tmp_path, capsys, text, said):
    pins = tmp_path / "typo.toml"
    pins.write_text(text)
    db = tmp_path / "g.sqlite3"
    status = main(
        ["play", "--camera", "synthetic", "--pins", str(pins), "--port", "0", "--db", str(db), "--duration", "1"]
    )
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and f"{pins}: {said}" in err
    assert "page is at" not in err and not db.exists()


@pytest.mark.slow
def test_play_served_demo_finishes_by_itself():
    from table.demo.served import serve_demo

    lines = []
    state = serve_demo(
        rules="yacht", players=2, seed=4, bots=["easy"], reader="truth", speed=20, port=0, linger_s=0, out=lines.append
    )
    assert state.finished and len(state.history) == 24
    assert any(line.startswith("Winner") for line in lines)
    assert any("backend memory" in line for line in lines)


@pytest.mark.slow
def test_play_readme_demo_command_runs_with_the_pip_reader(capsys):
    """The README's first command, faster: dicetable demo (served page, real pip reader) ends by itself."""
    status = main(["demo", "--rules", "yacht", "--players", "1", "--speed", "20", "--linger", "0", "--port", "0"])
    out = capsys.readouterr().out
    assert status == 0 and "Watch the table at http://127.0.0.1:" in out and "Winner: Player 1" in out


def test_regression_served_demo_watches_with_the_shipped_profile_not_the_users(tmp_path, monkeypatch):
    """The demo's camera is synthetic: a user's own 'default' calibration changed its game (seed 0 ended
    196-341 instead of 261-186), which looked like --speed changing the game."""
    import table.demo.livetray
    from calibration.errors import ProfileError
    from calibration.profile import PACKAGED_PROFILES_DIR, load_profile
    from table.demo.served import serve_demo

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    mine = tmp_path / "dicetable" / "profiles"
    mine.mkdir(parents=True)
    (mine / "default.toml").write_text("not = [valid toml\n")
    with pytest.raises(ProfileError):
        load_profile("default")  # play and watch use the user's own default first

    class Started(Exception):
        pass

    def tray(**kw):
        raise Started  # the profile was loaded without complaint: stop before the game

    monkeypatch.setattr(table.demo.livetray, "LiveTray", tray)
    with pytest.raises(Started):
        serve_demo(rules="yacht", players=1, reader="truth", port=0, linger_s=0, out=lambda line: None)
    assert load_profile("default", PACKAGED_PROFILES_DIR).camera.source == "picamera2"


def test_phone_urls_name_the_lan_addresses_and_the_mdns_name(monkeypatch):
    """With --listen 0.0.0.0, play printed only http://127.0.0.1:PORT/, which a phone cannot open."""
    import socket

    from table.display.listening import phone_urls

    names = {
        "DicePi": ("127.0.1.1", "192.168.1.40", "fe80::1%eth0", "fd00::40"),
        "localhost": ("127.0.0.1", "::1"),
        "dicepi.lan": ("192.168.1.40",),
        "0": ("0.0.0.0",),
    }

    def addresses(name, port, *args, **kwargs):
        found = names.get(name, (name,))  # an address stands for itself
        return [
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", (a, 0, 0, 0))
            if ":" in a
            else (socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, 0))
            for a in found
        ]

    monkeypatch.setattr(socket, "gethostname", lambda: "DicePi")
    monkeypatch.setattr(socket, "getaddrinfo", addresses)
    monkeypatch.setattr("table.display.listening.mdns_answers", lambda: True)
    every4 = phone_urls("0.0.0.0", 8000)
    assert every4[0] == "http://192.168.1.40:8000/" and every4[-1] == "http://dicepi.local:8000/"
    assert not any("127." in u or "fe80" in u or "[" in u for u in every4)  # IPv4 only: not listening on IPv6
    assert "http://[fd00::40]:8000/" in phone_urls("::", 8000)
    assert phone_urls("127.0.0.1", 8000) == [] and phone_urls("::1", 8000) == []
    assert phone_urls("192.168.1.40", 8123) == ["http://192.168.1.40:8123/"]
    assert phone_urls("localhost", 8000) == [] and phone_urls("DicePi", 8000) == [
        "http://192.168.1.40:8000/",
        "http://[fd00::40]:8000/",
    ]
    assert phone_urls("dicepi.lan", 8000) == ["http://192.168.1.40:8000/"]  # the address: the page answers to it
    assert phone_urls("0", 8000) == every4  # 0 is 0.0.0.0


def test_regression_no_mdns_name_is_printed_where_nothing_answers_to_it(monkeypatch, tmp_path):
    """play printed http://HOSTNAME.local:PORT/ even where no mDNS responder runs: a URL no phone could open."""
    import socket

    from table.display import listening

    monkeypatch.setattr(socket, "gethostname", lambda: "DicePi")
    monkeypatch.setattr(listening, "AVAHI_SOCKET", tmp_path / "avahi-daemon" / "socket")
    assert not listening.mdns_answers()
    assert not any(".local" in u for u in listening.phone_urls("0.0.0.0", 8000))
    (tmp_path / "avahi-daemon").mkdir()
    (tmp_path / "avahi-daemon" / "socket").touch()  # left behind by an Avahi that crashed: nothing answers
    assert not listening.mdns_answers()
    (tmp_path / "avahi-daemon" / "socket").unlink()
    with socket.socket(socket.AF_UNIX) as avahi:  # Avahi runs
        avahi.bind(str(tmp_path / "avahi-daemon" / "socket"))
        avahi.listen()
        assert listening.mdns_answers() and "http://dicepi.local:8000/" in listening.phone_urls("0.0.0.0", 8000)


def test_regression_play_goes_on_while_a_live_camera_hangs_in_its_open(tmp_path, capsys, monkeypatch):
    """An open that blocked for ever kept play from ever serving its page."""
    import threading

    import vision.sources

    release = threading.Event()
    monkeypatch.setattr("table.app.camera.OPEN_S", 0.3)

    def hangs(spec, **options):
        release.wait(30)
        raise OSError("gave up")

    monkeypatch.setattr(vision.sources, "open_source", hangs)
    try:
        status = main(
            ["play", "--camera", "opencv:7", "--no-buttons", "--port", "0", "--db", str(tmp_path / "g.sqlite3")]
            + ["--duration", "1"]
        )
    finally:
        release.set()
    err = capsys.readouterr().err
    assert status == 0 and "page is at" in err
    assert "cannot open the camera: the camera did not open within 0.3 s; the table keeps trying" in err


def test_play_says_when_a_game_finishes_and_what_comes_next(tmp_path, capsys, monkeypatch):
    """A bots-only game finishes by itself: play prints one line (winner, scores, id, the export and audit
    commands, what comes next) and keeps the table running."""
    import table.app as app_mod
    import table.commands.play as play_mod

    apps = []
    real_start = app_mod.TableApp.start
    monkeypatch.setattr(app_mod.TableApp, "start", lambda self: apps.append(self) or real_start(self))
    # play runs until Ctrl-C; here until the game is over (the line is printed before `finished` is set)
    monkeypatch.setattr(play_mod, "run_until_stopped", lambda duration: apps[0].finished.wait(120))
    db = tmp_path / "games.sqlite3"
    argv = ["play", "--camera", "synthetic", "--rules", "yacht", "--players", "HAL:easy,Eve:easy"]
    argv += ["--bot-dice", "virtual", "--bot-delay", "0", "--no-buttons", "--port", "0", "--db", str(db)]
    assert main(argv) == 0
    app = apps[0]
    assert app.finished.is_set()
    lines = [x for x in capsys.readouterr().err.splitlines() if "finished" in x]
    game_id = app.session.game_id
    totals = app.state.totals()
    assert len(lines) == 1 and f"game {game_id} finished" in lines[0]
    assert f"HAL {totals[0]}, Eve {totals[1]}" in lines[0]
    assert f"dicetable export {game_id}" in lines[0] and f"dicetable audit {game_id}" in lines[0]
    assert "setup screen" in lines[0] and "Ctrl-C stops" in lines[0]


def test_ctrl_c_before_the_wait_still_stops_the_camera_and_the_page(tmp_path):
    """A Ctrl-C that lands after the camera loop and the page started, before the wait for the end, ends the
    table with one line and status 130, within the subprocess's time limit."""
    import subprocess
    import sys

    code = (
        "import sys, table.commands.play as play\n"
        "def interrupted(duration):\n"
        "    raise KeyboardInterrupt\n"
        "play.run_until_stopped = interrupted\n"
        "from table.cli import main\n"
        "sys.exit(main(['play', '--camera', 'synthetic:3', '--rules', 'yacht', '--players', 'Ann', '--no-buttons',"
        f" '--port', '0', '--db', {str(tmp_path / 'g.sqlite3')!r}]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 130, done.stderr[-2000:]
    assert "dicetable play: interrupted" in done.stderr
