"""The page says "scores not shared: <why>" in a corner while the broker is down (real Chromium and Mosquitto)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
pw = pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install '.[test]'")
if not os.path.exists(CHROMIUM):
    pytest.skip("Debian's Chromium is not installed: apt-get install -y chromium", allow_module_level=True)

from table.app import TableApp  # noqa: E402
from table.cafe.link import share  # noqa: E402
from table.cafe.settings import MqttSettings  # noqa: E402
from table.display.server import DisplayServer  # noqa: E402
from table.display.snapshot import Setup  # noqa: E402

pytestmark = pytest.mark.slow

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def test_corner_note_while_the_broker_is_down_and_gone_when_it_is_back(mosquitto, tmp_path):
    mosquitto.stop()
    app = TableApp(tmp_path / "g.sqlite3", setup=Setup("yacht", "forced", ["Ann", "Bo"]), autostart=True).start()
    pub = share(app, MqttSettings("127.0.0.1", mosquitto.port, "t7"))
    server = DisplayServer(app, port=0).start()
    folder = Path(os.environ.get("DICETABLE_ARTIFACTS") or Path(tempfile.gettempdir()) / "dicetable-artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with pw.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            pages = {}
            for w, h in [(800, 480), (1920, 1080)]:
                page = pages[w] = browser.new_page(viewport={"width": w, "height": h})
                page.goto(server.url)
                note = page.locator("#sharing")
                pw.expect(note).to_have_text("scores not shared: broker down", timeout=15000)
                box, bar = note.bounding_box(), page.locator("footer.bar").bounding_box()
                assert box["x"] + box["width"] <= w and box["x"] > w / 2  # the right-hand corner, on screen
                assert abs(box["y"] + box["height"] - bar["y"]) < 2  # just above the footer, not over its keys
                page.screenshot(path=str(folder / f"sharing-broker-down-{w}x{h}.png"))
            mosquitto.start()
            for page in pages.values():
                pw.expect(page.locator("#sharing")).to_be_hidden(timeout=15000)
            browser.close()
    finally:
        server.close()
        pub.stop()
        app.close()
