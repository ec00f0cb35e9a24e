"""Markdown tables of runs: methods × (datasets × metrics), the best value of each column in bold."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hyperrag.reporting.collect import RunRecord

LOWER_IS_BETTER = ("hallucination_rate", "hallucination_rate_lexical", "index_seconds", "retrieve_seconds",
                   "api_cost_usd_per_1000_queries",
                   "answer_seconds", "llm_calls_per_query")


def lower_is_better(metric: str) -> bool:
    return metric in LOWER_IS_BETTER or metric.endswith("_seconds")


def _fmt(v: float | None, digits: int = 1) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], align: Sequence[str] | None = None) -> str:
    align = align or ["l"] + ["r"] * (len(header) - 1)
    sep = ["---:" if a == "r" else ":---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def present_metrics(runs: Sequence[RunRecord], wanted: Sequence[str]) -> list[str]:
    """The wanted metrics some run has, in the wanted order."""
    return [m for m in wanted if any(m in r.metrics for r in runs)]


def comparison_table(runs: Sequence[RunRecord], metrics: Sequence[str], digits: int = 1,
                     intervals: bool = False) -> str:
    """Rows: run labels (method + varying settings); columns: each dataset's metrics; best per column bold.
    With ``intervals``, a cell whose run has per-query values also shows its 95% bootstrap interval over the
    queries: ``67.3 [54.2, 79.1]``."""
    datasets = list(dict.fromkeys(r.dataset for r in runs))
    labels = list(dict.fromkeys(r.label for r in runs))
    cell: dict[tuple[str, str], RunRecord] = {(r.label, r.dataset): r for r in runs}
    columns = [(d, m) for d in datasets for m in metrics if any(m in r.metrics for r in runs if r.dataset == d)]
    best: dict[tuple[str, str], float] = {}
    for d, m in columns:
        vals = [round(cell[(lab, d)].metrics[m], digits) for lab in labels
                if (lab, d) in cell and m in cell[(lab, d)].metrics]
        if len(vals) > 1:
            best[(d, m)] = min(vals) if lower_is_better(m) else max(vals)
    rows = []
    for lab in labels:
        row = [lab]
        for d, m in columns:
            v = cell[(lab, d)].metrics.get(m) if (lab, d) in cell else None
            text = _fmt(v, digits)
            if v is not None and best.get((d, m)) == round(v, digits):
                text = f"**{text}**"
            ci = cell[(lab, d)].interval(m) if intervals and v is not None else None
            if ci is not None and ci.n > 1:
                text += f" [{ci.low:.{digits}f}, {ci.high:.{digits}f}]"
            row.append(text)
        rows.append(row)
    header = ["method"] + [f"{d} {m}" if len(datasets) > 1 else m for d, m in columns]
    return markdown_table(header, rows)


def runs_table(runs: Sequence[RunRecord]) -> str:
    rows = [[r.label, r.dataset, f"`{r.path}`", r.group or "–", str(int(r.metrics.get("queries", 0)))] for r in runs]
    return markdown_table(["run", "dataset", "directory", "W&B group", "queries"], rows, ["l", "l", "l", "l", "r"])


def summary_rows(runs: Sequence[RunRecord], metrics: Sequence[str]) -> list[dict[str, Any]]:
    return [{"label": r.label, "dataset": r.dataset, **{m: r.metrics.get(m) for m in metrics}} for r in runs]
