"""How well CDF-RAG's causal graph check tells a right answer from a wrong one (§2.4): S_causal of the gold answer
vs a corrupted answer, on the questions whose retrieval brings causal pairs, as a paired AUC with its 95 % BCa
interval, and how often the check fires (S_causal < τ) on the gold answer (Wilson 95 %).

    python benchmarks/bench_causal_check_auc.py --data ../shared/data/musique_dev [--kind musique]
    python benchmarks/bench_causal_check_auc.py --data ../shared/data/cosmosqa_dev/cosmosqa.jsonl --kind multiple_choice
                                                [--sample N] [--seed 0] [--out FILE.json]
                                                [--classifier auto|none|PATH] [--models-dir DIR]
                                                [--llm none|local|...] [--scopes answer,all] [--max-checked N]
                                                [--details FILE.jsonl]

Retrieval: CDF-RAG as ``method/cdfrag.yaml`` configures it with the fixed action and no LLM (the LLM-free expand
stand-in), dual-path retrieval over the corpus's causal graph — built with the UniCausal pair classifier
``--classifier`` names (``auto``, the default: the newest one under ``--models-dir``/``causal_pair`` trained on
UniCausal, if any; a ``model.ckpt`` path; ``none``) or, without one, with the labelled rule priors; pair
verification off (``cdfrag_setup.shared_graph_settings``). The LLM never enters retrieval or the graph. Per
question with causal pairs (C_graph non-empty), S_causal is computed as the generator's check computes it, over the
scope :func:`~hyperrag.causal.generation.answer_scope` gives (``answer``), or every pair (``all``); an empty scope
scores 0 — with the verdicts of

* ``--llm none`` (default): :func:`~hyperrag.causal.generation.lexical_entailment` (LLM-free; the oracle has no gold
  for ``causal_entailment``, so its check is this form too);
* ``--llm local`` (or any ``hydra_configs/llm/<name>.yaml``): the LLM's ``causal_entailment``, one call per answer and
  scope, as :meth:`~hyperrag.causal.generation.CausalGenerator._judge` asks it (pair statements, the question, the
  answer); a failed call falls back to the lexical verdicts and is counted (``llm_failed``),

for two answers that cite the same passages (the gold passages in K):

* ``musique``: the gold answer as the explanatory oracle writes it ("The answer is X. <resolved hop> <answer>. ...")
  vs the same form of another question (a seeded derangement);
* ``multiple_choice`` (CosmosQA): the correct option's text vs one wrong option's (seeded).

Paired AUC = mean over questions of 1[S_gold > S_corrupt] + ½·1[tie] (the probability that the check ranks the
right answer above its corruption; 0.5 = no discrimination). ``why_zero`` per scope counts, over the gold and the
corrupted answers, which condition gives S_causal = 0: an empty scope (no pair comes from a cited passage and the
answer states none), or a non-empty scope with no pair ``maintained`` — and, for the lexical verdicts, how many of
the scope's pairs reach the coverage threshold on the cause, on the effect, on both. Last line: one JSON object
(also ``--out``); ``--details`` writes one line per question (pairs, scopes, verdicts, scores).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
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


def s_causal(pairs: list, answer: str, cited: list[str], scope: str, threshold: float) -> float:
    """S_causal of ``answer`` as the generator's check computes it (lexical verdicts; empty scope → 0)."""
    positions = check_scope(pairs, answer, cited, scope, threshold)
    return score(lexical_verdicts(pairs, positions, answer, threshold))


def check_scope(pairs: list, answer: str, cited: list[str], scope: str, threshold: float) -> list[int]:
    """Positions of the checked pairs: every pair (``all``) or the answer's scope (``answer``)."""
    from hyperrag.causal.generation import answer_scope

    return list(range(len(pairs))) if scope == "all" else answer_scope(pairs, answer, cited, [], threshold)


def lexical_verdicts(pairs: list, positions: list[int], answer: str, threshold: float) -> list[str]:
    from hyperrag.causal.generation import lexical_entailment

    return lexical_entailment([pairs[j] for j in positions], answer, threshold)


def score(verdicts: list[str]) -> float:
    """S_causal from the scope's verdicts (an empty scope → 0, as the generator scores it)."""
    return sum(v == "maintained" for v in verdicts) / len(verdicts) if verdicts else 0.0


def llm_verdicts(llm, jobs: list[tuple[str, str, list]]) -> list[tuple[list[str] | None, str]]:  # type: ignore[no-untyped-def]
    """``causal_entailment`` verdicts per (question, answer, scoped pairs) job, as the generator asks (pair
    statements); (None, "empty") for an empty scope (no call), (None, "failed: …") for a failed call."""
    from hyperrag.causal.generation import pair_statement

    todo = [k for k, (_, answer, pairs) in enumerate(jobs) if pairs and answer.strip()]
    inputs = [{"question": jobs[k][0], "answer": jobs[k][1], "pairs": [pair_statement(p) for p in jobs[k][2]]}
              for k in todo]
    out: list[tuple[list[str] | None, str]] = [(None, "empty")] * len(jobs)
    results = llm.complete_structured_batch("causal_entailment", inputs, progress="causal_entailment") if todo else []
    for k, res in zip(todo, results):
        out[k] = (list(res.value), "llm") if res.ok else (None, f"failed: {res.error_kind}")
    return out


def zero_reasons(rows: list[dict], threshold: float) -> dict[str, object]:
    """Why S_causal is 0, over answers (``rows``: pairs, positions, verdicts, score, answer)."""
    from hyperrag.causal.generation import coverage
    from hyperrag.eval.text import content_tokens

    zero = [r for r in rows if r["score"] == 0.0]
    empty = sum(not r["positions"] for r in zero)
    out: dict[str, object] = {"answers": len(rows), "zero": len(zero), "empty_scope": empty,
                              "scope_none_maintained": len(zero) - empty}
    scoped = [(r, j) for r in rows for j in r["positions"]]
    cause = effect = both = 0
    for r, j in scoped:
        tokens = set(content_tokens(r["answer"]))
        c = coverage(r["pairs"][j][0], tokens) >= threshold
        e = coverage(r["pairs"][j][1], tokens) >= threshold
        cause, effect, both = cause + c, effect + e, both + (c and e)
    out["scoped_pairs"] = len(scoped)
    out["scoped_pairs_cause_covered"] = cause
    out["scoped_pairs_effect_covered"] = effect
    out["scoped_pairs_both_covered"] = both
    verdicts = Counter(v for r in rows for v in r["verdicts"])
    out["verdicts"] = dict(sorted(verdicts.items()))
    return out


def first_checked(with_pairs: list, max_checked: int | None) -> list:
    """The questions checked: the first ``max_checked`` with causal pairs, in sample order (all when None), so a
    short run's questions and corrupted answers are the first ones of the full run's (the seeded choice of a wrong
    option runs in the same order)."""
    if max_checked is not None and max_checked < 1:
        raise ValueError("--max-checked takes a positive count")
    return list(with_pairs) if max_checked is None else list(with_pairs)[:max_checked]


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
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="musique_dev directory | a multiple-choice JSONL file")
    ap.add_argument("--kind", choices=("musique", "multiple_choice"), default="musique")
    ap.add_argument("--sample", type=int, default=None, help="a seeded sample of N questions (default: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--classifier", default="auto",
                    help="the UniCausal pair classifier the causal graph is built with: auto (the newest under "
                         "--models-dir, if any) | none (rule priors) | a model.ckpt path")
    ap.add_argument("--models-dir", default=os.environ.get("HYPERRAG_MODELS", str(ROOT / "models")))
    ap.add_argument("--llm", default="none",
                    help="whose causal_entailment verdicts: none (lexical, LLM-free) | an llm config (local: SmolLM2)")
    ap.add_argument("--scopes", default="answer,all", help="comma-separated check scopes: answer, all")
    ap.add_argument("--max-checked", type=int, default=None,
                    help="check only the first N questions with causal pairs (in sample order; a slow LLM)")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--details", default=None, help="a JSONL file: one line per question with causal pairs")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    scopes = [x.strip() for x in args.scopes.split(",") if x.strip()]
    if not scopes or set(scopes) - {"answer", "all"}:
        ap.error(f"--scopes takes answer and/or all, not {args.scopes!r}")
    from hyperrag.data import multiple_choice_dataset, musique_dataset
    from hyperrag.embedding import TextEncoder
    from hyperrag.eval.intervals import mean_interval, wilson_interval
    from hyperrag.retrievers.cdfrag import CDFRAGRetriever
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
    all_with_pairs = len(with_pairs)
    with_pairs = first_checked(with_pairs, args.max_checked)
    texts = answers(ds, args.kind, [i for i, _ in with_pairs], args.seed)
    gen = settings.generation
    thr = gen.match_threshold
    result: dict[str, object] = {
        "bench": "causal_check_auc", "data": args.data, "kind": args.kind, "questions": len(ids),
        "sample": f"seeded sample of {len(ids)} (seed {args.seed})" if args.sample else "all",
        "with_pairs": all_with_pairs, "classifier": str(retriever.classifier_path) if retriever.classifier_path
        else "rule priors (no UniCausal classifier: labelled fallback)",
        "causal_graph_edges": retriever.causal_graph.stats["edges"], "tau": gen.tau, "match_threshold": thr,
        "verdicts": "lexical (the oracle's check form; LLM-free)" if args.llm == "none"
        else f"llm={args.llm} causal_entailment (failed calls: lexical, counted)",
        "refinement": "fixed expand, LLM-free stand-in"}
    lo, hi = wilson_interval(all_with_pairs, len(ids))
    result["share_with_pairs"] = f"{all_with_pairs}/{len(ids)} [{100 * lo:.1f}, {100 * hi:.1f}]"
    if len(with_pairs) < all_with_pairs:
        result["checked"] = f"the first {len(with_pairs)} of the {all_with_pairs} questions with causal pairs"
    pair_counts = [len(d["causal_pairs"]) for _, d in with_pairs]
    if pair_counts:
        result["pairs_per_question"] = mean_interval(pair_counts, scale=1.0).text(2)
    # per question: its pairs, the cited passages, and per (scope, gold|corrupted) the checked positions
    records = []
    for (i, d), (right, wrong) in zip(with_pairs, texts):
        gold_ids = set(ds.queries[i].gold_ids)
        cited = [p for p in d["knowledge_ids"] if p in gold_ids]
        pairs = [tuple(p) for p in d["causal_pairs"]]
        rec: dict[str, object] = {"qid": ds.queries[i].id, "question": ds.queries[i].question, "pairs": pairs,
                                  "cited": cited, "pairs_from_cited": sum(p[2] in set(cited) for p in pairs)}
        for scope in scopes:
            for side, text in (("gold", right), ("corrupted", wrong)):
                rec[f"{scope}/{side}"] = {"answer": text, "pairs": pairs,
                                          "positions": check_scope(pairs, text, cited, scope, thr)}
        records.append(rec)
    cells = [(rec, f"{scope}/{side}") for rec in records for scope in scopes for side in ("gold", "corrupted")]
    llm_calls = llm_failed = 0
    if args.llm == "none":
        for rec, key in cells:
            row = rec[key]
            row["verdicts"] = lexical_verdicts(row["pairs"], row["positions"], row["answer"], thr)
            row["source"] = "lexical" if row["positions"] else "empty"
    else:
        llm = bench_llm(args.llm, ds)
        try:
            jobs = [(rec["question"], rec[key]["answer"], [rec[key]["pairs"][j] for j in rec[key]["positions"]])
                    for rec, key in cells]
            judged = llm_verdicts(llm, jobs)
        finally:
            llm.stop()
        for (rec, key), (verdicts, source) in zip(cells, judged):
            row = rec[key]
            if verdicts is None:
                verdicts = lexical_verdicts(row["pairs"], row["positions"], row["answer"], thr)
            llm_calls += source != "empty"
            llm_failed += source.startswith("failed")
            row["verdicts"], row["source"] = verdicts, source
        result["llm_calls"] = llm_calls
        result["llm_failed"] = llm_failed
    for rec, key in cells:
        rec[key]["score"] = score(rec[key]["verdicts"])
    if records:
        pf = sum(r["pairs_from_cited"] > 0 for r in records)
        lo, hi = wilson_interval(pf, len(records))
        result["questions_with_a_pair_from_a_cited_passage"] = f"{pf}/{len(records)} [{100 * lo:.1f}, {100 * hi:.1f}]"
    for scope in scopes:
        wins = []
        gold_s = [rec[f"{scope}/gold"]["score"] for rec in records]
        bad_s = [rec[f"{scope}/corrupted"]["score"] for rec in records]
        for a, b in zip(gold_s, bad_s):
            wins.append(1.0 if a > b else 0.5 if a == b else 0.0)
        row: dict[str, object] = {"n": len(wins)}
        if wins:
            row["paired_auc"] = mean_interval(wins, scale=1.0).text(3)
            row["ties"] = sum(w == 0.5 for w in wins)
            row["gold_higher"] = sum(w == 1.0 for w in wins)
            row["corrupted_higher"] = sum(w == 0.0 for w in wins)
            row["s_causal_gold"] = mean_interval(gold_s, scale=1.0).text(3)
            row["s_causal_corrupted"] = mean_interval(bad_s, scale=1.0).text(3)
            fired = sum(s < gen.tau for s in gold_s)
            lo, hi = wilson_interval(fired, len(gold_s))
            row["fires_on_gold"] = f"{fired}/{len(gold_s)} = {100 * fired / len(gold_s):.1f}% [{100 * lo:.1f}, " \
                                   f"{100 * hi:.1f}]"
            fired_bad = sum(s < gen.tau for s in bad_s)
            lo, hi = wilson_interval(fired_bad, len(bad_s))
            row["fires_on_corrupted"] = f"{fired_bad}/{len(bad_s)} = {100 * fired_bad / len(bad_s):.1f}% " \
                                        f"[{100 * lo:.1f}, {100 * hi:.1f}]"
            row["why_zero_gold"] = zero_reasons([rec[f"{scope}/gold"] for rec in records], thr)
            row["why_zero_corrupted"] = zero_reasons([rec[f"{scope}/corrupted"] for rec in records], thr)
        result[f"scope_{scope}"] = row
        print(f"check_scope={scope}: " + "  ".join(f"{k} {v}" for k, v in row.items()), flush=True)
    if args.details:
        Path(args.details).parent.mkdir(parents=True, exist_ok=True)
        with open(args.details, "w") as fh:
            for rec in records:
                fh.write(json.dumps({k: ({kk: vv for kk, vv in v.items() if kk != "pairs"} if isinstance(v, dict)
                                         else v) for k, v in rec.items()}) + "\n")
    emit(result, args.out)


if __name__ == "__main__":
    main()
