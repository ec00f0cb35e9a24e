"""What CatRAG's edge scores can reach: the same queries, seeds and resets with and without the LLM's deltas.

    python benchmarks/catrag_reach.py [--llm oracle|local|...] [--limit N] [--musique-dir ...]

For every musique_dev query, CatRAG (``method/catrag.yaml``) seeds once (``--llm`` answers the fact filter,
anchoring and neighbour scoring; ``oracle``: the gold-informed upper bound) and runs PPR twice: with the key-fact
boosts only, and with the boosts and the dynamic edge weights. It prints recall/FCR of both, how many gold
passages moved up or down, and — for the gold passages still outside the top 5 — whether any of their entities is
a seed, a neighbour the LLM scored, a pruned neighbour, or none of these (then no re-weighting of the arcs that
leave the seeds touches them directly). Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hyperrag.config import compose_config, method_settings
from hyperrag.data import musique_dataset
from hyperrag.embedding import TextEncoder
from hyperrag.eval.retrieval import retrieval_metrics
from hyperrag.llm import build_llm, llm_label
from hyperrag.ops.ppr import merge_edge_deltas, personalized_pagerank
from hyperrag.retrievers.catrag import CatRAGRetriever


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--musique-dir", default=str(ROOT.parent / "shared" / "data" / "musique_dev"))
    ap.add_argument("--llm", default="oracle")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--cache-dir", default=os.environ.get("HYPERRAG_CACHE",
                                                          str(Path.home() / ".cache" / "hyperrag")))
    args = ap.parse_args()
    ds = musique_dataset(args.musique_dir)
    queries = ds.queries[: args.limit] if args.limit else ds.queries
    cfg = compose_config("retrieve", [f"llm={args.llm}", f"cache_dir={args.cache_dir}", "tracking=none"])
    llm = build_llm(cfg.llm, ds)
    r = CatRAGRetriever(method_settings("catrag", index_root=str(Path(args.cache_dir) / "index")),
                        encoder=TextEncoder(show_progress=False), llm=llm, device="cpu")
    with llm:
        r.index(ds)
        seeds = r.seed([q.question for q in queries])
        reset = r.reset_vectors(seeds)
        boost = r.passage_boost_delta(seeds)
        scored = r.edge_scorer(seeds, r.llm, r.skip)
    g, s = r.ppr_graph, r.settings
    runs = {}
    for name, parts in (("boost_only", [boost]), ("boost_and_edge_scores", [boost, scored])):
        ppr = personalized_pagerank(g, reset, damping=s.damping, tol=s.tol, max_iter=s.max_iter,
                                    edge_delta=merge_edge_deltas(g, parts, combine="multiply"), nodes=r.passage_nodes)
        runs[name] = r.passage_scores(seeds, ppr, reset)
    metrics = {name: {k: round(v, 1) for k, v in retrieval_metrics(
        [[ds.corpus.ids[j] for j in row] for row in sc.topk(10, dim=1).indices.tolist()],
        [q.gold_ids for q in queries]).items() if "@" in k} for name, sc in runs.items()}
    graph, position = r.graph, {pid: i for i, pid in enumerate(ds.corpus.ids)}
    ptr, idx = graph.entity_passage_ptr, graph.entity_passage_idx
    entities_of: dict[int, set[int]] = {}
    for e in range(graph.num_entities):
        for j in idx[ptr[e]: ptr[e + 1]].tolist():
            entities_of.setdefault(j, set()).add(e)
    plans = getattr(seeds, "edge_scores", [])
    before, after = runs["boost_only"], runs["boost_and_edge_scores"]
    moved = {"up": 0, "down": 0}
    outside = {"gold_outside_top5": 0, "holds_a_seed": 0, "holds_a_scored_neighbour": 0,
               "holds_a_pruned_neighbour": 0, "none_of_these": 0}
    for b, q in enumerate(queries):
        mine = [p for p, _ in plans if p.query == b]
        seeds_b = {p.seed for p in mine}
        scored_b = {n for p in mine for n in p.scored}
        pruned_b = {n for p in mine for n in p.pruned}
        top5 = set(after[b].topk(5).indices.tolist())
        for pid in q.gold_ids:
            j = position[pid]
            r0, r1 = int((before[b] > before[b, j]).sum()), int((after[b] > after[b, j]).sum())
            moved["up"] += r1 < r0
            moved["down"] += r1 > r0
            if j in top5:
                continue
            outside["gold_outside_top5"] += 1
            ents = entities_of.get(j, set())
            key = ("holds_a_seed" if ents & seeds_b else "holds_a_scored_neighbour" if ents & scored_b
                   else "holds_a_pruned_neighbour" if ents & pruned_b else "none_of_these")
            outside[key] += 1
    result = {"llm": llm_label(llm), "queries": len(queries), **metrics, "gold_passages_moved": moved, **outside,
              "llm_steps_skipped": dict(r.skipped)}
    for name, m in metrics.items():
        print(f"{name:<24} " + "  ".join(f"{k} {v}" for k, v in m.items()))
    print(f"gold passages moved by the edge scores: {moved['up']} up, {moved['down']} down")
    print(f"gold passages outside the top 5: {outside}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
