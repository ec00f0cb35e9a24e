"""Gate effectiveness: how much causal gates shorten the way from a query's seeds to its gold evidence.

For every query, breadth-first hop distances from its seed nodes over the typed expansion graph, with gate edges
(on) and without (off). A gold *target* is a gold passage, reached when any entity it mentions is reached; its
distance is the smallest hop count over those entities. Per query (``H`` = ``max_hops``):

* ``reachability``: 1 if some gold target is within ``H`` hops;
* ``depth_weighted``: mean over gold targets of ``1 / (1 + min hops)`` (0 when unreachable within ``H``);
* ``coverage``: share of gold targets within ``H`` hops;
* ``min_hops``: hops to the nearest gold target (queries with none within ``H`` are left out of this mean).

Means come with percentile-bootstrap 95% intervals over queries; :func:`plot_gate_effectiveness` draws on/off
bars with those intervals.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hyperrag.expansion.best_first import EdgeKind, TypedGraph
from hyperrag.utils.plotting import pyplot, save_figure

METRICS = ("reachability", "depth_weighted", "coverage", "min_hops")


def without_kind(graph: TypedGraph, kind: EdgeKind) -> TypedGraph:
    """The same graph with every arc of ``kind`` removed."""
    import torch

    from hyperrag.graph.utils import csr_owner, ptr_from_sorted_rows

    keep = graph.kind != int(kind)
    src = csr_owner(torch.from_numpy(np.asarray(graph.ptr, dtype=np.int64)))[torch.from_numpy(keep)]
    ptr = ptr_from_sorted_rows(src, graph.num_nodes).numpy()
    return TypedGraph(ptr, graph.idx[keep], graph.kind[keep], graph.num_nodes)


def hop_distances(graph: TypedGraph, seeds: Sequence[int], max_hops: int) -> dict[int, int]:
    """``node → hops`` for every node within ``max_hops`` of any seed (BFS)."""
    dist = {int(s): 0 for s in seeds}
    queue = deque(dist)
    while queue:
        v = queue.popleft()
        d = dist[v]
        if d >= max_hops:
            continue
        for u in graph.idx[graph.ptr[v]: graph.ptr[v + 1]].tolist():
            if u not in dist:
                dist[u] = d + 1
                queue.append(u)
    return dist


def query_metrics(target_hops: Sequence[float], max_hops: int) -> dict[str, float]:
    """The four metrics of one query from its gold targets' hop distances (``inf`` = not reached)."""
    h = np.asarray(target_hops, dtype=np.float64)
    within = h <= max_hops
    return {"reachability": float(within.any()),
            "depth_weighted": float(np.where(within, 1.0 / (1.0 + h), 0.0).mean()) if h.size else 0.0,
            "coverage": float(within.mean()) if h.size else 0.0,
            "min_hops": float(h[within].min()) if within.any() else float("nan")}


def bootstrap_ci(values: Sequence[float], n: int = 2000, seed: int = 0, level: float = 0.95) -> dict[str, float]:
    """Mean with a percentile-bootstrap interval (NaNs dropped)."""
    x = np.asarray([v for v in values if not np.isnan(v)], dtype=np.float64)
    if x.size == 0:
        return {"mean": float("nan"), "lo": float("nan"), "hi": float("nan"), "n": 0}
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(n, x.size))].mean(axis=1)
    a = (1 - level) / 2
    return {"mean": float(x.mean()), "lo": float(np.quantile(means, a)), "hi": float(np.quantile(means, 1 - a)),
            "n": int(x.size)}


def gate_effectiveness(graph: TypedGraph, seeds: Sequence[Sequence[int]], targets: Sequence[Sequence[Sequence[int]]],
                       max_hops: int = 4, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Gates on vs off.

    Args:
        graph: the typed expansion graph with its gate edges.
        seeds: per query, seed node ids.
        targets: per query, per gold target (passage), the node ids that reach it (its entities).
        max_hops: BFS horizon H.
    Returns:
        ``{"on": {metric: ci}, "off": {...}, "delta": {metric: ci of per-query on − off}, "per_query": [...]}``.
    """
    graphs = {"on": graph, "off": without_kind(graph, EdgeKind.GATE)}
    per: dict[str, list[dict[str, float]]] = {"on": [], "off": []}
    for q_seeds, q_targets in zip(seeds, targets):
        for name, g in graphs.items():
            dist = hop_distances(g, q_seeds, max_hops)
            hops = [min((dist.get(int(v), float("inf")) for v in t), default=float("inf")) for t in q_targets]
            per[name].append(query_metrics(hops, max_hops))
    out: dict[str, Any] = {"max_hops": max_hops, "queries": len(per["on"]),
                           "gate_arcs": int((graph.kind == int(EdgeKind.GATE)).sum() // 2)}
    for name in ("on", "off"):
        out[name] = {m: bootstrap_ci([r[m] for r in per[name]], n_boot, seed) for m in METRICS}
    out["delta"] = {m: bootstrap_ci([a[m] - b[m] for a, b in zip(per["on"], per["off"])], n_boot, seed)
                    for m in METRICS}
    out["per_query"] = [{"on": a, "off": b} for a, b in zip(per["on"], per["off"])]
    return out


def plot_gate_effectiveness(result: dict[str, Any], path: str | Path, title: str = "HugRAG gates on vs off") -> Path:
    """Bars (off / on) per metric with bootstrap 95% intervals; ``min_hops`` on its own axis.

    ``result`` is one :func:`gate_effectiveness` result, or ``{label: result}`` for several gate sets on the same
    queries and graph (e.g. LLM-verified vs unverified gates): one "gates off" bar (the first result's) and one
    "on" bar per label.
    """
    plt = pyplot()

    variants = {"": result} if "on" in result else dict(result)
    first = next(iter(variants.values()))
    bars = [("gates off", first["off"], "#999999")]
    palette = ("#d62728", "#ff9896", "#1f77b4", "#aec7e8")
    for i, (label, res) in enumerate(variants.items()):
        name = f"gates on ({label}, {res['gate_arcs']})" if label else "gates on"
        bars.append((name, res["on"], palette[i % len(palette)]))
    width = 0.8 / len(bars)
    fig, axes = plt.subplots(1, 2, figsize=(9 + 1.2 * (len(bars) - 2), 3.8), gridspec_kw={"width_ratios": [3, 1]})
    for ax, metrics in zip(axes, (METRICS[:3], METRICS[3:])):
        x = np.arange(len(metrics))
        for i, (name, stats, color) in enumerate(bars):
            ci = [stats[m] for m in metrics]
            mean = np.array([c["mean"] for c in ci])
            err = np.array([[c["mean"] - c["lo"] for c in ci], [c["hi"] - c["mean"] for c in ci]])
            ax.bar(x + (i - (len(bars) - 1) / 2) * width, mean, width, yerr=err, capsize=3, color=color, label=name)
        ax.set_xticks(x, metrics)
    axes[0].set_ylim(0, 1.05)
    axes[0].legend(loc="lower left", fontsize=8, framealpha=0.9)
    axes[1].set_ylabel("hops")
    gates = "" if len(variants) > 1 else f", {first['gate_arcs']} gates"
    fig.suptitle(f"{title} (H={first['max_hops']}, {first['queries']} queries{gates})")
    return save_figure(fig, path)
