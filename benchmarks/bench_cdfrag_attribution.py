"""Where CDF-RAG's retrieval gain comes from: the query refinement (fixed expand vs none) and the causal path
(C_graph's passages in K = T_sem ∪ C_graph, on vs off), each crossed, at @5 and @10, with 95% intervals and paired
differences, on musique_dev.

    python benchmarks/bench_cdfrag_attribution.py [--llm none|oracle] [--classifier auto|none|PATH] [--out FILE.json]

One CDF-RAG retriever per causal setting (``method/cdfrag.yaml``; no policy, no generation): the questions are
refined by one ``expand`` (the LLM-free stand-in, or the oracle's bridge entities — an upper bound) or not at all,
then retrieved by the dual-path search. ``none`` + causal off is dense MiniLM retrieval of the question. With
``semantic_k`` = 5 and ``union_order: semantic_first`` the top 5 is T_sem whether the causal path is on or off, so
the causal path can move @10 only; the table says which difference belongs to which part. Also per arm: |K|,
C_graph's share of K (passages added beyond T_sem / |K|), C_graph passages that are gold, and how many gold passages
C_graph adds at ranks 6–10. The causal graph is built without pair verification (``causal.verify: false``: the
oracle has no gold for it, so it would leave every pair unverified — the same graph), one graph for both runs.
Last line: one JSON object (also written to ``--out``).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import statistics
import sys
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch
from bench_results import emit  # benchmarks/bench_results.py
from cdfrag_setup import bench_llm, shared_graph_settings  # benchmarks/cdfrag_setup.py

from hyperrag.data import musique_dataset
from hyperrag.embedding import TextEncoder
from hyperrag.eval.intervals import mean_interval, paired_comparison
from hyperrag.eval.per_query import is_binary_metric
from hyperrag.eval.retrieval import full_chain_at_k, recall_at_k
from hyperrag.refinement.actions import Refinement
from hyperrag.retrievers.cdfrag import CDFRAGRetriever

METRICS = {"R@5": (recall_at_k, 5), "R@10": (recall_at_k, 10), "FCR@5": (full_chain_at_k, 5),
           "FCR@10": (full_chain_at_k, 10)}
PAIRS = [("expand+causal", "none+causal", "expand (causal on)"), ("expand", "none", "expand (causal off)"),
         ("expand+causal", "expand", "causal path (with expand)"), ("none+causal", "none", "causal path (no refinement)"),
         ("expand+causal", "none", "the whole (expand + causal) vs dense")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(Path(os.environ.get("HYPERRAG_SHARED_DATA", ROOT.parent / "shared" / "data"))
                                          / "musique_dev"))
    ap.add_argument("--llm", choices=("none", "oracle"), default="none")
    ap.add_argument("--classifier", default="auto")
    ap.add_argument("--models-dir", default=os.environ.get("HYPERRAG_MODELS", str(ROOT / "models")))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    logging.getLogger("lightning").setLevel(logging.ERROR)
    torch.set_num_threads(1)
    ds = musique_dataset(args.data)
    encoder = TextEncoder(show_progress=False)
    llm = bench_llm(args.llm, ds)
    queries = [q for q in ds.queries if q.gold_ids]
    per: dict[str, dict[str, list[float]]] = {}
    info: dict[str, dict[str, float]] = {}
    for causal in (False, True):
        base = shared_graph_settings(args.classifier, args.models_dir, causal_retrieval=causal)
        settings = dataclasses.replace(base, generation=dataclasses.replace(base.generation, enabled=False))
        retriever = CDFRAGRetriever(settings, encoder=encoder, llm=llm, device="cpu")
        retriever.index(ds)
        for action in ("none", "expand"):
            starts = [Refinement.start(q.question) for q in queries]
            refs = starts if action == "none" else retriever.refiner.step(starts, [action] * len(starts))
            idx, _, _, details = retriever.search(refs, 10)
            arm = action + ("+causal" if causal else "")
            rows = per.setdefault(arm, {m: [] for m in METRICS})
            k_size, share, c_gold, c_top5, gold_added = [], [], [], [], []
            for q, ranked, d in zip(queries, idx.tolist(), details):
                ids = [retriever.passage_ids[j] for j in ranked]
                for m, (fn, k) in METRICS.items():
                    rows[m].append(fn(ids, q.gold_ids, k))
                sem, cg = d["knowledge"]["semantic"], d["knowledge"]["causal"]
                k_size.append(len(sem) + len(cg))
                share.append(len(cg) / max(1, len(sem) + len(cg)))
                gold = set(q.gold_ids)
                c_gold.append(sum(p in gold for p in d["causal_passage_ids"]))
                c_top5.append(sum(p in set(sem) for p in d["causal_passage_ids"]))
                gold_added.append(sum(p in gold for p in cg))
            info[arm] = {"K_size": statistics.fmean(k_size), "c_graph_share_of_K": statistics.fmean(share),
                         "c_graph_passages_gold": sum(c_gold), "c_graph_passages_in_top5": sum(c_top5),
                         "gold_added_beyond_T_sem": sum(gold_added),
                         "refinement_source": dict(Counter(r.source for r in refs)),
                         "unchanged": sum(r.queries == [r.question] for r in refs)}
    summary: dict[str, dict[str, str]] = {}
    for arm, rows in per.items():
        summary[arm] = {m: mean_interval(v, binary=is_binary_metric(m)).text(1) for m, v in rows.items()}
        print(f"{arm:>14}: " + "  ".join(f"{m} {t}" for m, t in summary[arm].items())
              + f"  |K| {info[arm]['K_size']:.2f}  C_graph share of K {100 * info[arm]['c_graph_share_of_K']:.1f}%"
              + f"  gold added beyond T_sem {info[arm]['gold_added_beyond_T_sem']}")
    diffs: dict[str, dict[str, str]] = {}
    for a, b, label in PAIRS:
        diffs[label] = {}
        for m in METRICS:
            cmp = paired_comparison(per[a][m], per[b][m])
            diffs[label][m] = f"{cmp.difference.text(1)} p={cmp.p_value:.3f}"
        print(f"{label:>38}: " + "  ".join(f"{m} {t}" for m, t in diffs[label].items()))
    result = {"bench": "cdfrag_attribution", "llm": args.llm, "questions": len(queries), "arms": summary,
              "info": info, "paired": diffs, "semantic_k": base.semantic_k, "causal_k": base.causal_k,
              "union_order": base.union_order}
    emit(result, args.out)


if __name__ == "__main__":
    main()
