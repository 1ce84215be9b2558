"""Benchmark the synthetic live tray (``LiveTray``): time and memory kept per throw as throws go on.

Usage::

    python benchmarks/livetray.py                 # 300 throws
    python benchmarks/livetray.py --throws 1000

Each throw is planned only (no frame is rendered: rendering costs the same at any throw). Printed: the
median time of throws 1-10 and of the last 10, Python memory held (tracemalloc) after 10 throws and after
the last, and the states the tray keeps. Before the tray planned one throw at a time it re-planned every
earlier throw: +11.8 MB and 9,214 states after 300 throws, the 300th taking 0.3 s (docs/faults.md).
"""

from __future__ import annotations

import statistics
import time
import tracemalloc

import _args  # (imports _checkout: this checkout's vision/ and table/ first on sys.path)

from table.demo.livetray import LiveTray


def main() -> None:
    p = _args.parser(__file__, description=__doc__.splitlines()[0])
    p.add_argument("--throws", type=_args.positive(), default=300)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    tray = LiveTray(seed=args.seed)
    tray.throw(())  # builds the rendered tray and its noise (one-off, ~65 MB of temporaries)
    times = []
    for n in range(2, args.throws + 1):
        t0 = time.perf_counter()
        tray.throw((0, 1) if n % 3 == 0 else ())
        times.append(time.perf_counter() - t0)
    first, last = statistics.median(times[:9]) * 1e3, statistics.median(times[-10:]) * 1e3
    print(f"LiveTray, {args.throws} throws: throw time p50 {first:.1f} ms (throws 2-10), {last:.1f} ms (last 10)")
    tray = LiveTray(seed=args.seed)
    tray.throw(())
    tracemalloc.start()  # a second tray: tracing slows the throws down
    held = {}
    for n in range(2, args.throws + 1):
        tray.throw((0, 1) if n % 3 == 0 else ())
        if n in (10, 100, args.throws):
            held[n] = tracemalloc.get_traced_memory()[0] / 2**20
    print("Python memory held since throw 1: " + ", ".join(f"{v:.2f} MB after {k} throws" for k, v in held.items()))
    print(f"states kept: {len(tray._src._states.items)} of {len(tray._src._states)} planned")


if __name__ == "__main__":
    _args.run(main)
