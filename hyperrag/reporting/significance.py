"""Paired tests of a report's rows against the table's strongest baseline, on the same queries.

Which rows are tested and which are baselines:
- ``methods`` (the report's setting, or a published table's tested methods) names the rows under test; every other
  method is a baseline. Unset: the four papers' methods present in the runs (CatRAG, HugRAG, HyperRAG, CDF-RAG)
  are tested; with none of them, HippoRAG 2 is (its own table); with neither, each row is tested against the
  strongest *other* row.
- An ablation or sweep (every run one method) tests each variant against the reference variant (``full`` /
  ``hugrag_full`` / the first row).
The strongest baseline of a (dataset, metric) is the baseline row with the best mean among those obtained as the
tested row was — with the oracle (an upper bound) or without it (:func:`~hyperrag.reporting.collect.uses_oracle`)
— so an upper bound is never tested against a baseline without the oracle's information, nor an LLM-free row
against an upper bound; only where no baseline was obtained that way is the strongest of all taken (its label says
how it was obtained). Each test is a paired bootstrap interval of the mean difference and a paired sign-flip
p-value (exact up to 20 differing queries, Monte Carlo beyond) over the queries both rows scored
(:mod:`hyperrag.eval.intervals`). The baseline is picked after the fact and several correlated metrics are tested,
so the p-values of one table's tests are Holm-adjusted together, and a difference is *shown* on the adjusted p.

Answers read by the oracle (``llm=oracle`` as the reader) are not tested: the oracle answers from the gold
whenever the evidence it is given holds it (and, for graph methods, accepts items by origin), so its EM / F1 /
JSR / Match-Acc measure the retrieved evidence, not an answer, and differ between methods in how each hands over
evidence (:func:`oracle_read_metrics`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from hyperrag.eval.intervals import Equivalence, PairedComparison, holm
from hyperrag.reporting.collect import RunRecord, uses_oracle
from hyperrag.reporting.tables import lower_is_better, markdown_table

PAPER_METHODS = ("catrag", "hugrag", "hyperrag", "cdfrag")
REFERENCE_VARIANTS = ("full", "hugrag_full", "default")
#: metrics of the reader's answer: under an oracle reader they measure the evidence handed over, not an answer
ANSWER_METRICS = ("em", "f1", "match_acc", "jsr", "accuracy", "judge_acc", "precision", "recall")
ORACLE = "upper bound (oracle)"


def oracle_read(run: RunRecord) -> bool:
    """Whether the run's answers came from the oracle: its own reader's label, else the retrieval LLM's."""
    reader = [t for t in run.tags if t.startswith("reader: ")]
    return reader[0] == f"reader: {ORACLE}" if reader else ORACLE in run.tags


def _strongest_like(row: RunRecord, baselines: Sequence[RunRecord], metric: str) -> RunRecord:
    """The best of ``baselines`` obtained as ``row`` was (with or without the oracle); all of them when none was."""
    like = [b for b in baselines if uses_oracle(b) == uses_oracle(row)]
    return _best(like or baselines, metric)


def oracle_read_metrics(runs: Sequence[RunRecord], metrics: Sequence[str]) -> list[str]:
    """The answer metrics left out of the paired tests because some run's answers came from the oracle."""
    return [m for m in metrics if m in ANSWER_METRICS and any(oracle_read(r) for r in runs)]


@dataclass(frozen=True)
class PairedTest:
    dataset: str
    metric: str
    row: RunRecord
    baseline: RunRecord
    result: PairedComparison
    #: two one-sided tests at the report's margin (``equivalence_margin``), when one is set
    equivalence: Equivalence | None = None

    @property
    def better(self) -> bool | None:
        """True: the row is better (the interval excludes zero and the permutation test rejects); False: worse,
        likewise; None: no difference shown."""
        if not self.result.shown:
            return None
        gain = self.result.difference.estimate
        return (gain < 0) if lower_is_better(self.metric) else (gain > 0)


def tested_methods(runs: Sequence[RunRecord], methods: Sequence[str] | None = None) -> set[str]:
    """The methods whose rows are tested (see the module docstring)."""
    present = {r.method for r in runs}
    if methods:
        return set(methods) & present
    papers = present & set(PAPER_METHODS)
    if papers:
        return papers
    return {"hipporag2"} & present


def _reference_variant(runs: Sequence[RunRecord]) -> RunRecord:
    for r in runs:
        if any(v in REFERENCE_VARIANTS for v in r.variant.values()):
            return r
    return runs[0]


def paired_tests(runs: Sequence[RunRecord], metrics: Sequence[str],
                 methods: Sequence[str] | None = None, margin: float | None = None) -> list[PairedTest]:
    """Every tested row against its strongest baseline, per dataset and metric (rows need per-query values), the
    p-values Holm-adjusted over all of them; answer metrics of oracle-read rows are left out. ``margin`` (points):
    each test also gets two one-sided tests of equivalence within ±margin."""
    tests: list[PairedTest] = []
    datasets = list(dict.fromkeys(r.dataset for r in runs))
    single_method = len({r.method for r in runs}) == 1 and len(runs) > 1
    tested = tested_methods(runs, methods)
    for d in datasets:
        rows = [r for r in runs if r.dataset == d and r.per_query is not None]
        if len(rows) < 2:
            continue
        for m in metrics:
            scored = [r for r in rows if m in r.per_query.values
                      and not (m in ANSWER_METRICS and oracle_read(r))]
            if len(scored) < 2:
                continue
            if single_method:
                ref = _reference_variant(scored)
                pairs = [(r, ref) for r in scored if r is not ref]
            elif tested:
                baselines = [r for r in scored if r.method not in tested]
                if not baselines:
                    continue
                pairs = [(r, _strongest_like(r, baselines, m)) for r in scored if r.method in tested]
            else:
                pairs = [(r, _strongest_like(r, [b for b in scored if b is not r], m)) for r in scored]
            for row, base in pairs:
                tests.append(PairedTest(d, m, row, base, row.per_query.compare(base.per_query, m),
                                        None if margin is None else row.per_query.equivalence(base.per_query, m,
                                                                                              margin)))
    adjusted = holm([t.result for t in tests])
    return [dataclasses.replace(t, result=r) for t, r in zip(tests, adjusted)]


def _best(rows: Sequence[RunRecord], metric: str) -> RunRecord:
    key = (lambda r: -r.per_query.interval(metric).estimate) if not lower_is_better(metric) else \
        (lambda r: r.per_query.interval(metric).estimate)
    return min(rows, key=key)


def paired_table(tests: Sequence[PairedTest], digits: int = 1) -> str:
    """Markdown: one row per (tested row, dataset, baseline), one column per metric: the difference with its
    interval, the p-value (exact / Monte Carlo) and its Holm adjustment, and ✓ (better: excludes 0, adjusted p <
    0.05) / ✗ (worse, likewise) / ~ (no difference shown)."""
    if not tests:
        return ""
    metrics = list(dict.fromkeys(t.metric for t in tests))
    keyed: dict[tuple[str, str, str], dict[str, PairedTest]] = {}
    for t in tests:
        keyed.setdefault((t.row.label, t.dataset, t.baseline.label), {})[t.metric] = t
    rows = []
    for (label, dataset, base), cells in keyed.items():
        row = [label, dataset, base]
        for m in metrics:
            t = cells.get(m)
            if t is None:
                row.append("–")
                continue
            d = t.result.difference
            mark = {True: "✓", False: "✗", None: "~"}[t.better]
            if t.better is None and t.result.excludes_zero:
                mark = "~*"  # the interval excludes 0, the (adjusted) test does not reject
            kind = "exact" if t.result.test == "exact" else "MC"
            holm_part = f", Holm {t.result.p_adjusted:.3f}" if t.result.p_adjusted is not None else ""
            same = ""
            if t.equivalence is not None:
                same = f"; ≡ ±{t.equivalence.margin:g}" if t.equivalence.equivalent else \
                    f"; not ≡ ±{t.equivalence.margin:g}"
            row.append(f"{d.estimate:+.{digits}f} [{d.low:+.{digits}f}, {d.high:+.{digits}f}] "
                       f"p={t.result.p_value:.3f} {kind}{holm_part} ({t.result.discordant} differ) {mark}{same}")
        n = max(c.result.difference.n for c in cells.values())
        rows.append(row + [str(n)])
    header = ["row", "data", "against (strongest baseline)"] + [f"Δ {m}" for m in metrics] + ["queries"]
    return markdown_table(header, rows, ["l", "l", "l"] + ["r"] * (len(metrics) + 1))
