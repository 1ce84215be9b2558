"""Time applying one command and committing its events to the game store.

Plays random games (``table.game.autoplay``) through a :class:`GameSession`
on a fresh store in a temporary folder (or ``--db PATH``) and prints the
median, p99 and max milliseconds of ``GameSession.handle`` (decide + apply +
one SQLite commit with ``synchronous=FULL``), and the same for the engine
alone (no store).  Run: ``python benchmarks/bench_store.py [--events N]``.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from pathlib import Path

import _args  # (imports _checkout: this checkout's vision/ and table/ first on sys.path)

from table.app.session import GameSession
from table.game import StartGame, execute
from table.game.autoplay import random_command
from table.rules import RULESET_IDS
from table.store import open_store


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _report(label: str, samples_s: list[float]) -> None:
    ms = [s * 1000 for s in samples_s]
    print(
        f"{label}: n={len(ms)}  median {statistics.median(ms):.3f} ms  "
        f"p99 {_pct(ms, 0.99):.3f} ms  max {max(ms):.3f} ms"
    )


def bench(db: Path, n_events: int, seed: int = 0) -> None:
    """Run the benchmark on store ``db`` for about ``n_events`` commands; print the figures."""
    rng = random.Random(seed)
    store_times: list[float] = []
    engine_times: list[float] = []
    with open_store(db) as store:
        k = 0
        while len(store_times) < n_events:
            ruleset = RULESET_IDS[k % len(RULESET_IDS)]
            k += 1
            session = GameSession.start(
                store, StartGame(at=time.time(), ruleset=ruleset, players=("Ann", "Bo", "Cy", "Di"))
            )
            while not session.state.finished and len(store_times) < n_events:
                command = random_command(session.state, rng, time.time())
                t0 = time.perf_counter()
                execute(session.state, command)
                t1 = time.perf_counter()
                session.handle(command)
                t2 = time.perf_counter()
                engine_times.append(t1 - t0)
                store_times.append(t2 - t1)
    print(f"store: {db} (WAL, synchronous=FULL)")
    _report("engine only (decide + apply)       ", engine_times)
    _report("handle (decide + apply + commit)   ", store_times)


def main() -> None:
    """Parse arguments and run :func:`bench`."""
    parser = _args.parser(__file__, description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=_args.positive(), default=2000, help="commands to time (default 2000)")
    parser.add_argument(
        "--db", type=Path, default=None, help="store file to use (default: a new one in a temporary folder)"
    )
    args = parser.parse_args()
    if args.db:
        bench(args.db, args.events)
        return
    with tempfile.TemporaryDirectory() as tmp:
        bench(Path(tmp) / "bench.sqlite3", args.events)


if __name__ == "__main__":
    _args.run(main)
