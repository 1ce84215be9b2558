"""Time ``GET /health`` over one keep-alive connection to the page's server (target: p50 under 5 ms).

Starts a table (a fresh store in a temporary folder, no camera) and its :class:`DisplayServer` on a
free loopback port, sends ``--requests`` requests one after another on one HTTP/1.1 connection
(:mod:`http.client`, as a kiosk's browser keeps it open), and prints p50, p99 and max milliseconds.
A server whose responses wait for the client's delayed ACK (Nagle's algorithm on) shows about 40 ms
each. Run: ``python benchmarks/health_latency.py [--requests N]``.
"""

from __future__ import annotations

import http.client
import tempfile
import time
from pathlib import Path

import _args  # (imports _checkout: this checkout's vision/ and table/ first on sys.path)

from table.app import TableApp
from table.display.server import DisplayServer
from table.display.snapshot import Setup


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(port: int, requests: int) -> list[float]:
    """Milliseconds of each ``GET /health`` round trip on one keep-alive connection to ``127.0.0.1:port``."""
    web = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    times = []
    try:
        for _ in range(requests):
            t0 = time.perf_counter()
            web.request("GET", "/health")
            answer = web.getresponse()
            answer.read()
            times.append((time.perf_counter() - t0) * 1000.0)
            if answer.status != 200 or answer.will_close:
                raise SystemExit(f"/health answered {answer.status} (will close: {answer.will_close})")
    finally:
        web.close()
    return times


def main() -> None:
    parser = _args.parser(__file__, description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=_args.positive(), default=500, help="requests to time (500)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        table = TableApp(
            Path(tmp) / "games.sqlite3", setup=Setup("yacht", "forced", ["Ann", "Bo"]), autostart=True
        ).start()
        try:
            with DisplayServer(table, port=0) as server:
                measure(server.port, 20)  # warm up
                ms = measure(server.port, args.requests)
        finally:
            table.close()
    print(
        f"/health keep-alive: n={len(ms)}  p50 {_pct(ms, 0.5):.2f} ms  p99 {_pct(ms, 0.99):.2f} ms  "
        f"max {max(ms):.2f} ms  (target p50 < 5 ms)"
    )


if __name__ == "__main__":
    _args.run(main)
