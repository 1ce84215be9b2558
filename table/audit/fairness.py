"""Is the die fair? Pearson's chi-square goodness-of-fit test on face counts, its p-value and its power.

Pure functions of counts: no I/O, no randomness, no SciPy.

* The test: Pearson's statistic ``X2 = sum((O_i - E_i)**2 / E_i)`` over the six faces, with
  ``E_i = N / 6``, compared with the chi-square distribution with ``k - 1 = 5`` degrees of freedom
  (K. Pearson, Philosophical Magazine 50, 1900; NIST/SEMATECH e-Handbook of Statistical Methods,
  section 1.3.5.15 "Chi-Square Goodness-of-Fit Test"). The usual rule of thumb asks each expected
  count to be at least 5 (N >= 30 for a d6); below that :func:`fair_dice_test` says so.
* The p-value: the chi-square survival function in closed form for integer degrees of freedom
  (M. Abramowitz and I. A. Stegun, Handbook of Mathematical Functions, 1964, 26.4.4 for odd and
  26.4.5 for even degrees of freedom), with :func:`math.erfc` for the normal tail.
* The power: under a biased die the statistic follows a noncentral chi-square with
  ``lambda = N * sum((p1_i - p0_i)**2 / p0_i)`` (Patnaik, Biometrika 36, 1949); its survival function
  is the Poisson mixture of central ones (Abramowitz and Stegun 26.4.25), summed exactly here to
  a tail below 1e-12. The tests check it against a seeded simulation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: Faces of a d6.
FACES = 6
#: Significance level of the verdict (the conventional 5 %).
ALPHA = 0.05
#: How much more often one face comes up in the power sentence: 20 % (1/6 -> 1/5).
BIAS = 0.20
#: Fewest dice for the test: five expected per face (NIST 1.3.5.15's rule of thumb).
MIN_DICE = 5 * FACES


def chi2_sf(x: float, df: int) -> float:
    """P(X > x) for X chi-square with `df` (a positive integer) degrees of freedom.

    Abramowitz and Stegun 26.4.4 (odd `df`) and 26.4.5 (even `df`); exact to rounding.

    Raises
    ------
    ValueError
        If `df` is not a positive integer.

    Examples
    --------
    >>> round(chi2_sf(11.0705, 5), 4)
    0.05
    """
    if isinstance(df, bool) or not isinstance(df, int) or df < 1:
        raise ValueError(f"df must be a positive integer, got {df!r}")
    if x <= 0:
        return 1.0
    if df % 2 == 0:  # Q = exp(-x/2) * sum_{k < df/2} (x/2)**k / k!
        term = total = math.exp(-x / 2)
        for k in range(1, df // 2):
            term *= (x / 2) / k
            total += term
        return min(1.0, total)
    s = math.sqrt(x)  # Q = 2 * (1 - Phi(s)) + 2 * phi(s) * sum_{r=1}^{(df-1)/2} s**(2r-1) / (1*3*...*(2r-1))
    tail = math.erfc(s / math.sqrt(2))
    term, total = s, 0.0
    for r in range(1, (df - 1) // 2 + 1):
        if r > 1:
            term *= x / (2 * r - 1)
        total += term
    return min(1.0, tail + 2 * math.exp(-x / 2) / math.sqrt(2 * math.pi) * total)


def chi2_isf(p: float, df: int) -> float:
    """The `x` with ``chi2_sf(x, df) == p`` (0 < p < 1), by bisection to 1e-10 relative."""
    if not 0 < p < 1:
        raise ValueError(f"p must be between 0 and 1, got {p!r}")
    lo, hi = 0.0, float(df)
    while chi2_sf(hi, df) > p:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if chi2_sf(mid, df) > p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-10 * hi:
            break
    return (lo + hi) / 2


def ncx2_sf(x: float, df: int, nc: float) -> float:
    """P(X > x) for X noncentral chi-square (`df` degrees of freedom, noncentrality `nc` >= 0).

    The Poisson(nc / 2) mixture of central survival functions (Abramowitz and Stegun 26.4.25),
    summed until the Poisson tail left is below 1e-12.
    """
    if nc < 0:
        raise ValueError(f"nc must be >= 0, got {nc!r}")
    if nc == 0:
        return chi2_sf(x, df)
    half = nc / 2
    total, weight, left, j = 0.0, math.exp(-half), 1.0, 0
    while left > 1e-12 and j < 10_000:
        total += weight * chi2_sf(x, df + 2 * j)
        left -= weight
        j += 1
        weight *= half / j
    return min(1.0, total)


def pearson(counts: Sequence[int]) -> float:
    """Pearson's statistic of `counts` (one per face) against equal expected counts; 0 for no dice."""
    n = sum(counts)
    if n == 0:
        return 0.0
    e = n / len(counts)
    return sum((o - e) ** 2 / e for o in counts)


def power(n: int, *, bias: float = BIAS, alpha: float = ALPHA, faces: int = FACES) -> float:
    """Chance that the test at level `alpha` rejects with `n` dice when one face comes up ``1 + bias``
    times as often as it should (the others share the rest evenly); exact (:func:`ncx2_sf`)."""
    if n <= 0:
        return 0.0
    p0 = 1 / faces
    hot = p0 * (1 + bias)
    cold = (1 - hot) / (faces - 1)
    nc = n * ((hot - p0) ** 2 + (faces - 1) * (cold - p0) ** 2) / p0
    return ncx2_sf(chi2_isf(alpha, faces - 1), faces - 1, nc)


def band(n: int, *, faces: int = FACES, z: float = 1.959964) -> tuple[float, float]:
    """Where one face's count of a fair die falls 95 % of the time with `n` dice: ``(low, high)``
    (the normal approximation to the binomial, ``n/6 +- 1.96 * sqrt(n * 1/6 * 5/6)``; one face at a time)."""
    p = 1 / faces
    mid, half = n * p, z * math.sqrt(n * p * (1 - p))
    return max(0.0, mid - half), mid + half


@dataclass(frozen=True, slots=True)
class FairDice:
    """The test's result on a set of face counts.

    Attributes
    ----------
    counts : tuple of int
        Dice that showed 1..6 (index 0 is face 1).
    n : int
        All of them.
    chi2 : float
        Pearson's statistic (df = 5).
    p : float or None
        Its p-value; None with fewer than :data:`MIN_DICE` dice (too few to test).
    power : float
        Chance of noticing one face coming up 20 % too often with these many dice, at 5 %.
    """

    counts: tuple[int, ...]
    n: int
    chi2: float
    p: float | None
    power: float

    @property
    def verdict(self) -> str:
        """One plain line on what the counts say."""
        if self.p is None:
            return f"Too few dice to tell: {self.n} read, the test needs at least {MIN_DICE}."
        if self.p < ALPHA:
            return f"These dice look unfair: counts this uneven come from fair dice {_pct(self.p)} of the time."
        return f"No sign of unfair dice: fair dice give counts this uneven or more {_pct(self.p)} of the time."

    @property
    def power_line(self) -> str:
        """The power as a sentence."""
        return (
            f"With {self.n} dice, a face coming up 20 % more often than it should "
            f"would be noticed {_pct(self.power)} of the time."
        )


def _pct(x: float) -> str:
    pct = 100 * x
    if pct >= 10:
        return f"{pct:.0f} %"
    if pct >= 0.1:
        return f"{pct:.1f} %"
    return "under 0.1 %"


def fair_dice_test(counts: Sequence[int]) -> FairDice:
    """Pearson's chi-square test of `counts` (six face counts) against a fair d6.

    Raises
    ------
    ValueError
        If `counts` is not six non-negative integers.
    """
    counts = tuple(counts)
    if len(counts) != FACES or any(isinstance(c, bool) or not isinstance(c, int) or c < 0 for c in counts):
        raise ValueError(f"counts must be six non-negative integers (faces 1-6), got {list(counts)}")
    n = sum(counts)
    x2 = pearson(counts)
    p = chi2_sf(x2, FACES - 1) if n >= MIN_DICE else None
    return FairDice(counts, n, x2, p, power(n))
