"""Benchmark table.strategy.win_chances: the model's P(win) against Monte Carlo games of the optimal bot; speed.

Usage::

    python benchmarks/win_chances.py                      # 36 positions, 400 continuations each
    python benchmarks/win_chances.py --positions 12 --continuations 200 --rules yacht
    python benchmarks/win_chances.py --last-rounds 3             # end games only
    python benchmarks/win_chances.py --speed-only
    python benchmarks/win_chances.py --rulesets generala --save /tmp/g.pkl   # keep the Monte Carlo
    python benchmarks/win_chances.py --load /tmp/g.pkl /tmp/y.pkl            # re-score the models on it

Positions come from real games of the optimal bot (2-4 players, the rulesets
given), cut at a random round, at the start of a turn or after its throw 1, 2
or 3.  From each position every player's card is played to its end
``--continuations`` times by the optimal bot (:func:`table.strategy.simulate.play_out`);
the players play alone, so their final scores are independent and the Monte
Carlo P(win) combines every player's sampled scores (all combinations, ties
split: :func:`table.strategy.win_chances.combine`).  Printed, overall, per
round bucket and per ruleset, for each of :data:`MODELS`: the mean and worst
absolute difference model - Monte Carlo in percentage points; the Monte
Carlo's own standard error per player (from :data:`BATCHES` batches); the mean
of (difference / se)**2 (about 1 where the model is right: the rest is noise);
and the model's RMS error with the noise taken out,
sqrt(mean(diff**2) - mean(se**2)).
"""

from __future__ import annotations

import argparse
import pickle
import time

import _args  # (imports _checkout: this checkout's vision/ and table/ first on sys.path)
import numpy as np

from table.rules import Card, find_ruleset
from table.strategy import get_table
from table.strategy.simulate import MemoOptimalBot, play_out
from table.strategy.win_chances import combine, win_chances, win_probabilities

RULES = ("yacht", "yahtzee", "yatzy", "generala", "chaser")
#: The models compared (name, win_chances options): one normal per player or two split on the lump box
#: ("mixture"), with exact distributions for cards with at most 2 or 3 open boxes or none.
MODELS = (
    ("normal", {"exact_open": 0, "lump": False}),
    ("mixture", {"exact_open": 0, "lump": True}),
    ("normal, exact<=2", {"exact_open": 2, "lump": False}),  # the model before the mixture
    ("normal, exact<=3", {"exact_open": 3, "lump": False}),
    ("mixture, exact<=3", {"exact_open": 3, "lump": True}),  # the default
)
#: Batches the Monte Carlo samples are cut into to estimate its standard error per player.
BATCHES = 10


def draw_position(
    bot: MemoOptimalBot, players: int, rng: np.random.Generator, last_rounds: int = 0
) -> tuple[list[Card], int, tuple, int]:
    """Play a game of ``players`` optimal bots up to a random point (in the last rounds only if given).

    Returns (cards, current seat, dice, throw).
    """
    model = bot.model
    n = model.n_boxes
    first = n * players - last_rounds * players if last_rounds else 0
    stop_turn = int(rng.integers(first, n * players))  # turns played before the cut
    stop_roll = int(rng.integers(0, 4))  # 0: before the first throw
    cards = [Card.empty() for _ in range(players)]
    for t in range(stop_turn + 1):
        seat = t % players
        d, r = tuple(int(x) for x in rng.integers(1, 7, size=5)), 1
        while True:
            if t == stop_turn and r >= stop_roll:
                return cards, seat, (d if stop_roll else ()), stop_roll
            keep = bot.choose_keep(cards[seat], d, r) if r < 3 else None
            if keep is None:
                if t == stop_turn:  # stopped before the throw to cut at: cut after this one
                    return cards, seat, d, r
                break
            d, r = keep + tuple(int(x) for x in rng.integers(1, 7, size=5 - len(keep))), r + 1
        cards[seat] = model.after(cards[seat], d, bot.choose_box(cards[seat], d, r), r)
    raise AssertionError("the cut turn always returns")


def monte_carlo(bot, cards, seat, dice, roll, rng, n) -> tuple[list[float], list[float]]:
    """Monte Carlo P(win) per player and each one's standard error (from :data:`BATCHES` batches of the samples)."""
    samples = []
    for i, card in enumerate(cards):
        if i == seat and roll:
            samples.append([play_out(bot, card, rng, dice, roll) for _ in range(n)])
        else:
            samples.append([play_out(bot, card, rng) for _ in range(n)])
    low = min(map(min, samples))
    high = max(map(max, samples))

    def pwin(part: slice) -> np.ndarray:
        pmf = np.zeros((len(samples), high - low + 1))
        for i, s in enumerate(samples):
            s = np.asarray(s[part]) - low
            np.add.at(pmf[i], s, 1.0 / s.size)
        return np.array(combine(pmf))

    whole = pwin(slice(None))
    size = n // BATCHES
    batches = np.array([pwin(slice(b * size, (b + 1) * size)) for b in range(BATCHES)])
    # the whole run's variance is about a batch's over BATCHES (every batch pairs its own samples only)
    se = batches.std(axis=0, ddof=1) / np.sqrt(BATCHES)
    return list(whole), list(se)


def bucket(round_: int, rounds: int) -> str:
    if round_ == rounds:
        return "last round"
    if round_ >= rounds - 2:
        return "last 3 rounds"
    return "early (1-4)" if round_ <= 4 else "middle"


def positions(args: argparse.Namespace):
    """Yield (rules, cards, seat, dice, roll, mc P(win), mc se): drawn and played out, or read from ``--load``."""
    if args.load:
        for path in args.load:
            with open(path, "rb") as fh:
                for rules, cards, *rest in pickle.load(fh):
                    yield (rules, [Card(dict(b), y) for b, y in cards], *rest)
        return
    rng = np.random.default_rng(args.seed)
    done = []
    for k in range(args.positions):
        rules = args.rules[k % len(args.rules)]
        bot = MemoOptimalBot(get_table(rules, build=False))
        cards, seat, dice, roll = draw_position(bot, int(rng.integers(2, 5)), rng, args.last_rounds)
        mc, se = monte_carlo(bot, cards, seat, dice, roll, rng, args.continuations)
        done.append((rules, [(dict(c.boxes), c.yahtzee_bonuses) for c in cards], seat, dice, roll, mc, se))
        if args.save:  # after every position, so a run cut short keeps what it has
            with open(args.save, "wb") as fh:
                pickle.dump(done, fh)
        yield (rules, cards, seat, dice, roll, mc, se)


def accuracy(args: argparse.Namespace) -> None:
    rows = []  # (rules, round, rounds, players, |diff| per player in pp per model, se per player in pp, mc P(win))
    started = time.perf_counter()
    for k, (rules, cards, seat, dice, roll, mc, se) in enumerate(positions(args)):
        table = get_table(rules, build=False)
        models = [win_chances(table, cards, seat if roll else None, dice, roll, **kw) for _, kw in MODELS]
        model = models[-1]
        diffs = [[abs(a - b) * 100 for a, b in zip(m, mc)] for m in models]
        rnd = len(cards[seat]) + 1
        rows.append((rules, rnd, table.model.n_boxes, len(cards), diffs, [x * 100 for x in se], mc))
        print(
            f"{k + 1:3d} {rules:9s} round {rnd:2d}/{table.model.n_boxes} throw {roll} {len(cards)}p  "
            f"model {' '.join(f'{p:5.3f}' for p in model)}  mc {' '.join(f'{p:5.3f}' for p in mc)}  "
            f"worst {' / '.join(f'{max(d):4.1f}' for d in diffs)} pp (mc se {max(se) * 100:3.1f})",
            flush=True,
        )
    print(f"\n{len(rows)} positions, {time.perf_counter() - started:.0f} s")
    report("all", rows)
    report("contested", [r for r in rows if 0.05 < max(r[6]) < 0.95])
    for name in ("early (1-4)", "middle", "last 3 rounds", "last round"):
        report(name, [r for r in rows if bucket(r[1], r[2]) == name])
    for rules in RULES:
        report(rules, [r for r in rows if r[0] == rules])


def report(name: str, rows: list) -> None:
    """One line per model: mean and worst |diff|, mean (diff / se)**2 (about 1 if the model is right) and the
    model's own RMS error with the Monte Carlo's noise taken out: sqrt(mean(diff**2) - mean(se**2))."""
    if not rows:
        return
    se = np.array([s for r in rows for s in r[5]])
    print(f"{name:14s} positions {len(rows):3d}  mc se mean {se.mean():4.2f} pp")
    for k in range(len(MODELS)):
        d = np.array([x for r in rows for x in r[4][k]])
        z2 = np.mean((d / np.maximum(se, 0.05)) ** 2)
        rms = np.sqrt(max(0.0, np.mean(d**2) - np.mean(se**2)))
        print(
            f"{'':14s} {MODELS[k][0]:18s} |model - mc| mean {d.mean():4.2f} worst {d.max():5.2f}  "
            f"z2 {z2:5.2f}  rms {np.sqrt(np.mean(d**2)):4.2f} noise-corrected {rms:4.2f} pp"
        )


def speed(rules: list[str]) -> None:
    """Time P(win) of 8 players: from means and variances, then from cards of each ruleset (default model)."""
    from table.strategy import win_chances as wc

    rng = np.random.default_rng(0)
    means, variances = list(rng.uniform(150, 300, 8)), list(rng.uniform(0, 3000, 8))
    reps = 200
    t = time.perf_counter()
    for _ in range(reps):
        win_probabilities(means, variances)
    print(f"win_probabilities, 8 players: {(time.perf_counter() - t) / reps * 1e3:.2f} ms")
    for name in rules:
        table = get_table(name, build=False)
        bot = MemoOptimalBot(table)
        cards, seat, dice, roll = draw_position(bot, 8, np.random.default_rng(3))
        while not roll or table.model.n_boxes - len(cards[seat]) <= 3:  # mid-game: the mixture, not the end game
            cards, seat, dice, roll = draw_position(bot, 8, rng)
        kind = "one normal" if table.lump is None else "mixtures"
        t = time.perf_counter()
        for _ in range(reps):
            win_chances(table, cards, seat, dice, roll)
        cached = (time.perf_counter() - t) / reps * 1e3
        t = time.perf_counter()
        for _ in range(20):
            wc._ROLLS.clear()
            win_chances(table, cards, seat, dice, roll)
        print(
            f"win_chances, 8 {name} players ({kind}), a turn under way: {cached:.2f} ms; "
            f"on a turn's first throw (uncached): {(time.perf_counter() - t) / 20 * 1e3:.2f} ms"
        )


def main() -> None:
    ap = _args.parser(__file__, description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=_args.positive(), default=36)
    ap.add_argument("--continuations", type=_args.positive(), default=400)
    ap.add_argument("--rules", "--rulesets", nargs="+", default=list(RULES), choices=RULES)
    ap.add_argument("--seed", type=int, default=36)
    ap.add_argument("--last-rounds", type=int, default=0, help="cut games in their last N rounds only")
    ap.add_argument("--speed-only", action="store_true")
    ap.add_argument(
        "--save", type=_args.out_file, help="write the positions and their Monte Carlo to this file (pickle)"
    )
    ap.add_argument("--load", nargs="+", help="compare the models on positions saved by --save (no Monte Carlo)")
    args = ap.parse_args()
    for r in args.rules:
        find_ruleset(r)
    if not args.load:
        speed(args.rules)
    if not args.speed_only:
        accuracy(args)


if __name__ == "__main__":
    _args.run(main)
