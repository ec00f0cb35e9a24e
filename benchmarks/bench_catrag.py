"""Cost of CatRAG's per-query edge deltas inside batched PPR, vs plain batched PPR (same resets).

    python benchmarks/bench_catrag.py [--queries 1000] [--repeats 7] [--check-queries 20] [--threads 1]

The deltas are the ones CatRAG really produces on musique_dev, built by the retriever's own code: the 51
questions are seeded (recognition-memory filter answered by ``llm=oracle``), each seed's relation neighbours
ranked by query–fact similarity (Stage I), the top K_edge = 15 scored by the oracle's ``neighbor_scoring``
replies and mapped through Table 8, the weak weight put on *every* pruned neighbour of each seed, and the
key-fact passage boosts merged in (``CatRAGRetriever.edge_delta``'s merge). The oracle stands in for a large
LLM so that the scores — and so the arcs zeroed, amplified and weakened — are those a perfect model would give;
the cost of PPR depends on how many arcs each query overrides, not on who scored them. The 51 queries' resets
and deltas are tiled to ``--queries`` columns. Plain and delta runs alternate ``--repeats`` times;
``delta_overhead`` is the median of the paired ratios (time with deltas / time without), robust to a CPU shared
with other jobs. Exactness: ``--check-queries`` columns are re-solved by igraph (prpack) on a directed graph
rebuilt with that query's arcs re-weighted, for both runs (``max_abs_err_*``). Last line: one JSON object.
"""

from __future__ import annotations

import os

os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")  # as retrieve.py and bench_ppr.py: huge pages for big buffers

import argparse
import json
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
from hyperrag.llm.oracle import OracleLLM
from hyperrag.ops.ppr import EdgeWeightDelta, PPRStats, merge_edge_deltas, personalized_pagerank
from hyperrag.retrievers.catrag import CatRAGRetriever


def catrag_batch(r: CatRAGRetriever, questions: list[str]
                 ) -> tuple[torch.Tensor, EdgeWeightDelta, dict[str, float]]:
    """Reset [B, N] and merged deltas of the questions, as ``CatRAGRetriever.propagate`` builds them."""
    seeds = r.seed(questions)
    reset = r.reset_vectors(seeds)
    scorer = r.edge_scorer
    plans = scorer.plan(seeds, seeds.entity_weight)
    scores = scorer.score(plans, seeds, r.llm, r.skip)
    dynamic = scorer.delta(plans, scores, r.device)
    delta = merge_edge_deltas(r.ppr_graph, [r.passage_boost_delta(seeds), dynamic], combine="multiply")
    scored = sum(len(p.scored) for p in plans)
    info = {"seeds_per_query": len(plans) / len(questions), "scored_arcs_per_query": scored / len(questions),
            "weak_arcs_per_query": sum(len(p.pruned) for p in plans) / len(questions),
            "failed_seed_calls": sum(v is None for v in scores),
            "zeroed_share": sum(v == 0 for d in scores if d for v in d.values()) / max(scored, 1)}
    return reset, delta, info


def tile(reset: torch.Tensor, delta: EdgeWeightDelta, n: int) -> tuple[torch.Tensor, EdgeWeightDelta]:
    """``n`` columns: the batch repeated (query ``i`` is column ``i mod B``), its deltas with it."""
    b = reset.shape[0]
    reps = -(-n // b)
    query = torch.cat([delta.query + k * b for k in range(reps)])
    keep = query < n
    src, dst, weight = (torch.cat([t] * reps)[keep] for t in (delta.src, delta.dst, delta.weight))
    return reset[torch.arange(n) % b], EdgeWeightDelta(query[keep], src, dst, weight)


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
    ap.add_argument("--llm-cache", default=None, help="sqlite response cache of the oracle (default: none)")
    args = ap.parse_args()
    ds = musique_dataset(args.musique_dir)
    llm = OracleLLM(refinement="gold_answers", cache_path=args.llm_cache, show_usage=False).bind_gold(ds)
    r = CatRAGRetriever(method_settings("catrag"), encoder=TextEncoder(show_progress=False), llm=llm, device="cpu")
    with llm:
        r.index(ds)
        base_reset, base_delta, info = catrag_batch(r, [q.question for q in ds.queries])
    reset, delta = tile(base_reset, base_delta, args.queries)
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
        **{k: round(v, 3) for k, v in info.items()},
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
