"""How well CDF-RAG's causal graph check tells a right answer from a wrong one (§2.4): S_causal of the gold answer
vs a corrupted answer, on the questions whose retrieval brings causal pairs, as a paired AUC with its 95 % BCa
interval, and how often the check fires (S_causal < τ) on the gold answer (Wilson 95 %).

    python benchmarks/bench_causal_check_auc.py --data ../shared/data/musique_dev [--kind musique]
    python benchmarks/bench_causal_check_auc.py --data ../shared/data/cosmosqa_dev/cosmosqa.jsonl --kind multiple_choice
                                                [--sample N] [--seed 0] [--out FILE.json]

Retrieval: CDF-RAG as ``method/cdfrag.yaml`` configures it with the fixed action and no LLM (the LLM-free expand
stand-in), dual-path retrieval over the corpus's causal graph (the UniCausal classifier when ``models/causal_pair``
holds one, else the labelled rule priors; pair verification off: ``cdfrag_setup.shared_graph_settings``). Per
question with causal pairs (C_graph non-empty), S_causal is computed as the generator's check computes it
(:func:`~hyperrag.causal.generation.lexical_entailment` verdicts — the oracle has no gold for ``causal_entailment``,
so its check is this form too — over the scope :func:`~hyperrag.causal.generation.answer_scope` gives, or every
pair under ``all``; an empty scope scores 0) for two answers that cite the same passages (the gold passages in K):

* ``musique``: the gold answer as the explanatory oracle writes it ("The answer is X. <resolved hop> <answer>. ...")
  vs the same form of another question (a seeded derangement);
* ``multiple_choice`` (CosmosQA): the correct option's text vs one wrong option's (seeded).

Paired AUC = mean over questions of 1[S_gold > S_corrupt] + ½·1[tie] (the probability that the check ranks the
right answer above its corruption; 0.5 = no discrimination). Last line: one JSON object (also ``--out``).
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch
from bench_results import emit  # benchmarks/bench_results.py
from cdfrag_setup import shared_graph_settings  # benchmarks/cdfrag_setup.py


def s_causal(pairs: list, answer: str, cited: list[str], scope: str, threshold: float) -> float:
    """S_causal of ``answer`` as the generator's check computes it (lexical verdicts; empty scope → 0)."""
    from hyperrag.causal.generation import answer_scope, lexical_entailment

    positions = list(range(len(pairs))) if scope == "all" else answer_scope(pairs, answer, cited, [], threshold)
    verdicts = lexical_entailment([pairs[j] for j in positions], answer, threshold)
    return sum(v == "maintained" for v in verdicts) / len(verdicts) if verdicts else 0.0


def answers(ds, kind: str, ids: list[int], seed: int) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """(gold answer text, corrupted answer text) per question position."""
    rng = random.Random(seed)
    if kind == "multiple_choice":
        out = []
        for i in ids:
            q = ds.queries[i]
            wrong = [o for j, o in enumerate(q.options) if j != q.answer_index]
            out.append((q.options[q.answer_index], rng.choice(wrong)))
        return out
    from hyperrag.llm.oracle.answers import gold_steps
    from hyperrag.llm.oracle.gold import GoldIndex

    gold = GoldIndex(ds)

    def written(i: int) -> str:
        qg = gold.find(ds.queries[i].question)
        steps = gold_steps(qg, None) if qg is not None else []
        return " ".join([f"The answer is {ds.queries[i].answers[0]}.", *steps])

    everyone = list(range(len(ds.queries)))
    out = []
    for i in ids:
        j = rng.choice([x for x in everyone if x != i and ds.queries[x].answers != ds.queries[i].answers])
        out.append((written(i), written(j)))
    return out


def main() -> None:
    from hyperrag.data import multiple_choice_dataset, musique_dataset
    from hyperrag.embedding import TextEncoder
    from hyperrag.eval.intervals import mean_interval, wilson_interval
    from hyperrag.retrievers.cdfrag import CDFRAGRetriever

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="musique_dev directory | a multiple-choice JSONL file")
    ap.add_argument("--kind", choices=("musique", "multiple_choice"), default="musique")
    ap.add_argument("--sample", type=int, default=None, help="a seeded sample of N questions (default: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--classifier", default="auto")
    ap.add_argument("--models-dir", default=os.environ.get("HYPERRAG_MODELS", str(ROOT / "models")))
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    logging.getLogger("lightning").setLevel(logging.ERROR)
    torch.set_num_threads(1)
    ds = (multiple_choice_dataset(args.data, cop_base=0, name="cosmosqa_dev") if args.kind == "multiple_choice"
          else musique_dataset(args.data))
    ids = list(range(len(ds.queries)))
    if args.sample and args.sample < len(ids):
        ids = sorted(random.Random(args.seed).sample(ids, args.sample))
    settings = shared_graph_settings(args.classifier, args.models_dir)
    retriever = CDFRAGRetriever(settings, encoder=TextEncoder(show_progress=False), llm=None, device="cpu")
    retriever.index(ds)
    details = []
    for start in range(0, len(ids), args.batch):
        out = retriever.retrieve([ds.queries[i].question for i in ids[start : start + args.batch]], 10)
        details += out.details
    with_pairs = [(i, d) for i, d in zip(ids, details) if d["causal_pairs"]]
    texts = answers(ds, args.kind, [i for i, _ in with_pairs], args.seed)
    gen = settings.generation
    result: dict[str, object] = {
        "bench": "causal_check_auc", "data": args.data, "kind": args.kind, "questions": len(ids),
        "sample": f"seeded sample of {len(ids)} (seed {args.seed})" if args.sample else "all",
        "with_pairs": len(with_pairs), "classifier": str(retriever.classifier_path) if retriever.classifier_path
        else "rule priors (no UniCausal classifier in models/: labelled fallback)",
        "causal_graph_edges": retriever.causal_graph.stats["edges"], "tau": gen.tau,
        "verdicts": "lexical (the oracle's check form; LLM-free)", "refinement": "fixed expand, LLM-free stand-in"}
    lo, hi = wilson_interval(len(with_pairs), len(ids))
    result["share_with_pairs"] = f"{len(with_pairs)}/{len(ids)} [{100 * lo:.1f}, {100 * hi:.1f}]"
    for scope in ("answer", "all"):
        wins, gold_s, bad_s = [], [], []
        for (i, d), (right, wrong) in zip(with_pairs, texts):
            cited = [p for p in d["knowledge_ids"] if p in set(ds.queries[i].gold_ids)]
            pairs = [tuple(p) for p in d["causal_pairs"]]
            a = s_causal(pairs, right, cited, scope, gen.match_threshold)
            b = s_causal(pairs, wrong, cited, scope, gen.match_threshold)
            gold_s.append(a)
            bad_s.append(b)
            wins.append(1.0 if a > b else 0.5 if a == b else 0.0)
        row: dict[str, object] = {"n": len(wins)}
        if wins:
            row["paired_auc"] = mean_interval(wins, scale=1.0).text(3)
            row["ties"] = sum(w == 0.5 for w in wins)
            row["s_causal_gold"] = mean_interval(gold_s, scale=1.0).text(3)
            row["s_causal_corrupted"] = mean_interval(bad_s, scale=1.0).text(3)
            fired = sum(s < gen.tau for s in gold_s)
            lo, hi = wilson_interval(fired, len(gold_s))
            row["fires_on_gold"] = f"{fired}/{len(gold_s)} = {100 * fired / len(gold_s):.1f}% [{100 * lo:.1f}, " \
                                   f"{100 * hi:.1f}]"
            fired_bad = sum(s < gen.tau for s in bad_s)
            lo, hi = wilson_interval(fired_bad, len(bad_s))
            row["fires_on_corrupted"] = f"{fired_bad}/{len(bad_s)} [{100 * lo:.1f}, {100 * hi:.1f}]"
        result[f"scope_{scope}"] = row
        print(f"check_scope={scope}: " + "  ".join(f"{k} {v}" for k, v in row.items()), flush=True)
    emit(result, args.out)


if __name__ == "__main__":
    main()
