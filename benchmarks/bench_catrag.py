"""Cost of CatRAG's per-query edge deltas inside batched PPR, vs plain batched PPR (same resets).

    python benchmarks/bench_catrag.py [--queries 1000] [--repeats 3]

1,000 synthetic CatRAG queries on the MuSiQue knowledge graph: each seeds 5 random facts (HippoRAG 2
reset: fact entities ÷ passage count, plus 0.05 × random passage scores) and carries the deltas CatRAG
produces — key-fact passage boosts (seed entity → passages of its fact, × 3.5) and dynamic weights on
up to K_edge = 15 relation arcs leaving each of N_seed = 5 seed entities (multipliers drawn from the
0–10 score map). Last line: one JSON object with ``delta_overhead`` (time with deltas / time without).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hyperrag.data import musique_dataset
from hyperrag.embedding import TextEncoder
from hyperrag.ops.ppr import EdgeWeightDelta, personalized_pagerank
from hyperrag.retrievers.catrag import CatRAGRetriever
from hyperrag.retrievers.hipporag2 import SeedBatch

SCORE_MULTIPLIERS = torch.tensor([0.0, 0.0, 0.0, 0.0, 0.2, 0.25, 0.3, 2.0, 2.5, 3.0, 5.0])


def synthetic_batch(r: CatRAGRetriever, n: int, gen: torch.Generator, n_seed: int = 5, k_edge: int = 15):
    graph = r.graph
    fact_ids = torch.randint(len(graph.facts), (n, 5), generator=gen)
    scores = torch.rand(n, 5, generator=gen).sort(dim=1, descending=True).values
    keep = torch.ones_like(scores, dtype=torch.bool)
    dense = torch.rand(n, graph.num_passages, generator=gen)
    seeds = SeedBatch([""] * n, torch.empty(n, 0), fact_ids, scores, keep, r.entity_reset(fact_ids, scores, keep), dense)
    reset = torch.cat([seeds.entity_weight, dense * r.passage_node_weight], dim=1)
    boost = r.passage_boost_delta(seeds)
    # dynamic edge weights: relation arcs leaving the top n_seed seed entities
    ei = graph.edge_index[:, graph.edge_type == 0]
    src = torch.cat([ei[0], ei[1]])
    dst = torch.cat([ei[1], ei[0]])
    order = torch.argsort(src)
    src, dst = src[order], dst[order]
    ptr = torch.searchsorted(src, torch.arange(graph.num_nodes + 1))
    rel_weight = r.edge_weights.get("relation", 1.0)
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
    base = graph.edge_weight[graph.edge_type == 0][perm][torch.searchsorted(sorted_keys, u * graph.num_nodes + v)]
    mult = SCORE_MULTIPLIERS[torch.randint(11, (q.numel(),), generator=gen)]
    dyn = EdgeWeightDelta(q, s, t, base * rel_weight * mult)
    # an arc both boosted and re-scored keeps the boost (boosts are context arcs, dynamic ones relation arcs)
    delta = EdgeWeightDelta(*(torch.cat([getattr(boost, f), getattr(dyn, f)]) for f in ("query", "src", "dst", "weight")))
    return reset, delta


def timed(fn, repeats: int) -> tuple[float, torch.Tensor]:
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--musique-dir", default=str(ROOT.parent / "shared" / "data" / "musique_dev"))
    args = ap.parse_args()
    r = CatRAGRetriever(encoder=TextEncoder(show_progress=False), device="cpu", edge_weights={"synonym": 2.0})
    r.index(musique_dataset(args.musique_dir))
    reset, delta = synthetic_batch(r, args.queries, torch.Generator().manual_seed(0))
    g = r.ppr_graph
    plain_s, plain = timed(lambda: personalized_pagerank(g, reset, damping=0.5), args.repeats)
    delta_s, with_delta = timed(lambda: personalized_pagerank(g, reset, damping=0.5, edge_delta=delta), args.repeats)
    changed = float((with_delta - plain).abs().max())
    result = {
        "queries": args.queries, "nodes": g.num_nodes, "delta_arcs": int(delta.query.numel()),
        "delta_arcs_per_query": round(delta.query.numel() / args.queries, 1),
        "plain_seconds": round(plain_s, 3), "delta_seconds": round(delta_s, 3),
        "delta_overhead": round(delta_s / plain_s, 3), "max_abs_change_from_deltas": changed,
        "threads": torch.get_num_threads(),
    }
    print(f"plain batched PPR : {plain_s:.3f} s for {args.queries} queries")
    print(f"with edge deltas  : {delta_s:.3f} s ({result['delta_arcs_per_query']} overridden arcs/query)")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
