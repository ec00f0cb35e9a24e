"""What a knowledge graph holds: node and edge counts by type, degree distributions, the largest hubs.

``python -m hyperrag.index stats --index DIR`` prints it; :func:`graph_statistics` returns it as a dict.
Degrees count every incident edge (of any type) once per edge; per-type degrees say where a hub's edges come from.
"""

from __future__ import annotations

from typing import Any

import torch

from hyperrag.graph.knowledge_graph import EdgeType, KnowledgeGraph

QUANTILES = (0.5, 0.9, 0.99)


def node_degrees(graph: KnowledgeGraph, edge_type: EdgeType | None = None) -> torch.Tensor:
    """LongTensor [N]: incident edges of every node (of one type, or all), via PyG's ``degree``."""
    from torch_geometric.utils import degree

    index = graph.edge_index if edge_type is None else graph.edge_index[:, graph.edge_type == int(edge_type)]
    both = torch.cat([index[0], index[1]])
    return degree(both, graph.num_nodes, dtype=torch.long)


def degree_summary(deg: torch.Tensor) -> dict[str, Any]:
    """Min / mean / quantiles / max of a degree vector and a power-of-two histogram (``"0"``, ``"1"``, ``"2-3"``,
    ``"4-7"``, ... → number of nodes)."""
    if deg.numel() == 0:
        return {"nodes": 0}
    d = deg.double()
    out: dict[str, Any] = {"nodes": int(deg.numel()), "min": int(deg.min()), "mean": round(float(d.mean()), 3),
                           **{f"p{int(q * 100)}": float(torch.quantile(d, q)) for q in QUANTILES},
                           "max": int(deg.max())}
    bins = torch.where(deg > 0, torch.floor(torch.log2(d.clamp(min=1))).long() + 1, 0)
    hist = torch.bincount(bins)
    labels = ["0"] + [f"{2 ** (b - 1)}" if b == 1 else f"{2 ** (b - 1)}-{2 ** b - 1}" for b in range(1, len(hist))]
    out["histogram"] = {label: int(c) for label, c in zip(labels, hist.tolist()) if c}
    return out


def graph_statistics(graph: KnowledgeGraph, top: int = 10) -> dict[str, Any]:
    """Counts by type, degree distributions (entities, passages) and the ``top`` entities by degree.

    Returns:
        ``{"nodes": {type: n}, "edges": {type: m}, "facts": F, "degree": {"entity": ..., "passage": ...},
        "hubs": [{"entity", "degree", "by_type", "passages"}, ...]}``.
    """
    num_e = graph.num_entities
    deg = node_degrees(graph)
    per_type = {t: node_degrees(graph, t) for t in EdgeType if bool((graph.edge_type == int(t)).any())}
    mentions = graph.entity_passage_count
    hubs = []
    for node in torch.argsort(deg[:num_e], descending=True, stable=True)[:top].tolist():
        hubs.append({"entity": graph.entity_names[node], "degree": int(deg[node]),
                     "by_type": {t.name.lower(): int(d[node]) for t, d in per_type.items() if int(d[node])},
                     "passages": int(mentions[node])})
    return {
        "nodes": {"entity": num_e, "passage": graph.num_passages},
        "edges": graph.count_by_type(),
        "facts": len(graph.facts),
        "degree": {"entity": degree_summary(deg[:num_e]), "passage": degree_summary(deg[num_e:])},
        "hubs": hubs,
    }


def format_statistics(stats: dict[str, Any]) -> str:
    """The statistics as a few readable lines (the ``stats`` command's default output)."""
    lines = ["nodes: " + ", ".join(f"{k} {v}" for k, v in stats["nodes"].items()) + f"; facts {stats['facts']}",
             "edges: " + ", ".join(f"{k} {v}" for k, v in stats["edges"].items())]
    for kind, d in stats["degree"].items():
        if not d.get("nodes"):
            continue
        lines.append(f"{kind} degree: min {d['min']}, median {d['p50']:g}, mean {d['mean']}, p90 {d['p90']:g}, "
                     f"p99 {d['p99']:g}, max {d['max']}")
        lines.append("  histogram: " + ", ".join(f"{k}: {v}" for k, v in d["histogram"].items()))
    lines.append("largest hubs:")
    for h in stats["hubs"]:
        parts = ", ".join(f"{k} {v}" for k, v in h["by_type"].items())
        lines.append(f"  {h['degree']:>6}  {h['entity']}  ({parts}; in {h['passages']} passages)")
    return "\n".join(lines)


__all__ = ["degree_summary", "format_statistics", "graph_statistics", "node_degrees"]
