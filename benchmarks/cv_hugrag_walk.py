"""HugRAG's walk settings by cross-validation, and its causal gates on vs off at the chosen walk.

    python benchmarks/cv_hugrag_walk.py [--data-config musique] [--data DIR] [--llm oracle|none]
        [--gates oracle|config] [--gate-override prefilter=false min_distance=1] [--extractor llm|spacy]
        [--grid max_hops=2,3,null max_rows=60,null] [--folds 5] [--graph default|hipporag] [--out FILE]

The paper preset (``method/hugrag_paper.yaml``: per-level seeds, token overlap, 4,096 / 128 budget — itself chosen by
``cv_hugrag_budget.py``) is indexed once (KG, hierarchy, module texts and gates cached in the index root); then for
every setting of the grid (``max_hops`` = h of Algorithm 1 line 13, ``path_selection.max_rows`` = the table cap) the
whole question set is ranked twice, over the expansion graph with its gates (on) and without them (off; the same
index, gate arcs removed). Per query: R@5, FCR@5, why the walk stopped, nodes the hop limit held back, the gold
passages reached only through a gate (every reached mention of them has a gate on its parent chain), the gold
passages behind only the rows the cap cut.

Each fold's setting is the one with the best mean R@5 + FCR@5 of the gates-on arm on the other folds (ties: the
earlier setting), scored on the held-out fold (``benchmarks/cv_hugrag_budget.fold_choice``); gates on − off is paired
per query at each fold's choice (held out) and at every setting (in-sample, labelled). Appendix E's reachability /
coverage / depth-weighted reachability / minimum hops (``hyperrag.eval.gate_effectiveness``) are computed on the
retrieved subgraphs at the setting most folds chose.

How the figures are obtained: ``--llm oracle`` is an upper bound (the gold-informed backend selects S*);
``--gates oracle`` accepts a gate candidate iff consecutive gold hops of a question lie in its two modules (upper
bound, transductive). The graph is the dataset's OpenIE file (``extraction: none``), or spaCy's LLM-free triples
with ``--extractor spacy`` (2Wiki has no released OpenIE file). ``--graph hipporag`` builds the knowledge graph in
HippoRAG 2's text form (``graph=hipporag``: the index ``method=hipporag2`` builds, loaded instead of encoded again;
HugRAG reads no fact embedding, so only the names' ASCII folding differs from the default graph).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_results import emit
from cv_hugrag_budget import fold_choice, parse_grid

DEFAULT_GRID = ("max_hops=2,3,null", "max_rows=60,null")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-config", default="musique", help="hydra data config (musique, 2wiki, ...)")
    ap.add_argument("--data", default=None, help="data.dir override")
    ap.add_argument("--data-override", nargs="*", default=[], help="further data.* overrides (key=value)")
    ap.add_argument("--extractor", default="llm", choices=["llm", "spacy"],
                    help="spacy: the graph from spaCy's LLM-free triples (extractor=spacy), as retrieve.py builds it")
    ap.add_argument("--llm", default="oracle", choices=["none", "oracle"])
    ap.add_argument("--gates", default="oracle", choices=["config", "oracle"])
    ap.add_argument("--gate-override", nargs="*", default=[],
                    help="gates.* settings, key=json (e.g. prefilter=false min_distance=1: Algorithm 2 literally)")
    ap.add_argument("--override", nargs="*", default=[],
                    help="other retriever settings, key=json (e.g. token_budget=512 node_tokens=128: the LLM-free budget)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--grid", nargs="*", default=list(DEFAULT_GRID))
    ap.add_argument("--limit", type=int, default=None, help="first N questions only")
    ap.add_argument("--graph", default="default", help="graph config (default | hipporag: HippoRAG 2's text form, "
                    "its cached index)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    import torch
    from hydra.utils import instantiate

    from hyperrag.config import method_settings
    from hyperrag.config.compose import compose_config
    from hyperrag.embedding import TextEncoder
    from hyperrag.eval.folds import split_folds
    from hyperrag.eval.gate_effectiveness import gate_effectiveness, gold_entity_nodes
    from hyperrag.eval.intervals import mean_interval, paired_comparison
    from hyperrag.eval.retrieval import full_chain_at_k, recall_at_k
    from hyperrag.llm import build_llm, llm_label
    from hyperrag.retrievers.hugrag import HugRAGRetriever

    t0 = time.perf_counter()
    overrides = [f"data={args.data_config}", *(f"data.{o}" for o in args.data_override)]
    if args.data:
        overrides.append(f"data.dir={args.data}")
    cfg = compose_config("retrieve", [*overrides, f"extractor={args.extractor}", f"graph={args.graph}"])
    dataset = instantiate(cfg.data)
    if args.extractor == "spacy":
        from hyperrag.embedding.encoder import default_cache_dir
        from hyperrag.runners.prepare import resolve_openie

        dataset = resolve_openie(dataset, None, default_cache_dir(), extractor=instantiate(cfg.extractor))
    encoder = TextEncoder()
    llm = build_llm(compose_config("retrieve", ["llm=oracle"]).llm, dataset) if args.llm == "oracle" else None
    queries = dataset.queries[: args.limit] if args.limit else dataset.queries
    questions = [q.question for q in queries]
    q_emb = encoder.encode(questions)
    gold = [list(q.gold_ids) for q in queries]
    ids = dataset.corpus.ids
    grid = parse_grid(args.grid)
    combos = [dict(zip(grid, values)) for values in itertools.product(*grid.values())]
    folds = split_folds(range(len(questions)), args.folds, args.seed)  # a seeded shuffle dealt round robin

    def ci(values: list[float], binary: bool) -> list[float]:
        c = mean_interval(values, binary=binary)
        return [round(c.estimate, 1), round(c.low, 1), round(c.high, 1)]

    def paired(a: list[float], b: list[float]) -> dict:
        cmp = paired_comparison(a, b)
        return {"diff": [round(cmp.difference.estimate, 1), round(cmp.difference.low, 1),
                         round(cmp.difference.high, 1)], "p": round(cmp.p_value, 4),
                "differ": sum(1 for x, y in zip(a, b) if x != y)}

    from omegaconf import OmegaConf

    over: dict = {"extraction": "none", "path_selection": {"answer": False},
                  "graph": OmegaConf.to_container(cfg.graph, resolve=True)}
    if args.gates == "oracle":
        over["gates"] = {"verifier": "oracle"}
    for spec in args.override:
        key, value = spec.split("=", 1)
        over[key] = json.loads(value)
    if args.gate_override:
        over["gates"] = {**over.get("gates", {}), **parse_grid(args.gate_override)}
        over["gates"] = {k: (v[0] if isinstance(v, list) else v) for k, v in over["gates"].items()}
    base = method_settings("hugrag_paper", **over)
    ret = HugRAGRetriever(base, encoder=encoder, llm=llm, device="cpu")
    ti = time.perf_counter()
    ret.index(dataset)
    index_s = time.perf_counter() - ti
    graphs = {"on": ret.typed_graph, "off": ret.expansion_graph(torch.empty(2, 0, dtype=torch.long))}
    label = llm_label(llm) + (" + oracle gates (upper bound, transductive)" if args.gates == "oracle" else "")
    result: dict = {"bench": "cv_hugrag_walk", "dataset": dataset.name, "llm": label, "gates": args.gates,
                    "gate_settings": over.get("gates", {}),
                    "extraction": getattr(dataset, "extraction", None) or {"source": "file"},
                    "gates_found": ret.num_gates, "token_budget": base.token_budget, "node_tokens": base.node_tokens,
                    "folds": args.folds, "seed": args.seed, "queries": len(questions), "grid": grid,
                    "graph": args.graph, "index_seconds": round(index_s, 1),
                    "index": {k: v for k, v in ret.describe().items() if k in (
                        "graph", "hierarchy", "modules", "expansion_edges", "gate_stats", "dedup", "summary_stats",
                        "index_dir", "hierarchy_dir")},
                    "settings": []}
    scores: dict[str, list[list[dict]]] = {"on": [], "off": []}
    walks_by: dict[tuple[int, str], list] = {}
    for c, combo in enumerate(combos):
        row: dict = {**combo}
        for arm in ("on", "off"):
            t1 = time.perf_counter()
            rows_cap = combo.get("max_rows", base.path_selection.max_rows)
            ret.settings = method_settings("hugrag_paper", **{**over, "path_selection": {
                **over["path_selection"], "max_rows": rows_cap}}, max_hops=combo.get("max_hops", base.max_hops))
            ret.typed_graph = graphs[arm]
            out = ret.retrieve(questions, 5)
            ranked = [[ids[j] for j in r if j >= 0] for r in out.indices.tolist()]
            per = []
            for r, g, d in zip(ranked, gold, out.details):
                gs = set(g)
                per.append({"r5": recall_at_k(r, g, 5), "fcr5": full_chain_at_k(r, g, 5), "stop": d["stop"],
                            "hop_blocked": d["hop_blocked"], "gate_crossings": d["gate_crossings"],
                            "gold_reached": len(gs & set(d["reached_passages"])),
                            "gold_gate_only": sorted(gs & set(d["gate_only_passages"])),
                            "cut_rows": d["cut_rows"], "gold_cut": sorted(gs & set(d["cut_passages"]))})
            scores[arm].append(per)
            _, _, _, walks = ret.expand(questions, q_emb, graphs[arm])
            walks_by[(c, arm)] = [dict(zip(w.nodes, w.hop)) for w in walks]
            row[arm] = {"R@5": ci([p["r5"] for p in per], False), "FCR@5": ci([p["fcr5"] for p in per], True),
                        "stop": dict(Counter(p["stop"] for p in per)),
                        "gate_crossings_per_query": round(sum(p["gate_crossings"] for p in per) / len(per), 3),
                        "queries_with_gold_gate_only": sum(1 for p in per if p["gold_gate_only"]),
                        "gold_gate_only": sum(len(p["gold_gate_only"]) for p in per),
                        "queries_with_gold_cut": sum(1 for p in per if p["gold_cut"]),
                        "gold_cut": sum(len(p["gold_cut"]) for p in per),
                        "cut_rows_per_query": round(sum(p["cut_rows"] for p in per) / len(per), 1),
                        "seconds": round(time.perf_counter() - t1, 1)}
        on, off = scores["on"][-1], scores["off"][-1]
        row["on_minus_off (in-sample)"] = {"R@5": paired([p["r5"] for p in on], [p["r5"] for p in off]),
                                           "FCR@5": paired([p["fcr5"] for p in on], [p["fcr5"] for p in off])}
        result["settings"].append(row)
        print(json.dumps(row), flush=True)

    held_on, chosen = fold_choice(scores["on"], folds)
    held_off: list[dict] = [{} for _ in questions]
    for f, test in enumerate(folds):
        for i in test:
            held_off[i] = scores["off"][chosen[f]][i]
    result["chosen_per_fold"] = [combos[c] for c in chosen]
    result["cross_validated"] = {
        "on": {"R@5": ci([h["r5"] for h in held_on], False), "FCR@5": ci([h["fcr5"] for h in held_on], True),
               "stop": dict(Counter(h["stop"] for h in held_on)),
               "queries_with_gold_gate_only": sum(1 for h in held_on if h["gold_gate_only"]),
               "gold_gate_only": sum(len(h["gold_gate_only"]) for h in held_on)},
        "off": {"R@5": ci([h["r5"] for h in held_off], False), "FCR@5": ci([h["fcr5"] for h in held_off], True)},
        "on_minus_off": {"R@5": paired([h["r5"] for h in held_on], [h["r5"] for h in held_off]),
                         "FCR@5": paired([h["fcr5"] for h in held_on], [h["fcr5"] for h in held_off])}}
    # Appendix E at the setting most folds chose: gold nodes = the entities the gold passages mention
    top = Counter(chosen).most_common(1)[0][0]
    gold_nodes = gold_entity_nodes(ret.graph, gold)
    eff = gate_effectiveness(walks_by[(top, "on")], walks_by[(top, "off")], gold_nodes, gate_arcs=ret.num_gates)
    result["appendix_e"] = {"setting": combos[top], "queries": eff["queries"], "both_reachable": eff["both_reachable"],
                            **{arm: {m: [round(v["mean"], 3), round(v["lo"], 3), round(v["hi"], 3)]
                                     for m, v in eff[arm].items()} for arm in ("on", "off", "delta")}}
    result["per_query_held_out"] = [{"id": q.id, "type": getattr(q, "type", None), "setting": combos[chosen[f]],
                                     "on": held_on[i], "off": held_off[i]}
                                    for f, test in enumerate(folds) for i, q in ((i, queries[i]) for i in test)]
    types = sorted({str(getattr(q, "type", None)) for q in queries})
    if len(types) > 1:  # per question type (2Wiki): held-out on − off and the gold reached only through a gate
        by_type = {}
        for t in types:
            rows = [r for r in result["per_query_held_out"] if str(r["type"]) == t]
            on_t, off_t = [r["on"] for r in rows], [r["off"] for r in rows]
            by_type[t] = {"queries": len(rows), "on R@5": ci([h["r5"] for h in on_t], False),
                          "off R@5": ci([h["r5"] for h in off_t], False),
                          "on_minus_off": {"R@5": paired([h["r5"] for h in on_t], [h["r5"] for h in off_t]),
                                           "FCR@5": paired([h["fcr5"] for h in on_t], [h["fcr5"] for h in off_t])},
                          "queries_with_gold_gate_only": sum(1 for h in on_t if h["gold_gate_only"]),
                          "gold_gate_only": sum(len(h["gold_gate_only"]) for h in on_t)}
        result["cross_validated"]["by_type"] = by_type
    result["seconds"] = round(time.perf_counter() - t0, 1)
    emit(result, args.out)


if __name__ == "__main__":
    main()
