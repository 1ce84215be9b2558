"""The stream overlay in real headless Chromium (Debian's, via Playwright) at each layout.

A three-player Yahtzee game is played a few turns into the table app; the
overlay is opened with no PIN at 1280x720, the lower third (1280x200) and
1920x1080 and must: show the dice as read with the held ones marked, the
current player, the scores, the best box and the win chances; keep a
transparent background; never scroll or overflow; follow the table's changes
(so it sent nothing: any message closes its socket).  Screenshots go to
$DICETABLE_ARTIFACTS; with DICETABLE_UPDATE_DOCS=1 the 1280x720 and lower-third
ones are also drawn over a checkerboard into docs/ (docs/overlay.md).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from table.app import TableApp
from table.display.server import DisplayServer
from table.display.snapshot import Setup
from table.inputs import Command
from tests.test_browser import ARGS, CHROMIUM, artifacts, pw  # noqa: F401  (skips without Chromium)
from vision.watch import EventKind, RollEvent, TrayDie

pytestmark = pytest.mark.slow

DOCS = Path(__file__).resolve().parents[1] / "docs"
LAYOUTS = {"1280x720": (1280, 720), "lower-third": (1280, 200), "1920x1080": (1920, 1080)}
#: (dice, box) of the turns played before the overlay opens: Ann, Bo, Cy, Ann, Bo, Cy.
TURNS = [
    ((6, 6, 6, 6, 2), "sixes"),
    ((1, 2, 3, 4, 5), "large_straight"),
    ((3, 3, 3, 5, 5), "full_house"),
    ((5, 5, 5, 5, 5), "yahtzee"),
    ((2, 2, 4, 4, 6), "chance"),
    ((4, 4, 4, 1, 2), "fours"),
]

PROBLEMS_JS = """() => {
  const bad = [];
  const W = innerWidth, H = innerHeight, de = document.documentElement;
  if (de.scrollWidth > W || de.scrollHeight > H) bad.push('page scrolls ' + de.scrollWidth + 'x' + de.scrollHeight);
  for (const e of document.querySelectorAll('#stage *')) {
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if (r.right > W + 1 || r.bottom > H + 1 || r.left < -1 || r.top < -1)
      bad.push('outside ' + e.className + ' ' + JSON.stringify([r.left, r.top, r.right, r.bottom]));
  }
  for (const e of document.querySelectorAll('.panel, .scores, .dice, .who, .best, .row')) {
    if (e.scrollHeight > e.clientHeight + 2 || e.scrollWidth > e.clientWidth + 2)
      bad.push('clipped ' + e.className + ' ' + [e.scrollWidth, e.scrollHeight, e.clientWidth, e.clientHeight]);
  }
  return bad;
}"""


def settled(values):
    dice = tuple(TrayDie(v, (30.0 * k + 30, 100.0), (0, 0, 10, 10), 0.99) for k, v in enumerate(values))
    return RollEvent(EventKind.SETTLED, 0, 0.0, dice=dice)


@pytest.fixture(scope="module")
def browser():
    with pw.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def table(tmp_path):
    app = TableApp(tmp_path / "g.sqlite3", setup=Setup("yahtzee", "forced", ["Ann", "Bo", "Cy"]), autostart=True)
    app.start()
    server = DisplayServer(app, port=0).start()
    try:
        for dice, box in TURNS:
            app.roll_event(settled(dice)).result(timeout=5)
            app.tap_box(box).result(timeout=5)
            app.tap_box(box).result(timeout=5)
        app.roll_event(settled((5, 5, 2, 5, 3))).result(timeout=5)
        for c in (Command.HOLD_1, Command.HOLD_2, Command.HOLD_4):
            app.press(c).result(timeout=5)
        yield app, server
    finally:
        server.close()
        app.close()


def on_checkerboard(shot: Path, out: Path) -> None:
    """Draw a transparent screenshot over a dark checkerboard (what OBS would show it over) as a PNG."""
    import cv2

    rgba = cv2.imread(str(shot), cv2.IMREAD_UNCHANGED).astype(np.float32)
    h, w = rgba.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w]
    board = np.where(((yy // 40 + xx // 40) % 2)[..., None] == 0, 70.0, 45.0) * np.ones(3, np.float32)
    alpha = rgba[..., 3:4] / 255.0
    cv2.imwrite(
        str(out), (rgba[..., :3] * alpha + board * (1 - alpha)).astype(np.uint8), [cv2.IMWRITE_PNG_COMPRESSION, 9]
    )


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_browser_overlay_layouts_show_the_turn_and_chances_without_overflow(browser, table, layout):
    app, server = table
    w, h = LAYOUTS[layout]
    page = browser.new_page(viewport={"width": w, "height": h})
    try:
        page.goto(server.url + f"overlay?layout={layout}")
        page.wait_for_function("document.querySelectorAll('#ov-scores .chance').length === 3")
        page.wait_for_function("document.querySelector('#ov-scores .chance').textContent !== ''")
        page.wait_for_function("document.getElementById('ov-best').textContent !== ''")
        assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgba(0, 0, 0, 0)"
        assert page.evaluate("getComputedStyle(document.documentElement).backgroundColor") == "rgba(0, 0, 0, 0)"
        values = page.eval_on_selector_all("#ov-dice .die", "els => els.map(e => Number(e.dataset.value))")
        held = page.eval_on_selector_all("#ov-dice .die", "els => els.map(e => e.classList.contains('held'))")
        assert values == [5, 5, 2, 5, 3] and held == [True, True, False, True, False]
        assert page.locator("#ov-player").inner_text() == "Ann"
        totals = page.eval_on_selector_all("#ov-scores .total", "els => els.map(e => Number(e.textContent))")
        assert totals == list(app.state.totals())
        chances = page.eval_on_selector_all("#ov-scores .chance", "els => els.map(e => e.textContent)")
        want = app.snapshot["game"]["win_chances"]
        whole = [int(c.strip("%<>")) for c in chances]  # whole percents that add up to 100 (win-percent.js)
        assert sum(whole) == 100 and all(abs(w - 100 * p) < 1 for w, p in zip(whole, want)), (chances, want)
        best = app.snapshot["game"]["best_box"]
        assert best and page.locator("#ov-best").inner_text().startswith("Best box: ")
        assert page.locator("input").count() == 0 and "PIN" not in page.inner_text("body")
        assert page.evaluate(PROBLEMS_JS) == []
        shot = artifacts() / f"overlay-{layout}.png"
        page.screenshot(path=str(shot), omit_background=True)
        if os.environ.get("DICETABLE_UPDATE_DOCS") and layout != "1920x1080":
            on_checkerboard(shot, DOCS / f"overlay-{layout}.png")
        # it follows the table (its socket is open: it never sent anything, which would close it)
        app.press(Command.HOLD_3).result(timeout=5)
        page.wait_for_function(f"Number(document.body.dataset.seq) >= {app.seq}")
        held = page.eval_on_selector_all("#ov-dice .die", "els => els.map(e => e.classList.contains('held'))")
        assert held == [True, True, True, True, False]
    finally:
        page.close()
