"""Benchmark table.strategy: build time, peak memory and file size per table; advice latency.

Usage::

    python benchmarks/bench_strategy.py                 # every ruleset and variant
    python benchmarks/bench_strategy.py yahtzee yacht   # some rulesets
    python benchmarks/bench_strategy.py --advice-only   # latency with the cached tables
    python benchmarks/bench_strategy.py --bots 200      # also average bot scores (200 games)

Each table is built in a fresh subprocess so that its peak resident memory
(``ru_maxrss``) is its own; the baseline (Python + numpy + table imported) is
printed too.  Tables are written to the strategy cache
(``DICETABLE_CACHE``/strategy or the user cache), which is also where the
advice benchmark reads them.  Published values come from
``shared/specs/rulesets.md`` section 10.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time

import _args  # (imports _checkout: this checkout's vision/ and table/ first on sys.path)
import numpy as np

PUBLISHED = {
    ("yahtzee", "none"): 245.8708,
    ("yahtzee", "free_choice"): 254.5896,
    ("yahtzee", "forced"): 254.5877,
    ("yatzy", "standard"): 248.4400,
    ("yacht", "standard"): 191.7744,
    ("generala", "standard"): 162.4695,
    ("chaser", "standard"): 174.5586,
}


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build_one(ruleset: str, variant: str) -> dict[str, object]:
    """Build one table in this process; return timings, memory and size."""
    from table.strategy.model import Model
    from table.strategy.tables import build_table, cache_dir, file_name

    Model.of(ruleset, variant)  # warm imports
    baseline = _peak_mb()
    started = time.perf_counter()
    table = build_table(ruleset, variant)
    seconds = time.perf_counter() - started
    path = table.save(cache_dir() / file_name(ruleset, variant))
    return {
        "ruleset": ruleset,
        "variant": variant,
        "expected": table.expected,
        "published": PUBLISHED.get((ruleset, variant)),
        "build_s": seconds,
        "peak_mb": _peak_mb(),
        "baseline_mb": baseline,
        "file_mb": path.stat().st_size / 1e6,
    }


def advice_latency(pairs: list[tuple[str, str]], n: int, seed: int = 1) -> list[dict[str, object]]:
    """Median and 95th-percentile time of one piece of advice (holds or boxes), in ms."""
    from table.rules import Card, find_ruleset, possible_points
    from table.strategy import advise_boxes, advise_holds, get_table

    rows = []
    rng = random.Random(seed)
    for ruleset, variant in pairs:
        table = get_table(ruleset, variant)
        rs = find_ruleset(ruleset)
        times: dict[str, list[float]] = {"holds": [], "boxes": []}
        for i in range(n):
            filled = rng.sample(rs.boxes, rng.randrange(len(rs.boxes)))
            card = Card.from_mapping(rs, {b: rng.choice(sorted(possible_points(rs, b))) for b in filled})
            dice = tuple(rng.randint(1, 6) for _ in range(5))
            kind = "holds" if i % 2 == 0 else "boxes"
            started = time.perf_counter()
            if kind == "holds":
                advise_holds(table, card, dice, rng.choice((1, 2)))
            else:
                advise_boxes(table, card, dice, 3)
            times[kind].append((time.perf_counter() - started) * 1000)
        for kind, values in times.items():
            rows.append(
                {
                    "ruleset": ruleset,
                    "variant": variant,
                    "kind": kind,
                    "median_ms": float(np.median(values)),
                    "p95_ms": float(np.percentile(values, 95)),
                    "n": len(values),
                }
            )
    return rows


def bot_scores(ruleset: str, variant: str, games: int) -> dict[str, float]:
    """Mean final score of each bot level over ``games`` seeded solitaire games."""
    from table.rules import card_total
    from table.strategy import BOT_LEVELS, make_bot, play_solitaire

    out = {}
    for level in BOT_LEVELS:
        bot = make_bot(level, ruleset, variant)
        scores = [
            card_total(ruleset, play_solitaire(bot, ruleset, np.random.default_rng(s), variant)) for s in range(games)
        ]
        out[level] = float(np.mean(scores))
    return out


def main() -> int:
    parser = _args.parser(__file__, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rules", nargs="*", help="ruleset ids (default: all)")
    parser.add_argument("--one", nargs=2, metavar=("RULES", "VARIANT"), help=argparse.SUPPRESS)
    parser.add_argument("--advice-only", action="store_true", help="skip the builds")
    parser.add_argument("--advice-n", type=_args.positive(), default=400, help="advice requests per table")
    parser.add_argument(
        "--bots", type=int, default=0, metavar="GAMES", help="also play GAMES solitaire games per bot level and ruleset"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end")
    args = parser.parse_args()

    if args.one:
        print(json.dumps(build_one(*args.one)))
        return 0

    from table.rules import RULESET_IDS
    from table.strategy import variants_for

    ids = args.rules or list(RULESET_IDS)
    pairs = [(r, v) for r in ids for v in variants_for(r)]
    report: dict[str, object] = {}
    if not args.advice_only:
        builds = []
        print(
            f"{'ruleset':<9} {'variant':<12} {'expected':>9} {'published':>9} "
            f"{'build s':>8} {'peak MB':>8} {'file MB':>8}"
        )
        for ruleset, variant in pairs:
            out = subprocess.run(
                [sys.executable, __file__, "--one", ruleset, variant], check=True, capture_output=True, text=True
            ).stdout
            row = json.loads(out.strip().splitlines()[-1])
            builds.append(row)
            pub = row["published"]
            print(
                f"{ruleset:<9} {variant:<12} {row['expected']:9.4f} "
                f"{'' if pub is None else f'{pub:9.4f}':>9} {row['build_s']:8.1f} "
                f"{row['peak_mb']:8.0f} {row['file_mb']:8.2f}",
                flush=True,
            )
        total = sum(float(r["file_mb"]) for r in builds)
        print(f"tables on disk: {total:.2f} MB in all; baseline process {builds[0]['baseline_mb']:.0f} MB")
        report["builds"] = builds
    latency = advice_latency(pairs, args.advice_n)
    print(f"{'ruleset':<9} {'variant':<12} {'advice':<6} {'median ms':>9} {'p95 ms':>8}")
    for row in latency:
        print(f"{row['ruleset']:<9} {row['variant']:<12} {row['kind']:<6} {row['median_ms']:9.2f} {row['p95_ms']:8.2f}")
    report["advice"] = latency
    if args.bots:
        bots = {}
        for ruleset, variant in pairs:
            bots[f"{ruleset}/{variant}"] = scores = bot_scores(ruleset, variant, args.bots)
            print(
                f"bots {ruleset} ({variant}), {args.bots} games: "
                + ", ".join(f"{k} {v:.1f}" for k, v in scores.items()),
                flush=True,
            )
        report["bots"] = bots
    if args.json:
        print(json.dumps(report))
    return 0


if __name__ == "__main__":
    _args.run(main)
