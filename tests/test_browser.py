"""The page in real headless Chromium (Debian's, driven by Playwright): a whole game, screenshots, latency.

A two-player Yacht game is played with mock GPIO buttons (gpiozero's MockFactory)
on the synthetic camera (a tray thrown on ROLL, read by the roll watcher); the
test checks the dice, the options, the scores and the winners on the page.
Screenshots of every screen at 800x480 and 1920x1080 go to $DICETABLE_ARTIFACTS
(default: a temporary folder); no screen may overflow at either size.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import tempfile
import time
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
pw = pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install '.[test]'")
pytest.importorskip("fastapi", reason="fastapi is not installed: pip install '.[test]'")
if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is absent: apt-get install -y chromium", allow_module_level=True)

from gpiozero.pins.mock import MockFactory  # noqa: E402

from calibration.profile import load_profile  # noqa: E402
from table.app import ADVICE, CONFIRM_END, CONFIRM_PAUSE_S, CONFIRM_TOO_SOON, MENU_ITEMS, TableApp  # noqa: E402
from table.app.camera import CameraLoop  # noqa: E402
from table.commands.play import watcher_factory  # noqa: E402
from table.demo.livetray import LiveTray  # noqa: E402
from table.demo.served import rss_mb  # noqa: E402
from table.display.server import DisplayServer  # noqa: E402
from table.display.snapshot import Setup  # noqa: E402
from table.inputs import ButtonPanel, load_pin_map  # noqa: E402
from table.rules import find_ruleset, score_options, winners  # noqa: E402
from table.strategy.builtin_player import choose_box, choose_holds  # noqa: E402

pytestmark = pytest.mark.slow

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SIZES = {"small": (800, 480), "large": (1920, 1080)}
NEW = [i for i, _ in MENU_ITEMS].index("new")  # the menu's "New game" item


def artifacts() -> Path:
    folder = Path(os.environ.get("DICETABLE_ARTIFACTS") or Path(tempfile.gettempdir()) / "dicetable-artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class Rig:
    """The table app on the synthetic camera, its page open at both sizes, buttons on mock pins."""

    def __init__(self, tmp: Path, *, autostart: bool) -> None:
        profile = load_profile("default")
        self.tray = LiveTray(seed=5)

        make = watcher_factory(profile, "truth")

        self.app = TableApp(
            tmp / "games.sqlite3",
            setup=Setup("yacht", "forced", ["Ann", "Bo"]),
            autostart=autostart,
            tray=self.tray,
            pin="4321",
        ).start()
        self.server = DisplayServer(self.app, port=0).start()
        self.camera = CameraLoop(self.app, lambda: self.tray, make, speed=0).start()
        self.pins = MockFactory()
        self.clock = [1000.0]
        self.pin_map = load_pin_map()
        self.panel = ButtonPanel(
            self.pin_map, on_command=self._command, pin_factory=self.pins, clock=lambda: self.clock[0]
        )
        self.app.subscribe(lambda seq, snap: self.panel.set_holds((snap.get("game") or {}).get("holds") or ()))
        self.futures = []

    def _command(self, c):
        self.futures.append(self.app.press(c, "button"))

    def press(self, name: str, hold_s: float = 0.1) -> None:
        """Press and release a button on its mock pin; wait until the app has handled it."""
        from table.inputs import Command

        pin = self.pins.pin(self.pin_map.buttons[Command(name)])
        self.clock[0] += 1.0
        pin.drive_low()
        self.clock[0] += hold_s
        pin.drive_high()
        while self.futures:
            self.futures.pop().result(timeout=10)

    def close(self) -> None:
        self.panel.close()
        self.camera.close()
        self.server.close()
        self.app.close()


def wait_for(cond, timeout=20.0, what: object = "condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what() if callable(what) else what}")


@pytest.fixture(scope="module")
def browser():
    with pw.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def open_pages(browser, url):
    pages = {}
    for name, (w, h) in SIZES.items():
        page = browser.new_page(viewport={"width": w, "height": h})
        page.goto(url)
        pages[name] = page
    return pages


def seq_shown(page) -> int:
    return int(page.evaluate("document.body.dataset.seq || -1"))


def settle_pages(pages, app):
    """Wait until every page drew the app's latest snapshot."""
    for page in pages.values():
        page.wait_for_function(f"Number(document.body.dataset.seq || -1) >= {app.seq}", timeout=10000)


OVERFLOW_JS = """() => {
  const bad = [];
  const W = innerWidth, H = innerHeight;
  for (const e of document.querySelectorAll('.screen:not([hidden]) *, .bar *, .menu:not([hidden]) *')) {
    if (!e.offsetParent && getComputedStyle(e).position !== 'fixed') continue;
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if (r.right > W + 1 || r.bottom > H + 1 || r.left < -1 || r.top < -1) {
      bad.push(e.className + ' ' + e.tagName + ' ' + JSON.stringify([r.left, r.top, r.right, r.bottom]));
    }
  }
  const boxes = '.options, .left, .right, .screen, .players, .setup-grid, .end-body, .field';
  for (const e of document.querySelectorAll(boxes)) {
    if (!e.offsetParent) continue;
    if (e.scrollHeight > e.clientHeight + 2 || e.scrollWidth > e.clientWidth + 2) {
      bad.push('clipped ' + e.className + ' ' + e.scrollHeight + '>' + e.clientHeight);
    }
  }
  return bad;
}"""


def shoot(pages, name):
    for size, page in pages.items():
        page.screenshot(path=str(artifacts() / f"{name}-{size}.png"))
        bad = page.evaluate(OVERFLOW_JS)
        assert bad == [], f"{name} at {size}: overflow {bad[:5]}"


def page_dice(page):
    return [int(v) for v in page.eval_on_selector_all("#dice .die", "els => els.map(e => e.dataset.value)")]


def page_options(page):
    return page.eval_on_selector_all(
        "#options .opt",
        "els => els.map(e => [e.dataset.box, Number(e.querySelector('.pts').firstChild.textContent),"
        " e.classList.contains('best'), e.classList.contains('selected')])",
    )


def test_browser_whole_yacht_game_with_buttons(browser, tmp_path, capsys):
    rig = Rig(tmp_path, autostart=False)
    try:
        pages = open_pages(browser, rig.server.url)
        settle_pages(pages, rig.app)
        shoot(pages, "01-setup")
        # Setup with the buttons: rules field -> ROLL cycles ruleset; NEXT x3 to Start.
        assert pages["small"].locator("#rulesets .on").inner_text() == find_ruleset("yacht").title
        for _ in range(3):
            rig.press("next")
        rig.press("roll")
        wait_for(lambda: rig.app.screen == "game", what="game screen")
        settle_pages(pages, rig.app)
        shoot(pages, "02-game-before-roll")
        rs = find_ruleset("yacht")
        rss = []
        turn_no = 0
        while rig.app.state.turn is not None:
            st = rig.app.state
            player = st.turn.player
            card = st.cards[player]
            for roll in range(1, 4):
                before = rig.app.verdicts
                rig.press("roll")
                wait_for(
                    lambda: rig.app.verdicts > before and rig.app.state.turn.roll == roll,
                    what=lambda: (
                        f"roll {roll} (app: {rig.app.message!r}, {rig.app.warnings}, "
                        f"{rig.app.camera_status}, verdicts {rig.app.verdicts} from {before})"
                    ),
                )
                settle_pages(pages, rig.app)
                st = rig.app.state
                dice = st.turn.dice
                page = pages["small"]
                assert page_dice(page) == list(dice)
                opts = score_options(rs, dice, card, roll=roll)
                shown = page_options(page)
                assert [(b, p) for b, p, _, _ in shown] == list(opts.items())
                best = max(opts, key=lambda b: (opts[b], -rs.boxes.index(b)))
                assert [b for b, _, is_best, _ in shown if is_best] == [best]
                assert [b for b, _, _, sel in shown if sel] == [best]
                if turn_no == 1 and roll == 1:
                    shoot(pages, "03-game-rolled")
                if roll == 3 or turn_no % 3 == 0:
                    break
                holds = choose_holds(rs, dice, card, roll=roll)
                if all(holds):
                    break
                for i, h in enumerate(holds):
                    if h != st.turn.holds[i]:
                        rig.press(f"hold_{i + 1}")
                assert rig.app.state.turn.holds == tuple(holds)
                assert [rig.pins.pin(rig.pin_map.leds[i]).state for i in range(5)] == list(holds)
                settle_pages(pages, rig.app)
                held = pages["small"].eval_on_selector_all(
                    "#dice .die", "els => els.map(e => e.classList.contains('held'))"
                )
                assert held == list(holds)
                if turn_no == 1:
                    shoot(pages, "04-game-held")
            st = rig.app.state
            box = choose_box(rs, st.turn.dice, card, roll=st.turn.roll)
            while rig.app.selected != box:
                rig.press("next")
            points = score_options(rs, st.turn.dice, card, roll=st.turn.roll)[box]
            rig.press("score")
            settle_pages(pages, rig.app)
            assert rig.app.state.cards[player].boxes[box] == points
            if turn_no == 2:
                rig.app.camera_update(warning=("leaning", ADVICE["leaning"])).result()
                rig.app.camera_update(warning=("held-changed", ADVICE["held-changed"])).result()
                settle_pages(pages, rig.app)
                texts = pages["small"].locator(".warning").all_inner_texts()
                assert ADVICE["leaning"] in texts
                shoot(pages, "05-game-warnings")
                rig.app.camera_update(warning=("leaning", None)).result()
                rig.app.camera_update(warning=("held-changed", None)).result()
            if turn_no == 3:
                rig.press("menu")
                settle_pages(pages, rig.app)
                assert pages["small"].locator("#menu").is_visible()
                shoot(pages, "06-menu")
                rig.press("prev")  # wraps round to "New game": the game is ended only once confirmed
                rig.press("roll")
                settle_pages(pages, rig.app)
                assert pages["small"].locator("#menu-items li.on").inner_text() == CONFIRM_END
                shoot(pages, "06-menu-confirm-end")
                rig.press("next")  # any other button keeps the game
                assert rig.app.screen == "game" and not rig.app.menu_confirm
                rig.press("menu")
            rss.append(rss_mb())
            turn_no += 1
        settle_pages(pages, rig.app)
        st = rig.app.state
        totals = st.totals()
        names = [st.players[i] for i in winners(totals)]
        head = pages["small"].locator("#winners").inner_text()
        assert all(n in head for n in names) and str(max(totals)) in head
        total_row = pages["large"].eval_on_selector_all("#end-card tr.sum td", "els => els.map(e => e.textContent)")
        assert total_row == ["Total", *map(str, totals)]
        shoot(pages, "07-end")
        png = pages["small"].request.get(rig.server.url + "export/scorecards.png")
        assert png.ok and png.body()[:8] == b"\x89PNG\r\n\x1a\n"
        csv = pages["small"].request.get(rig.server.url + "export/scorecards.csv")
        assert csv.ok and csv.text().splitlines()[-1] == "total," + ",".join(map(str, totals))
        lat = rig.app.latencies_ms
        assert len(lat) >= turn_no
        with capsys.disabled():
            print(
                f"\n[browser] {turn_no} turns; settled roll -> page drawn: median {statistics.median(lat):.1f} ms, "
                f"95th pct {sorted(lat)[int(0.95 * (len(lat) - 1))]:.1f} ms over {len(lat)} rolls; "
                f"backend RSS during the game max {max(rss):.0f} MB; screenshots in {artifacts()}"
            )
    finally:
        rig.close()


def test_browser_eight_players_yahtzee_fit_both_sizes(browser, tmp_path):
    """The largest table: eight players with long names, Yahtzee's 13 boxes; nothing overflows."""
    from table.inputs import Command
    from vision.watch import EventKind, RollEvent, TrayDie

    names = [f"Player number {k} long" for k in range(1, 9)]
    app = TableApp(tmp_path / "g.sqlite3", setup=Setup("yahtzee", "forced", names), autostart=True).start()
    server = DisplayServer(app, port=0).start()
    try:
        dice = tuple(TrayDie(v, (30.0 * k + 30, 100.0), (0, 0, 10, 10), 0.99) for k, v in enumerate((2, 3, 4, 5, 6)))
        app.roll_event(RollEvent(EventKind.SETTLED, 0, 0.0, dice=dice)).result(timeout=5)
        app.press(Command.HOLD_1).result(timeout=5)
        pages = open_pages(browser, server.url)
        settle_pages(pages, app)
        assert len(page_options(pages["small"])) == 13
        shoot(pages, "08-game-8-players")
        for c in (Command.MENU, Command.NEXT, Command.ROLL):  # menu: hints on
            app.press(c).result(timeout=5)
        assert app.hints
        settle_pages(pages, app)
        page = pages["small"]
        assert page.locator("#hint").inner_text().startswith("Hint: ")
        assert page.locator(".opt.hint").count() == 1 and page.locator(".opt .cost").count() >= 10
        shoot(pages, "09-game-hints")
    finally:
        server.close()
        app.close()


@pytest.mark.parametrize(
    "rules, seats",
    [
        ("yacht", ["HAL:optimal", "Eve:easy"]),
        ("yahtzee", [f"Player number {k} long:{('easy', 'medium', 'optimal')[k % 3]}" for k in range(1, 9)]),
    ],
)
def test_browser_end_screen_shows_the_analysis(browser, tmp_path, rules, seats):
    """Bots play a whole game on screen; the end screen shows each player's loss and the costliest decisions."""
    from table.inputs import Command

    app = TableApp(
        tmp_path / "g.sqlite3",
        setup=Setup(rules, "forced", seats),
        autostart=True,
        bot_dice="virtual",
        bot_delay_s=0,
        bot_seed=3,
    ).start()
    server = DisplayServer(app, port=0).start()
    try:
        assert app.finished.wait(120)
        wait_for(lambda: (app.snapshot.get("analysis") or {}).get("status") == "ready", what="the analysis")
        want = app.snapshot["analysis"]
        # one view at a time on the small screen, and with three players or more (fit.js): show the analysis
        many = {"small": True, "large": len(seats) > 2}
        app.press(Command.NEXT).result(timeout=5)
        pages = open_pages(browser, server.url)
        settle_pages(pages, app)
        for size, page in pages.items():
            assert page.locator("#analysis").is_visible()
            assert page.locator("#analysis-players .an-pl").count() == len(seats)
            losses = page.eval_on_selector_all("#analysis-players .an-loss", "els => els.map(e => e.textContent)")
            assert losses == [f"{p['loss']:.1f}" for p in want["players"]]
            rows = page.locator("#analysis-worst tbody tr")
            assert rows.count() == len(want["worst"]) > 0  # in the page; as many shown as fit whole (fit.js)
            first = rows.first.inner_text()
            w = want["worst"][0]
            assert w["name"] in first and " ".join(map(str, w["dice"])) in first and w["choice"] in first
            assert f"best: {w['best']}" in first
            assert (
                page.locator("#export-analysis").is_visible() and page.locator("#end-tabs").is_visible() == many[size]
            )
        shoot(pages, f"10-end-analysis-{len(seats)}p")
        csv = pages["small"].request.get(server.url + "export/analysis.csv")
        assert csv.ok and csv.text().splitlines()[0].startswith("turn,player,kind,roll,dice")
        # the small screen shows one view at a time: NEXT goes back to the scorecards
        app.press(Command.NEXT).result(timeout=5)
        settle_pages(pages, app)
        assert not pages["small"].locator("#analysis").is_visible()
        assert pages["small"].locator("#end-card").is_visible()
        shoot(pages, f"11-end-card-{len(seats)}p")
    finally:
        server.close()
        app.close()


def test_browser_page_of_another_site_cannot_open_the_websocket(browser, tmp_path):
    """A page of another program on this machine (another port: another site) gets no snapshot, so no PIN.

    The other page is served for real on loopback: Chromium itself blocks public sites' pages
    from reaching 127.0.0.1 (local network access checks), not pages of this machine.
    """
    import http.server
    import threading

    class Blank(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<html><body>another site</body></html>")

        def log_message(self, *args):
            pass

    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Blank)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    app = TableApp(tmp_path / "g.sqlite3", pin="4321").start()
    server = DisplayServer(app, port=0).start()
    open_ws = """url => new Promise((done) => {
        const ws = new WebSocket(url);
        ws.onmessage = (m) => done('pin ' + JSON.parse(m.data).pin);
        ws.onclose = () => done('closed');
    })"""
    url = f"ws://127.0.0.1:{server.port}/ws"
    try:
        evil = browser.new_page()
        evil.goto(f"http://127.0.0.1:{other.server_port}/")
        assert evil.evaluate(open_ws, url) == "closed"
        own = browser.new_page()
        own.goto(server.url)
        assert own.evaluate(open_ws, url) == "pin 4321"
    finally:
        server.close()
        app.close()
        other.shutdown()
        other.server_close()


def test_browser_phone_pin_lock_out_is_said(browser, tmp_path):
    """A phone's page says when wrong PINs lock its address out, and the right PIN waits too."""
    app = TableApp(
        tmp_path / "g.sqlite3", setup=Setup("yacht", "forced", ["Ann", "Bo"]), autostart=True, pin="4321"
    ).start()
    server = DisplayServer(app, port=0, local_hosts=frozenset()).start()  # this browser is a phone
    try:
        page = browser.new_page(viewport={"width": 800, "height": 480})
        page.goto(server.url)
        for k, words in enumerate(["Wrong PIN."] * 4 + ["Too many wrong PINs; try again in 30 s."]):
            page.fill("#pinbox input", f"{k:04d}")
            page.click("#pinbox button")
            page.wait_for_function(
                "w => document.getElementById('message').textContent === w", arg=words, timeout=10000
            )
        page.evaluate("() => document.getElementById('message').textContent = ''")
        page.fill("#pinbox input", "4321")  # the right PIN, too soon
        page.click("#pinbox button")
        page.wait_for_function(
            "() => /^Too many wrong PINs; try again in \\d+ s[.]$/"
            ".test(document.getElementById('message').textContent)",
            timeout=10000,
        )
        assert page.evaluate("document.body.classList.contains('readonly')") and not app.menu_open
    finally:
        server.close()
        app.close()


def take_control(page, pin):
    """Type `pin` into a phone's page (Control) and wait until the page may send commands."""
    page.fill("#pinbox input", pin)
    page.click("#pinbox button")
    page.wait_for_function("() => !document.body.classList.contains('readonly')", timeout=10000)


def test_regression_phone_page_drops_a_stale_pin_after_the_table_restarts(browser, tmp_path):
    """The phone page kept the PIN it had unlocked with and sent it with every press; after the table
    restarted with a new PIN each press counted as a wrong PIN, so five presses locked the phone out."""
    db = tmp_path / "g.sqlite3"
    setup = Setup("yacht", "forced", ["Ann", "Bo"])
    app = TableApp(db, setup=setup, autostart=True, pin="4321").start()
    server = DisplayServer(app, port=0, local_hosts=frozenset()).start()  # this browser is a phone
    port = server.port
    page = browser.new_page(viewport={"width": 800, "height": 480})
    try:
        page.goto(server.url)
        take_control(page, "4321")
        server.close()
        app.close()
        app = TableApp(db, setup=setup, autostart=True, pin="8765").start()  # restarted: a new PIN
        server = DisplayServer(app, port=port, local_hosts=frozenset()).start()
        page.wait_for_function(
            "() => /PIN has changed/.test(document.getElementById('message').textContent)", timeout=15000
        )
        assert page.evaluate("document.body.classList.contains('readonly')")
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        for _ in range(6):  # M opens the menu: pressed with no PIN, it is refused as read-only, not a wrong PIN
            page.keyboard.press("m")
        page.wait_for_timeout(500)
        assert not app.menu_open and server.app.state.pin_guard.wait_s("127.0.0.1") == 0
        take_control(page, "8765")
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        page.keyboard.press("m")
        wait_for(lambda: app.menu_open, what="the menu opened from the phone")
    finally:
        page.close()
        server.close()
        app.close()


class Lag:
    """A slow network between the table and a page: while :attr:`on`, what the table sends is held back."""

    def __init__(self) -> None:
        self.on, self.held, self._page_side = False, [], None

    def route(self, ws) -> None:
        """Playwright's WebSocket route: pass the page's messages on; hold the table's while lagging."""
        table_side = ws.connect_to_server()
        self._page_side = ws
        ws.on_message(table_side.send)
        table_side.on_message(lambda m: self.held.append(m) if self.on else ws.send(m))

    def catch_up(self) -> None:
        """End the lag: send the page what was held back, in order."""
        self.on = False
        while self.held:
            self._page_side.send(self.held.pop(0))


@contextlib.contextmanager
def yacht_page(browser, tmp_path, lag: Lag | None = None):
    """A yacht game of Ann and Bo (PIN 4321) on the table itself, its page open at 800x480 (touch) and drawn.

    With `lag`, the page's WebSocket goes through it. Yields ``(app, page)``; closes the page, the server and
    the app.
    """
    app = TableApp(
        tmp_path / "g.sqlite3", setup=Setup("yacht", "forced", ["Ann", "Bo"]), autostart=True, pin="4321"
    ).start()
    server = DisplayServer(app, port=0).start()
    page = browser.new_page(viewport={"width": 800, "height": 480}, has_touch=True)
    if lag is not None:
        page.route_web_socket(lambda url: url.endswith("/ws"), lag.route)
    try:
        page.goto(server.url)
        page.wait_for_function("() => Number(document.body.dataset.seq || -1) >= 0", timeout=10000)
        yield app, page
    finally:
        page.close()
        server.close()
        app.close()


def test_regression_menu_is_used_by_taps_and_a_held_key_does_not_end_the_game(browser, tmp_path):
    """The menu's full-screen backdrop covered the page's keys and its items took no taps: on a touch screen
    the menu could be neither used nor closed. A held Enter key repeated past the confirmation pause."""
    shown = "n => Number(document.body.dataset.seq || -1) >= n"

    def status():
        from table.store import open_store

        with open_store(app.db_path, readonly=True) as store:
            return [g.status for g in store.games()]

    with yacht_page(browser, tmp_path) as (app, page):
        page.tap(".keys button[data-cmd=menu]")
        wait_for(lambda: app.menu_open, what="the menu opened by a tap")
        page.wait_for_function(shown, arg=app.seq, timeout=10000)
        page.tap(".keys button[data-cmd=menu]")  # the page's keys stay above the menu's backdrop
        wait_for(lambda: not app.menu_open, what="the menu closed by a tap on MENU")
        page.tap(".keys button[data-cmd=menu]")
        wait_for(lambda: app.menu_open, what="the menu opened again")
        page.wait_for_function(shown, arg=app.seq, timeout=10000)
        page.tap("#menu", position={"x": 10, "y": 10})  # the backdrop around the menu closes it
        wait_for(lambda: not app.menu_open, what="the menu closed by a tap beside it")
        page.tap(".keys button[data-cmd=menu]")
        wait_for(lambda: app.menu_open, what="the menu opened again")
        page.wait_for_function(shown, arg=app.seq, timeout=10000)
        page.tap(f"#menu-items li >> nth={NEW}")  # "New game" during a game: asked first
        wait_for(lambda: app.menu_confirm, what="the question")
        page.wait_for_function(shown, arg=app.seq, timeout=10000)
        assert page.locator("#menu-items li.on").inner_text() == CONFIRM_END
        app.press("roll", mono=app.screens.confirm_asked_at + 0.1).result(timeout=5)  # a double press
        page.wait_for_function(shown, arg=app.seq, timeout=10000)
        assert page.locator("#menu-note").inner_text() == CONFIRM_TOO_SOON  # in full: the footer's line is short
        repeat = """() => { for (let k = 0; k < 40; k++)
            document.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', repeat: true, bubbles: true})); }"""
        page.evaluate(repeat)  # the key held down: its repeats are not presses
        time.sleep(CONFIRM_PAUSE_S + 0.2)
        page.evaluate(repeat)
        page.wait_for_timeout(300)
        assert app.screen == "game" and app.menu_confirm and status() == ["playing"]
        page.wait_for_function(shown, arg=app.seq, timeout=10000)
        page.tap(f"#menu-items li >> nth={NEW}")  # a second tap on the item, after a pause: yes
        wait_for(lambda: app.screen == "setup", what="the game ended by a second tap")
        assert status() == ["abandoned"]


@pytest.mark.parametrize("answer", ["tap", "key", "enter"])
def test_regression_a_lagging_page_does_not_answer_a_question_it_never_showed(browser, tmp_path, answer):
    """The table asked "End this game?" from its ROLL button while a page, lagging, still showed "New game"
    selected; a tap on it sent ROLL (key steps worked out from what the page showed), as did its CONFIRM key
    and Enter, and arriving after the confirmation pause that ROLL ended the game. The page's taps and keys
    now say which snapshot it showed, and a tap names its item."""
    from table.app import NOT_SEEN

    lag = Lag()
    with yacht_page(browser, tmp_path, lag) as (app, page):
        shown = "n => Number(document.body.dataset.seq || -1) >= n"
        app.press("menu").result(timeout=5)
        app.press("prev").result(timeout=5)  # "New game" selected, on the page too
        page.wait_for_function(shown, arg=app.seq, timeout=10000)
        assert page.locator("#menu-items li.on").inner_text().startswith("New game")
        lag.on = True
        app.press("roll").result(timeout=5)  # the table's ROLL asks; the lagging page still shows "New game"
        assert app.menu_confirm
        time.sleep(CONFIRM_PAUSE_S + 0.2)
        seq = app.seq
        if answer == "tap":
            page.tap(f"#menu-items li >> nth={NEW}")
        elif answer == "key":
            page.tap(".keys button[data-cmd=roll]")
        else:
            page.keyboard.press("Enter")
        wait_for(lambda: app.seq > seq, what="the answer taken by the table")
        assert app.screen == "game" and app.menu_confirm and app.message == NOT_SEEN
        lag.catch_up()
        page.wait_for_function(shown, arg=app.seq, timeout=10000)
        assert page.locator("#menu-items li.on").inner_text() == CONFIRM_END
        page.tap(f"#menu-items li >> nth={NEW}")  # on the question it shows now: yes
        wait_for(lambda: app.screen == "setup", what="the game ended by a tap on the question")


@contextlib.contextmanager
def phone_in_control(browser, tmp_path, guard):
    """A yacht table (PIN 4321) served with `guard`, its page open on a phone (not local) that took control.

    Yields ``(app, page, reconnect)``: ``reconnect(guard)`` restarts the server on the same port with
    `guard`, so that the phone's connection drops and comes back (as over Wi-Fi).
    """
    app = TableApp(
        tmp_path / "g.sqlite3", setup=Setup("yacht", "forced", ["Ann", "Bo"]), autostart=True, pin="4321"
    ).start()
    servers = [DisplayServer(app, port=0, local_hosts=frozenset(), pin_guard=guard).start()]
    page = browser.new_page(viewport={"width": 800, "height": 480})

    def reconnect(new_guard):
        servers[-1].close()
        servers.append(DisplayServer(app, port=servers[0].port, local_hosts=frozenset(), pin_guard=new_guard).start())

    try:
        page.goto(servers[0].url)
        take_control(page, "4321")
        yield app, page, reconnect
    finally:
        page.close()
        servers[-1].close()
        app.close()


def lock_every_address(guard, wrong=20):
    """Strangers' wrong PINs from `wrong` addresses: the table-wide lock-out."""
    for k in range(wrong):
        guard.check(f"198.51.100.{k + 1}", "0000", "4321")


def test_regression_a_lagging_tap_on_a_box_does_not_score_another(browser, tmp_path):
    """A tap on the box the page showed selected sent SCORE: with the selection moved meanwhile (a button,
    another phone), it scored a box the player never chose. A tap now names its box."""
    from table.app import NOT_SEEN
    from vision.watch import EventKind, RollEvent, TrayDie

    lag = Lag()
    with yacht_page(browser, tmp_path, lag) as (app, page):
        dice = tuple(TrayDie(v, (30.0 * k + 30, 100.0), (0, 0, 10, 10), 0.99) for k, v in enumerate((3, 3, 3, 5, 5)))
        app.roll_event(RollEvent(EventKind.SETTLED, 0, 0.0, dice=dice)).result(timeout=5)
        page.wait_for_function("n => Number(document.body.dataset.seq || -1) >= n", arg=app.seq, timeout=10000)
        shown = page.locator(".opt.selected").get_attribute("data-box")
        lag.on = True
        app.press("next").result(timeout=5)
        app.press("next").result(timeout=5)  # a button moves the selection; the page still shows its own
        seq = app.seq
        page.tap(f".opt[data-box={shown}]")
        wait_for(lambda: app.seq > seq, what="the tap taken by the table")
        assert app.state.cards[0].boxes == {} and app.message == NOT_SEEN
        lag.catch_up()
        page.wait_for_function("n => Number(document.body.dataset.seq || -1) >= n", arg=app.seq, timeout=10000)
        page.tap(f".opt[data-box={shown}]")  # now the page shows the table's selection: the tap selects it
        wait_for(lambda: app.selected == shown, what="the box selected")
        page.wait_for_function("n => Number(document.body.dataset.seq || -1) >= n", arg=app.seq, timeout=10000)
        page.tap(f".opt[data-box={shown}]")  # and a second tap scores it
        wait_for(lambda: shown in app.state.cards[0].boxes, what="the box scored")


def test_regression_a_lagging_start_starts_the_game_the_page_showed(browser, tmp_path):
    """Start sent only 'start': a page that had not drawn a player added at the table (by its buttons)
    started a game with a player it never showed."""
    lag = Lag()
    app = TableApp(tmp_path / "g.sqlite3", setup=Setup("yacht", "forced", ["Ann", "Bo"]), pin="4321").start()
    server = DisplayServer(app, port=0).start()
    page = browser.new_page(viewport={"width": 800, "height": 480}, has_touch=True)
    page.route_web_socket(lambda url: url.endswith("/ws"), lag.route)
    try:
        page.goto(server.url)
        page.wait_for_function("n => Number(document.body.dataset.seq || -1) >= n", arg=app.seq, timeout=10000)
        lag.on = True
        for c in ("next", "next", "roll"):  # the table's buttons: players 2 -> 3
            app.press(c).result(timeout=5)
        assert app.setup.names == ["Ann", "Bo", "Player 3"]
        page.tap("#start")
        wait_for(lambda: app.screen == "game", what="the game started")
        assert app.state.players == ("Ann", "Bo")
        lag.catch_up()
        page.keyboard.press("m")
        page.keyboard.press("ArrowUp")  # "New game"
        wait_for(lambda: app.menu_open and app.menu_index == NEW, what="the menu on 'New game'")
        page.wait_for_function("n => Number(document.body.dataset.seq || -1) >= n", arg=app.seq, timeout=10000)
        page.keyboard.press("Enter")
        time.sleep(CONFIRM_PAUSE_S + 0.1)
        page.wait_for_function("n => Number(document.body.dataset.seq || -1) >= n", arg=app.seq, timeout=10000)
        page.keyboard.press("Enter")
        wait_for(lambda: app.screen == "setup", what="the setup screen")
        page.wait_for_function("n => Number(document.body.dataset.seq || -1) >= n", arg=app.seq, timeout=10000)
        page.fill("#names input[data-k='1']", "Carla")  # typed, then Start at once: the name is kept
        page.tap("#start")
        wait_for(lambda: app.screen == "game", what="the second game started")
        assert app.state.players == ("Ann", "Carla")
    finally:
        page.close()
        server.close()
        app.close()


def test_regression_quick_taps_on_dice_from_a_lagging_page_all_hold(browser, tmp_path):
    """With holds part of what a page must have drawn, a second hold tap sent before the first one's redraw
    was refused on a slow phone, and the ROLL after it threw the die the player meant to keep."""
    from vision.watch import EventKind, RollEvent, TrayDie

    lag = Lag()
    with yacht_page(browser, tmp_path, lag) as (app, page):
        dice = tuple(TrayDie(v, (30.0 * k + 30, 100.0), (0, 0, 10, 10), 0.99) for k, v in enumerate((3, 3, 3, 5, 5)))
        app.roll_event(RollEvent(EventKind.SETTLED, 0, 0.0, dice=dice)).result(timeout=5)
        page.wait_for_function("n => Number(document.body.dataset.seq || -1) >= n", arg=app.seq, timeout=10000)
        lag.on = True  # the page draws nothing new while the player taps
        page.tap(".die-wrap >> nth=0")
        page.tap(".die-wrap >> nth=1")
        page.keyboard.press("3")
        wait_for(lambda: app.state.turn.holds == (True, True, True, False, False), what="three dice held")
        assert app.message == ""


def test_regression_a_lagging_tap_beside_the_menu_does_not_open_it_again(browser, tmp_path):
    """A tap beside the menu sent MENU, which opened again a menu the table had closed meanwhile."""
    from table.app import MENU_CLOSED

    lag = Lag()
    with yacht_page(browser, tmp_path, lag) as (app, page):
        app.press("menu").result(timeout=5)
        page.wait_for_function("n => Number(document.body.dataset.seq || -1) >= n", arg=app.seq, timeout=10000)
        lag.on = True
        app.press("menu").result(timeout=5)  # closed at the table; the page still shows it
        seq = app.seq
        page.tap("#menu", position={"x": 10, "y": 10})
        wait_for(lambda: app.seq > seq, what="the tap taken by the table")
        assert not app.menu_open and app.message == MENU_CLOSED


def test_regression_phone_keeps_its_pin_through_a_lock_out_it_did_not_cause(browser, tmp_path):
    """Reconnecting during a table-wide lock-out (others' wrong PINs), the page's right PIN was refused
    unchecked and dropped: the phone lost control. It is now offered again when the lock-out ends."""
    from table.display.server import PinGuard

    with phone_in_control(browser, tmp_path, PinGuard(lockout_s=2.0)) as (app, page, reconnect):
        guard = PinGuard(lockout_s=2.0)  # the table's server restarts (same PIN): it has forgotten the phone
        lock_every_address(guard)  # every address is locked out for 2 s
        reconnect(guard)
        page.wait_for_function(
            "() => /several devices/.test(document.getElementById('message').textContent)", timeout=15000
        )
        assert page.evaluate("document.body.classList.contains('readonly')")
        page.wait_for_function("() => !document.body.classList.contains('readonly')", timeout=15000)


def test_regression_strangers_wrong_pins_do_not_take_control_from_a_phone_that_reconnects(browser, tmp_path):
    """About 20 wrong PINs from several addresses locked every phone out for up to an hour: a phone already
    playing lost control whenever its Wi-Fi dropped. Its page now reconnects with the token its PIN earned."""
    from table.display.server import PinGuard

    guard = PinGuard()  # lock-outs of 30 s and more
    with phone_in_control(browser, tmp_path, guard) as (app, page, reconnect):
        lock_every_address(guard, 25)
        assert guard.wait_s("192.0.2.99") > 60
        reconnect(guard)
        page.wait_for_function("() => document.getElementById('conn').hidden", timeout=15000)
        page.wait_for_function("() => !document.body.classList.contains('readonly')", timeout=5000)
        page.keyboard.press("m")
        wait_for(lambda: app.menu_open, what="the phone's MENU taken after the reconnect")
        assert "several devices" not in page.locator("#message").inner_text()
        page.reload()  # phones reload tabs they put to sleep: the token is kept in the tab
        page.wait_for_function("() => Number(document.body.dataset.seq || -1) >= 0", timeout=10000)
        page.wait_for_function("() => !document.body.classList.contains('readonly')", timeout=5000)
        page.keyboard.press("m")
        wait_for(lambda: not app.menu_open, what="the phone's MENU taken after a reload")
        reconnect(PinGuard())  # the table restarts: its tokens are gone, and the reloaded page has no PIN
        page.wait_for_function(
            "() => /table restarted: enter the PIN/.test(document.getElementById('message').textContent)", timeout=15000
        )
        assert page.evaluate("document.body.classList.contains('readonly')")


def test_regression_held_enter_on_a_focused_page_key_does_not_end_the_game(browser, tmp_path):
    """Key repeats were ignored without blocking the browser's own action, so a held Enter clicked the
    page key that had focus (the last one tapped) 25 times a second: ROLL confirmed "End this game?"."""
    with yacht_page(browser, tmp_path) as (app, page):
        page.keyboard.press("m")
        page.keyboard.press("ArrowUp")  # "New game"
        wait_for(lambda: app.menu_open and app.menu_index == NEW, what="the menu on 'New game'")
        page.focus(".keys button[data-cmd=roll]")  # as a tap on it leaves it (before this fix)
        page.keyboard.down("Enter")  # asks "End this game?"
        time.sleep(0.7)  # held: the browser repeats it (repeat: true) after a delay (X11: 660 ms), 25 a second
        for _ in range(20):
            page.keyboard.down("Enter")
            time.sleep(0.04)
        page.keyboard.up("Enter")
        page.wait_for_timeout(300)
        assert app.menu_confirm and app.screen == "game" and app.state is not None and not app.state.finished


def test_regression_a_double_tap_on_a_menu_item_is_one_tap(browser, tmp_path):
    """A tap sends the steps to its item and ROLL, worked out from the menu the page shows: a second tap
    before the table's answer was drawn acted on a menu that had gone (it cancelled the question, or
    threw the dice once the menu had closed)."""
    with yacht_page(browser, tmp_path) as (app, page):
        page.keyboard.press("m")
        wait_for(lambda: app.menu_open, what="the menu")
        page.wait_for_function("n => Number(document.body.dataset.seq || -1) >= n", arg=app.seq, timeout=10000)
        page.evaluate(
            "() => { const li = document.querySelectorAll('#menu-items li')["
            + str(NEW)
            + "]; li.click(); li.click(); }"
        )
        page.wait_for_timeout(500)
        assert app.menu_open and app.menu_confirm and app.menu_index == NEW and app.screen == "game"
