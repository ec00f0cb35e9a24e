"""Report figures (matplotlib, Agg): recall@k curves, method comparison bars, sweep lines, ablation bars."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from hyperrag.reporting.collect import RunRecord
from hyperrag.utils.plotting import pyplot, save_figure


def _datasets(runs: Sequence[RunRecord]) -> list[str]:
    return list(dict.fromkeys(r.dataset for r in runs))


def curve_ks(runs: Sequence[RunRecord], prefix: str = "recall") -> list[int]:
    return sorted({int(m.group(1)) for r in runs for k in r.metrics if (m := re.fullmatch(rf"{prefix}@(\d+)", k))})


def plot_recall_curves(runs: Sequence[RunRecord], path: Path) -> Path | None:
    """recall@k (solid) and fcr@k (dashed) against k, one line pair per run, one panel per dataset."""
    ks = curve_ks(runs)
    if len(ks) < 2:
        return None
    plt = pyplot()
    datasets = _datasets(runs)
    fig, axes = plt.subplots(1, len(datasets), figsize=(5.2 * len(datasets), 4), squeeze=False)
    for ax, d in zip(axes[0], datasets):
        for i, r in enumerate(x for x in runs if x.dataset == d):
            color = f"C{i % 10}"
            pts = [(k, r.metrics[f"recall@{k}"]) for k in ks if f"recall@{k}" in r.metrics]
            ax.plot(*zip(*pts), marker="o", color=color, label=r.label)
            fcr = [(k, r.metrics[f"fcr@{k}"]) for k in ks if f"fcr@{k}" in r.metrics]
            if fcr:
                ax.plot(*zip(*fcr), marker=".", linestyle="--", color=color, alpha=0.6)
        ax.set_title(f"{d}: recall@k (solid), full-chain@k (dashed)", fontsize=9)
        ax.set_xlabel("k (passages retrieved)")
        ax.set_ylabel("%")
        ax.set_xticks(ks)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return save_figure(fig, path)


def plot_bars(runs: Sequence[RunRecord], metrics: Sequence[str], path: Path, title: str = "") -> Path | None:
    """Grouped bars: one group per run label, one bar per metric, one panel per dataset (values on top; the 95%
    bootstrap interval over the queries as an error bar where the run has per-query values)."""
    metrics = [m for m in metrics if any(m in r.metrics for r in runs)]
    if not metrics or not runs:
        return None
    plt = pyplot()
    datasets = _datasets(runs)
    n_labels = max(len([r for r in runs if r.dataset == d]) for d in datasets)
    fig, axes = plt.subplots(1, len(datasets), figsize=(max(5.0, 0.9 * n_labels * len(metrics) ** 0.5 + 2)
                                                         * len(datasets), 4.2), squeeze=False)
    width = 0.8 / len(metrics)
    for ax, d in zip(axes[0], datasets):
        sub = [r for r in runs if r.dataset == d]
        for j, m in enumerate(metrics):
            xs = [i + (j - (len(metrics) - 1) / 2) * width for i in range(len(sub))]
            vals = [r.metrics.get(m, 0.0) for r in sub]
            yerr = _error_bars(sub, m, vals)
            bars = ax.bar(xs, vals, width, label=m, color=f"C{j}", yerr=yerr, capsize=2,
                          error_kw={"elinewidth": 0.7, "alpha": 0.8})
            ax.bar_label(bars, fmt="%.1f", fontsize=6, padding=1)
        ax.set_xticks(range(len(sub)))
        ax.set_xticklabels([r.label for r in sub], rotation=25, ha="right", fontsize=8)
        ax.set_ylabel("%")
        ax.set_title(f"{title}{d}", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7)
    return save_figure(fig, path)


def _error_bars(runs: Sequence[RunRecord], metric: str, values: Sequence[float]) -> list[list[float]] | None:
    """``[[below...], [above...]]`` distances from each bar's value to its interval's ends (0 where unknown)."""
    below, above, any_ci = [], [], False
    for r, v in zip(runs, values):
        ci = r.interval(metric)
        if ci is None:
            below.append(0.0)
            above.append(0.0)
            continue
        any_ci = True
        below.append(max(v - ci.low, 0.0))
        above.append(max(ci.high - v, 0.0))
    return [below, above] if any_ci else None


def numeric_sweep_keys(runs: Sequence[RunRecord]) -> list[str]:
    """The varying settings, when all their values are numbers (a hyperparameter sweep); else ``[]``."""
    keys = list(dict.fromkeys(k for r in runs for k in r.variant))
    try:
        [float(r.variant[k]) for r in runs for k in keys if k in r.variant]
    except ValueError:
        return []
    return keys


def numeric_sweep_key(runs: Sequence[RunRecord]) -> str | None:
    """The single varying numeric setting (a 1-D hyperparameter sweep), if any."""
    keys = numeric_sweep_keys(runs)
    return keys[0] if len(keys) == 1 else None


def plot_grid(runs: Sequence[RunRecord], keys: Sequence[str], metric: str, path: Path) -> Path | None:
    """Heatmap of ``metric`` over a 2-D grid of two swept hyperparameters, one panel per (method, dataset)."""
    import numpy as np

    kx, ky = keys
    panels = list(dict.fromkeys((r.method, r.dataset) for r in runs if kx in r.variant and ky in r.variant))
    if not panels or not any(metric in r.metrics for r in runs):
        return None
    plt = pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(4.8 * len(panels), 4), squeeze=False)
    for ax, (method, d) in zip(axes[0], panels):
        sub = [r for r in runs if (r.method, r.dataset) == (method, d) and kx in r.variant and ky in r.variant]
        xs = sorted({float(r.variant[kx]) for r in sub})
        ys = sorted({float(r.variant[ky]) for r in sub})
        grid = np.full((len(ys), len(xs)), np.nan)
        for r in sub:
            grid[ys.index(float(r.variant[ky])), xs.index(float(r.variant[kx]))] = r.metrics.get(metric, np.nan)
        im = ax.imshow(grid, cmap="viridis", origin="lower", aspect="auto")
        for (i, j), v in np.ndenumerate(grid):
            if not np.isnan(v):
                ax.text(j, i, f"{v:.1f}", ha="center", va="center", fontsize=8,
                        color="white" if v < np.nanmean(grid) else "black")
        ax.set_xticks(range(len(xs)), [f"{x:g}" for x in xs])
        ax.set_yticks(range(len(ys)), [f"{y:g}" for y in ys])
        ax.set_xlabel(kx.rsplit(".", 1)[-1])
        ax.set_ylabel(ky.rsplit(".", 1)[-1])
        ax.set_title(f"{method} on {d}: {metric}", fontsize=9)
        fig.colorbar(im, ax=ax, fraction=0.046)
    return save_figure(fig, path)


def plot_sweep(runs: Sequence[RunRecord], key: str, metrics: Sequence[str], path: Path) -> Path | None:
    """Metric against a swept hyperparameter, one line per (method, metric), one panel per dataset; the 95%
    bootstrap interval over the queries as a shaded band."""
    metrics = [m for m in metrics if any(m in r.metrics for r in runs)]
    if not metrics:
        return None
    plt = pyplot()
    datasets = _datasets(runs)
    fig, axes = plt.subplots(1, len(datasets), figsize=(5.2 * len(datasets), 4), squeeze=False)
    for ax, d in zip(axes[0], datasets):
        sub = [r for r in runs if r.dataset == d and key in r.variant]
        for i, method in enumerate(dict.fromkeys(r.method for r in sub)):
            pts = sorted((float(r.variant[key]), r) for r in sub if r.method == method)
            for j, m in enumerate(metrics):
                vals = [r.metrics.get(m) for _, r in pts]
                ax.plot([x for x, _ in pts], vals, marker="o",
                        linestyle=["-", "--", ":", "-."][j % 4], color=f"C{i}", label=f"{method} {m}")
                cis = [r.interval(m) for _, r in pts]
                if all(ci is not None for ci in cis):  # the 95% interval over the queries as a band
                    ax.fill_between([x for x, _ in pts], [ci.low for ci in cis], [ci.high for ci in cis],
                                    color=f"C{i}", alpha=0.12, linewidth=0)
        ax.set_xlabel(key)
        ax.set_ylabel("%")
        ax.set_title(f"{d}: sweep over {key.rsplit('.', 1)[-1]}", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return save_figure(fig, path)
