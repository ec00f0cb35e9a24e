"""Leiden on the MuSiQue knowledge graph: hyperrag.hierarchy.leiden (CPU path) against plain leidenalg.

Usage (from the repository root)::

    python benchmarks/bench_leiden.py                    # entity graph (relation + synonym edges), 7 repeats
    python benchmarks/bench_leiden.py --graph whole --repeats 5

The graph is the framework's own knowledge graph of musique_dev, built (or loaded from the cache) by
``load_or_build_kg_index``: ``--graph entity`` (default) clusters the entity–entity relation and synonym
edges — the graph the HugRAG hierarchy is built on; ``--graph whole`` adds the passage nodes and their
context edges. Both sides run in this one process on the same graph, interleaved, seed = repeat index:

* ours: ``leiden(edge_index, edge_weight, N, backend="cpu", seed=r)`` from the torch tensors, timed end to end
  (edge clean-up, CSR build, the Rust Leiden of graspologic-native, relabelling, our modularity);
* peer: ``leidenalg.find_partition(g, leidenalg.ModularityVertexPartition, weights="weight", seed=r)`` on an
  igraph graph built once beforehand (its construction is not timed: that favours the peer).

Modularity of both partitions is computed by the same function (igraph's ``Graph.modularity``; ours agrees to
1e-12). Time ratio = median(ours) / median(leidenalg). The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch

from hyperrag.config import method_settings
from hyperrag.data import musique_dataset
from hyperrag.embedding import TextEncoder
from hyperrag.graph.knowledge_graph import EdgeType
from hyperrag.hierarchy.hierarchy import build_hierarchy
from hyperrag.hierarchy.leiden import leiden, resolve_backend
from hyperrag.hierarchy.store import entity_graph, entity_texts
from hyperrag.hierarchy.tokens import count_tokens
from hyperrag.index.kg_index import graph_settings, load_or_build_kg_index


def log(msg: str) -> None:
    print(msg, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=os.environ.get("HYPERRAG_SHARED_DATA", str(REPO.parent / "shared" / "data"))
                        + "/musique_dev")
    parser.add_argument("--graph", choices=["entity", "whole"], default="entity")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--resolution", type=float, default=1.0)
    args = parser.parse_args()

    import igraph as ig
    import leidenalg

    t0 = time.perf_counter()
    kg = load_or_build_kg_index(musique_dataset(args.data), TextEncoder(show_progress=False), graph_settings())
    graph = kg.graph
    if args.graph == "entity":
        edge_index, edge_weight = entity_graph(graph, ("relation", "synonym"))
        num_nodes = graph.num_entities
    else:
        edge_index, edge_weight = graph.weighted_edges({EdgeType.KEYWORD: 0.0})
        num_nodes = graph.num_nodes
    log(f"graph: {args.graph}, {num_nodes} nodes, {edge_index.shape[1]} edges "
        f"(index {'built' if kg.built else 'loaded'} in {time.perf_counter() - t0:.1f}s)")
    backend = resolve_backend("cpu")
    log(f"our CPU backend: {backend}; peer: leidenalg {leidenalg.version} ModularityVertexPartition")

    g = ig.Graph(n=num_nodes, edges=edge_index.T.numpy(), directed=False,
                 edge_attrs={"weight": edge_weight.double().tolist()})
    t_ours, t_peer, q_ours, q_peer = [], [], [], []
    for r in range(args.repeats):
        t = time.perf_counter()
        part = leiden(edge_index, edge_weight, num_nodes, resolution=args.resolution, seed=r, backend="cpu")
        t_ours.append(time.perf_counter() - t)
        t = time.perf_counter()
        peer = leidenalg.find_partition(g, leidenalg.ModularityVertexPartition, weights="weight", seed=r)
        t_peer.append(time.perf_counter() - t)
        q_ours.append(g.modularity(part.membership.tolist(), weights="weight"))
        q_peer.append(g.modularity(peer.membership, weights="weight"))
        log(f"repeat {r}: ours {t_ours[-1] * 1e3:8.1f} ms  Q={q_ours[-1]:.5f} ({part.num_communities} communities)"
            f" | leidenalg {t_peer[-1] * 1e3:8.1f} ms  Q={q_peer[-1]:.5f} ({len(set(peer.membership))})")
        assert abs(part.modularity - q_ours[-1]) < 1e-9, (part.modularity, q_ours[-1])

    # determinism: same seed, same partition
    again = leiden(edge_index, edge_weight, num_nodes, resolution=args.resolution, seed=0, backend="cpu")
    first = leiden(edge_index, edge_weight, num_nodes, resolution=args.resolution, seed=0, backend="cpu")
    deterministic = bool(torch.equal(again.membership, first.membership))

    # the recursive hierarchy on the entity graph (what HugRAG indexes), for reference
    hier = None
    if args.graph == "entity":
        tokens = torch.tensor(count_tokens(entity_texts(graph, "name+facts")))
        t = time.perf_counter()
        h = build_hierarchy(edge_index, edge_weight, num_nodes, tokens, replace(method_settings("hugrag").hierarchy, backend="cpu"))
        hier = {"seconds": round(time.perf_counter() - t, 3), "levels": h.num_levels,
                "modules_per_level": [h.num_modules(lv) for lv in range(1, h.num_levels + 1)],
                "modularity_per_level": [round(q, 5) for q in h.modularity], "leiden_calls": h.stats["leiden_calls"]}
        log(f"recursive hierarchy: {hier}")

    med_ours, med_peer = statistics.median(t_ours), statistics.median(t_peer)
    mod_ours, mod_peer = statistics.mean(q_ours), statistics.mean(q_peer)
    log(f"median time: ours {med_ours * 1e3:.1f} ms, leidenalg {med_peer * 1e3:.1f} ms "
        f"(ratio {med_ours / med_peer:.3f}); mean modularity: ours {mod_ours:.5f}, leidenalg {mod_peer:.5f} "
        f"({100 * (mod_ours - mod_peer) / mod_peer:+.2f}%)")
    print(json.dumps({
        "time_ratio": round(med_ours / med_peer, 4),
        "modularity_ours": round(mod_ours, 6),
        "modularity_leidenalg": round(mod_peer, 6),
        "modularity_diff_pct": round(100 * (mod_ours - mod_peer) / mod_peer, 3),
        "seconds_ours": round(med_ours, 4), "seconds_leidenalg": round(med_peer, 4),
        "backend": backend, "graph": args.graph, "nodes": num_nodes, "edges": int(edge_index.shape[1]),
        "repeats": args.repeats, "deterministic": deterministic, "hierarchy": hier,
    }))


if __name__ == "__main__":
    main()
