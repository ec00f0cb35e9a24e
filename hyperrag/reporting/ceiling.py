"""The oracle ceiling: per method, its LLM-free figures beside its ``llm=oracle`` upper bound.

An ``llm=oracle`` run answers every LLM task the way a perfect model would (from the gold annotations); its gain
over the LLM-free run measures how much of a method's ranking its LLM decisions can move — zero means the LLM's
output never reaches the ranking. Pairs are made from runs of one collection (``experiment=oracle_ceiling``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hyperrag.reporting.collect import RunRecord, uses_oracle
from hyperrag.utils.plotting import pyplot, save_figure

LLM_FREE = "LLM-free"
ORACLE = "upper bound (oracle)"
CEILING_METRICS = ("recall@5", "fcr@5", "em")


def ceiling_pairs(runs: Sequence[RunRecord]) -> list[tuple[str, str, RunRecord, RunRecord]]:
    """``(method, dataset, LLM-free run, oracle run)`` for every method and dataset that has both."""
    free = {(r.method, r.dataset, r.variant_text): r for r in runs if LLM_FREE in r.tags and not uses_oracle(r)}
    pairs = []
    for r in runs:
        if ORACLE in r.tags and (r.method, r.dataset, r.variant_text) in free:
            pairs.append((f"{r.method} {r.variant_text}".strip(), r.dataset, free[(r.method, r.dataset,
                                                                                   r.variant_text)], r))
    return pairs


def ceiling_table(runs: Sequence[RunRecord]) -> str | None:
    """Markdown: R@5, FCR@5 and EM LLM-free → oracle, and the R@5 gain, per method (None: no pair)."""
    pairs = ceiling_pairs(runs)
    if not pairs:
        return None
    head = ["method", "data"] + [f"{m} LLM-free → oracle" for m in CEILING_METRICS] + ["R@5 gain"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, data, a, b in pairs:
        cells = [f"{a.metrics[m]:.1f} → {b.metrics[m]:.1f}" if m in a.metrics and m in b.metrics
                 else (f"– → {b.metrics[m]:.1f}" if m in b.metrics else "–") for m in CEILING_METRICS]
        gain = b.metrics.get("recall@5", 0.0) - a.metrics.get("recall@5", 0.0)
        lines.append(f"| {name} | {data} | " + " | ".join(cells) + f" | {gain:+.1f} |")
    return "\n".join(lines)


def plot_ceiling(runs: Sequence[RunRecord], path: Path, metrics: Sequence[str] = ("recall@5", "fcr@5")) -> Path | None:
    """Per method, LLM-free (solid) and oracle upper bound (hatched) bars of each metric, gain annotated."""
    pairs = ceiling_pairs(runs)
    if not pairs:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(pairs) * len(metrics)), 4.2))
    width = 0.8 / (2 * len(metrics))
    for j, m in enumerate(metrics):
        for k, (kind, hatch) in enumerate(((LLM_FREE, None), (ORACLE, "//"))):
            xs = [i + (2 * j + k - (2 * len(metrics) - 1) / 2) * width for i in range(len(pairs))]
            vals = [(a if k == 0 else b).metrics.get(m, 0.0) for _, _, a, b in pairs]
            bars = ax.bar(xs, vals, width, color=f"C{j}", hatch=hatch, alpha=0.55 if k == 0 else 0.95,
                          label=f"{m} {kind}", edgecolor="black", linewidth=0.4)
            labels = [f"{v:.1f}" if k == 0 else f"{v:.1f}\n({v - a.metrics.get(m, 0.0):+.1f})"
                      for v, (_, _, a, _) in zip(vals, pairs)]
            ax.bar_label(bars, labels=labels, fontsize=6, padding=1)
    ax.set_xticks(range(len(pairs)))
    ax.set_xticklabels([f"{name}\n{data}" for name, data, _, _ in pairs], fontsize=8)
    ax.set_ylabel("%")
    ax.set_title("LLM-free vs the oracle upper bound (a perfect model's LLM decisions)", fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    return save_figure(fig, path)
