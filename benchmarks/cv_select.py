"""Cross-validated choice among finished runs: each fold's questions are scored by the candidate that was best on
the *other* folds, so no choice is scored on the questions it was chosen on.

    python benchmarks/cv_select.py RUN_DIR [RUN_DIR ...] [--metric recall@5] [--also fcr@5] [--folds 5] [--seed 0]
        [--baseline RUN_DIR ...] [--json OUT.json]

Every candidate is a run directory (``predictions.jsonl``; its per-query values as ``hyperrag.eval.per_query``
computes them) over the same questions. Retrieval does not train on the questions, so choosing from per-query
results is the same as re-running each candidate per fold. The questions (those every candidate scored) are split
into ``--folds`` folds by a seeded shuffle; for each fold the candidate with the best mean ``--metric`` on the
other folds (ties: the earlier candidate on the command line) is applied to it. Printed: which candidate each fold
chose, the cross-validated ``--metric`` (and each ``--also`` metric, read from the same chosen candidates) with
its 95% bootstrap interval, and paired differences against each ``--baseline`` run on the same questions.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hyperrag.eval.folds import split_folds
from hyperrag.eval.intervals import Interval, PairedComparison, mean_interval, paired_comparison
from hyperrag.eval.per_query import RunValues, is_binary_metric, run_per_query


@dataclass
class CVResult:
    """The cross-validated selection.

    Attributes:
        queries: the question ids scored, in fold order.
        folds: per fold, its question ids.
        chosen: per fold, the index of the candidate applied to it.
        values: metric → {query id: the chosen candidate's value on that held-out query}.
    """

    queries: list[str]
    folds: list[list[str]]
    chosen: list[int]
    values: dict[str, dict[str, float]] = field(default_factory=dict)

    def interval(self, metric: str) -> Interval:
        return mean_interval([self.values[metric][q] for q in self.queries], binary=is_binary_metric(metric))


def cross_validate(candidates: Sequence[RunValues], metric: str, folds: int = 5, seed: int = 0,
                   also: Sequence[str] = ()) -> CVResult:
    """Choose per fold on the other folds by mean ``metric``; score the held-out fold with the choice.

    Args:
        candidates: per-query values of each candidate run (at least one).
        metric: the selection metric, e.g. ``recall@5``.
        folds: number of folds; seed: the shuffle's seed.
        also: further metrics reported for the same choices.
    """
    if not candidates:
        raise ValueError("no candidate runs")
    metrics = [metric, *[m for m in also if m != metric]]
    missing = [(c.name, m) for c in candidates for m in metrics if not c.values.get(m)]
    if missing:
        raise ValueError(f"run {missing[0][0]} has no per-query {missing[0][1]}")
    common = set.intersection(*(set(c.values[m]) for c in candidates for m in metrics))
    queries = sorted(common)
    parts = split_folds(queries, folds, seed)
    chosen = []
    values: dict[str, dict[str, float]] = {m: {} for m in metrics}
    for held_out in parts:
        held = set(held_out)
        train = [q for q in queries if q not in held]
        means = [sum(c.values[metric][q] for q in train) / len(train) for c in candidates]
        best = max(range(len(candidates)), key=lambda i: (means[i], -i))
        chosen.append(best)
        for m in metrics:
            for q in held_out:
                values[m][q] = candidates[best].values[m][q]
    return CVResult([q for part in parts for q in part], parts, chosen, values)


def compare(result: CVResult, baseline: RunValues, metric: str) -> PairedComparison:
    """Cross-validated choice − ``baseline`` on ``metric`` over the questions both have."""
    qs = [q for q in result.queries if q in baseline.values.get(metric, {})]
    return paired_comparison([result.values[metric][q] for q in qs], [baseline.values[metric][q] for q in qs])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/cv_select.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="candidate run directories")
    parser.add_argument("--metric", default="recall@5", help="selection metric (default recall@5)")
    parser.add_argument("--also", action="append", default=[], help="further metrics for the same choices")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", action="append", default=[], help="run(s) to compare with, paired")
    parser.add_argument("--json", default=None, help="also write the result here")
    args = parser.parse_args(argv)
    try:
        candidates = [run_per_query(r, str(r)) for r in args.runs]
        baselines = [run_per_query(r, str(r)) for r in args.baseline]
        result = cross_validate(candidates, args.metric, args.folds, args.seed, args.also)
    except (OSError, ValueError, KeyError) as exc:
        print(f"cv_select: {exc}", file=sys.stderr)
        return 2
    metrics = list(result.values)
    print(f"{len(candidates)} candidates, {len(result.queries)} questions, {args.folds} folds (seed {args.seed}), "
          f"chosen by {args.metric} on the other folds")
    for i, (part, c) in enumerate(zip(result.folds, result.chosen)):
        print(f"  fold {i + 1} ({len(part)} q): {candidates[c].name}")
    out: dict = {"folds": args.folds, "seed": args.seed, "metric": args.metric, "questions": len(result.queries),
                 "chosen": [candidates[c].name for c in result.chosen], "cross_validated": {}, "baselines": {}}
    for m in metrics:
        iv = result.interval(m)
        print(f"  cross-validated {m}: {iv.text()}")
        out["cross_validated"][m] = [iv.estimate, iv.low, iv.high]
    for base in baselines:
        out["baselines"][base.name] = {}
        for m in metrics:
            if not base.values.get(m):
                continue
            cmp = compare(result, base, m)
            print(f"  {m}: cross-validated − {base.name}: {cmp.verdict('cross-validated', base.name)}")
            d = cmp.difference
            iv = base.interval(m)
            out["baselines"][base.name][m] = {"interval": [iv.estimate, iv.low, iv.high],
                                              "difference": [d.estimate, d.low, d.high], "p": cmp.p_value}
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
