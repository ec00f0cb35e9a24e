"""Confidence intervals over queries and paired comparisons of two runs on the same queries.

A figure over 51 questions moves by 2 points per question, so every mean over queries is reported with a 95%
bootstrap interval, and a claim that one run beats another rests on the paired difference of their per-query values
(same query ids): its bootstrap interval and a paired permutation test (random sign flips of the differences).
Both come from :mod:`scipy.stats` (``bootstrap``, ``permutation_test``); nothing here resamples by hand.

    from hyperrag.eval.intervals import mean_interval, paired_comparison
    ci = mean_interval([1, 0, 1, 1])                 # Interval(estimate=75.0, low=..., high=..., n=4)
    cmp = paired_comparison(ours, baseline)          # difference interval, p-value, excludes_zero

    python -m hyperrag.eval.intervals RUN_DIR [RUN_DIR ...]   # each run's metrics with intervals; paired
                                                              # differences of every later run against the first
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["LEVEL", "RESAMPLES", "Interval", "PairedComparison", "mean_interval", "paired_comparison"]

LEVEL = 0.95
RESAMPLES = 10_000


@dataclass(frozen=True)
class Interval:
    """A mean over ``n`` queries with its bootstrap confidence interval, on the reported scale (percent)."""

    estimate: float
    low: float
    high: float
    n: int
    level: float = LEVEL

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
    p-value of a paired permutation test (the differences' signs flipped at random), and how many queries differ.

    With few differing queries (e.g. 3 of 51 full-chain hits gained, none lost) the bootstrap interval of the mean
    difference cannot reach zero although the exact test cannot reject it (p = 0.25 for 3 sign flips): a
    difference is *shown* only when the interval excludes zero **and** the permutation test rejects at the same
    level; :meth:`verdict` says which of the two holds."""

    difference: Interval
    p_value: float
    discordant: int = 0

    @property
    def excludes_zero(self) -> bool:
        """Whether the difference's interval lies wholly above or wholly below zero."""
        return self.difference.low > 0 or self.difference.high < 0

    @property
    def shown(self) -> bool:
        """The interval excludes zero and the paired permutation test rejects no difference at its level."""
        return self.excludes_zero and self.p_value < 1 - self.difference.level

    def verdict(self, a: str = "a", b: str = "b") -> str:
        """One line: which run is better, whether the interval of the difference excludes zero, and the test."""
        d = self.difference
        tail = f"(n={d.n}, {self.discordant} differ, p={self.p_value:.3f})"
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


def mean_interval(values: Sequence[float], *, scale: float = 100.0, level: float = LEVEL,
                  resamples: int = RESAMPLES, seed: int = 0) -> Interval:
    """The mean of per-query values with its bootstrap interval (BCa; percentile where BCa is undefined).

    Args:
        values: one value per query, e.g. 0/1 full-chain hits or recall fractions, shape ``[n]``.
        scale: multiplies the mean and bounds (100 → percent, as the metrics are reported; 1 for hops).
        level: confidence level of the two-sided interval.
        resamples: bootstrap resamples.
        seed: the resampling generator's seed (the same inputs give the same interval).

    Returns:
        ``Interval``; with fewer than two queries, or all values equal, the interval is the point itself.
    """
    arr = _array(values)
    if arr.size == 0:
        return Interval(float("nan"), float("nan"), float("nan"), 0, level)
    mean = float(arr.mean())
    if arr.size < 2 or np.all(arr == arr[0]):
        return Interval(scale * mean, scale * mean, scale * mean, int(arr.size), level)
    low, high = _bootstrap(arr, level, resamples, seed)
    return Interval(scale * mean, scale * low, scale * high, int(arr.size), level)


def _bootstrap(arr: np.ndarray, level: float, resamples: int, seed: int) -> tuple[float, float]:
    from scipy.stats import bootstrap

    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # BCa warns (and returns nan) on degenerate resamples: percentile then
            res = bootstrap((arr,), np.mean, confidence_level=level, n_resamples=resamples, method=method,
                            vectorized=True, rng=np.random.default_rng(seed))
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if math.isfinite(low) and math.isfinite(high):
            return low, high
    mean = float(arr.mean())
    return mean, mean


def paired_comparison(a: Sequence[float], b: Sequence[float], *, scale: float = 100.0, level: float = LEVEL,
                      resamples: int = RESAMPLES, seed: int = 0) -> PairedComparison:
    """Run ``a`` against run ``b`` on the same queries (``a[i]`` and ``b[i]`` belong to one query).

    Args:
        a, b: per-query values of the two runs, shape ``[n]`` each, aligned by query.
        scale, level, resamples, seed: as in :func:`mean_interval`.

    Returns:
        ``PairedComparison``: the mean of ``a − b`` with its bootstrap interval, the two-sided p-value of scipy's
        paired permutation test (``permutation_type="samples"``: each query's pair swapped at random; exact when
        the distinct swaps are fewer than ``resamples``), and the number of queries where the runs differ.
    """
    x, y = _array(a), _array(b)
    if x.shape != y.shape:
        raise ValueError(f"paired runs need the same queries: {x.size} vs {y.size} values")
    diff = mean_interval(x - y, scale=scale, level=level, resamples=resamples, seed=seed)
    discordant = int(np.count_nonzero(x != y))
    if x.size < 2 or discordant == 0:
        return PairedComparison(diff, 1.0, 0)
    from scipy.stats import permutation_test

    res = permutation_test((x, y), lambda u, v, axis=-1: np.mean(u - v, axis=axis), permutation_type="samples",
                           vectorized=True, n_resamples=resamples, alternative="two-sided",
                           rng=np.random.default_rng(seed))
    return PairedComparison(diff, float(res.pvalue), discordant)


def _metric_order(metric: str) -> tuple[int, str, int]:
    """recall@k, then fcr@k (by k), then the answer metrics, then the rest alphabetically."""
    name, _, k = metric.partition("@")
    rank = {"recall": 0, "fcr": 1, "em": 2, "f1": 3, "match_acc": 4, "jsr": 5, "accuracy": 6}.get(name, 7)
    return rank, name, int(k) if k.isdigit() else 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m hyperrag.eval.intervals RUN_DIR [RUN_DIR ...]``: every run's metrics with intervals, then the
    paired differences of each later run against the first."""
    import argparse

    from hyperrag.eval.per_query import comparable_metrics, run_per_query

    parser = argparse.ArgumentParser(prog="python -m hyperrag.eval.intervals", description=main.__doc__)
    parser.add_argument("runs", nargs="+", help="run directories (predictions.jsonl [+ evaluation.jsonl])")
    parser.add_argument("--metrics", default=None,
                        help="comma-separated metric names (default: every metric the runs have)")
    args = parser.parse_args(argv)
    runs = [run_per_query(r) for r in args.runs]
    if args.metrics:
        wanted = [m.strip() for m in args.metrics.split(",") if m.strip()]
    else:
        wanted = sorted({m for r in runs for m in r.values}, key=_metric_order)
    for run in runs:
        print(f"{run.name}  ({run.queries} queries)")
        for m in wanted:
            if m in run.values:
                print(f"  {m:>12}: {run.interval(m).text()}")
    for other in runs[1:]:
        print(f"{other.name} − {runs[0].name}")
        for m in comparable_metrics(runs[0], other, wanted):
            print(f"  {m:>12}: {other.compare(runs[0], m).verdict(other.name, runs[0].name)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
