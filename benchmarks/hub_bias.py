"""Hub-bias analysis (CatRAG §6.1, Fig. 2): HippoRAG 2 vs CatRAG PPR over a query set.

    python benchmarks/hub_bias.py [--llm none|oracle|local|vllm|openai_compatible] [--limit N]
                                  [--musique-dir ../shared/data/musique_dev] [--out reports/hub_bias.png]

Both methods retrieve every query with the same LLM backend (``--llm``: a config of ``hydra_configs/llm/``;
``none``: their LLM-free forms; ``oracle``: the gold-informed upper bound). ``S_ppr`` (Eq. 4) and the super-hub
mass are computed for both on ONE shared static graph — HippoRAG 2's weighted graph (relation, synonym and
context edges at its edge-type weights): ``Strength(v)`` is a node's weighted degree there, super-hubs its top 1%
of entities. The paper samples 100 MuSiQue queries; musique_dev has 51 (all are used unless ``--limit``).
Prints a table and, last, one JSON line with the means per method; writes the plot (Fig. 2's shape).
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
from hyperrag.eval.hub_bias import hub_bias, node_strength, plot_hub_bias
from hyperrag.eval.retrieval import retrieval_metrics
from hyperrag.llm import build_llm, llm_label
from hyperrag.retrievers.catrag import CatRAGRetriever
from hyperrag.retrievers.hipporag2 import HippoRAG2Retriever


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--musique-dir", default=str(ROOT.parent / "shared" / "data" / "musique_dev"))
    ap.add_argument("--paper-data", default=None, help="read --dataset from this paper_data directory instead")
    ap.add_argument("--dataset", default="musique", help="the paper dataset under --paper-data")
    ap.add_argument("--llm", default="none", help="none | oracle | local | vllm | openai_compatible")
    ap.add_argument("--limit", type=int, default=None, help="only the first N queries")
    ap.add_argument("--cache-dir", default=os.environ.get("HYPERRAG_CACHE",
                                                          str(Path.home() / ".cache" / "hyperrag")))
    ap.add_argument("--out", default=None, help="plot path (default reports/hub_bias_<llm>.png)")
    args = ap.parse_args()
    if args.paper_data:  # the paper's own files (docs/reproduce.md), in their downloaded layout
        from hyperrag.data.paper_data import paper_dataset

        ds = paper_dataset(args.paper_data, args.dataset)
    else:
        ds = musique_dataset(args.musique_dir)
    queries = ds.queries[: args.limit] if args.limit else ds.queries
    questions = [q.question for q in queries]
    encoder = TextEncoder(show_progress=False)
    cfg = compose_config("retrieve", [f"llm={args.llm}", f"cache_dir={args.cache_dir}", "tracking=none"])
    llm = build_llm(cfg.llm, ds)  # the oracle is bound to this query file's gold
    index_root = str(Path(args.cache_dir) / "index")
    methods = {
        "hipporag2": HippoRAG2Retriever(method_settings("hipporag2", index_root=index_root), encoder=encoder,
                                        llm=llm, device="cpu"),
        "catrag": CatRAGRetriever(method_settings("catrag", index_root=index_root), encoder=encoder, llm=llm,
                                  device="cpu"),
    }
    results, summary = {}, {}
    with llm:
        static = methods["hipporag2"]
        static.index(ds)
        graph = static.graph
        w = static.ppr_weights  # HippoRAG 2's weighted graph, as its PPR sees it
        strength = node_strength(w.edge_index, w.weight, graph.num_nodes)  # the shared yardstick
        for name, retriever in methods.items():
            if retriever is not static:
                retriever.index(ds)
                assert retriever.graph.num_nodes == graph.num_nodes, "both methods must index the same graph"
            seeds = retriever.seed(questions)
            ppr, reset = retriever.propagate(seeds)
            results[name] = hub_bias(ppr, strength, graph.num_entities)
            passage_ppr = ppr.index_select(1, retriever.passage_nodes)
            ranked = retriever.passage_scores(seeds, passage_ppr, reset).topk(10, dim=1).indices.tolist()
            m = retrieval_metrics([[ds.corpus.ids[j] for j in r] for r in ranked], [q.gold_ids for q in queries])
            summary[name] = {"s_ppr_mean": round(float(results[name]["s_ppr"].mean()), 2),
                             "hub_mass_mean": round(float(results[name]["hub_mass"].mean()), 4),
                             "hub_mass_all_mean": round(float(results[name]["hub_mass_all"].mean()), 4),
                             "recall@5": round(m["recall@5"], 1), "fcr@5": round(m["fcr@5"], 1),
                             "llm_steps_skipped": dict(retriever.skipped)}
    label = llm_label(llm)
    out = args.out or str(ROOT / "reports" / f"hub_bias_{args.llm}.png")
    path = plot_hub_bias(results, out, title=f"{ds.name}, {len(queries)} queries, {label}; strength on "
                                             "HippoRAG 2's static graph")
    print(f"{'method':<10} {'S_ppr':>8} {'hub mass (top-10)':>18} {'hub mass (all)':>15} {'R@5':>6} {'FCR@5':>6}")
    for name, s in summary.items():
        print(f"{name:<10} {s['s_ppr_mean']:>8} {s['hub_mass_mean']:>18} {s['hub_mass_all_mean']:>15} "
              f"{s['recall@5']:>6} {s['fcr@5']:>6}")
    print(f"llm: {label}; super-hubs: top 1% of {graph.num_entities} entities by strength; plot: {path}")
    print(json.dumps({"llm": label, "queries": len(queries), **summary}))


if __name__ == "__main__":
    main()
