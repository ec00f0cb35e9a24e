"""Gate effectiveness on musique_dev: hop reachability of gold evidence from HugRAG's seeds, gates on vs off.

    python benchmarks/bench_hugrag_gates.py [--verifier none|llm] [--max-calls 40] [--max-llm-modules 30]
        [--no-prefilter] [--plot reports/hugrag_gates.png] [--hierarchy-plot reports/hugrag_hierarchy.png]

Appendix E's A/B test: HugRAG's own expansion (seeds, gains, token budget) is run with the gates and without them;
reachability, depth-weighted reachability 1/(1 + min hops), coverage of the gold nodes (the entities of the gold
passages) within the *retrieved subgraph*, and min hops over the queries reachable in both settings.

``--verifier none`` (default, no LLM needed) gates every module pair that survives the embedding prefilter and
Algorithm 2's pruning — an *unverified* upper bound on what LLM-verified gates can add; ``--verifier llm`` uses
the configured LLM (``--llm local``): LLM summaries for the ``--max-llm-modules`` largest modules (stand-in texts
for the rest), then ``--max-calls`` gate verifications (top levels first), and compares with the unverified
gates over the same module texts in the same figure (both "on" bars beside "off"). The hierarchy picture (levels,
modules, gates) goes to ``--hierarchy-plot``. Prints one JSON object last.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.environ.get("HYPERRAG_SHARED_DATA", "../shared/data") + "/musique_dev")
    ap.add_argument("--verifier", choices=("none", "llm"), default="none")
    ap.add_argument("--llm", default="local", help="hydra llm config used with --verifier llm")
    ap.add_argument("--max-calls", type=int, default=100)
    ap.add_argument("--max-llm-modules", type=int, default=30, help="LLM module summaries (the largest modules)")
    ap.add_argument("--hierarchy-plot", default="reports/hugrag_hierarchy.png")
    ap.add_argument("--top-m", type=int, default=5)
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--no-prefilter", action="store_true", help="Algorithm 2 candidates without the cosine prefilter")
    ap.add_argument("--count", action="store_true",
                    help="only count what Algorithm 2 would verify at this graph's size, per level (no LLM): with "
                         "and without the prefilter, min_distance 1 and 2, every verdict no (most calls) / yes")
    ap.add_argument("--plot", default="reports/hugrag_gates.png")
    args = ap.parse_args()


    from hyperrag.config import method_settings
    from hyperrag.data import musique_dataset
    from hyperrag.embedding import TextEncoder
    from hyperrag.eval.gate_effectiveness import gate_effectiveness, plot_gate_effectiveness, without_kind
    from hyperrag.expansion.best_first import EdgeKind
    from hyperrag.hierarchy.gates import GateBuilder
    from hyperrag.hierarchy.plot import plot_hierarchy
    from hyperrag.hierarchy.store import entity_graph
    from hyperrag.llm import build_llm
    from hyperrag.retrievers.hugrag import HugRAGRetriever

    dataset = musique_dataset(dir=args.data, name="musique")
    encoder = TextEncoder()
    llm = None
    if args.verifier == "llm":
        from hydra import compose, initialize_config_dir

        with initialize_config_dir(config_dir=str(Path(__file__).resolve().parents[1] / "hydra_configs"),
                                   version_base="1.3"):
            llm = build_llm(compose("retrieve", overrides=[f"llm={args.llm}"]).llm)
    gates = {"prefilter": not args.no_prefilter, "top_m": args.top_m, "threshold": args.threshold,
             "verifier": args.verifier,
             "max_calls": args.max_calls if args.verifier == "llm" else None}
    t0 = time.perf_counter()
    settings = method_settings("hugrag", hierarchy={"backend": "auto"}, gates=gates,
                               summaries={"max_llm_modules": args.max_llm_modules}, path_selection={"enabled": False})
    ret = HugRAGRetriever(settings, encoder=encoder, llm=llm, device="cpu")
    if llm is not None:
        with llm:
            ret.index(dataset)
    else:
        ret.index(dataset)
    index_s = time.perf_counter() - t0
    if args.count:
        print(json.dumps(count_calls(ret, GateBuilder, entity_graph)))
        return
    questions = [q.question for q in dataset.queries]
    q = encoder.encode(questions)
    g = ret.graph
    ents_of: list[list[int]] = [[] for _ in range(g.num_passages)]
    ptr, idx = g.entity_passage_ptr.tolist(), g.entity_passage_idx.tolist()
    for e in range(g.num_entities):
        for p in idx[ptr[e]: ptr[e + 1]]:
            ents_of[p].append(e)
    pos = {pid: i for i, pid in enumerate(g.passage_ids)}
    gold = [sorted({e for pid in qq.gold_ids if pid in pos for e in ents_of[pos[pid]]}) for qq in dataset.queries]

    def subgraphs(graph) -> list[dict[int, int]]:  # the retrieved subgraph of every question: node → hops
        _, _, _, walks = ret.expand(questions, q, graph)
        return [dict(zip(w.nodes, w.hop)) for w in walks]

    off = subgraphs(without_kind(ret.typed_graph, EdgeKind.GATE))
    result = gate_effectiveness(subgraphs(ret.typed_graph), off, gold, gate_arcs=ret.num_gates)
    line: dict = {"bench": "hugrag_gates", "verifier": args.verifier, "queries": result["queries"],
                  "both_reachable": result["both_reachable"], "gates": result["gate_arcs"],
                  "modules": ret.tree.num_modules,
                  "gate_stats": {k: v for k, v in ret.gate_stats.items() if k != "settings"},
                  "summary_stats": {k: v for k, v in ret.summary_stats.items() if k != "settings"},
                  "index_seconds": round(index_s, 1), **means_and_ci(result)}
    variants = {args.verifier if args.verifier == "none" else "LLM-verified": result}
    if args.verifier == "llm":  # the unverified gates over the same module texts, for comparison
        unverified = GateBuilder(None, replace(ret.settings.gates, verifier="none", max_calls=None)).build(
            ret.tree, ret.module_texts, ret.module_emb, entity_edges=entity_graph(g, ret.settings.hierarchy.edge_types)[0])
        res_u = gate_effectiveness(subgraphs(ret.expansion_graph(unverified.pairs)), off, gold,
                                   gate_arcs=int(unverified.pairs.shape[1]))
        variants["unverified"] = res_u
        line["unverified_same_texts"] = {"gates": res_u["gate_arcs"], **means_and_ci(res_u)}
    title = "HugRAG gates on vs off, MuSiQue dev" + ("" if len(variants) > 1 else f" ({args.verifier})")
    line["plot"] = str(plot_gate_effectiveness(variants if len(variants) > 1 else result, args.plot, title=title))
    if args.hierarchy_plot:
        line["hierarchy_plot"] = str(plot_hierarchy(
            ret.tree, args.hierarchy_plot, gates=ret.gate_pairs, labels=ret.module_texts,
            title=f"HugRAG hierarchy, MuSiQue dev ({'LLM-verified' if args.verifier == 'llm' else 'unverified'} gates)"))
    print(json.dumps(line))


def count_calls(ret, builder_cls, entity_graph) -> dict:  # type: ignore[no-untyped-def]
    """Verifications Algorithm 2 would make at this graph's size, per level, under each candidate rule."""
    edges = entity_graph(ret.graph, ret.settings.hierarchy.edge_types)[0]
    out: dict = {"bench": "hugrag_gate_calls", "modules": ret.tree.num_modules, "rules": {}}
    for prefilter in (False, True):
        for min_distance in (1, 2):
            for verdict in (False, True):
                settings = replace(ret.settings.gates, prefilter=prefilter, min_distance=min_distance,
                                   max_calls=None)
                t0 = time.perf_counter()
                stats = builder_cls(None, replace(settings, verifier="none"), None, progress=False).count(
                    ret.tree, ret.module_texts, ret.module_emb, edges, verdict=verdict)
                name = f"prefilter={prefilter} min_distance={min_distance} verdicts={'yes' if verdict else 'no'}"
                out["rules"][name] = {"calls": stats["verified"], "seconds": round(time.perf_counter() - t0, 1),
                                      "per_level": {lv: {"modules": r["modules"], "pairs_all": r["pairs_all"],
                                                         "intra": r["candidates_intra"], "inter": r["candidates_inter"],
                                                         "pruned_near": r["pruned_near"],
                                                         "pruned_hierarchy": r["pruned_hierarchy"]}
                                                    for lv, r in stats["levels"].items()}}
    return out


def means_and_ci(result: dict) -> dict:
    summary = {m: {k: round(result[k][m]["mean"], 4) for k in ("on", "off", "delta")} for m in result["on"]}
    ci = {k: {m: [round(result[k][m]["lo"], 4), round(result[k][m]["hi"], 4)] for m in result[k]}
          for k in ("on", "off", "delta")}
    return {"means": summary, "ci95": ci}


if __name__ == "__main__":
    main()
