"""The built-in demo: whole games, legal boxes, printed totals, re-reads and fallbacks."""

from __future__ import annotations

import re
import time

import pytest

import table.demo.headless as demo
from table.cli import main
from table.errors import UsageError
from table.rules import RULESET_IDS, Card, card_total, find_ruleset, score_options
from table.strategy.builtin_player import choose_box, choose_holds
from vision.reading import DieReading, ImageReading


class TruthReader:
    """A stand-in pip reader that reports the renderer's truth, optionally spoiled."""

    def __init__(self, spoil=None):
        self.tray = None
        self.calls = 0
        self.spoil = spoil

    def on_image(self, tray):
        self.tray = tray

    def __call__(self, image):
        assert image.shape == self.tray.image.shape
        self.calls += 1
        dice = [DieReading(d.value, d.box, 0.99) for d in self.tray.dice]
        if self.spoil is not None:
            dice = self.spoil(self.calls, dice)
        return ImageReading(tuple(dice))


def _play(rules, *, players=1, seed=1, spoil=None, max_reads=3):
    reader = TruthReader(spoil)
    lines: list[str] = []
    result = demo.play_demo(
        rules=rules,
        players=players,
        seed=seed,
        reader=reader,
        on_image=reader.on_image,
        out=lines.append,
        max_reads=max_reads,
    )
    return result, lines, reader


def _printed_totals(lines):
    (total_line,) = [ln for ln in lines if ln.startswith("Total ")]
    return tuple(int(x) for x in total_line.split()[1:])


@pytest.mark.parametrize("rules", RULESET_IDS)
def test_demo_plays_a_whole_game_legally_and_prints_true_totals(rules, monkeypatch):
    legal = []

    def spy(ruleset, dice, card, *, roll=3, joker="forced"):
        box = choose_box(ruleset, dice, card, roll=roll, joker=joker)
        legal.append(box in score_options(ruleset, dice, card, roll=roll, joker=joker))
        return box

    monkeypatch.setattr(demo, "choose_box", spy)
    result, lines, reader = _play(rules, players=1)
    rs = find_ruleset(rules)
    assert result.ruleset_id == rs.id
    assert len(legal) == len(rs.boxes) and all(legal)
    (card,) = result.cards
    assert set(card.boxes) == set(rs.boxes)
    assert result.totals == (card_total(rs, card),)
    assert _printed_totals(lines) == result.totals
    assert any(ln.startswith("Winner: Player 1") for ln in lines)
    assert lines[-2].startswith("Reading: ")
    assert result.reading.images == reader.calls >= len(rs.boxes)
    assert result.reading.right == 5 * result.reading.images
    assert result.reading.wrong == result.reading.unknown == result.reading.fallbacks == 0


def test_two_player_game_names_the_winner_from_the_totals():
    result, lines, _ = _play("generala", players=2, seed=4)
    assert _printed_totals(lines) == result.totals
    best = max(result.totals)
    assert result.winners == tuple(i for i, t in enumerate(result.totals) if t == best)
    win_line = [ln for ln in lines if ln.startswith("Winner")][0]
    assert all(f"Player {i + 1}" in win_line for i in result.winners)
    assert sum(ln.startswith("Round ") for ln in lines) == 2 * len(find_ruleset("generala").boxes)


def test_same_seed_same_game():
    a, lines_a, _ = _play("yatzy", seed=5)
    b, lines_b, _ = _play("yatzy", seed=5)
    assert a.cards == b.cards and lines_a[:-1] == lines_b[:-1]


def test_unknown_die_is_reread_with_nudged_dice():
    def first_read_unknown(call, dice):
        if call % 2 == 1:
            dice[0] = DieReading(None, dice[0].box, 0.3, "low confidence")
        return dice

    result, lines, _ = _play("yacht", spoil=first_read_unknown)
    st = result.reading
    assert st.rereads == result.throws and st.unknown == result.throws and st.fallbacks == 0
    assert any("1 unknown" in ln and "re-read 2/3" in ln for ln in lines)


def test_reader_that_always_fails_falls_back_to_typed_in_values():
    def drop_one(call, dice):
        return dice[:4]

    result, lines, _ = _play("generala", spoil=drop_one, max_reads=2)
    st = result.reading
    assert st.fallbacks == result.throws
    assert st.images == 2 * result.throws and st.missed == st.images
    assert sum("read failed, using typed-in values" in ln for ln in lines) == result.throws
    assert "found 4 dice, not 5" in "\n".join(lines)


def test_wrong_reads_are_played_and_counted():
    def first_die_plus_one(call, dice):
        d = dice[0]
        dice[0] = DieReading(d.value % 6 + 1, d.box, 0.9)
        return dice

    result, lines, _ = _play("chaser", spoil=first_die_plus_one)
    assert result.reading.wrong == result.reading.images
    assert result.reading.right == 4 * result.reading.images
    assert any("misread die" in ln for ln in lines)


def test_choose_holds_keeps_a_made_large_straight_and_the_most_common_face():
    assert choose_holds("yahtzee", (2, 3, 4, 5, 6), Card.empty(), roll=1) == (True,) * 5
    holds = choose_holds("yahtzee", (6, 6, 6, 2, 1), Card.empty(), roll=1)
    assert holds[:3] == (True, True, True) and not any(holds[3:])


def test_choose_box_prefers_points_and_scratches_cheap_boxes():
    assert choose_box("yahtzee", (5, 5, 5, 5, 5), Card.empty()) == "yahtzee"
    full = {b: 0 for b in find_ruleset("yahtzee").boxes if b not in ("aces", "chance")}
    assert choose_box("yahtzee", (2, 3, 4, 6, 6), Card(full)) == "chance"


@pytest.mark.parametrize(
    "argv,match",
    [
        (["demo", "--rules", "snakes"], "unknown ruleset 'snakes'"),
        (["demo", "--players", "0"], "players must be 1 to 8"),
        (["demo", "--players", "9"], "players must be 1 to 8"),
        (["demo", "--max-reads", "0"], "max_reads must be 1 to 10"),
        (["demo", "--port", "99999"], "--port must be 0-65535 (0: any free port), got 99999"),
        (["demo", "--port", "-5"], "--port must be 0-65535 (0: any free port), got -5"),
    ],
)
def test_bad_demo_arguments_exit_2(argv, match, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("dicetable demo: error:") and match in err
    assert err.count("\n") == 1


def test_demo_help_explains_headless(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--headless" in out and "terminal" in out


def _real_reader_or_skip():
    from vision.errors import VisionError
    from vision.render import render_tray

    try:
        reader = demo.default_reader()
        reader(render_tray([1, 2, 3, 4, 5], seed=0).image)
    except (VisionError, UsageError, OSError) as exc:  # the reader's models are trained elsewhere
        pytest.skip(f"the real pip reader cannot run here: {exc}")
    return reader


@pytest.mark.slow
@pytest.mark.parametrize("rules", RULESET_IDS)
def test_demo_cli_full_game_with_the_real_reader(rules, capsys):
    _real_reader_or_skip()
    assert main(["demo", "--headless", "--rules", rules, "--players", "1", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    scored = {}
    for ln in lines:
        m = re.match(r"  Player 1 scores (\d+) in (.+?)(?: \(.*\))?;", ln)
        if m:
            scored[m.group(2)] = int(m.group(1))
    rs = find_ruleset(rules)
    assert sorted(scored) == sorted(rs.display_name(b) for b in rs.boxes)
    card = Card(
        {b: scored[rs.display_name(b)] for b in rs.boxes},
        yahtzee_bonuses=len(re.findall(r"\(\+100 Yahtzee bonus\)", out)),
    )
    assert _printed_totals(lines) == (card_total(rs, card),)
    assert re.search(r"^Reading: \d+ of \d+ dice read right", out, re.M)


@pytest.mark.parametrize("extra", [["--headless"], []])
def test_demo_says_a_bad_runtime_variable_before_the_game_starts(extra, monkeypatch, capsys):
    monkeypatch.setenv("DICETABLE_ONNX_BACKEND", "tensorrt")
    assert main(["demo", *extra, "--players", "1", "--port", "0"]) == 2
    captured = capsys.readouterr()
    assert "DICETABLE_ONNX_BACKEND='tensorrt'" in captured.err and "auto, onnxruntime, opencv" in captured.err
    assert "Player 1" not in captured.out  # no game was started


def test_regression_settled_to_drawn_counts_only_rolls_that_settled_while_a_page_was_open(tmp_path):
    """The served demo said "settled roll -> page median 11502 ms": rolls made before anyone opened the
    page were counted when it loaded, as the time since each roll."""
    from table.app import TableApp
    from table.demo.served import count_rolls_a_page_saw
    from table.display.snapshot import Setup
    from vision.watch import EventKind, RollEvent, TrayDie

    def settled(values):
        dice = tuple(TrayDie(v, (30.0 + 30 * i, 100.0), (0, 0, 10, 10), 0.99) for i, v in enumerate(values))
        return RollEvent(EventKind.SETTLED, 0, 0.0, dice=dice)

    app = TableApp(tmp_path / "games.sqlite3", setup=Setup("yacht", "forced", ["Ann"]), autostart=True).start()
    try:
        page_open = [False]
        count_rolls_a_page_saw(app, lambda: page_open[0])
        app.roll_event(settled((1, 2, 3, 4, 6)), mono=time.monotonic() - 10.0).result(timeout=5)
        page_open[0] = True
        app.rendered(app.seq)  # the page loads ten seconds after the roll and draws the table as it is
        assert app.latencies_ms == []
        app.roll_event(settled((6, 6, 6, 6, 6)), mono=time.monotonic()).result(timeout=5)
        assert app.state.turn.roll == 2
        app.rendered(app.seq)
        assert len(app.latencies_ms) == 1 and app.latencies_ms[0] < 5000.0
    finally:
        app.close()


def test_the_reading_line_counts_in_words_that_agree():
    from table.demo.headless import ReadingStats

    one = ReadingStats(right=5, images=1, rereads=1, fallbacks=1).summary()
    assert "1 re-read, 1 read failure (typed-in values used)" in one
    assert "0 re-reads, 2 read failures" in ReadingStats(right=5, images=1, fallbacks=2).summary()
