"""What each row cost: LLM calls, tokens and seconds per backend for indexing and per 1,000 queries, the index
size, and a plot of recall against cost (the way GraphRAG-Bench and its users compare methods).

The figures are the runs' own ``cost.*`` keys (:mod:`hyperrag.eval.cost`). Tokens are those the run would pay
without the response cache: sent tokens plus the cached replies' original tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hyperrag.eval.cost import BACKENDS, PER_1K
from hyperrag.reporting.collect import RunRecord
from hyperrag.reporting.tables import markdown_table
from hyperrag.utils.plotting import pyplot, save_figure

SECONDS_PER_1K = f"cost.query.seconds{PER_1K}"



def tokens(run: RunRecord, prefix: str, suffix: str = "") -> float | None:
    """Prompt + completion tokens under ``prefix`` (e.g. ``cost.query.reader``), cached replies' tokens included."""
    keys = [f"{prefix}.{k}{suffix}" for k in ("prompt_tokens", "completion_tokens", "cached_prompt_tokens",
                                                "cached_completion_tokens")]
    vals = [run.metrics[k] for k in keys if k in run.metrics]
    return sum(vals) if vals else None


def api_cost_per_1k(run: RunRecord, prompt_usd_per_1m: float, completion_usd_per_1m: float) -> float | None:
    """What 1,000 queries' LLM calls would cost at these prices (USD per 10^6 prompt / completion tokens, cached
    replies' tokens included), over every backend of the query phase; ``None`` without cost keys."""
    m = run.metrics
    prompt = [m.get(f"cost.query.{k}{PER_1K}") for k in ("prompt_tokens", "cached_prompt_tokens")]
    completion = [m.get(f"cost.query.{k}{PER_1K}") for k in ("completion_tokens", "cached_completion_tokens")]
    if all(v is None for v in prompt + completion):
        return None
    return (sum(v or 0.0 for v in prompt) * prompt_usd_per_1m
            + sum(v or 0.0 for v in completion) * completion_usd_per_1m) / 1e6


def add_api_cost(runs: Sequence[RunRecord], prices: tuple[float, float] | None) -> None:
    """Give each run with cost keys ``api_cost_usd_per_1000_queries`` at ``prices`` (USD per 10^6 prompt /
    completion tokens), so that a paper's cost column (CatRAG Table 6) has ours beside it."""
    if not prices:
        return
    for r in runs:
        cost = api_cost_per_1k(r, *prices)
        if cost is not None:
            r.metrics["api_cost_usd_per_1000_queries"] = round(cost, 4)


def _fmt(v: float | None, digits: int = 0) -> str:
    if v is None:
        return "–"
    return f"{v:,.{digits}f}"


def _phase(backend: str) -> str:
    """Where a backend's per-query keys are: the judge's in ``evaluate.py``'s evaluation (``cost.evaluate``), the
    others in the run's query phase."""
    return "cost.evaluate" if backend == "judge" else "cost.query"


def has_cost(runs: Sequence[RunRecord]) -> bool:
    return any(k.startswith("cost.") for r in runs for k in r.metrics)


def cost_table(runs: Sequence[RunRecord]) -> str:
    """Markdown: per row, index phase (LLM calls, tokens, seconds), query phase per 1,000 queries per backend
    (LLM calls, tokens), query seconds per 1,000 queries, and the index size."""
    backends = [b for b in BACKENDS if any(f"{_phase(b)}.{b}.llm_calls{PER_1K}" in r.metrics for r in runs)]
    header = ["method", "data", "index LLM calls", "index tokens", "index s"]
    for b in backends:
        header += [f"{b} calls / 1k q", f"{b} tokens / 1k q"]
    header += ["query s / 1k q", "index MB"]
    rows = []
    for r in runs:
        m = r.metrics
        row = [r.label, r.dataset, _fmt(m.get("cost.index.llm_calls")), _fmt(tokens(r, "cost.index")),
               _fmt(m.get("cost.index.seconds"), 1)]
        for b in backends:
            row += [_fmt(m.get(f"{_phase(b)}.{b}.llm_calls{PER_1K}")),
                    _fmt(tokens(r, f"{_phase(b)}.{b}", PER_1K))]
        index_mb = m.get("index_bytes")
        row += [_fmt(m.get(SECONDS_PER_1K), 1),
                _fmt(None if index_mb is None else index_mb / 2**20, 1)]
        rows.append(row)
    return markdown_table(header, rows, ["l", "l"] + ["r"] * (len(header) - 2))


def plot_recall_vs_cost(runs: Sequence[RunRecord], path: Path, metric: str = "recall@5") -> Path | None:
    """Per dataset: ``metric`` (with its 95% interval) against the query phase's wall seconds per 1,000 queries and,
    when some row called an LLM, against its LLM tokens per 1,000 queries; one point per row."""
    pts = [r for r in runs if metric in r.metrics and SECONDS_PER_1K in r.metrics]
    if not pts:
        return None
    axes_spec = [("wall seconds per 1,000 queries (log)",
                  lambda r: max(r.metrics[SECONDS_PER_1K], 1e-3))]
    if any((tokens(r, "cost.query", PER_1K) or 0) > 0 for r in pts):
        axes_spec.insert(0, ("LLM tokens per 1,000 queries (+1, log)",
                             lambda r: (tokens(r, "cost.query", PER_1K) or 0) + 1))
    plt = pyplot()
    datasets = list(dict.fromkeys(r.dataset for r in pts))
    fig, axes = plt.subplots(len(datasets), len(axes_spec), figsize=(6.5 * len(axes_spec), 4.6 * len(datasets)),
                             squeeze=False)
    for row, d in zip(axes, datasets):
        sub = [r for r in pts if r.dataset == d]
        for ax, (label, xof) in zip(row, axes_spec):
            for i, r in enumerate(sub):
                ci = r.interval(metric)
                y = r.metrics[metric]
                yerr = None if ci is None else [[max(y - ci.low, 0.0)], [max(ci.high - y, 0.0)]]
                ax.errorbar([xof(r)], [y], yerr=yerr, fmt="o", color=f"C{i % 10}", capsize=3, label=r.label)
                ax.annotate(r.label.split(" (")[0], (xof(r), y), fontsize=6, xytext=(4, 3), textcoords="offset points")
            ax.set_xscale("log")
            ax.set_xlabel(label)
            ax.set_ylabel(f"{metric} (%)")
            ax.set_title(f"{d}: {metric} against query cost", fontsize=9)
            ax.grid(alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", fontsize=6, ncol=2, bbox_to_anchor=(0.5, 0.0))
    fig.tight_layout(rect=(0, min(0.6, 0.04 + 0.025 * ((len(labels) + 1) // 2) / len(datasets)), 1, 1))
    return save_figure(fig, path, tight=False)
