"""A finished run's per-query metric values, read back from its files, for intervals and paired tests.

``metrics.json`` keeps only means. The values behind them are recomputed from ``predictions.jsonl`` exactly as
:func:`hyperrag.runners.batch_retrieval.score_rows` computed the means (recall@k and fcr@k over the queries with
gold passages; EM, F1, Match-Acc and JSR over the queries with gold answers once the run answered; multiple-choice
accuracy), and extended by ``evaluation.jsonl`` (``evaluate.py``'s per-query values) for every other metric.
The mean of a metric's values here is the run's reported figure.

    run = run_per_query("multirun/catrag_table/.../method=catrag")
    run.interval("recall@5")                 # Interval(estimate=72.4, low=..., high=..., n=51)
    run.compare(baseline, "fcr@5")           # PairedComparison over the queries both runs scored
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hyperrag.eval.intervals import (
    Equivalence,
    Interval,
    PairedComparison,
    equivalence,
    mean_interval,
    paired_comparison,
)
from hyperrag.eval.qa import (
    answer_scores,
    option_correct,
)
from hyperrag.eval.retrieval import full_chain_at_k, recall_at_k

__all__ = ["BINARY_METRICS", "NOT_PERCENT", "RunValues", "comparable_metrics", "is_binary_metric", "metric_order", "per_query_values", "run_per_query"]

#: metrics whose per-query values are not fractions reported in percent
NOT_PERCENT = frozenset({"ccd"})
#: metrics whose per-query values are 0/1 by definition (Wilson intervals); others keep the bootstrap even when a
#: run's values happen to be all 0 or 1
BINARY_METRICS = frozenset({"em", "jsr", "match_acc", "accuracy", "judge_acc", "hallucination_rate",
                            "hallucination_rate_lexical"})


def is_binary_metric(metric: str) -> bool:
    """Whether ``metric`` is 0/1 per query by definition (EM, FCR@k, JSR, Match-Acc, accuracy, the judge's GPT-Acc,
    the hallucination flags)."""
    return metric in BINARY_METRICS or metric.startswith("fcr@")

#: evaluation.jsonl's per-query flags → the metric they average into
_EVALUATION_KEYS = {"hallucinated": "hallucination_rate", "hallucinated_lexical": "hallucination_rate_lexical"}
#: evaluation.jsonl keys that are not metric values
_NOT_METRICS = frozenset({"id", "claims", "relevancy_questions", "context_recall_judge_error"})


def per_query_values(rows: Sequence[dict[str, Any]], ks: Sequence[int] = (2, 5, 10),
                     answer_top_n: int = 5, f1_answer: str = "short") -> dict[str, dict[str, float]]:
    """``metric → {query id: value in [0, 1]}`` from prediction rows, the way ``score_rows`` averages them.

    Args:
        rows: ``predictions.jsonl`` rows (``id``, ``ranked_ids``, ``gold_ids``; ``answer``, ``answers``,
            ``options``, ``answer_index`` when answered).
        ks: the cut-offs of recall@k / fcr@k.
        answer_top_n: the reader's passages, JSR's full-chain cut-off (``score_rows`` uses 5 when it is 0).
        f1_answer: which answer EM / F1 score (``short`` | ``full``: :func:`hyperrag.eval.qa.f1_answer_of`).
    """
    out: dict[str, dict[str, float]] = {}
    for r in rows:
        qid, gold = str(r["id"]), r.get("gold_ids") or []
        if gold:
            for k in ks:
                out.setdefault(f"recall@{k}", {})[qid] = recall_at_k(r["ranked_ids"], gold, k)
                out.setdefault(f"fcr@{k}", {})[qid] = full_chain_at_k(r["ranked_ids"], gold, k)
    if any(r.get("gold_sentences") for r in rows):  # HolisQA: context recall of the gold sentences, LLM-free
        from hyperrag.eval.context import row_context_recall

        for r in rows:
            value = row_context_recall(r, answer_top_n or 5)
            if value is not None:
                out.setdefault("context_recall", {})[str(r["id"])] = value
    if not any("answer" in r for r in rows):
        return out
    n = answer_top_n or 5
    for r in rows:
        qid, golds, pred = str(r["id"]), r.get("answers") or [], r.get("answer") or ""
        if golds:
            for name, value in answer_scores(r, n, f1_answer).items():
                out.setdefault(name, {})[qid] = value
        chosen = option_correct(pred, r.get("options") or [], r.get("answer_index"))
        if chosen is not None:
            out.setdefault("accuracy", {})[qid] = chosen
    if not any(r.get("gold_ids") for r in rows):  # no gold chain on any question: no JSR (as score_rows)
        out.pop("jsr", None)
    return out


@dataclass
class RunValues:
    """One run's per-query values: ``values[metric][query id]`` (fractions, or hops for ``ccd``)."""

    name: str
    path: Path | None = None
    values: dict[str, dict[str, float]] = field(default_factory=dict)
    #: query id → its type where the rows carry one (2Wiki's ``type``): :meth:`by_type` splits by it
    types: dict[str, str] = field(default_factory=dict)

    def by_type(self) -> dict[str, RunValues]:
        """One :class:`RunValues` per query type (in order of first appearance), named ``<run> [<type>]``;
        ``{}`` when no query has a type."""
        groups: dict[str, set[str]] = {}
        for qid, qtype in self.types.items():
            groups.setdefault(qtype, set()).add(qid)
        return {t: RunValues(f"{self.name} [{t}]", self.path,
                             {m: {q: v for q, v in vals.items() if q in ids} for m, vals in self.values.items()},
                             {q: t for q in ids}) for t, ids in groups.items()}

    @property
    def query_ids(self) -> set[str]:
        """Every query id any metric has a value for."""
        return {q for v in self.values.values() for q in v}

    @property
    def queries(self) -> int:
        return len(self.query_ids)

    def interval(self, metric: str, **kwargs: Any) -> Interval:
        """The metric's mean over the queries it applies to, with its interval (percent; Wilson for 0/1 values,
        BCa bootstrap otherwise)."""
        vals = self.values.get(metric, {})
        kwargs.setdefault("binary", is_binary_metric(metric))
        return mean_interval(list(vals.values()), scale=_scale(metric), **kwargs)

    def compare(self, other: RunValues, metric: str, **kwargs: Any) -> PairedComparison:
        """``self − other`` on the metric, over the queries both runs scored (paired by query id)."""
        mine, theirs = self.values.get(metric, {}), other.values.get(metric, {})
        common = sorted(set(mine) & set(theirs))
        return paired_comparison([mine[q] for q in common], [theirs[q] for q in common], scale=_scale(metric),
                                 **kwargs)


    def equivalence(self, other: RunValues, metric: str, margin: float, **kwargs: Any) -> Equivalence:
        """Whether ``self`` is within ``margin`` (points) of ``other`` on the metric: two one-sided tests over the
        queries both runs scored (:func:`hyperrag.eval.intervals.equivalence`)."""
        mine, theirs = self.values.get(metric, {}), other.values.get(metric, {})
        common = sorted(set(mine) & set(theirs))
        return equivalence([mine[q] for q in common], [theirs[q] for q in common], margin, scale=_scale(metric),
                           **kwargs)


def _scale(metric: str) -> float:
    return 1.0 if metric in NOT_PERCENT else 100.0


def metric_order(metric: str) -> tuple[int, str, int]:
    """Sort key: recall@k, then fcr@k (by k), then the answer metrics, then the rest alphabetically."""
    name, _, k = metric.partition("@")
    rank = {"recall": 0, "fcr": 1, "em": 2, "f1": 3, "match_acc": 4, "jsr": 5, "accuracy": 6}.get(name, 7)
    return rank, name, int(k) if k.isdigit() else 0


def comparable_metrics(a: RunValues, b: RunValues, wanted: Sequence[str]) -> list[str]:
    """The wanted metrics both runs have, with at least one query in common."""
    return [m for m in wanted if m in a.values and m in b.values and set(a.values[m]) & set(b.values[m])]


def run_per_query(run_dir: str | Path, name: str | None = None,
                  predictions: list[dict[str, Any]] | None = None) -> RunValues:
    """Per-query values of a run directory: ``predictions.jsonl`` (required) and ``evaluation.jsonl`` (if any).

    The cut-offs and the reader's passage count come from the run's ``metrics.json`` / config when recorded.
    ``predictions``: the rows of its ``predictions.jsonl`` when the caller has read them already.
    """
    from hyperrag.eval.runs import PREDICTIONS, read_jsonl_rows, read_predictions

    run_dir = Path(run_dir)
    if run_dir.is_file():
        run_dir = run_dir.parent
    rows = read_predictions(run_dir / PREDICTIONS) if predictions is None else predictions
    ks, answer_top_n = _cutoffs(run_dir)
    values = per_query_values(rows, ks, answer_top_n, _f1_answer(run_dir))
    evaluation = run_dir / "evaluation.jsonl"
    if evaluation.is_file():  # re-scored per query (evaluate.py): wins over predictions.jsonl, as its means do in
        for row in read_jsonl_rows(evaluation):  # reports (collect.load_run), so a mean and its interval agree
            qid = str(row.get("id"))
            for key, value in row.items():
                if key in _NOT_METRICS or isinstance(value, bool) or not isinstance(value, (int, float)):
                    continue
                values.setdefault(_EVALUATION_KEYS.get(key, key), {})[qid] = float(value)
    types = {str(r["id"]): str(r["type"]) for r in rows if r.get("type")}
    return RunValues(name or run_dir.name, run_dir, values, types)


def _f1_answer(run_dir: Path) -> str:
    """Which answer the run's EM / F1 scored (``metrics.json``'s ``f1_answer``; ``short`` when not recorded)."""
    return str(_run_metrics(run_dir).get("f1_answer", "short"))


def _run_metrics(run_dir: Path) -> dict[str, Any]:
    """``metrics.json``'s ``metrics`` (empty when the run has none); a broken file stops with one line."""
    from hyperrag.eval.runs import read_json_file

    path = run_dir / "metrics.json"
    record = read_json_file(path) if path.is_file() else {}
    metrics = record.get("metrics") if isinstance(record, dict) else None
    return metrics if isinstance(metrics, dict) else {}


def _cutoffs(run_dir: Path) -> tuple[tuple[int, ...], int]:
    """The run's recall/fcr cut-offs (from the metric names it reported) and its reader's passage count."""
    ks: tuple[int, ...] = (2, 5, 10)
    answer_top_n = 5
    metrics = _run_metrics(run_dir)
    if metrics:
        found = sorted({int(k.split("@", 1)[1]) for k in metrics if k.startswith("recall@") and k[7:].isdigit()})
        ks = tuple(found) or ks
    from hyperrag.eval.runs import run_config

    cfg = run_config(run_dir)
    if cfg is not None and cfg.get("answer_top_n") is not None:
        answer_top_n = int(cfg.get("answer_top_n"))
    return ks, answer_top_n
