"""Gate effectiveness (HugRAG, Appendix E): gold context access in the *retrieved subgraph*, gates on vs off.

For every query the method's own expansion is run twice, over the graph with its causal gates (on) and without
them (off). Its *gold nodes* are the graph nodes that map to the gold context (the entities its gold passages
mention); queries without any are left out. Per query, from the retrieved subgraph (node → hops from its seed):

* ``reachability``: 1 if at least one gold node was retrieved;
* ``depth_weighted`` (DWR): ``1 / (1 + min hops)`` over the retrieved gold nodes, 0 when none was retrieved;
* ``coverage``: the share of the gold nodes retrieved;
* ``min_hops``: the fewest hops to a retrieved gold node — its mean is taken only over the queries reachable in
  *both* settings, so on and off are compared on the same questions.

Means come with percentile-bootstrap 95% intervals over queries; :func:`plot_gate_effectiveness` draws on/off
bars with those intervals.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
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


def query_metrics(retrieved: Mapping[int, int], gold: Sequence[int]) -> dict[str, float]:
    """The four metrics of one query from its retrieved subgraph (``node → hops``) and its gold nodes."""
    hops = [retrieved[g] for g in set(gold) if g in retrieved]
    if not hops:
        return {"reachability": 0.0, "depth_weighted": 0.0, "coverage": 0.0, "min_hops": float("nan")}
    return {"reachability": 1.0, "depth_weighted": 1.0 / (1.0 + min(hops)), "coverage": len(hops) / len(set(gold)),
            "min_hops": float(min(hops))}


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


def gold_entity_nodes(graph: Any, gold_ids: Sequence[Sequence[str]]) -> list[list[int]]:
    """Per query, its gold nodes: the entities its gold passages mention (sorted ids).

    Args:
        graph: the KG (``entity_passage_ptr`` / ``entity_passage_idx`` CSR, ``num_entities``, ``num_passages``,
            ``passage_ids``).
        gold_ids: per query, its gold passage ids (ids not in the graph are skipped).
    """
    ents_of: list[list[int]] = [[] for _ in range(graph.num_passages)]
    ptr, idx = graph.entity_passage_ptr.tolist(), graph.entity_passage_idx.tolist()
    for e in range(graph.num_entities):
        for p in idx[ptr[e]: ptr[e + 1]]:
            ents_of[p].append(e)
    pos = {pid: i for i, pid in enumerate(graph.passage_ids)}
    return [sorted({e for pid in gq if pid in pos for e in ents_of[pos[pid]]}) for gq in gold_ids]


def gate_effectiveness(on: Sequence[Mapping[int, int]], off: Sequence[Mapping[int, int]],
                       gold: Sequence[Sequence[int]], n_boot: int = 2000, seed: int = 0,
                       gate_arcs: int = 0) -> dict[str, Any]:
    """Gates on vs off over the retrieved subgraphs.

    Args:
        on / off: per query, the retrieved subgraph with / without gates as ``node → hops from its seed``.
        gold: per query, its gold node ids (queries with none are left out).
        gate_arcs: gates in the graph (reported).
    Returns:
        ``{"on": {metric: ci}, "off": {...}, "delta": {metric: ci of per-query on − off}, "per_query": [...],
        "queries": n, "both_reachable": n}``.
    """
    per: dict[str, list[dict[str, float]]] = {"on": [], "off": []}
    for q_on, q_off, q_gold in zip(on, off, gold):
        if not q_gold:
            continue
        per["on"].append(query_metrics(q_on, q_gold))
        per["off"].append(query_metrics(q_off, q_gold))
    both = [not (math.isnan(a["min_hops"]) or math.isnan(b["min_hops"])) for a, b in zip(per["on"], per["off"])]
    out: dict[str, Any] = {"queries": len(per["on"]), "both_reachable": int(sum(both)), "gate_arcs": gate_arcs}
    for name in ("on", "off"):
        out[name] = {m: bootstrap_ci([r[m] for r, ok in zip(per[name], both) if m != "min_hops" or ok], n_boot, seed)
                     for m in METRICS}
    out["delta"] = {m: bootstrap_ci([a[m] - b[m] for a, b, ok in zip(per["on"], per["off"], both)
                                     if m != "min_hops" or ok], n_boot, seed) for m in METRICS}
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
    fig.suptitle(f"{title} ({first['queries']} queries, min hops on {first['both_reachable']}{gates})")
    return save_figure(fig, path)
