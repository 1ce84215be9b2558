"""Input guards (issue 35, item 8): bad input gives one line that says what to do, never a traceback.

Player names, photo sizes read from the header, files that are not regular files, JSON nested too
deep, numbers out of range, exports written whole or not at all, and the empty-tray check of calibrate.
"""

from __future__ import annotations

import json
import time

import pytest

from table.app.seats import check_setup
from table.errors import UsageError


# -- player names -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, said", [
    ("Ann\x00", "control character, U+0000"),
    ("Bo\tCy", "control character, U+0009"),
    ("\u202eevil", "reverses the text around it, U+202E"),
    ("x\u2066y", "reverses the text around it, U+2066"),
    ("\ud800", "lone surrogate"),
    ("a\u2028b", "line break"),
    ("x" * 41, "1-40 characters"),
])
def test_player_names_with_controls_bidi_or_lone_surrogates_are_refused_with_a_message(name, said):
    with pytest.raises(UsageError, match="cannot be used") as refused:
        check_setup("yacht", "forced", ["Ann" if name != "Ann\x00" else "Bo", name])
    assert said in str(refused.value) and "\n" not in str(refused.value)
    str(refused.value).encode("utf-8")  # the message itself can be shown and sent


@pytest.mark.parametrize("name", ["Zoë", "José María", "李雷", "👨\u200d👩\u200d👧 family", "O'Brien-2"])
def test_player_names_people_type_are_taken(name):
    check_setup("yacht", "forced", [name])


def test_a_page_naming_a_player_with_a_lone_surrogate_is_told_and_the_state_still_answers(tmp_path):
    """A lone surrogate typed on the page became a name, and /api/state answered 500 from then on."""
    pytest.importorskip("fastapi", reason="fastapi is not installed: pip install .")
    pytest.importorskip("httpx", reason="httpx is not installed: pip install '.[test]'")
    from starlette.testclient import TestClient

    from table.app import TableApp
    from table.display.server import create_app
    from table.display.snapshot import Setup

    with TableApp(tmp_path / "g.sqlite3", setup=Setup("yacht", "forced", ["Ann", "Bo"])).start() as app:
        client = TestClient(create_app(app, host_names={"testserver"}), client=("127.0.0.1", 50000))
        with client.websocket_connect("/ws") as ws:
            ws.receive_text()
            ws.send_text('{"type": "setup", "names": ["Ann", "\\ud800"], "seen": %d}' % app.seq)
            for _ in range(100):  # the page's message is applied on the worker
                if app.snapshot.get("message") or app.setup.names != ["Ann", "Bo"]:
                    break
                time.sleep(0.05)
        assert app.setup.names == ["Ann", "Bo"]
        state = client.get("/api/state")
        assert state.status_code == 200 and "lone surrogate" in state.json()["message"]
