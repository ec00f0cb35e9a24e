"""Gate effectiveness on musique_dev: hop reachability of gold evidence from HugRAG's seeds, gates on vs off.

    python benchmarks/bench_hugrag_gates.py [--verifier none|llm] [--max-calls 40] [--max-llm-modules 30]
        [--max-hops 4] [--plot reports/hugrag_gates.png] [--hierarchy-plot reports/hugrag_hierarchy.png]

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
    ap.add_argument("--max-hops", type=int, default=4)
    ap.add_argument("--plot", default="reports/hugrag_gates.png")
    args = ap.parse_args()

    import torch

    from hyperrag.data import musique_dataset
    from hyperrag.embedding import TextEncoder
    from hyperrag.eval.gate_effectiveness import gate_effectiveness, plot_gate_effectiveness
    from hyperrag.hierarchy.gates import GateBuilder
    from hyperrag.hierarchy.plot import plot_hierarchy
    from hyperrag.llm import build_llm
    from hyperrag.retrievers.hugrag import HugRAGRetriever

    dataset = musique_dataset(dir=args.data, name="musique")
    encoder = TextEncoder()
    llm = None
    if args.verifier == "llm":
        from hydra import compose, initialize_config_dir

        with initialize_config_dir(config_dir=str(Path(__file__).resolve().parents[1] / "hyperrag" / "conf"),
                                   version_base="1.3"):
            llm = build_llm(compose("retrieve", overrides=[f"llm={args.llm}"]).llm)
    gates = {"top_m": args.top_m, "threshold": args.threshold, "verifier": args.verifier,
             "max_calls": args.max_calls if args.verifier == "llm" else None}
    t0 = time.perf_counter()
    ret = HugRAGRetriever(encoder=encoder, llm=llm, device="cpu", hierarchy={"backend": "auto"}, gates=gates,
                          summaries={"max_llm_modules": args.max_llm_modules}, path_selection={"enabled": False})
    if llm is not None:
        with llm:
            ret.index(dataset)
    else:
        ret.index(dataset)
    index_s = time.perf_counter() - t0
    questions = [q.question for q in dataset.queries]
    q = encoder.encode(questions)
    s_ent, s_mod = ret.score_nodes(questions, q)
    seed_ent, seed_mod = ret.seed(s_ent, s_mod)
    num_e = ret.graph.num_entities
    seeds = torch.cat([seed_ent, seed_mod + num_e], dim=1).tolist()
    # passage position → entities mentioning it
    g = ret.graph
    ents_of: list[list[int]] = [[] for _ in range(g.num_passages)]
    ptr, idx = g.entity_passage_ptr.tolist(), g.entity_passage_idx.tolist()
    for e in range(num_e):
        for p in idx[ptr[e]: ptr[e + 1]]:
            ents_of[p].append(e)
    pos = {pid: i for i, pid in enumerate(g.passage_ids)}
    targets = [[ents_of[pos[pid]] for pid in qq.gold_ids if pid in pos] for qq in dataset.queries]
    result = gate_effectiveness(ret.typed_graph, seeds, targets, max_hops=args.max_hops)
    line: dict = {"bench": "hugrag_gates", "verifier": args.verifier, "max_hops": args.max_hops,
                  "queries": result["queries"], "gates": result["gate_arcs"], "modules": ret.tree.num_modules,
                  "gate_stats": {k: v for k, v in ret.gate_stats.items() if k != "settings"},
                  "summary_stats": {k: v for k, v in ret.summary_stats.items() if k != "settings"},
                  "index_seconds": round(index_s, 1), **means_and_ci(result)}
    variants = {args.verifier if args.verifier == "none" else "LLM-verified": result}
    if args.verifier == "llm":  # the unverified gates over the same module texts, for comparison
        unverified = GateBuilder(None, replace(ret.gate_settings, verifier="none", max_calls=None)).build(
            ret.tree, ret.module_texts, ret.module_emb)
        res_u = gate_effectiveness(ret.expansion_graph(unverified.pairs), seeds, targets, max_hops=args.max_hops)
        variants["unverified"] = res_u
        line["unverified_same_texts"] = {"gates": res_u["gate_arcs"], **means_and_ci(res_u)}
    title = "HugRAG gates on vs off, MuSiQue dev" + ("" if len(variants) > 1 else f" ({args.verifier})")
    line["plot"] = str(plot_gate_effectiveness(variants if len(variants) > 1 else result, args.plot, title=title))
    if args.hierarchy_plot:
        line["hierarchy_plot"] = str(plot_hierarchy(
            ret.tree, args.hierarchy_plot, gates=ret.gate_pairs, labels=ret.module_texts,
            title=f"HugRAG hierarchy, MuSiQue dev ({'LLM-verified' if args.verifier == 'llm' else 'unverified'} gates)"))
    print(json.dumps(line))


def means_and_ci(result: dict) -> dict:
    summary = {m: {k: round(result[k][m]["mean"], 4) for k in ("on", "off")} for m in result["on"]}
    ci = {k: {m: [round(result[k][m]["lo"], 4), round(result[k][m]["hi"], 4)] for m in result[k]}
          for k in ("on", "off", "delta")}
    return {"means": summary, "ci95": ci}


if __name__ == "__main__":
    main()
