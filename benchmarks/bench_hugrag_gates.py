"""Gate effectiveness on musique_dev: hop reachability of gold evidence from HugRAG's seeds, gates on vs off.

    python benchmarks/bench_hugrag_gates.py [--verifier none|llm] [--max-hops 4] [--plot reports/hugrag_gates.png]

``--verifier none`` (default, no LLM needed) gates every module pair that survives the embedding prefilter and
Algorithm 2's pruning — an *unverified* upper bound on what LLM-verified gates can add; ``--verifier llm`` uses
the configured LLM (``--llm local``) with ``--max-calls`` verifications. Prints one JSON object last.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
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
    ap.add_argument("--top-m", type=int, default=5)
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--max-hops", type=int, default=4)
    ap.add_argument("--plot", default="reports/hugrag_gates.png")
    args = ap.parse_args()

    import torch

    from hyperrag.data import musique_dataset
    from hyperrag.embedding import TextEncoder
    from hyperrag.eval.gate_effectiveness import gate_effectiveness, plot_gate_effectiveness
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
    gates = {"top_m": args.top_m, "threshold": args.threshold, "verifier": args.verifier,
             "max_calls": args.max_calls if args.verifier == "llm" else None}
    t0 = time.perf_counter()
    ret = HugRAGRetriever(encoder=encoder, llm=llm, device="cpu", hierarchy={"backend": "auto"}, gates=gates,
                          path_selection={"enabled": False})
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
    plot = plot_gate_effectiveness(result, args.plot, title=f"HugRAG gates ({args.verifier}) on vs off, MuSiQue dev")
    summary = {m: {k: round(result[k][m]["mean"], 4) for k in ("on", "off")} for m in result["on"]}
    ci = {k: {m: [round(result[k][m]["lo"], 4), round(result[k][m]["hi"], 4)] for m in result[k]}
          for k in ("on", "off", "delta")}
    print(json.dumps({"bench": "hugrag_gates", "verifier": args.verifier, "max_hops": args.max_hops,
                      "queries": result["queries"], "gates": result["gate_arcs"], "modules": ret.tree.num_modules,
                      "gate_stats": {k: v for k, v in ret.gate_stats.items() if k != "settings"},
                      "index_seconds": round(index_s, 1), "means": summary, "ci95": ci, "plot": str(plot)}))


if __name__ == "__main__":
    main()
