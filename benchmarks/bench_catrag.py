"""Cost of CatRAG's per-query edge deltas inside batched PPR, vs plain batched PPR (same resets).

    python benchmarks/bench_catrag.py [--queries 1000] [--repeats 7] [--check-queries 20]

1,000 synthetic CatRAG queries on the MuSiQue knowledge graph: each seeds 5 random facts (HippoRAG 2
reset: fact entities ÷ passage count, plus 0.05 × random passage scores) and carries the deltas CatRAG
produces — key-fact passage boosts (seed entity → passages of its fact, × 3.5) and dynamic weights on
up to K_edge = 15 relation arcs leaving each of N_seed = 5 seed entities (multipliers drawn from the
0–10 score map). Plain and delta runs alternate ``--repeats`` times; ``delta_overhead`` is the median of
the paired ratios (time with deltas / time without), robust to a CPU shared with other jobs. Exactness:
``--check-queries`` queries are re-solved by igraph (prpack) on a directed graph rebuilt with that query's
arcs re-weighted, for both runs (``max_abs_err_*``). Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hyperrag.config import method_settings
from hyperrag.data import musique_dataset
from hyperrag.embedding import TextEncoder
from hyperrag.ops.ppr import EdgeWeightDelta, PPRStats, merge_edge_deltas, personalized_pagerank
from hyperrag.retrievers.catrag import CatRAGRetriever
from hyperrag.retrievers.hipporag2 import SeedBatch

SCORE_MULTIPLIERS = torch.tensor([0.0, 0.0, 0.0, 0.0, 0.2, 0.25, 0.3, 2.0, 2.5, 3.0, 5.0])


def synthetic_batch(r: CatRAGRetriever, n: int, gen: torch.Generator, n_seed: int = 5, k_edge: int = 15):
    graph = r.graph
    fact_ids = torch.randint(len(graph.facts), (n, 5), generator=gen)
    scores = torch.rand(n, 5, generator=gen).sort(dim=1, descending=True).values
    keep = torch.ones_like(scores, dtype=torch.bool)
    dense = torch.rand(n, graph.num_passages, generator=gen)
    seeds = SeedBatch(
        [""] * n, torch.empty(n, 0), fact_ids, scores, keep, r.entity_reset(fact_ids, scores, keep), dense
    )
    reset = torch.cat([seeds.entity_weight, dense * r.settings.passage_node_weight], dim=1)
    boost = r.passage_boost_delta(seeds)
    # dynamic edge weights: relation arcs leaving the top n_seed seed entities
    ei = graph.edge_index[:, graph.edge_type == 0]
    src = torch.cat([ei[0], ei[1]])
    dst = torch.cat([ei[1], ei[0]])
    order = torch.argsort(src)
    src, dst = src[order], dst[order]
    ptr = torch.searchsorted(src, torch.arange(graph.num_nodes + 1))
    rel_weight = r.settings.edge_weights.get("relation", 1.0)
    qs, ss, ts = [], [], []
    top_seeds = torch.topk(seeds.entity_weight, n_seed, dim=1).indices
    for b in range(n):
        for e in top_seeds[b].tolist():
            nbrs = dst[ptr[e] : ptr[e + 1]].unique()[:k_edge]
            qs.append(torch.full_like(nbrs, b))
            ss.append(torch.full_like(nbrs, e))
            ts.append(nbrs)
    q, s, t = torch.cat(qs), torch.cat(ss), torch.cat(ts)
    # weight = multiplier × the stored (summed) relation weight of the arc
    u, v = torch.minimum(s, t), torch.maximum(s, t)
    key_all = ei[0] * graph.num_nodes + ei[1]
    sorted_keys, perm = key_all.sort()
    base = graph.edge_weight[graph.edge_type == 0][perm][
        torch.searchsorted(sorted_keys, u * graph.num_nodes + v)
    ]
    mult = SCORE_MULTIPLIERS[torch.randint(11, (q.numel(),), generator=gen)]
    dyn = EdgeWeightDelta(q, s, t, base * rel_weight * mult)
    # as CatRAGRetriever.edge_delta: one entry per (query, arc), multipliers of one arc multiply
    return reset, merge_edge_deltas(r.ppr_graph, [boost, dyn], combine="multiply")


def reference(g, reset: torch.Tensor, delta: EdgeWeightDelta | None, queries: list[int], damping: float):
    """igraph/prpack per query on the directed arc list of ``g`` with that query's arcs re-weighted."""
    import igraph as ig

    n = g.num_nodes
    src = torch.repeat_interleave(torch.arange(n), g.out_ptr.diff())
    if g.perm is not None:
        src = g.perm[src]
    dst = g.out_idx if g.perm is None else g.perm[g.out_idx]
    base = g.out_weight.double()
    out = []
    for b in queries:
        w = base.clone()
        if delta is not None:
            m = delta.query == b
            w[_arc_pos(g, delta.src[m], delta.dst[m])] = delta.weight[m].double()
        keep = w > 0
        graph = ig.Graph(n=n, edges=torch.stack([src[keep], dst[keep]], 1).tolist(), directed=True)
        out.append(
            graph.personalized_pagerank(
                damping=damping,
                reset=reset[b].double().tolist(),
                weights=w[keep].tolist(),
                directed=True,
                implementation="prpack",
            )
        )
    return torch.tensor(out, dtype=torch.float64)


def _arc_pos(g, s: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    n = g.num_nodes
    if g.inv_perm is not None:
        s, t = g.inv_perm[s], g.inv_perm[t]
    keys = torch.repeat_interleave(torch.arange(n), g.out_ptr.diff()) * n + g.out_idx
    return torch.searchsorted(keys, s.long() * n + t.long())


def paired(fns, repeats: int) -> tuple[list[list[float]], list[torch.Tensor]]:
    """Alternate the functions ``repeats`` times (after one warm-up); wall seconds per call and outputs."""
    outs = [fn() for fn in fns]
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            outs[i] = fn()
            times[i].append(time.perf_counter() - t0)
    return times, outs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--check-queries", type=int, default=20, help="queries checked against igraph, 0: none")
    ap.add_argument("--damping", type=float, default=0.5)
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    ap.add_argument("--musique-dir", default=str(ROOT.parent / "shared" / "data" / "musique_dev"))
    args = ap.parse_args()
    r = CatRAGRetriever(method_settings("catrag"), encoder=TextEncoder(show_progress=False), device="cpu")
    r.index(musique_dataset(args.musique_dir))
    reset, delta = synthetic_batch(r, args.queries, torch.Generator().manual_seed(0))
    if args.threads:
        torch.set_num_threads(args.threads)
    g, d = r.ppr_graph, args.damping
    (plain_t, delta_t), (plain, with_delta) = paired(
        [
            lambda: personalized_pagerank(g, reset, damping=d),
            lambda: personalized_pagerank(g, reset, damping=d, edge_delta=delta),
        ],
        args.repeats,
    )
    med = statistics.median
    ratios = [b / a for a, b in zip(plain_t, delta_t)]
    stats = [PPRStats(), PPRStats()]
    personalized_pagerank(g, reset, damping=d, stats=stats[0])
    personalized_pagerank(g, reset, damping=d, edge_delta=delta, stats=stats[1])
    result = {
        "queries": args.queries,
        "nodes": g.num_nodes,
        "damping": d,
        "delta_arcs": int(delta.query.numel()),
        "delta_arcs_per_query": round(delta.query.numel() / args.queries, 1),
        "plain_seconds_median": round(med(plain_t), 4),
        "delta_seconds_median": round(med(delta_t), 4),
        "plain_seconds_best": round(min(plain_t), 4),
        "delta_seconds_best": round(min(delta_t), 4),
        "delta_overhead": round(med(ratios), 3),
        "delta_overhead_min_max": [round(min(ratios), 3), round(max(ratios), 3)],
        "column_iterations": [stats[0].column_iterations, stats[1].column_iterations],
        "chebyshev_fallbacks": stats[1].chebyshev_fallbacks,
        "max_abs_change_from_deltas": float((with_delta - plain).abs().max()),
        "threads": torch.get_num_threads(),
        "repeats": args.repeats,
    }
    if args.check_queries:
        qs = (
            torch.linspace(0, args.queries - 1, min(args.check_queries, args.queries)).round().long().tolist()
        )
        result["checked_queries"] = len(qs)
        result["max_abs_err_plain"] = float(
            (plain[qs].double() - reference(g, reset, None, qs, d)).abs().max()
        )
        result["max_abs_err_delta"] = float(
            (with_delta[qs].double() - reference(g, reset, delta, qs, d)).abs().max()
        )
    print(f"plain batched PPR : {med(plain_t):.3f} s median for {args.queries} queries")
    print(
        f"with edge deltas  : {med(delta_t):.3f} s median ({result['delta_arcs_per_query']} overridden arcs/query)"
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
