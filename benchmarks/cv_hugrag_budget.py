"""HugRAG's paper form with its own budget: ``token_budget`` / ``node_tokens`` chosen by cross-validation on
musique_dev for the paper form (per-level seeds, token overlap, 1,024-token window, h = 2) and for the earlier tuned
form (pooled seeds, BM25 on names, 512-token window, no hop limit), both the same way, out of sample.

    python benchmarks/cv_hugrag_budget.py [--llm none|oracle] [--gates config|oracle|off] [--dense-mix 0]
        [--grid token_budget=512,1024,2048,4096 node_tokens=64,128] [--forms paper,tuned] [--out FILE]

For each form and each setting of the grid the retriever ranks every question once (in process; indexes cached);
per query: R@5, FCR@5, why the walk stopped (``stop``), the nodes the budget skipped (``skipped_budget``) and the
gate crossings. The questions are split into ``--folds`` folds (seeded shuffle); each fold's setting is the one
with the best mean R@5 + FCR@5 on the other folds, scored on the held-out fold; both forms get the same folds, grid
and ``dense_mix``, so their held-out per-query figures pair. Prints (and writes to ``--out``) one JSON object: the
budget curve (every setting's in-sample mean with its 95 % interval — labelled in-sample), stop reasons per setting,
each form's cross-validated R@5 / FCR@5 with intervals, the settings chosen per fold, and the paired difference
paper − tuned.

How the figures are obtained: ``--llm none`` is LLM-free (no summaries: stand-in module texts; no path filter);
``--llm oracle`` is an upper bound (the gold-informed backend selects S*); ``--gates oracle`` accepts a gate
candidate iff consecutive gold hops of a question lie in its modules (upper bound, transductive); ``config`` keeps
``verifier: llm`` (no LLM / the oracle has no gold for gates: no gate). The graph is the dataset's OpenIE file in
both forms (``extraction: none``; the oracle has no gold for GraphRAG extraction either).
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

from bench_results import emit

DEFAULT_GRID = ("token_budget=512,1024,2048,4096", "node_tokens=64,128")
FORMS = {
    # the paper preset's retrieval settings (hydra_configs/method/hugrag_paper.yaml)
    "paper": ("hugrag_paper", {}),
    # the earlier tuned form (BENCHMARKS "HugRAG as its paper defines it (issue 22)")
    "tuned": ("hugrag", {"seeding": "pooled", "lexical": "bm25", "lexical_text": "title",
                         "hierarchy": {"context_window": 512}, "max_hops": None}),
    # the tuned form's query-time settings on the paper form's hierarchy (1,024-token window): the same graph and
    # modules as "paper", so the two differ only in seeding, Lex and the hop limit
    "tuned_window1024": ("hugrag", {"seeding": "pooled", "lexical": "bm25", "lexical_text": "title",
                                    "max_hops": None}),
}


def parse_grid(specs: list[str]) -> dict[str, list]:
    grid: dict[str, list] = {}
    for spec in specs:
        key, values = spec.split("=", 1)
        grid[key] = [json.loads(v) for v in values.split(",")]
    return grid


def fold_choice(scores: list[list[dict]], folds: list[list[int]]) -> tuple[list[dict], list[int]]:
    """Per query its held-out record, and per fold the index of the setting chosen on the other folds (best mean
    R@5 + FCR@5; ties: the earlier setting)."""
    n = len(scores[0])
    held: list[dict] = [{} for _ in range(n)]
    chosen = []
    for f, test in enumerate(folds):
        train = [i for g, fold in enumerate(folds) if g != f for i in fold]
        best = max(range(len(scores)), key=lambda c: (sum(scores[c][i]["r5"] + scores[c][i]["fcr5"] for i in train),
                                                       -c))
        chosen.append(best)
        for i in test:
            held[i] = scores[best][i]
    return held, chosen


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.environ.get("HYPERRAG_SHARED_DATA", "../shared/data") + "/musique_dev")
    ap.add_argument("--llm", default="none", choices=["none", "oracle"])
    ap.add_argument("--gates", default="config", choices=["config", "oracle", "off"])
    ap.add_argument("--dense-mix", type=float, default=0.0)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--forms", default="paper,tuned")
    ap.add_argument("--grid", nargs="*", default=list(DEFAULT_GRID))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    from hyperrag.config import method_settings
    from hyperrag.config.compose import compose_config
    from hyperrag.data import musique_dataset
    from hyperrag.embedding import TextEncoder
    from hyperrag.eval.folds import split_folds
    from hyperrag.eval.intervals import mean_interval, paired_comparison
    from hyperrag.eval.retrieval import full_chain_at_k, recall_at_k
    from hyperrag.llm import build_llm, llm_label
    from hyperrag.retrievers.hugrag import HugRAGRetriever

    t0 = time.perf_counter()
    dataset = musique_dataset(dir=args.data, name="musique")
    encoder = TextEncoder()
    llm = build_llm(compose_config("retrieve", ["llm=oracle"]).llm, dataset) if args.llm == "oracle" else None
    questions = [q.question for q in dataset.queries]
    gold = [list(q.gold_ids) for q in dataset.queries]
    ids = dataset.corpus.ids
    grid = parse_grid(args.grid)
    combos = [dict(zip(grid, values)) for values in itertools.product(*grid.values())]
    combos.sort(key=lambda c: json.dumps({k: v for k, v in c.items() if k != "token_budget"}, sort_keys=True))
    folds = split_folds(range(len(questions)), args.folds, args.seed)  # a seeded shuffle dealt round robin

    def ci(values: list[float], binary: bool) -> list[float]:
        c = mean_interval(values, binary=binary)
        return [round(c.estimate, 1), round(c.low, 1), round(c.high, 1)]

    label = llm_label(llm) + (" + oracle gates (upper bound, transductive)" if args.gates == "oracle" else "")
    result: dict = {"llm": label, "gates": args.gates, "dense_mix": args.dense_mix, "folds": args.folds,
                    "seed": args.seed, "queries": len(questions), "grid": grid, "forms": {}}
    held_by_form: dict[str, list[dict]] = {}
    for form in args.forms.split(","):
        name, base = FORMS[form]
        scores: list[list[dict]] = []
        curve = []
        built: dict[str, HugRAGRetriever] = {}
        for combo in combos:
            # token_budget is read at query time: one index per setting of the other keys
            index_key = json.dumps({k: v for k, v in combo.items() if k != "token_budget"}, sort_keys=True)
            over = {**base, **combo, "dense_mix": args.dense_mix, "extraction": "none",
                    "path_selection": {"answer": False}}
            if args.gates == "oracle":
                over["gates"] = {"verifier": "oracle"}
            elif args.gates == "off":
                over["gates"] = {"enabled": False}
            t1 = time.perf_counter()
            settings = method_settings(name, **over)
            ret = built.get(index_key)
            if ret is None:
                built.clear()
                ret = built[index_key] = HugRAGRetriever(settings, encoder=encoder, llm=llm, device="cpu")
                ret.index(dataset)
            ret.settings = settings
            out = ret.retrieve(questions, 5)
            ranked = [[ids[j] for j in row if j >= 0] for row in out.indices.tolist()]
            rows = [{"r5": recall_at_k(r, g, 5), "fcr5": full_chain_at_k(r, g, 5), "stop": d.get("stop"),
                     "skipped_budget": d.get("skipped_budget", 0), "gate_crossings": d.get("gate_crossings", 0),
                     "tokens": d.get("tokens", 0)}
                    for r, g, d in zip(ranked, gold, out.details)]
            scores.append(rows)
            curve.append({**combo, "R@5 (in-sample)": ci([r["r5"] for r in rows], False),
                          "FCR@5 (in-sample)": ci([r["fcr5"] for r in rows], True),
                          "stop": dict(Counter(str(r["stop"]) for r in rows)),
                          "skipped_budget_per_query": round(sum(r["skipped_budget"] for r in rows) / len(rows), 2),
                          "tokens_per_query": round(sum(r["tokens"] for r in rows) / len(rows), 1),
                          "gate_crossings_per_query": round(sum(r["gate_crossings"] for r in rows) / len(rows), 3),
                          "gates_found": ret.num_gates, "seconds": round(time.perf_counter() - t1, 1)})
            print(form, curve[-1], flush=True)
        held, chosen = fold_choice(scores, folds)
        held_by_form[form] = held
        result["forms"][form] = {
            "method": name, "overrides": base, "budget_curve": curve,
            "chosen_per_fold": [combos[c] for c in chosen],
            "cross_validated": {"R@5": ci([h["r5"] for h in held], False), "FCR@5": ci([h["fcr5"] for h in held], True)},
            "held_out_stop": dict(Counter(str(h["stop"]) for h in held))}
    for other in ("tuned", "tuned_window1024"):
        if "paper" not in held_by_form or other not in held_by_form:
            continue
        p, t = held_by_form["paper"], held_by_form[other]
        result[f"paired_paper_minus_{other}"] = {}
        for key, metric in (("r5", "R@5"), ("fcr5", "FCR@5")):
            cmp = paired_comparison([x[key] for x in p], [x[key] for x in t])
            result[f"paired_paper_minus_{other}"][metric] = {
                "diff": [round(cmp.difference.estimate, 1), round(cmp.difference.low, 1),
                         round(cmp.difference.high, 1)], "p": round(cmp.p_value, 4)}
    result["seconds"] = round(time.perf_counter() - t0, 1)
    emit(result, args.out)


if __name__ == "__main__":
    main()
