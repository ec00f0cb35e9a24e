"""Confidence intervals over queries and paired comparisons of two runs on the same queries.

A figure over 51 questions moves by 2 points per question, so every mean over queries is reported with a 95%
interval, and a claim that one run beats another rests on the paired difference of their per-query values (same
query ids): its bootstrap interval and a paired sign-flip permutation test.

* A metric whose per-query values are 0 or 1 by definition (EM, FCR@k, JSR, Match-Acc, accuracy, GPT-Acc, the
  hallucination rates) is a proportion: its interval
  is the **Wilson score interval** (so 0 of 51 gives [0, 7.0], not the degenerate [0, 0] a bootstrap gives).
* Any other metric (recall@k, F1, cosines) gets the **BCa bootstrap** interval (10,000 resamples; percentile where
  BCa is undefined), from :func:`scipy.stats.bootstrap`.
* The paired test flips the signs of the ``m`` non-zero per-query differences: **exact** (all ``2^m`` flips
  enumerated, :func:`exact_sign_flip_p`) when ``m ≤ 30``, **Monte Carlo** (10,000 random flips, from
  :func:`scipy.stats.permutation_test`) otherwise; :attr:`PairedComparison.test` says which.
* A claim that two runs are *within X* of each other needs an **equivalence test** (:func:`equivalence`: two
  one-sided tests at ±X, read as the paired difference's 90% interval lying inside ±X); a difference that is not
  shown is not equivalence ("no difference shown" is all a non-significant test says).
* :func:`holm` adjusts the p-values of a table's tests (several metrics, several rows against one baseline) for
  multiplicity (Holm 1979); a report decides "shown" on the adjusted p.

    from hyperrag.eval.intervals import mean_interval, paired_comparison
    ci = mean_interval([1, 0, 1, 1])                 # Interval(estimate=75.0, low=..., high=..., n=4, method="Wilson")
    cmp = paired_comparison(ours, baseline)          # difference interval, p-value, excludes_zero

    python -m hyperrag.eval.intervals RUN_DIR [RUN_DIR ...]   # each run's metrics with intervals; paired
                                                              # differences of every later run against the first
                                                              # (the command line: intervals/__main__.py)
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["EXACT_MAX_DIFFERING", "LEVEL", "RESAMPLES", "Equivalence", "Interval", "PairedComparison", "equivalence",
           "exact_sign_flip_p", "holm",
           "interval_legend", "mean_interval", "paired_comparison", "wilson_interval"]

LEVEL = 0.95
RESAMPLES = 10_000
#: the paired test enumerates every sign flip up to this many differing queries (2^30 ≈ 1.07e9 flips, counted by
#: meeting in the middle: two halves of 2^15 sums each)
EXACT_MAX_DIFFERING = 30

WILSON = "Wilson"
BCA = "BCa bootstrap"
PERCENTILE = "percentile bootstrap"


@dataclass(frozen=True)
class Interval:
    """A mean over ``n`` queries with its confidence interval, on the reported scale (percent).

    ``method``: how the interval was obtained — ``Wilson`` (0/1 values), ``BCa bootstrap``, ``percentile
    bootstrap`` (BCa undefined), or ``point`` (fewer than two queries, or constant non-binary values)."""

    estimate: float
    low: float
    high: float
    n: int
    level: float = LEVEL
    method: str = BCA

    def text(self, digits: int = 1) -> str:
        """``67.3 [54.2, 79.1]``."""
        if math.isnan(self.estimate):
            return "–"
        return f"{self.estimate:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2


@dataclass(frozen=True)
class PairedComparison:
    """``a − b`` over the queries both runs scored: the mean difference with its bootstrap interval, the two-sided
    p-value of a paired sign-flip permutation test, and how many queries differ.

    ``test`` is ``exact`` (every sign flip of the differing queries enumerated) or ``Monte Carlo`` (random flips).
    ``p_adjusted`` is set by :func:`holm` when the comparison is one of a table's several tests.

    With few differing queries (e.g. 3 of 51 full-chain hits gained, none lost) the bootstrap interval of the mean
    difference cannot reach zero although the exact test cannot reject it (p = 2/8 = 0.25 for 3 sign flips): a
    difference is *shown* only when the interval excludes zero **and** the permutation test rejects at the same
    level (on the Holm-adjusted p when set); :meth:`verdict` says which of the two holds."""

    difference: Interval
    p_value: float
    discordant: int = 0
    test: str = "exact"
    p_adjusted: float | None = None

    @property
    def excludes_zero(self) -> bool:
        """Whether the difference's interval lies wholly above or wholly below zero."""
        return self.difference.low > 0 or self.difference.high < 0

    @property
    def p(self) -> float:
        """The p-value a decision uses: Holm-adjusted when set, else the test's own."""
        return self.p_value if self.p_adjusted is None else self.p_adjusted

    @property
    def shown(self) -> bool:
        """The interval excludes zero and the paired permutation test (Holm-adjusted when set) rejects no
        difference at its level."""
        return self.excludes_zero and self.p < 1 - self.difference.level

    def p_text(self) -> str:
        """``p=0.031 (exact)`` or ``p=0.012, Holm 0.084 (Monte Carlo)``."""
        holm_part = "" if self.p_adjusted is None else f", Holm {self.p_adjusted:.3f}"
        return f"p={self.p_value:.3f}{holm_part} ({self.test})"

    def verdict(self, a: str = "a", b: str = "b") -> str:
        """One line: which run is better, whether the interval of the difference excludes zero, and the test."""
        d = self.difference
        tail = f"(n={d.n}, {self.discordant} differ, {self.p_text()} sign-flip test)"
        if self.shown:
            better = a if d.estimate > 0 else b
            return f"{a} − {b} = {d.text()}: {better} is better, the interval excludes 0 {tail}"
        if self.excludes_zero:
            return (f"{a} − {b} = {d.text()}: the interval excludes 0 but the paired permutation test does not "
                    f"reject (too few queries differ), no difference shown {tail}")
        return f"{a} − {b} = {d.text()}: the interval includes 0, no difference shown {tail}"


def _array(values: Sequence[float]) -> np.ndarray:
    arr = np.asarray([float(v) for v in values], dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError("values must be one number per query")
    if not np.all(np.isfinite(arr)):
        raise ValueError("values must be finite (leave out queries a metric does not apply to)")
    return arr


def _binary(arr: np.ndarray) -> bool:
    return bool(arr.size) and bool(np.all((arr == 0.0) | (arr == 1.0)))


def wilson_interval(successes: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``successes / n`` (fractions in [0, 1]).

    Args:
        successes: how many of the ``n`` 0/1 values are 1.
        n: how many values (> 0).
        level: confidence level of the two-sided interval.
    """
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + level / 2))
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(values: Sequence[float], *, scale: float = 100.0, level: float = LEVEL,
                  resamples: int = RESAMPLES, seed: int = 0, binary: bool | None = None) -> Interval:
    """The mean of per-query values with its interval: Wilson for a 0/1 metric, else BCa bootstrap (percentile
    where BCa is undefined). The values are sorted first, so the same values in any order give the same interval.

    Args:
        values: one value per query, e.g. 0/1 full-chain hits or recall fractions, shape ``[n]``.
        scale: multiplies the mean and bounds (100 → percent, as the metrics are reported; 1 for hops).
        binary: whether the metric is a 0/1 one (Wilson); ``None``: whether every value is 0 or 1 and ``scale``
            is not 1 (a count such as hops is never a proportion). Callers that know the metric say so
            (:meth:`~hyperrag.eval.per_query.RunValues.interval`), so a recall row that happens to be all 0/1
            keeps the bootstrap.
        level: confidence level of the two-sided interval.
        resamples: bootstrap resamples (continuous values).
        seed: the resampling generator's seed (the same inputs give the same interval).

    Returns:
        ``Interval`` with its ``method``; with no query, NaN; for one query, or constant non-binary values, the
        point itself (``method="point"``).
    """
    arr = np.sort(_array(values))
    if arr.size == 0:
        return Interval(float("nan"), float("nan"), float("nan"), 0, level, "point")
    mean = float(arr.mean())
    if (_binary(arr) and scale != 1.0) if binary is None else (binary and _binary(arr)):
        low, high = wilson_interval(int(arr.sum()), int(arr.size), level)
        return Interval(scale * mean, scale * low, scale * high, int(arr.size), level, WILSON)
    if arr.size < 2 or np.all(arr == arr[0]):
        return Interval(scale * mean, scale * mean, scale * mean, int(arr.size), level, "point")
    low, high, method = _bootstrap(arr, level, resamples, seed)
    return Interval(scale * mean, scale * low, scale * high, int(arr.size), level, method)


def _difference_interval(diff: np.ndarray, scale: float, level: float, resamples: int, seed: int) -> Interval:
    """The paired difference's bootstrap interval (differences of 0/1 values are not 0/1: no Wilson here)."""
    if diff.size == 0:
        return Interval(float("nan"), float("nan"), float("nan"), 0, level, "point")
    mean = float(diff.mean())
    if diff.size < 2 or np.all(diff == diff[0]):
        return Interval(scale * mean, scale * mean, scale * mean, int(diff.size), level, "point")
    low, high, method = _bootstrap(diff, level, resamples, seed)
    return Interval(scale * mean, scale * low, scale * high, int(diff.size), level, method)


def _bootstrap(arr: np.ndarray, level: float, resamples: int, seed: int) -> tuple[float, float, str]:
    from scipy.stats import bootstrap

    for method, name in (("BCa", BCA), ("percentile", PERCENTILE)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # BCa warns (and returns nan) on degenerate resamples: percentile then
            res = bootstrap((arr,), np.mean, confidence_level=level, n_resamples=resamples, method=method,
                            vectorized=True, rng=np.random.default_rng(seed))
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if math.isfinite(low) and math.isfinite(high):
            return low, high, name
    mean = float(arr.mean())
    return mean, mean, "point"


def paired_comparison(a: Sequence[float], b: Sequence[float], *, scale: float = 100.0, level: float = LEVEL,
                      resamples: int = RESAMPLES, seed: int = 0) -> PairedComparison:
    """Run ``a`` against run ``b`` on the same queries (``a[i]`` and ``b[i]`` belong to one query).

    Args:
        a, b: per-query values of the two runs, shape ``[n]`` each, aligned by query.
        scale, level, resamples, seed: as in :func:`mean_interval`.

    Returns:
        ``PairedComparison``: the mean of ``a − b`` with its bootstrap interval, the two-sided p-value of a
        sign-flip permutation test on the ``m`` non-zero differences (queries where the runs tie add nothing to
        either tail) — exact over all ``2^m`` flips when ``m ≤ 30``, Monte Carlo with ``resamples`` flips
        otherwise — and ``m``.
    """
    x, y = _array(a), _array(b)
    if x.shape != y.shape:
        raise ValueError(f"paired runs need the same queries: {x.size} vs {y.size} values")
    diff = _difference_interval(x - y, scale, level, resamples, seed)
    nonzero = (x - y)[x != y]
    m = int(nonzero.size)
    if m == 0:
        return PairedComparison(diff, 1.0, 0, "exact")
    if m <= EXACT_MAX_DIFFERING:
        return PairedComparison(diff, exact_sign_flip_p(nonzero), m, "exact")
    from scipy.stats import permutation_test

    # one sample with permutation_type="samples": scipy flips the sign of each observation at random
    res = permutation_test((nonzero,), lambda d, axis=-1: np.sum(d, axis=axis), permutation_type="samples",
                           vectorized=True, n_resamples=resamples, alternative="two-sided",
                           rng=np.random.default_rng(seed))
    return PairedComparison(diff, min(1.0, float(res.pvalue)), m, f"Monte Carlo, {resamples:,} flips")


def exact_sign_flip_p(differences: np.ndarray) -> float:
    """The exact two-sided p-value of the sign-flip test: the share of all ``2^m`` sign assignments of the ``m``
    differences whose sum is at least as far from zero as the observed sum (the null distribution is symmetric,
    so this equals twice the smaller tail, as :func:`scipy.stats.permutation_test` defines it).

    The ``2^m`` sums are counted, not listed: the signed sums of each half of the differences (``2^⌈m/2⌉`` each,
    32,768 at ``m = 30``) are built by doubling, one half sorted, and for each sum of the other the sums of the
    sorted half that reach the observed distance are found by binary search.

    Args:
        differences: the non-zero per-query differences, shape ``[m]`` (``m`` ≤ :data:`EXACT_MAX_DIFFERING`).
    """
    diffs = np.asarray(differences, dtype=float)
    observed = abs(float(np.sum(diffs)))
    tol = 1e-9 * max(1.0, observed)
    if observed <= tol:
        return 1.0

    def signed_sums(part: np.ndarray) -> np.ndarray:
        sums = np.zeros(1)
        for d in part:
            sums = np.concatenate([sums + d, sums - d])
        return sums

    half = diffs.size // 2
    left, right = signed_sums(diffs[:half]), np.sort(signed_sums(diffs[half:]))
    reach = observed - tol  # |l + r| >= reach  <=>  r >= reach - l  or  r <= -reach - l (reach > 0: disjoint)
    upper = right.size - np.searchsorted(right, reach - left, side="left")
    lower = np.searchsorted(right, -reach - left, side="right")
    return float((upper.sum() + lower.sum()) / (left.size * right.size))


@dataclass(frozen=True)
class Equivalence:
    """Two one-sided tests (TOST) of ``a − b`` against the margin ``±margin``: equivalent at level α (5%) when the
    paired difference's ``1 − 2α`` (90%) bootstrap interval lies inside ``(−margin, +margin)``."""

    difference: Interval  # the 90% interval
    margin: float

    @property
    def equivalent(self) -> bool:
        d = self.difference
        return -self.margin < d.low and d.high < self.margin

    def text(self, digits: int = 1) -> str:
        """``within ±2.0 (TOST: 90% interval [−1.1, +0.9] inside ±2.0)`` or ``no equivalence within ±2.0 shown
        (90% interval [−4.1, +2.9] passes −2.0)``."""
        d, m = self.difference, self.margin
        bracket = f"90% interval [{d.low:+.{digits}f}, {d.high:+.{digits}f}]"
        if self.equivalent:
            return f"within ±{m:.{digits}f} (TOST: {bracket} inside ±{m:.{digits}f})"
        passes = ", ".join(f"{b:+.{digits}f}" for b, out in ((-m, d.low <= -m), (m, d.high >= m)) if out)
        return f"no equivalence within ±{m:.{digits}f} shown ({bracket} passes {passes})"


def equivalence(a: Sequence[float], b: Sequence[float], margin: float, *, scale: float = 100.0, alpha: float = 0.05,
                resamples: int = RESAMPLES, seed: int = 0) -> Equivalence:
    """Whether run ``a`` is within ``margin`` of run ``b`` on the same queries: two one-sided tests at level
    ``alpha``, as the paired difference's ``1 − 2·alpha`` bootstrap interval inside ``(−margin, +margin)``.

    Args:
        a, b: per-query values of the two runs, shape ``[n]`` each, aligned by query.
        margin: the equivalence margin, on the reported scale (points when ``scale`` is 100).
        scale, resamples, seed: as in :func:`mean_interval`.
        alpha: the level of each one-sided test (5% → the 90% interval).
    """
    x, y = _array(a), _array(b)
    if x.shape != y.shape:
        raise ValueError(f"paired runs need the same queries: {x.size} vs {y.size} values")
    return Equivalence(_difference_interval(x - y, scale, 1 - 2 * alpha, resamples, seed), float(margin))


def holm(comparisons: Sequence[PairedComparison]) -> list[PairedComparison]:
    """Holm's step-down adjustment of a family of tests' p-values (the family: one table's tests).

    The ``i``-th smallest of ``k`` p-values is multiplied by ``k − i`` (``i`` from 0), running maxima keep the
    order, capped at 1. Returns the comparisons in the given order with ``p_adjusted`` set.
    """
    k = len(comparisons)
    order = sorted(range(k), key=lambda i: comparisons[i].p_value)
    adjusted = [1.0] * k
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (k - rank) * comparisons[i].p_value))
        adjusted[i] = running
    return [dataclasses.replace(c, p_adjusted=adjusted[i]) for i, c in enumerate(comparisons)]


def interval_legend(level: float = LEVEL, resamples: int = RESAMPLES) -> str:
    """One sentence for a report's header: how its intervals were obtained."""
    return (f"{level:.0%} interval over the queries in brackets: Wilson score for 0/1 metrics (EM, FCR@k, JSR, "
            f"Match-Acc, accuracy, GPT-Acc, hallucination rates), BCa bootstrap ({resamples:,} resamples) for the others (recall, F1, hops, ...)")
