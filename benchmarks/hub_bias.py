"""Hub-bias analysis: HippoRAG 2 vs CatRAG (LLM-free) PPR on musique_dev.

    python benchmarks/hub_bias.py [--musique-dir ../shared/data/musique_dev] [--out reports/hub_bias.png]

Prints a table and, last, one JSON line with the mean S_ppr and super-hub mass share per method.
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

from hyperrag.config import method_settings
from hyperrag.data import musique_dataset
from hyperrag.embedding import TextEncoder
from hyperrag.eval.hub_bias import hub_bias, node_strength, plot_hub_bias
from hyperrag.eval.retrieval import retrieval_metrics
from hyperrag.graph.knowledge_graph import EdgeType
from hyperrag.retrievers.catrag import CatRAGRetriever
from hyperrag.retrievers.hipporag2 import HippoRAG2Retriever


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--musique-dir", default=str(ROOT.parent / "shared" / "data" / "musique_dev"))
    ap.add_argument("--out", default=str(ROOT / "reports" / "hub_bias.png"))
    args = ap.parse_args()
    ds = musique_dataset(args.musique_dir)
    encoder = TextEncoder(show_progress=False)
    questions = [q.question for q in ds.queries]
    methods = {
        "hipporag2": HippoRAG2Retriever(method_settings("hipporag2"), encoder=encoder, device="cpu"),
        "catrag": CatRAGRetriever(method_settings("catrag"), encoder=encoder, device="cpu"),
    }
    results, summary = {}, {}
    for name, retriever in methods.items():
        retriever.index(ds)
        graph = retriever.graph
        ei, w = graph.weighted_edges({EdgeType[k.upper()]: v for k, v in retriever.settings.edge_weights.items()})
        strength = node_strength(ei, w, graph.num_nodes)
        seeds = retriever.seed(questions)
        ppr, _ = retriever.propagate(seeds)
        results[name] = hub_bias(ppr, strength, graph.num_entities)
        ranked = ppr[:, graph.num_entities:].topk(10, dim=1).indices.tolist()
        m = retrieval_metrics([[ds.corpus.ids[j] for j in r] for r in ranked], [q.gold_ids for q in ds.queries])
        summary[name] = {"s_ppr_mean": round(float(results[name]["s_ppr"].mean()), 3),
                         "hub_mass_mean": round(float(results[name]["hub_mass"].mean()), 4),
                         "recall@5": round(m["recall@5"], 1), "fcr@5": round(m["fcr@5"], 1)}
    path = plot_hub_bias(results, args.out)
    print(f"{'method':<10} {'S_ppr':>8} {'hub mass':>9} {'R@5':>6} {'FCR@5':>6}")
    for name, s in summary.items():
        print(f"{name:<10} {s['s_ppr_mean']:>8} {s['hub_mass_mean']:>9} {s['recall@5']:>6} {s['fcr@5']:>6}")
    print(f"plot: {path}")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
