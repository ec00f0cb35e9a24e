"""``python -m hyperrag.eval.intervals RUN_DIR [RUN_DIR ...] [--by-type]``: every run's metrics with their 95%
intervals, then the paired differences of each later run against the first (``--by-type``: also per question type).

``--pool BASE RUN [BASE RUN ...]``: the pairs (each RUN against its BASE, e.g. one pair per HolisQA domain) pooled
into one paired comparison over all their queries (each query counted once, within its own pair), after each
pair's own difference.

The command line lives here, apart from the statistics (``intervals/__init__.py``): it reads runs through
:mod:`hyperrag.eval.per_query`, which itself builds on the statistics, so neither file imports the other back.
Runs that share no query stop with one line naming both and exit code 2.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from hyperrag.errors import InputError, exit_on_input_error
from hyperrag.eval.per_query import RunValues, comparable_metrics, metric_order, run_per_query


@exit_on_input_error
def main(argv: Sequence[str] | None = None) -> int:
    """Every run's metrics with intervals, then the paired differences of each later run against the first."""
    parser = argparse.ArgumentParser(prog="python -m hyperrag.eval.intervals", description=main.__doc__)
    parser.add_argument("runs", nargs="+", help="run directories (predictions.jsonl [+ evaluation.jsonl])")
    parser.add_argument("--metrics", default=None,
                        help="comma-separated metric names (default: every metric the runs have)")
    parser.add_argument("--by-type", action="store_true",
                        help="also per question type (the prediction rows' type, e.g. 2Wiki's comparison)")
    parser.add_argument("--pool", action="store_true",
                        help="runs are pairs BASE RUN [BASE RUN ...]: each pair's difference, then all pooled")
    args = parser.parse_args(argv)
    runs = [run_per_query(r) for r in args.runs]
    if args.pool:
        if len(runs) % 2:
            raise InputError(f"--pool takes pairs BASE RUN: {len(runs)} run directories given",
                             path=args.runs[-1])
        base, pooled = pool(runs[0::2], runs[1::2])
        for b, r in zip(runs[0::2], runs[1::2]):
            report([b, r], args.metrics, runs_shown=False)
        report([base, pooled], args.metrics)
        return 0
    report(runs, args.metrics)
    if args.by_type:
        splits = [r.by_type() for r in runs]
        for qtype in dict.fromkeys(t for s in splits for t in s):
            group = [s[qtype] for s in splits if qtype in s]
            print(f"--- type {qtype}")
            report(group, args.metrics)
    return 0


def _require_common_queries(base: RunValues, other: RunValues) -> None:
    """One line naming both runs (exit code 2 through :func:`exit_on_input_error`) when they share no query."""
    if not set(base.query_ids) & set(other.query_ids):
        raise InputError(f"no query in common with {base.path}: nothing to pair", path=other.path)


def pool(bases: Sequence[RunValues], runs: Sequence[RunValues]) -> tuple[RunValues, RunValues]:
    """The pairs ``(bases[i], runs[i])`` as one pair of runs over all their queries: each query id is prefixed with
    its pair's index, so the same id in two pairs (two domains, two datasets) stays two queries, paired within its
    own pair only."""
    def merged(group: Sequence[RunValues], name: str) -> RunValues:
        values: dict[str, dict[str, float]] = {}
        for i, run in enumerate(group):
            for metric, vals in run.values.items():
                values.setdefault(metric, {}).update({f"{i}:{q}": v for q, v in vals.items()})
        return RunValues(name, None, values)

    for b, r in zip(bases, runs):
        _require_common_queries(b, r)
    return (merged(bases, f"pooled bases ({len(bases)} pairs)"), merged(runs, f"pooled runs ({len(runs)} pairs)"))


def report(runs: list[RunValues], metrics: str | None, runs_shown: bool = True) -> None:
    """Each run's metrics with intervals (unless ``runs_shown`` is false), then each later run's paired differences
    against the first."""
    for other in runs[1:]:
        _require_common_queries(runs[0], other)
    if metrics:
        wanted = [m.strip() for m in metrics.split(",") if m.strip()]
    else:
        wanted = sorted({m for r in runs for m in r.values}, key=metric_order)
    for run in runs if runs_shown else ():
        print(f"{run.name}  ({run.queries} queries)")
        for m in wanted:
            if m in run.values:
                ci = run.interval(m)
                print(f"  {m:>12}: {ci.text()}  ({ci.method})")
    for other in runs[1:]:
        print(f"{other.name} − {runs[0].name}")
        for m in comparable_metrics(runs[0], other, wanted):
            print(f"  {m:>12}: {other.compare(runs[0], m).verdict(other.name, runs[0].name)}")


if __name__ == "__main__":
    raise SystemExit(main())
