"""How many of a real model's "yes" gates a perfect verifier (the gold-hop oracle) accepts, on a slice.

    python benchmarks/bench_hugrag_gate_judges.py [--llm local] [--positives 30] [--negatives 60]
        [--prompts paper,paper_json,extended] [--llm-override max_invalid_retries=0] [--out FILE]

The candidates are the paper preset's (``method/hugrag_paper.yaml``: each module's ``top_m`` most similar distant
candidates per stage) on musique_dev's LLM-free hierarchy (the dataset's OpenIE graph, stand-in module texts: the
texts the gates are judged on, cut to ``gates.text_words``), listed by :meth:`GateBuilder.count` with every verdict
"no" (all the candidates Algorithm 2 can ask). The oracle accepts a candidate iff consecutive gold hops of some
question lie in its two modules (``gates.verifier: oracle``: upper bound, transductive). The slice is stratified,
seed 0: ``--positives`` candidates the oracle accepts and ``--negatives`` it refuses, each drawn uniformly; the
model (``--llm``, each ``--prompts`` form of ``causal_gate``) judges every one. Reported with Wilson 95% intervals:
the model's "yes" rate among oracle-accepted and among oracle-refused candidates, and in the slice how many of its
"yes" the oracle accepts; the precision over the whole candidate list (the two strata reweighted by their sizes);
the parse rate (replies the form's reader could read: Fig 9 as printed takes a bare yes / no, ``paper_json`` the
JSON object; ``--llm-override max_invalid_retries=0`` makes it the first reply's).
Prints one JSON object last (also written to ``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_results import emit


def wilson(k: int, n: int) -> list[float]:
    """``[rate, low, high]`` in percent: the Wilson score 95% interval of ``k`` successes in ``n``."""
    from hyperrag.eval.intervals import wilson_interval

    if n == 0:
        return [float("nan")] * 3
    low, high = wilson_interval(k, n)
    return [round(100 * k / n, 1), round(100 * low, 1), round(100 * high, 1)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.environ.get("HYPERRAG_SHARED_DATA", "../shared/data") + "/musique_dev")
    ap.add_argument("--llm", default="local", help="hydra llm config of the model judged")
    ap.add_argument("--positives", type=int, default=30)
    ap.add_argument("--negatives", type=int, default=60)
    ap.add_argument("--prompts", default="paper,extended")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--llm-override", nargs="*", default=[],
                    help="further llm.* overrides, e.g. max_invalid_retries=0 (the first reply's parse rate)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    from hyperrag.config import method_settings
    from hyperrag.config.compose import compose_config
    from hyperrag.data import musique_dataset
    from hyperrag.embedding import TextEncoder
    from hyperrag.eval.gate_recall import normalise
    from hyperrag.hierarchy.gates import GateBuilder, _cut
    from hyperrag.hierarchy.store import entity_graph
    from hyperrag.llm import build_llm, llm_label
    from hyperrag.llm.tasks.causal_gate import CausalGate
    from hyperrag.retrievers.hugrag import HugRAGRetriever

    t0 = time.perf_counter()
    dataset = musique_dataset(dir=args.data, name="musique")
    settings = method_settings("hugrag_paper", extraction="none", path_selection={"enabled": False},
                               gates={"enabled": False})
    ret = HugRAGRetriever(settings, encoder=TextEncoder(), llm=None, device="cpu")
    ret.index(dataset)
    edges = entity_graph(ret.graph, settings.hierarchy.edge_types)[0]
    gates = settings.gates
    from dataclasses import replace

    asked = GateBuilder(None, replace(gates, enabled=True, verifier="none", max_calls=None), None,
                        progress=False).count(ret.tree, ret.module_texts, ret.module_emb, edges, verdict=False)["asked"]
    accepted = ret.oracle_gate_pairs(ret.graph, edges, dataset)
    cands = [(a, b, kind, normalise(a, b, kind) in accepted) for a, b, kind in asked]
    pos = [c for c in cands if c[3]]
    neg = [c for c in cands if not c[3]]
    rng = random.Random(args.seed)
    slice_ = rng.sample(pos, min(args.positives, len(pos))) + rng.sample(neg, min(args.negatives, len(neg)))
    inputs = [{"a_text": _cut(ret.module_texts[a], gates.text_words), "b_text": _cut(ret.module_texts[b], gates.text_words)}
              for a, b, _, _ in slice_]
    index_s = time.perf_counter() - t0
    llm = build_llm(compose_config("retrieve", [f"llm={args.llm}", *(f"llm.{o}" for o in args.llm_override)]).llm,
                    dataset)
    out: dict = {"bench": "hugrag_gate_judges", "llm": llm_label(llm), "data": dataset.name,
                 "candidates": len(cands), "oracle_accepted": len(pos), "oracle_refused": len(neg),
                 "slice": {"positives": sum(c[3] for c in slice_), "negatives": sum(not c[3] for c in slice_),
                           "seed": args.seed},
                 "module_texts": ret.describe()["module_texts"], "index_seconds": round(index_s, 1), "forms": {}}
    with llm:
        for form in args.prompts.split(","):
            t1 = time.perf_counter()
            results = llm.complete_structured_batch(CausalGate(form), inputs, progress=f"gates ({form})")  # type: ignore[arg-type]
            ok = [r.ok for r in results]
            yes = [bool(r.ok and r.value["gate"]) for r in results]
            tp = sum(y and c[3] for y, c in zip(yes, slice_))
            fp = sum(y and not c[3] for y, c in zip(yes, slice_))
            n_pos = sum(o and c[3] for o, c in zip(ok, slice_))
            n_neg = sum(o and not c[3] for o, c in zip(ok, slice_))
            tpr, fpr = tp / max(n_pos, 1), fp / max(n_neg, 1)
            # over the whole candidate list: expected yes among accepted / refused candidates
            exp_tp, exp_fp = tpr * len(pos), fpr * len(neg)
            out["forms"][form] = {
                "calls": len(results), "failed": len(results) - sum(ok), "yes": tp + fp,
                # the replies the form's reader could read (Fig 9 as printed: a bare yes / no; paper_json: JSON)
                "parse_rate": wilson(sum(ok), len(results)),
                "repaired": sum(bool(r.ok and r.repaired) for r in results),
                "raw_examples": [(r.raw or "")[:80] for r in results[:6]],
                "yes_rate_slice": wilson(tp + fp, n_pos + n_neg),
                "yes_rate_among_oracle_accepted": wilson(tp, n_pos),
                "yes_rate_among_oracle_refused": wilson(fp, n_neg),
                "oracle_accepts_of_its_yes_slice": [tp, tp + fp, *wilson(tp, tp + fp)[1:]],
                "precision_over_all_candidates_est": round(100 * exp_tp / max(exp_tp + exp_fp, 1e-9), 2),
                "expected_gates_over_all_candidates": round(exp_tp + exp_fp),
                "seconds": round(time.perf_counter() - t1, 1),
                "errors": sorted({str(r.error_kind) for r in results if not r.ok})}
            print(form, json.dumps(out["forms"][form]), flush=True)
    emit(out, args.out)


if __name__ == "__main__":
    main()
