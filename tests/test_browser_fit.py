"""Every view fits: no text overflows or is cut, no two texts overlap, at 800x480 and 1920x1080, 1 to 8 players.

One Chromium, one page. Game states are made with the engine and store (no camera, no play through
the page): a Yacht game with its last box open is resumed by a real table app and shown; SCORE ends
it. :data:`VIEWS` lists the views, each a function that opens it on the page; a new view is one line.
Screenshots at 800x480 go to $DICETABLE_ARTIFACTS (default: a temporary folder).
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
pw = pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install '.[test]'")
pytest.importorskip("fastapi", reason="fastapi is not installed: pip install '.[test]'")
if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is absent: apt-get install -y chromium", allow_module_level=True)

from table.app import MENU_ITEMS, TableApp  # noqa: E402
from table.audit.synthetic import loaded_die, play_games  # noqa: E402
from table.display.server import DisplayServer  # noqa: E402
from table.display.snapshot import Setup  # noqa: E402
from table.game import fold  # noqa: E402
from table.inputs import Command  # noqa: E402
from table.store import open_store  # noqa: E402

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]  # fmt: skip
SIZES = ((800, 480), (1920, 1080))
PLAYERS = (1, 2, 3, 4, 5, 6, 7, 8)

# In the page: every visible element with text of its own; overflowing (scroll size beyond the client size
# by more than 1 px, where the element clips), cut by an ancestor that hides its overflow, or overlapping another.
PROBE = """() => {
  const out = [];
  const name = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
    (typeof e.className === "string" && e.className ? "." + e.className.trim().split(/\\s+/).join(".") : "") +
    " '" + (e.textContent || e.value || "").trim().slice(0, 40) + "'";
  const texts = [];
  const menu = document.getElementById("menu");  // an open menu covers the screen: what lies under it is not seen
  const scope = menu && !menu.hidden ? [...menu.querySelectorAll("*"), ...document.querySelectorAll("footer *")]
                                     : document.querySelectorAll("body *");
  for (const e of scope) {
    if (["SCRIPT", "STYLE", "TABLE", "TBODY", "TR", "COLGROUP", "COL"].includes(e.tagName)) continue;
    const cs = getComputedStyle(e);
    if (cs.display === "none" || cs.visibility === "hidden" || e.closest("[hidden]")) continue;
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    const own = [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()) || e.tagName === "INPUT";
    if (!own) continue;
    const clips = cs.overflowX !== "visible" || cs.textOverflow === "ellipsis" || e.tagName === "INPUT";
    if (clips && (e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1) && e.tagName !== "INPUT")
      out.push("overflows: " + name(e) + " (" + e.scrollWidth + "x" + e.scrollHeight + " in " +
               e.clientWidth + "x" + e.clientHeight + ")");
    if (e.tagName === "INPUT" && e.scrollWidth > e.clientWidth + 1) out.push("overflows: " + name(e));
    for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
      const as = getComputedStyle(a);
      if (as.overflowX === "visible" && as.overflowY === "visible") continue;
      const ar = a.getBoundingClientRect();
      if (r.right > ar.right + 1 || r.bottom > ar.bottom + 1 || r.left < ar.left - 1 || r.top < ar.top - 1)
        out.push("cut by " + name(a).split(" '")[0] + ": " + name(e));
      break;
    }
    if (r.right > innerWidth + 1 || r.bottom > innerHeight + 1) out.push("off screen: " + name(e));
    texts.push([e, r]);
  }
  for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
    const [a, ra] = texts[i], [b, rb] = texts[j];
    if (a.contains(b) || b.contains(a)) continue;
    const w = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
    const h = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
    if (w > 2 && h > 2) out.push("overlap: " + name(a) + " and " + name(b));
  }
  return out;
}"""


def _store_with_last_box_open(db: Path, n: int) -> None:
    """A Yacht game of `n` players, every box scored but the last player's last: resumed mid-turn."""
    names = tuple(f"Player {i + 1}" for i in range(n))
    with open_store(db) as store:
        (gid,) = play_games(store, loaded_die(random.Random(n)), 1, players=names, ruleset="yacht", finish=True)
        events = store.events(gid)
    db.unlink()
    cut = max(i for i, e in enumerate(events) if e.kind == "dice_read")  # the last roll read, not yet scored
    with open_store(db) as store:
        gid = store.create_game(events[0], fold(events[:1]))
        store.append(gid, 1, events[1 : cut + 1], fold(events[: cut + 1]))


class Table:
    """A table app on a prepared store and its page; `press` drives it as the buttons would."""

    def __init__(self, page, tmp: Path, n: int) -> None:
        db = tmp / f"fit-{n}.sqlite3"
        _store_with_last_box_open(db, n)
        names = [f"Player {i + 1}" for i in range(n)]
        self.app = TableApp(db, setup=Setup("yacht", "forced", names), pin="1357").start()
        self.server = DisplayServer(self.app, port=0).start()
        self.page = page
        self._t = 1000.0
        # The win chances join the players' strip once computed (a helper thread): measure with them.
        end = time.monotonic() + 30
        while not (self.app.snapshot.get("game") or {}).get("win_chances") and time.monotonic() < end:
            time.sleep(0.05)
        page.goto(self.server.url)
        self.wait()

    def press(self, *commands: Command) -> None:
        for c in commands:
            self._t += 2.0
            self.app.press(c, mono=self._t).result(timeout=60)  # generous: a busy shared machine
        self.wait()

    def wait(self) -> None:
        """Until the page has drawn the app's latest snapshot."""
        end = time.monotonic() + 20
        while time.monotonic() < end:
            shown = self.page.evaluate("() => Number(document.body.dataset.seq || 0)")
            if shown >= self.app.seq:
                self.page.evaluate("() => new Promise((r) => requestAnimationFrame(() => r()))")
                return
            time.sleep(0.02)
        raise AssertionError(f"the page did not draw snapshot {self.app.seq}")

    def close(self) -> None:
        self.server.close()
        self.app.close()


def _game(t: Table) -> None:
    assert t.app.screen == "game"


def _cards(t: Table) -> None:
    t.page.set_viewport_size({"width": 800, "height": 480})
    t.page.click("#cards-btn")


def _cards_by_buttons(t: Table) -> None:
    t.page.set_viewport_size({"width": 800, "height": 480})
    t.page.click("#cards-btn")  # the touch view off: back to the dice
    t.press(Command.MENU, *[Command.NEXT] * [i for i, _ in MENU_ITEMS].index("cards"), Command.ROLL)
    assert t.app.snapshot["cards"] and t.page.evaluate("() => document.body.classList.contains('cards')")


def _menu_item(name: str) -> list[Command]:
    """The presses that open the menu and choose its item `name`."""
    return [Command.MENU, *[Command.NEXT] * [i for i, _ in MENU_ITEMS].index(name), Command.ROLL]


def _history(t: Table) -> None:
    t.press(Command.PREV)  # any button: back to the dice (and nothing else)
    assert not t.app.snapshot["cards"] and t.app.state.turn.roll
    t.press(*_menu_item("history"))
    assert t.app.snapshot["history"] and t.page.is_visible("#history")


def _fix(t: Table) -> None:
    t.press(Command.MENU)  # MENU leaves the history
    t.press(*_menu_item("fix"))
    assert t.app.snapshot["fix"] and t.page.is_visible("#fix")


def _menu(t: Table) -> None:
    t.press(Command.MENU)  # MENU cancels the fix
    assert t.app.snapshot["fix"] is None and t.app.state.turn.roll
    t.press(Command.MENU)
    assert t.app.menu_open


def _end(t: Table) -> None:
    t.press(Command.MENU)  # close the menu (the menu view came before)
    t.press(Command.SCORE)
    assert t.app.screen == "end"
    end = time.monotonic() + 30
    while t.app.analysis_status in ("", "computing") and time.monotonic() < end:
        time.sleep(0.05)
    t.press(Command.PREV) if t.app.end_view != "card" else t.wait()


def _analysis(t: Table) -> None:
    if t.app.end_view != "analysis":
        t.press(Command.NEXT)
    fair = t.app.snapshot["fairness"]  # the game's dice were camera-read: the panel has them
    assert fair["dice"] > 0 and "p = " in t.page.inner_text("#fairdice")


def _setup(t: Table) -> None:
    t.press(Command.ROLL)  # on the end screen: a new game's setup
    assert t.app.screen == "setup"


#: The views, in the order one table walks them; each opens its view from the one before.
VIEWS = (
    ("game", _game),
    ("cards", _cards),
    ("cards-by-buttons", _cards_by_buttons),
    ("history", _history),
    ("fix", _fix),
    ("menu", _menu),
    ("end", _end),
    ("analysis", _analysis),
    ("setup", _setup),
)


def artifacts() -> Path:
    folder = Path(os.environ.get("DICETABLE_ARTIFACTS") or Path(tempfile.gettempdir()) / "dicetable-artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def browser():
    with pw.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def page(browser):
    page = browser.new_page(viewport={"width": 800, "height": 480})
    yield page
    page.close()


def test_regression_the_key_bar_does_not_show_at_the_top_before_the_first_snapshot(browser, tmp_path):
    """The page's keys sat at the top of the empty page for up to 1.7 s while it loaded (no screen shown yet);
    with its scripts off the page never draws a snapshot: the bar stays hidden, and at the bottom."""
    app = TableApp(tmp_path / "g.sqlite3", setup=Setup("yacht", "forced", ["Ann"]), pin="1357").start()
    server = DisplayServer(app, port=0).start()
    context = browser.new_context(java_script_enabled=False, viewport={"width": 800, "height": 480})
    try:
        page = context.new_page()
        page.goto(server.url)
        bar = page.locator("footer.bar")
        assert not bar.is_visible()
        box = bar.bounding_box()
        assert box["y"] + box["height"] == pytest.approx(480, abs=1)
    finally:
        context.close()
        server.close()
        app.close()


@pytest.mark.parametrize("players", PLAYERS)
def test_every_view_fits_both_sizes(page, tmp_path, players):
    table = Table(page, tmp_path, players)
    faults = []
    try:
        for view, open_view in VIEWS:
            open_view(table)
            for w, h in SIZES:
                page.set_viewport_size({"width": w, "height": h})
                page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
                faults += [f"{view} at {w}x{h}, {players} players: {f}" for f in page.evaluate(PROBE)]
                if w == 800:
                    page.screenshot(path=str(artifacts() / f"fit-{view}-{players}p-{w}x{h}.png"))
            page.set_viewport_size({"width": 800, "height": 480})
    finally:
        table.close()
    assert not faults, "\n".join(faults)
