"""How often CDF-RAG's causal graph check fails and its fallback generation fires (§2.4), under both scopes of
S_causal, with Wilson 95% intervals, on musique_dev.

    python benchmarks/bench_cdfrag_fallback.py [--llm oracle|local|none] [--limit N] [--out FILE.json]

One CDF-RAG retriever per ``generation.check_scope`` (``answer``: the pairs the answer cites or states; ``all``:
every retrieved pair, the formula as written), each with fixed ``expand``, no policy and no feedback loop (one
round per question, so the rate is per question): the answer is generated from K, S_causal is computed, and below
τ the fallback fires. An answer about none of a non-empty C_graph's pairs scores S_causal = 0 (it fails). Reported
per scope: questions with causal pairs (|C_graph| > 0: the check runs), failed checks (S_causal < τ), empty scopes
among them, fallbacks fired and rejected, and the rate fallbacks / questions checked with its Wilson interval.
``--llm oracle`` is the gold-informed upper bound (its causal check has no entailment gold, so its verdicts are the
lexical form); ``--llm local`` is SmolLM2-135M (substituted model). The causal graph is built without pair
verification (``causal.verify: false``) in every run, so all runs share one graph: the oracle has no gold for
verification (each call would fail and leave the pair unverified — the same graph) and SmolLM2 verifying every pair
is out of this machine's budget. Last line: one JSON object (also ``--out``).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch
from bench_results import emit  # benchmarks/bench_results.py
from cdfrag_setup import bench_llm, shared_graph_settings  # benchmarks/cdfrag_setup.py


def wilson(k: int, n: int) -> str:
    """``k/n = p% [low, high]``: the Wilson score 95% interval of a 0/1 rate."""
    from hyperrag.eval.intervals import wilson_interval

    if n == 0:
        return "0/0"
    low, high = wilson_interval(k, n)
    return f"{k}/{n} = {100 * k / n:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def main() -> None:
    from hyperrag.data import musique_dataset
    from hyperrag.embedding import TextEncoder
    from hyperrag.llm import llm_label
    from hyperrag.retrievers.cdfrag import CDFRAGRetriever

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(Path(os.environ.get("HYPERRAG_SHARED_DATA", ROOT.parent / "shared" / "data"))
                                          / "musique_dev"))
    ap.add_argument("--llm", default="oracle", help="a config of hydra_configs/llm (oracle, local, ...)")
    ap.add_argument("--limit", type=int, default=None, help="the first N questions")
    ap.add_argument("--classifier", default="auto")
    ap.add_argument("--models-dir", default=os.environ.get("HYPERRAG_MODELS", str(ROOT / "models")))
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    logging.getLogger("lightning").setLevel(logging.ERROR)
    torch.set_num_threads(1)
    ds = musique_dataset(args.data)
    questions = [q.question for q in ds.queries][: args.limit]
    encoder = TextEncoder(show_progress=False)
    llm = bench_llm(args.llm, ds)
    result: dict[str, object] = {"bench": "cdfrag_fallback", "llm": llm_label(llm), "questions": len(questions)}
    try:
        for scope in ("answer", "all"):
            base = shared_graph_settings(args.classifier, args.models_dir)  # one causal graph (see docstring)
            gen = dataclasses.replace(base.generation, check_scope=scope, max_requery=0)
            retriever = CDFRAGRetriever(dataclasses.replace(base, generation=gen), encoder=encoder, llm=llm,
                                        device="cpu")
            retriever.index(ds)
            recs = []
            for start in range(0, len(questions), args.batch):
                out = retriever.retrieve(questions[start : start + args.batch], 10)
                recs += [d.get("generation") or {} for d in out.details]
            checked = [r for r in recs if r.get("s_causal_initial") is not None]
            failed = [r for r in checked if r["s_causal_initial"] < gen.tau]
            empty = [r for r in failed  # the first check's scope held no pair: the answer is about none of them
                     if next(s for s in r["steps"] if s.get("step") == "causal_check")["verdicts"] == []]
            fired = [r for r in checked if r.get("fallback_taken")]
            rejected = [r for r in fired if r.get("fallback_rejected")]
            passed_final = [r for r in checked if r.get("s_causal") is not None and r["s_causal"] >= gen.tau]
            row = {"with_pairs": len(checked), "failed_checks": len(failed), "empty_scope": len(empty),
                   "fallback_fired": len(fired), "fallback_rejected": len(rejected),
                   "fallback_rate": wilson(len(fired), len(checked)),
                   "fallback_rate_over_all_questions": wilson(len(fired), len(recs)),
                   "passes_after": wilson(len(passed_final), len(checked)),
                   "answers": sum(bool((r.get("answer") or "").strip()) for r in recs)}
            result[f"scope_{scope}"] = row
            print(f"check_scope={scope}: " + "  ".join(f"{k} {v}" for k, v in row.items()), flush=True)
    finally:
        llm.stop()
    emit(result, args.out)


if __name__ == "__main__":
    main()
