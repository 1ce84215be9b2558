"""``dicetable demo`` with the page: the table app on the synthetic camera, played by the built-in player."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

from table.demo.headless import MAX_PLAYERS, final_table
from table.display.snapshot import Setup
from table.errors import UsageError
from table.rules import find_ruleset
from table.strategy.bots import BOT_LEVELS, make_bot


def rss_mb() -> float:
    """This process's resident memory, in MB (0 where /proc is absent)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def count_rolls_a_page_saw(app: Any, pages_open: Callable[[], bool]) -> None:
    """Keep ``app.latencies_ms`` (settled roll -> page drawn) to rolls that settled while a page was open.

    The app stamps each roll read from the camera with the snapshot that shows it and, when the
    table's page says it drew that snapshot (``TableApp.rendered``), counts the time since the roll.
    A roll that settled with no page open would be counted when a page first loads, as the time
    since the roll (the demo once said "median 11502 ms"), so its stamp is dropped as it is published.

    Parameters
    ----------
    app : TableApp
        The running table.
    pages_open : callable
        ``pages_open() -> bool``: whether a page is connected now (called on the app's worker thread).
    """

    def forget(seq: int, snap: dict[str, Any]) -> None:  # the roll's stamp is keyed by the seq published now
        if not pages_open():
            app.not_shown(seq)

    app.subscribe(forget)


def serve_demo(
    *,
    rules: str = "yahtzee",
    players: int = 2,
    seed: int = 0,
    bots: Sequence[str] = (),
    speed: float = 2.0,
    port: int = 8000,
    linger_s: float = 5.0,
    reader: str = "model",
    out: Callable[[str], None] | None = None,
) -> Any:
    """Play one game on the table app with the synthetic camera, serving the page; return the final state.

    Parameters
    ----------
    rules : str
        Ruleset id.
    players : int
        Seats, 1-8.
    seed : int
        Seed of the synthetic tray and its dice.
    bots : sequence of str
        Strategy bot levels for the first seats (others: the built-in player).
    speed : float
        Pace: 1 a person's, 2 twice as fast; 0.1-20.
    port : int
        Port of the page; when it is taken another free one is used.
    linger_s : float
        Seconds the page stays up after the game, 0-600.
    reader : str
        ``model`` (the real pip reader) or ``truth``.
    out : callable, optional
        Receives each progress line (default: print to stdout).

    Raises
    ------
    UsageError
        If an argument is out of range.
    """
    from table.app import TableApp
    from table.app.camera import CameraLoop
    from table.commands._live import make_reader
    from table.demo.livetray import LiveTray
    from table.demo.presser import DemoPlayer
    from table.display.server import DisplayServer

    rs = find_ruleset(rules)
    if isinstance(players, bool) or not 1 <= players <= MAX_PLAYERS:
        raise UsageError(f"players must be 1 to {MAX_PLAYERS}, got {players!r}")
    if seed < 0:
        raise UsageError(f"seed must be a whole number 0 or more, got {seed!r}")
    if not 0.1 <= speed <= 20:
        raise UsageError(f"--speed must be 0.1 to 20, got {speed!r}")
    if not 0 <= linger_s <= 600:
        raise UsageError(f"--linger must be 0 to 600 seconds, got {linger_s!r}")
    if len(bots) > players:
        raise UsageError(f"{len(bots)} bots given for {players} player(s); give at most one per player")
    bad = [b for b in bots if b not in BOT_LEVELS]
    if bad:
        raise UsageError(f"unknown bot level {bad[0]!r}; choose from: {', '.join(BOT_LEVELS)}")
    emit = out or (lambda line: print(line, flush=True))
    seated = [make_bot(b, rs) for b in bots]
    names = [f"Player {i + 1}" + (f" ({bots[i]})" if i < len(bots) else "") for i in range(players)]
    from calibration.procedure import make_watcher
    from calibration.profile import PACKAGED_PROFILES_DIR, load_profile

    profile = load_profile("default", PACKAGED_PROFILES_DIR)  # the shipped one fits the synthetic camera

    def make(source: Any) -> Any:
        read, see = make_reader(reader, source, profile.geometry)
        return make_watcher(profile, read), see

    tray = LiveTray(seed=seed)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dicetable-demo-") as tmp:
        app = TableApp(
            os.path.join(tmp, "demo.sqlite3"),
            setup=Setup(rs.id, "forced", names),
            autostart=True,
            tray=tray,
            camera_name=f"synthetic:{seed}",
        ).start()
        try:
            try:
                server = DisplayServer(app, port=port).start()
            except OSError:
                server = DisplayServer(app, port=0).start()
            count_rolls_a_page_saw(app, lambda: bool(server.app.state.hub.clients))
            emit(
                f"{rs.title}: {players} player{'s' if players > 1 else ''}, seed {seed}. "
                f"Watch the table at {server.url}  (Ctrl-C stops)"
            )
            seen = [0]

            def progress(seq: int, snap: dict[str, Any]) -> None:
                st = app.state
                if st is None or len(st.history) == seen[0]:
                    return
                for t in st.history[seen[0] :]:
                    emit(
                        f"  {st.players[t.player]}: {' '.join(map(str, t.dice))} -> {rs.display_name(t.box)} "
                        f"{t.points}" + (f" (+{t.yahtzee_bonus} bonus)" if t.yahtzee_bonus else "")
                    )
                seen[0] = len(st.history)

            app.subscribe(progress)
            camera = CameraLoop(app, tray.reopen, make, speed=speed).start()
            player = DemoPlayer(app, delay_s=0.45 / speed, bots=seated).start()
            peak = 0.0
            try:
                while not app.finished.wait(0.5):
                    peak = max(peak, rss_mb())
                peak = max(peak, rss_mb())
                st = app.state
                emit("")
                for line in final_table(rs, st.players, st.cards):
                    emit(line)
                lat = sorted(app.latencies_ms)
                emit(
                    f"Game took {time.perf_counter() - start:.1f} s ({tray.throws} throws); backend memory "
                    f"{peak:.0f} MB"
                    + (
                        f"; settled roll -> page drawn: median {lat[len(lat) // 2]:.0f} ms "
                        f"over the {len(lat)} rolls made while the page was open"
                        if lat
                        else ""
                    )
                )
                if linger_s:
                    emit(f"The page stays up for {linger_s:.0f} s: {server.url}")
                    time.sleep(linger_s)
            finally:
                player.close()
                camera.close()
                server.close()
            return app.state
        finally:
            app.close()


if __name__ == "__main__":  # pragma: no cover
    serve_demo(out=lambda s: print(s, file=sys.stderr))
