"""Gate effectiveness on musique_dev: hop reachability of gold evidence from HugRAG's seeds, gates on vs off.

    python benchmarks/bench_hugrag_gates.py [--verifier none|llm] [--max-calls 40] [--max-llm-modules 30]
        [--no-prefilter] [--plot reports/hugrag_gates.png] [--hierarchy-plot reports/hugrag_hierarchy.png]
    python benchmarks/bench_hugrag_gates.py --candidates     # candidate rules: LLM checks and gold-hop recall

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
    ap.add_argument("--candidates", action="store_true",
                    help="the gate candidate rules (logical-relatedness test x top_m x threshold, and no test): "
                         "LLM checks each asks (no LLM) and its gold-hop recall on MuSiQue's decompositions")
    ap.add_argument("--out", default="reports/hugrag_gate_candidates.json", help="--candidates: the JSON written")
    ap.add_argument("--plot", default="reports/hugrag_gates.png")
    args = ap.parse_args()


    from hyperrag.config import method_settings
    from hyperrag.data import musique_dataset
    from hyperrag.embedding import TextEncoder
    from hyperrag.eval.gate_effectiveness import (
        gate_effectiveness,
        gold_entity_nodes,
        plot_gate_effectiveness,
        without_kind,
    )
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
    if args.candidates:
        line = candidate_rules(ret, dataset, GateBuilder, entity_graph)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(line, indent=1))
        print(json.dumps({k: v for k, v in line.items() if k != "per_level"}))
        return
    questions = [q.question for q in dataset.queries]
    q = encoder.encode(questions)
    g = ret.graph
    gold = gold_entity_nodes(g, [qq.gold_ids for qq in dataset.queries])

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


def candidate_rules(ret, dataset, builder_cls, entity_graph) -> dict:  # type: ignore[no-untyped-def]
    """Per candidate rule: the LLM checks Algorithm 2 asks (every verdict no = most, yes = fewest), per 1,000
    passages, and the gold-hop recall of its candidates (:mod:`hyperrag.eval.gate_recall`)."""
    from hyperrag.eval.gate_recall import gold_hop_pairs, gold_hop_recall, hop_entities_of

    edges = entity_graph(ret.graph, ret.settings.hierarchy.edge_types)[0]
    base = replace(ret.settings.gates, max_calls=None, verifier="none")
    pairs = gold_hop_pairs(ret.tree, edges, hop_entities_of(dataset, ret.graph), base.min_distance)
    passages = ret.graph.num_passages
    rules: dict[str, dict] = {"no relatedness test (the earlier paper preset)": {"prefilter": False}}
    rules["all_modules top 5, cos >= 0.5 (the earlier prefilter)"] = {
        "prefilter": True, "prefilter_scope": "all_modules", "top_m": 5, "threshold": 0.5}
    for top_m in (1, 3, 5, 10):
        for threshold in (0.0, 0.5):
            rules[f"candidates top {top_m}, cos >= {threshold}"] = {
                "prefilter": True, "prefilter_scope": "candidates", "top_m": top_m, "threshold": threshold}
    out: dict = {"bench": "hugrag_gate_candidates", "modules": ret.tree.num_modules, "passages": passages,
                 "module_texts": ret.describe()["module_texts"], "min_distance": base.min_distance, "rules": {}}
    for name, change in rules.items():
        settings = replace(base, **change)
        t0 = time.perf_counter()
        most = builder_cls(None, settings, None, progress=False).count(
            ret.tree, ret.module_texts, ret.module_emb, edges, verdict=False)
        # every verdict yes prunes only look-ahead candidates: measured where that matters (no relatedness test)
        fewest = most if settings.prefilter else builder_cls(None, settings, None, progress=False).count(
            ret.tree, ret.module_texts, ret.module_emb, edges, verdict=True)
        recall = gold_hop_recall(pairs, most["asked"])
        out["rules"][name] = {
            "checks_most": most["verified"], "checks_fewest": fewest["verified"],
            "checks_per_1000_passages": [round(1000 * fewest["verified"] / passages),
                                         round(1000 * most["verified"] / passages)],
            "gold_hop_recall": {k: (round(v, 4) if isinstance(v, float) else v) for k, v in recall.items()},
            "per_level": {lv: {"intra": r["candidates_intra"], "inter": r["candidates_inter"]}
                          for lv, r in most["levels"].items()},
            "seconds": round(time.perf_counter() - t0, 1)}
        print(name, json.dumps({k: v for k, v in out["rules"][name].items() if k != "per_level"}), flush=True)
    return out


def means_and_ci(result: dict) -> dict:
    summary = {m: {k: round(result[k][m]["mean"], 4) for k in ("on", "off", "delta")} for m in result["on"]}
    ci = {k: {m: [round(result[k][m]["lo"], 4), round(result[k][m]["hi"], 4)] for m in result[k]}
          for k in ("on", "off", "delta")}
    return {"means": summary, "ci95": ci}


if __name__ == "__main__":
    main()
