"""The fair-dice audit on 600 camera-read dice of fair and of loaded dice (six 20 % too often).

Plays seeded Yacht/Yahtzee games through the engine and store (:mod:`table.audit.synthetic`), runs
``dicetable audit`` on each store and prints the p-values, the power sentence, and over 200 seeds
how often the test noticed each die (the power, measured). Usage: python benchmarks/audit_power.py [OUT_DIR]
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import _args  # (imports _checkout: this checkout's vision/ and table/ first on sys.path)
import numpy as np

from table.audit.fairness import fair_dice_test, power
from table.audit.synthetic import loaded_die, play_games
from table.store import open_store


def main() -> None:
    parser = _args.parser(__file__, description=__doc__.splitlines()[0])
    parser.add_argument(
        "out_dir", nargs="?", type=_args.out_dir, help="folder for the stores and plots (default: temp)"
    )
    given = parser.parse_args().out_dir
    out = Path(given) if given else Path(tempfile.mkdtemp(prefix="audit-power-"))
    out.mkdir(parents=True, exist_ok=True)
    for name, bias in (("fair", 0.0), ("six-20pc", 0.2)):
        db = out / f"{name}.sqlite3"
        db.unlink(missing_ok=True)
        with open_store(db) as store:
            play_games(store, loaded_die(random.Random(2026), six_bias=bias), 600)
        res = subprocess.run(
            [sys.executable, "-m", "table", "audit", "--db", str(db), "--json", "--plot", str(out / f"{name}.png")],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        r = json.loads(res.stdout)
        print(f"{name:9s} dice {r['dice']}  counts {r['counts']}  chi2 {r['chi2']:.2f}  p {r['p']:.4f}")
        print(f"          {r['verdict']}\n          {r['power_line']}")
    rng = np.random.default_rng(1)
    for bias in (0.0, 0.2):
        probs = [(1 - (1 + bias) / 6) / 5] * 5 + [(1 + bias) / 6]
        hits = np.mean([fair_dice_test(c.tolist()).p < 0.05 for c in rng.multinomial(600, probs, size=2000)])
        print(f"600 dice, six +{bias:.0%}: rejected at 5 % in {hits:.1%} of 2000 seeded samples")
    print(f"exact power at 600 dice: {power(600):.1%}; dice for 80 %: "
          f"{next(n for n in range(100, 10000, 10) if power(n) >= 0.8)}")  # fmt: skip


if __name__ == "__main__":
    _args.run(main)
