"""Crash test: a child process plays long games through the store and is SIGKILLed.

The child (``os.fork``) resumes the unfinished game (or starts one) and plays
random legal commands through a :class:`GameSession`; after each command is
accepted (``handle`` returned: committed with ``synchronous=FULL``) it writes
``game_id events digest`` on a pipe.  The parent kills it with SIGKILL at a
random moment (including while it opens the store or resumes), at least 200
times.  After each kill: the store opens, ``PRAGMA integrity_check`` is ok, no
reported (accepted) event is missing, the state after the reported events is
exactly the one the child had (scores, current player, roll number, holds,
dice), and nothing is half-applied (the stored log folds, the games row
agrees with the rows, a timer's automatic box is never split from its
``timer_expired``).

Run as a script for the figures: ``python tests/test_crash_store.py [KILLS]``.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import select
import signal
import sys
import time
from pathlib import Path

import pytest

from table.app.session import GameSession
from table.game import StartGame, TimerExpired, fold
from table.game.autoplay import random_command
from table.rules import RULESET_IDS
from table.store import open_store


def digest(state) -> str:
    """A fingerprint of what a resume must restore: cards, bonuses, turn, holds, dice."""
    turn = state.turn
    data = [
        state.events,
        [sorted(c.boxes.items()) for c in state.cards],
        [c.yahtzee_bonuses for c in state.cards],
        [len(state.history)],
        None if turn is None else [turn.player, turn.roll, list(turn.holds), list(turn.dice), list(turn.flagged)],
    ]
    return hashlib.sha1(json.dumps(data).encode()).hexdigest()[:16]


def child(db: Path, fd: int, seed: int) -> None:
    """Play forever through the store, reporting each accepted command on ``fd``."""
    rng = random.Random(seed)
    with open_store(db, on_corrupt="raise") as store:
        session = GameSession.resume(store)
        while True:
            if session is None or session.state.finished:
                session = GameSession.start(
                    store,
                    StartGame(
                        at=time.time(),
                        ruleset=rng.choice(RULESET_IDS),
                        players=tuple(f"P{i}" for i in range(rng.randint(1, 4))),
                        joker=rng.choice(("forced", "free", "free_choice")),
                        timer_s=rng.choice((None, 30)),
                    ),
                )
                os.write(fd, f"{session.game_id} {session.state.events} {digest(session.state)}\n".encode())
            session.handle(random_command(session.state, rng, time.time()))
            # handle() returned: committed, accepted.  Report it.
            os.write(fd, f"{session.game_id} {session.state.events} {digest(session.state)}\n".encode())


def run_once(db: Path, seed: int, kill_after_s: float) -> list[tuple[int, int, str]]:
    """Fork a child, SIGKILL it after ``kill_after_s``; return every line it reported."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        code = 0
        try:
            child(db, w, seed)
        except BaseException as exc:  # noqa: BLE001 - report, then die quietly
            os.write(w, f"ERR {exc!r}\n".encode()[:500])
            code = 3
        finally:
            os._exit(code)
    os.close(w)
    chunks = []
    # The kill clock starts at the child's first report, so that every kill lands mid-game however
    # slow the machine is (a busy machine once killed children before they had opened the store).
    ready, _, _ = select.select([r], [], [], 60.0)
    deadline = time.monotonic() + kill_after_s
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([r], [], [], left)
        if ready:
            data = os.read(r, 65536)
            if not data:
                break
            chunks.append(data)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    while data := os.read(r, 65536):  # what it wrote before dying is still in the pipe
        chunks.append(data)
    os.close(r)
    lines = b"".join(chunks).decode().splitlines()
    errors = [line for line in lines if line.startswith("ERR")]
    assert not errors, errors
    return [(int(g), int(n), d) for g, n, d in (line.split() for line in lines)]


def check_store(db: Path, reported: dict[int, tuple[int, str]], touched: set[int]) -> int:
    """Check the store after a kill; return the number of events it holds."""
    with open_store(db, on_corrupt="raise") as store:
        assert store.conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        counts = dict(store.conn.execute("SELECT game_id, COUNT(*) FROM events GROUP BY game_id").fetchall())
        for game in store.games():
            assert game.events == counts.get(game.id, 0), "games row disagrees with its rows"
        for game_id, (n, fingerprint) in reported.items():
            assert counts.get(game_id, 0) >= n, f"game {game_id}: accepted events lost"
        for game_id in touched:
            n, fingerprint = reported[game_id]
            events = store.events(game_id)
            assert len(events) - n <= 2, "more than one unreported command stored"
            assert digest(fold(events[:n])) == fingerprint, "resume differs from the game"
            state = store.load(game_id)  # the whole stored log folds: nothing half-applied
            assert state == fold(events)
            last = events[-1]
            assert not (isinstance(last, TimerExpired) and last.rolled), "timer expiry stored without its automatic box"
            resumed = GameSession.resume(store, game_id)
            assert resumed.state.turn == state.turn and resumed.state.cards == state.cards
        return sum(counts.values())


def crash_test(db: Path, kills: int, seed: int = 2024) -> dict[str, float]:
    """Run ``kills`` fork-play-SIGKILL-check rounds on ``db``; return the figures."""
    rng = random.Random(seed)
    reported: dict[int, tuple[int, str]] = {}
    accepted = 0
    mid_game = 0  # kills after the child had reported at least one accepted event
    t0 = time.monotonic()
    for k in range(kills):
        lines = run_once(db, seed=rng.randrange(2**32), kill_after_s=rng.uniform(0.0, 0.1))
        mid_game += bool(lines)
        touched = set()
        for game_id, n, fingerprint in lines:
            accepted += 1
            reported[game_id] = (n, fingerprint)
            touched.add(game_id)
        stored = check_store(db, reported, touched)
    return {
        "kills": kills,
        "mid_game_kills": mid_game,
        "accepted_reports": accepted,
        "games": len(reported),
        "stored_events": stored,
        "seconds": round(time.monotonic() - t0, 1),
    }


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")
def test_no_accepted_event_is_lost_over_200_kills(tmp_path):
    figures = crash_test(tmp_path / "crash.sqlite3", kills=200)
    print("crash test:", figures)
    assert figures["kills"] >= 200
    assert figures["mid_game_kills"] == figures["kills"]  # every kill landed in a game being played


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        print(crash_test(Path(tmp) / "crash.sqlite3", int(sys.argv[1]) if len(sys.argv) > 1 else 200))
