"""The leaderboard's TV page in real headless Chromium (Debian's, driven by Playwright) at 1920x1080.

Six tables and eight finished games reach the leaderboard through a real Mosquitto; the page must
show them without overflow or cut text, then say "broker: ..." when the broker goes away. The
screenshots go to $DICETABLE_ARTIFACTS (default: the temp folder's dicetable-artifacts).
"""

from __future__ import annotations

import json
import os
import random
import tempfile
import time
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
pw = pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install '.[test]'")
if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is absent: apt-get install -y chromium", allow_module_level=True)

from table.leaderboard.broker import BrokerOptions  # noqa: E402
from table.leaderboard.messages import parse_message  # noqa: E402
from table.leaderboard.service import Leaderboard  # noqa: E402
from table.leaderboard.simulated_table import game_payloads, play_game, state_payload  # noqa: E402
from table.leaderboard.store import LeaderboardStore  # noqa: E402
from tests._mqtt import Publisher, get, wait_for  # noqa: E402

pytestmark = pytest.mark.slow

UNCUT = ".tname, .tgame, .pname, .who, td, th, .broker, h1, h2"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
NAMES = ["Margaret-Anne", "Bo", "Christopher L.", "Yuki", "Oluwaseun", "Ines", "HAL (optimal)", "Dmitri K."]

#: Every element inside the window; no list or table clipped; no text cut by an ellipsis (in the
#: elements the argument names).
OVERFLOW_JS = """(cut) => {
  const bad = [], W = innerWidth, H = innerHeight;
  for (const e of document.querySelectorAll('body *')) {
    if (!e.offsetParent) continue;
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if (r.right > W + 1 || r.bottom > H + 1 || r.left < -1 || r.top < -1)
      bad.push('outside ' + e.className + ' ' + e.tagName + ' ' + JSON.stringify([r.right, r.bottom]));
  }
  for (const e of document.querySelectorAll('.tables, .ranks, .scores, .players, section, main'))
    if (e.scrollHeight > e.clientHeight + 2 || e.scrollWidth > e.clientWidth + 2) bad.push('clipped ' + e.className);
  for (const e of document.querySelectorAll(cut))
    if (e.scrollWidth > e.clientWidth + 1) bad.push('cut text ' + e.className + ' ' + e.textContent);
  return bad;
}"""


def artifacts() -> Path:
    folder = Path(os.environ.get("DICETABLE_ARTIFACTS") or Path(tempfile.gettempdir()) / "dicetable-artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def mid_game_state(table: str, ruleset: str, players: tuple[str, ...], seed: int, upto: float, chances=None):
    """The state payload of a real game stopped ``upto`` (a fraction) of the way through."""
    pairs = list(play_game(ruleset, players, random.Random(seed)))
    state = pairs[int(len(pairs) * upto)][0]
    data = json.loads(state_payload(table, "ab", seed, state, time.time()))
    data["win_chances"] = chances
    return json.dumps(data).encode()


def test_leaderboard_page_at_1920x1080(tmp_path, mosquitto):
    rng = random.Random(7)
    games = [("yahtzee", k) for k in range(5)] + [("yacht", k) for k in range(5, 8)]
    played = {}
    for ruleset, seed in games:
        players = tuple(rng.sample(NAMES, 2 + seed % 3))
        played[seed] = game_payloads("bar-2", "ab", seed, play_game(ruleset, players, random.Random(seed)))
    # games of other days: stored as if they had come then (a leaderboard that has run a while)
    with LeaderboardStore(tmp_path / "b.sqlite3") as store:
        for seed in (1, 3, 6):
            store.write(
                [parse_message("dicetable/bar-2/events", p) for p in played.pop(seed)], time.time() - 1e5 * seed
            )
    with Leaderboard(
        tmp_path / "b.sqlite3", BrokerOptions("127.0.0.1", mosquitto.port), port=0, client_id="lb-page"
    ) as lb:
        wait_for(lambda: lb.subscriber.connected, "the subscription")
        pub = Publisher(mosquitto.port)
        sent = 0
        for payloads in played.values():
            for p in payloads:
                pub.send("dicetable/bar-2/events", p)
                sent += 1
        states = {
            "window-1": mid_game_state(
                "window-1", "yahtzee", ("Margaret-Anne", "Christopher L."), 11, 0.7, [0.62, 0.38]
            ),
            "bar-2": mid_game_state("bar-2", "yacht", ("Yuki", "Bo", "Ines"), 12, 0.3),
            "corner-3": mid_game_state(  # finished: its 100 % / 0 % are not shown
                "corner-3", "yahtzee", ("Oluwaseun", "HAL (optimal)"), 13, 1.0 - 1e-9, [1.0, 0.0]
            ),
            "terrace-4": mid_game_state("terrace-4", "yatzy", ("Dmitri K.", "Ines"), 14, 0.5),
            "back-room-5": state_payload("back-room-5", "ab", None, None, time.time()),
            "upstairs-6": mid_game_state("upstairs-6", "generala", tuple(NAMES[:4]), 15, 0.6, [0.4, 0.3, 0.2, 0.1]),
        }
        for table, payload in states.items():
            pub.send(f"dicetable/{table}/status", b"offline" if table == "terrace-4" else b"online", retain=True)
            pub.send(f"dicetable/{table}/state", payload, retain=True)
        wait_for(lambda: lb.subscriber.stored == sent and len(get(lb.url + "api/tables")[1]["tables"]) == 6, "all")
        pub.close()
        best = get(lb.url + "api/leaderboard?ruleset=yahtzee&period=all")[1]["scores"][0]
        with pw.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1920, "height": 1080})
            page.goto(lb.url + "?ruleset=yahtzee")
            page.wait_for_function("document.querySelectorAll('#tables .table').length === 6")
            page.wait_for_function("document.querySelectorAll('.period li').length > 3")
            page.screenshot(path=str(artifacts() / "leaderboard-1920x1080.png"))
            assert page.evaluate(OVERFLOW_JS, UNCUT) == []
            small = browser.new_page(viewport={"width": 1920, "height": 1080}, device_scale_factor=0.75)
            small.goto(lb.url + "?ruleset=yahtzee")  # the same layout in 1440x810 pixels, for docs/leaderboard.png
            small.wait_for_function("document.querySelectorAll('.period li').length > 3")
            small.screenshot(path=str(artifacts() / "leaderboard-docs.png"))
            assert page.locator("[data-period=all] li .pts").first.inner_text() == str(best["total"])
            assert page.locator("[data-period=all] li .who").first.inner_text() == best["player"]
            assert page.locator(".table.offline .tname").inner_text() == "terrace-4"
            assert page.locator("[data-table=window-1] .pchance").all_inner_texts() == ["62%", "38%"]
            assert "finished" in page.locator("[data-table=corner-3] .tgame").inner_text()
            assert page.locator("[data-table=corner-3] .pchance").all_inner_texts() == ["", ""]
            assert page.locator("[data-table=upstairs-6] .pchance").all_inner_texts() == ["40%", "30%", "20%", "10%"]
            assert page.locator("[data-table=back-room-5] .tgame").inner_text() == "no game on"
            assert page.locator("#broker").inner_text().startswith("broker: connected")
            # a big café: 20 tables of 4 players; 16 cards in four columns, the rest counted
            pairs = list(play_game("yahtzee", tuple(NAMES[4:]), random.Random(21)))
            more = Publisher(mosquitto.port)
            for k in range(7, 21):
                state = json.loads(state_payload(f"room-{k}", "ab", k, pairs[5 * k][0], time.time()))
                more.send(f"dicetable/room-{k}/status", b"online", retain=True)
                more.send(f"dicetable/room-{k}/state", json.dumps(state).encode(), retain=True)
            more.close()
            page.wait_for_function("document.querySelector('#more-tables').textContent.startsWith('and 4 more')")
            assert page.locator("#tables .table").count() == 16 and page.locator("#tables.cols4").count() == 1
            # the 17 tables in play come first: no offline, idle or finished table among the 16 shown
            assert page.locator("#tables .offline").count() == 0
            assert "no game on" not in page.locator("#tables").inner_text()
            assert "finished" not in page.locator("#tables").inner_text()
            page.screenshot(path=str(artifacts() / "leaderboard-20-tables.png"))
            # four columns: a long player name on a card may end in an ellipsis; nothing else is cut
            assert page.evaluate(OVERFLOW_JS, UNCUT.replace(".pname, ", "")) == []
            mosquitto.stop()
            page.wait_for_function("document.querySelector('#broker').classList.contains('down')")
            line = page.locator("#broker").inner_text()
            assert line.startswith("broker: ") and ("lost" in line or "cannot reach" in line), line
            assert page.locator("#tables .table").count() == 16  # still serving what it has
            page.screenshot(path=str(artifacts() / "leaderboard-broker-down.png"))
            assert page.evaluate(OVERFLOW_JS, UNCUT.replace(".pname, ", "")) == []
            browser.close()
