"""The fair-dice audit: the chi-square maths, which dice count, the frames kept in play, the command."""

from __future__ import annotations

import json
import logging
import random

import cv2
import numpy as np
import pytest

from table.app import TableApp
from table.app.session import GameSession
from table.audit import Tally, add_game
from table.audit.fairness import MIN_DICE, chi2_isf, chi2_sf, fair_dice_test, ncx2_sf, pearson, power
from table.audit.frames import FrameKeeper, frames_dir, read_index, tray_jpeg
from table.audit.synthetic import loaded_die, play_games
from table.cli import main
from table.display.snapshot import Setup
from table.game import CorrectDie, DiceSource, ReadDice, SetHolds, StartGame, execute
from table.store import open_store
from vision.watch import EventKind, RollEvent, TrayDie


# Critical values of the chi-square distribution at 5 %, 1 % (NIST e-Handbook 1.3.6.7.4).
@pytest.mark.parametrize(
    ("x", "df", "p"),
    [(3.841, 1, 0.05), (5.991, 2, 0.05), (9.488, 4, 0.05), (11.070, 5, 0.05), (15.086, 5, 0.01), (20.515, 5, 0.001)],
)
def test_chi2_sf_matches_the_published_table(x, df, p):
    assert chi2_sf(x, df) == pytest.approx(p, rel=2e-3)


def test_chi2_sf_edges_and_inverse():
    assert chi2_sf(0.0, 5) == 1.0
    assert chi2_sf(1e4, 5) < 1e-12
    assert chi2_isf(0.05, 5) == pytest.approx(11.0705, abs=1e-3)
    with pytest.raises(ValueError, match="df must be a positive integer"):
        chi2_sf(1.0, 0)


def test_noncentral_power_agrees_with_a_seeded_simulation():
    rng = np.random.default_rng(7)
    n, crit = 600, chi2_isf(0.05, 5)
    probs = [0.16] * 5 + [0.2]
    sims = rng.multinomial(n, probs, size=4000)
    simulated = np.mean([pearson(c.tolist()) > crit for c in sims])
    assert power(n) == pytest.approx(simulated, abs=0.03)
    assert ncx2_sf(crit, 5, 0.0) == pytest.approx(0.05, rel=1e-6)
    assert power(60) < power(600) < power(2400)


def test_fair_counts_pass_about_95_percent_of_the_time_and_loaded_counts_fail():
    rng = np.random.default_rng(3)
    fair = rng.multinomial(600, [1 / 6] * 6, size=400)
    ps = [fair_dice_test(c.tolist()).p for c in fair]
    assert 0.02 < np.mean([p < 0.05 for p in ps]) < 0.09  # the test's size is its alpha, 5 %
    assert "No sign" in fair_dice_test(fair[0].tolist()).verdict or ps[0] < 0.05
    loaded = rng.multinomial(3000, [0.5 / 6] + [1 / 6] * 4 + [1.5 / 6])
    result = fair_dice_test(loaded.tolist())
    assert result.p < 1e-6
    assert "look unfair" in result.verdict
    assert "With 3000 dice" in result.power_line


def test_too_few_dice_get_no_p_value():
    result = fair_dice_test([2, 1, 3, 0, 1, 2])
    assert result.p is None and str(MIN_DICE) in result.verdict
    with pytest.raises(ValueError, match="six non-negative integers"):
        fair_dice_test([1, 2, 3])


def _events(*commands):
    state, out = None, []
    for c in commands:
        state, evs = execute(state, c)
        out.extend(evs)
    return out


def test_held_dice_are_not_counted_again_and_corrections_and_typed_dice_are_apart():
    cam = DiceSource.CAMERA
    events = _events(
        StartGame(at=1, ruleset="yahtzee", players=("Ann",)),
        ReadDice(at=2, values=(6, 6, 2, 3, 4), source=cam),
        SetHolds(at=3, holds=(True, True, False, False, False)),
        ReadDice(at=4, values=(6, 6, 5, 5, 1), source=cam),
        CorrectDie(at=5, die=4, value=6, by="Ann"),
    )
    tally = add_game(Tally(), 1, events, unreadable=2)
    # roll 1: 6 6 2 3 4; roll 2: only 5 5 1 (the held sixes lie still), and the 1 was corrected
    assert tally.counts == [0, 1, 1, 1, 2, 2]
    assert (tally.corrected, tally.unreadable, tally.reads) == (1, 2, 2)
    typed = _events(
        StartGame(at=1, ruleset="yahtzee", players=("Ann",)),
        ReadDice(at=2, values=(1, 1, 1, 1, 1), source=DiceSource.TYPED),
    )
    t = add_game(Tally(), 2, typed)
    assert t.n == 0 and t.other == 5


def test_frame_keeper_keeps_indexes_and_removes_the_oldest_past_its_budget(tmp_path):
    image = np.random.default_rng(1).integers(0, 255, (480, 640, 3), dtype=np.uint8)
    jpeg = tray_jpeg(image)
    decoded = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    assert decoded.shape == (240, 320, 3)
    folder = frames_dir(tmp_path / "games.sqlite3")
    assert folder.name == "games-frames"
    with FrameKeeper(folder, budget_mb=len(jpeg) * 3.5 / 1e6) as keeper:
        for seq in range(1, 6):
            assert keeper.keep(jpeg, game_id=4, seq=seq, at=10.0 + seq, kind="settled", values=(1, 2, 3, 4, seq))
    rows = read_index(folder, [4])
    assert [r["seq"] for r in rows] == [3, 4, 5]  # the two oldest went
    assert rows[-1]["values"] == [1, 2, 3, 4, 5]
    assert sorted(p.name for p in folder.glob("*.jpg")) == sorted(r["file"].split("/")[-1] for r in rows)
    assert read_index(folder, [99]) == []


def test_a_frame_write_error_is_logged_once_and_frames_are_dropped(tmp_path, caplog):
    blocker = tmp_path / "games-frames"
    blocker.write_text("a file where the folder should be")
    with caplog.at_level(logging.WARNING, logger="table.audit.frames"):
        with FrameKeeper(blocker) as keeper:
            for seq in range(3):
                keeper.keep(b"\xff\xd8jpeg", game_id=1, seq=seq, at=1.0, kind="settled", values=(1,) * 5)
    assert keeper.dropped == 3 and keeper.kept == 0
    assert len([r for r in caplog.records if "cannot be kept" in r.message]) == 1


def _settled(values):
    dice = tuple(TrayDie(v, (30.0 + 30 * i, 100.0), (0, 0, 10, 10), 0.99) for i, v in enumerate(values))
    return RollEvent(EventKind.SETTLED, 0, 0.0, dice=dice)


def test_play_keeps_each_settled_rolls_frame_under_its_event_id(tmp_path):
    db = tmp_path / "games.sqlite3"
    app = TableApp(db, setup=Setup("yacht", "forced", ["Ann"]), autostart=True, clock=lambda: 1.7e9).start()
    app.frames = FrameKeeper(frames_dir(db)).start()
    try:
        app.roll_event(_settled((6, 5, 4, 3, 2)), frame=b"\xff\xd8tray").result(timeout=5)
        dice = tuple(TrayDie(v, (30.0 + 30 * i, 100.0), (0, 0, 10, 10), 0.5) for i, v in enumerate((1, None, 3, 4, 5)))
        unread = RollEvent(EventKind.UNREADABLE, 1, 0.0, dice=dice, problems=("a die is leaning",))
        app.roll_event(unread, frame=b"\xff\xd8tray2").result(timeout=5)
        game_id = app.session.game_id
    finally:
        app.close()
        app.frames.close()
    rows = read_index(frames_dir(db))
    assert [(r["game_id"], r["seq"], r["kind"]) for r in rows] == [(game_id, 1, "settled"), (game_id, 1, "unreadable")]
    with open_store(db, readonly=True) as store:
        assert store.events(game_id)[1].values == tuple(rows[0]["values"])
    assert main(["audit", str(game_id), "--db", str(db), "--json"]) == 0


def test_audit_command_on_a_played_store(tmp_path, capsys):
    db = tmp_path / "games.sqlite3"
    with open_store(db) as store:
        ids = play_games(store, loaded_die(random.Random(5)), 200)
        empty = GameSession.start(store, StartGame(at=1, ruleset="yacht", players=("Cy",))).game_id
    capsys.readouterr()
    plot = tmp_path / "audit.png"
    assert main(["audit", "--db", str(db), "--json", "--plot", str(plot)]) == 0
    out = json.loads(capsys.readouterr().out)
    with open_store(db, readonly=True) as store:
        tally = Tally()
        for g in ids:
            add_game(tally, g, store.events(g))
    assert out["counts"] == tally.counts and out["dice"] >= 200 and 0 < out["p"] <= 1
    assert cv2.imread(str(plot)).shape == (440, 720, 3)
    assert main(["audit", str(ids[0]), "--db", str(db)]) == 0
    assert "Pearson chi-square" in capsys.readouterr().out
    assert main(["audit", str(empty), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert f"game {empty}: no camera-read rolls (no frames kept)" in err and len(err.strip().splitlines()) == 1
    assert main(["audit", str(empty), "--db", str(db), "--json"]) == 2  # still JSON, with the reason
    said = json.loads(capsys.readouterr().out)
    assert said["dice"] == 0 and "no camera-read rolls" in said["reason"] and said["what"] == f"game {empty}"
    assert main(["audit", "--since", "2030-01-01", "--db", str(db)]) == 2
    assert "dicetable audit: no games since 2030-01-01: nothing to test" in capsys.readouterr().err
    assert main(["audit", "--since", "yesterday", "--db", str(db)]) == 2
    assert "YYYY-MM-DD" in capsys.readouterr().err


def test_plot_names_its_y_axis_dice():
    from table.audit.fairness import fair_dice_test
    from table.audit.plot import draw

    img = draw(fair_dice_test([10, 12, 9, 11, 8, 10]))
    strip = img[100:390, 0:24]  # left of the tick numbers, beside the bars: only the axis name is there
    ink = (strip.min(axis=2) < 128).sum()
    assert 40 < ink < 800, ink  # some dark pixels: a short word, not a filled block
