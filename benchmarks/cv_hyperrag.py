"""Cross-validated choice of HyperRAG's ball settings on musique_dev, LLM-free and with the oracle's query graphs
together: settings are never scored on the questions they were chosen on.

    python benchmarks/cv_hyperrag.py [--folds 5] [--seeds 0 1] [--llm none oracle] [--cross-fit]
    python benchmarks/cv_hyperrag.py --block "negative_gradients=false key_entity=true query_closure_depth=2 \
        anchor_weight=0.1 lr=0.02 max_epochs=20"                 # one setting (a quick check)

The graph of every question (query graphs of the query file's questions, text only) is built once per LLM
(``none``: the counted stand-in; ``oracle``: the gold-informed backend, an **upper bound**). Every setting of the
grid (``--block``: a product of values per key; the default blocks are the 75 settings the defaults were chosen
from) trains a fresh ball per seed on that graph (``fit_fast``, which equals the Lightning fit step for step:
``tests/hyperbolic/test_poincare_model.py``) and ranks every question by the paper's rule (projected question)
and by the trained-node rule (transductive). ``key_entity=false`` drops the key-entity links of the built graph.

The questions are split into ``--folds`` folds (seeded shuffle, dealt round robin). For each fold and each rule,
the setting with the best mean R@5 + FCR@5 on the *other* folds (mean over the seeds and over the LLMs) is scored
on the held-out fold; the held-out figures of all folds together are the cross-validated R@5 / FCR@5. The setting
chosen most often is the recommended default. Every ball here holds the query graphs of the questions it ranks:
the figures are **transductive** (the paper's query-centric setting). ``--cross-fit`` adds the non-transductive
check: for each fold, ``HyperRAGRetriever.index`` on the other folds' questions only (the default settings of
``hydra_configs/method/hyperrag.yaml``, single step), the held-out questions ranked by the paper's rule.
Prints one JSON object last.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: the 75 settings of the issue-17 selection: fixed negatives over a product, and three with moving negatives
DEFAULT_BLOCKS = (
    ("negative_gradients=false key_entity=true,false query_closure_depth=1,2 anchor_weight=0.1,0.3,1.0 "
     "lr=0.005,0.01,0.02 max_epochs=20,40"),
    "negative_gradients=true key_entity=true query_closure_depth=2 anchor_weight=0.3,1.0,3.0 lr=0.01 max_epochs=40",
)
#: where each grid key lives in HyperRAGSettings (key_entity is applied to the built graph instead)
PLACES = {"negative_gradients": "model", "anchor_weight": "model", "lr": "model", "max_epochs": "train",
          "query_closure_depth": None}


def parse_block(block: str) -> list[dict[str, Any]]:
    """``key=v1,v2 key2=...`` → every combination as a dict (values parsed as JSON: numbers, true/false)."""
    keys, values = [], []
    for item in block.split():
        key, vals = item.split("=", 1)
        if key not in PLACES and key != "key_entity":
            raise SystemExit(f"--block: unknown key {key!r} (known: key_entity, {', '.join(PLACES)})")
        keys.append(key)
        values.append([json.loads(v) for v in vals.split(",")])
    return [dict(zip(keys, combo)) for combo in itertools.product(*values)]


def with_setting(base: Any, setting: dict[str, Any], seed: int) -> Any:
    """``base`` (HyperRAGSettings) with the grid setting and the training seed applied."""
    model = {k: v for k, v in setting.items() if PLACES.get(k) == "model"}
    train = {k: v for k, v in setting.items() if PLACES.get(k) == "train"} | {"seed": seed}
    top = {k: v for k, v in setting.items() if k in PLACES and PLACES[k] is None}
    return dataclasses.replace(base, model=dataclasses.replace(base.model, **model),
                               train=dataclasses.replace(base.train, **train), **top)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.environ.get("HYPERRAG_SHARED_DATA", "../shared/data") + "/musique_dev")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--fold-seed", type=int, default=0)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--llm", nargs="+", default=["none", "oracle"], choices=["none", "oracle"])
    ap.add_argument("--block", action="append", help="a product of settings (default: the 75 of issue 17)")
    ap.add_argument("--cross-fit", action="store_true")
    args = ap.parse_args()

    import numpy as np
    import torch

    from hyperrag.config import method_settings
    from hyperrag.data import musique_dataset
    from hyperrag.embedding import TextEncoder
    from hyperrag.eval.folds import split_folds
    from hyperrag.eval.retrieval import full_chain_at_k, recall_at_k
    from hyperrag.hyperbolic import EdgeBatches
    from hyperrag.passage_graph import EdgeSet
    from hyperrag.retrievers.hyperrag import HyperRAGRetriever

    torch.set_num_threads(1)
    ds = musique_dataset(args.data)
    cache = Path(os.environ.get("HYPERRAG_CACHE", Path.home() / ".cache" / "hyperrag"))
    enc = TextEncoder(cache_dir=cache, show_progress=False)
    ids, golds = ds.corpus.ids, [q.gold_ids for q in ds.queries]
    questions = [q.question for q in ds.queries]
    qemb = enc.encode(questions)
    settings = [s for block in (args.block or DEFAULT_BLOCKS) for s in parse_block(block)]
    n = len(questions)

    def per_query(indices: torch.Tensor, rows: list[int] | None = None) -> np.ndarray:
        """[2, n] per-query R@5 and FCR@5 of rankings [n, k] (passage positions)."""
        ranked = [[ids[j] for j in row] for row in indices.tolist()]
        gold = golds if rows is None else [golds[i] for i in rows]
        return np.array([[recall_at_k(r, g, 5) for r, g in zip(ranked, gold)],
                         [full_chain_at_k(r, g, 5) for r, g in zip(ranked, gold)]])

    def make_llm(kind: str) -> Any:
        if kind == "none":
            return None
        from hyperrag.llm import build_llm

        llm = build_llm({"_target_": "hyperrag.llm.oracle.OracleLLM", "refinement": "gold_answers", "cache_path": None, "show_usage": False}, ds)
        llm.__enter__()
        return llm

    with tempfile.TemporaryDirectory() as models:
        base = method_settings("hyperrag", models_dir=models, index_root=str(cache / "index"))
        # scores[llm][rule]: [settings, seeds, 2, n]
        scores: dict[str, dict[str, np.ndarray]] = {}
        t0 = time.perf_counter()
        for kind in args.llm:
            ball = HyperRAGRetriever(base, encoder=enc, llm=make_llm(kind), device="cpu").build(ds)
            entity = ball.graph.entity
            out = {rule: np.zeros((len(settings), len(args.seeds), 2, n)) for rule in ("projected", "trained")}
            for i, setting in enumerate(settings):
                ball.graph.entity = entity if setting.get("key_entity", True) else EdgeSet.empty()
                for j, seed in enumerate(args.seeds):
                    ball.settings = s = with_setting(base, setting, seed)
                    ts = s.train
                    model = ball.new_model()
                    data = EdgeBatches(ball.relations(), ball.graph.num_nodes, batch_size=ts.batch_size,
                                       num_negatives=ts.num_negatives, negative_group_size=ts.negative_group_size,
                                       exclude="both", seed=seed)
                    model.fit_fast(data, ts.max_epochs)
                    ball.model = model.eval()
                    for rule, table in out.items():
                        table[i, j] = per_query(ball.topk(ball.points(qemb, questions, rule), 10)[0])
                paper = 100 * out["projected"][i].mean((0, 2))
                print(f"{kind} {i + 1}/{len(settings)} {setting}: paper rule R@5/FCR@5 {paper[0]:.1f}/{paper[1]:.1f}"
                      f" ({time.perf_counter() - t0:.0f} s)", flush=True)
            ball.graph.entity = entity
            scores[kind] = out

    folds = split_folds(range(n), args.folds, args.fold_seed)  # a seeded shuffle dealt round robin
    result: dict[str, Any] = {"settings": len(settings), "seeds": args.seeds, "llm": args.llm, "folds": args.folds,
                              "transductive": True}
    for rule in ("projected", "trained"):
        per = {kind: scores[kind][rule].mean(1) for kind in args.llm}  # [settings, 2, n], mean over seeds
        objective = sum(per[kind].sum(1) for kind in args.llm)  # [settings, n]: R@5 + FCR@5 over the LLMs
        held = {kind: np.zeros((2, n)) for kind in args.llm}
        picks = []
        for fold in folds:
            train = [q for q in range(n) if q not in fold]
            best = int(np.argmax(objective[:, train].mean(1)))
            picks.append(best)
            for kind in args.llm:
                held[kind][:, fold] = per[kind][best][:, fold]
        chosen = Counter(picks).most_common(1)[0][0]
        result[rule] = {
            "cross_validated": {kind: [round(100 * float(v), 1) for v in held[kind].mean(1)] for kind in args.llm},
            "picks": [settings[p] for p in picks], "default": settings[chosen],
            "default_in_sample": {kind: [round(100 * float(v), 1) for v in per[kind][chosen].mean(1)]
                                  for kind in args.llm}}
    if args.cross_fit:
        result["cross_fitted"] = {"protocol": "held-out graphs"}  # the scored fold's graphs are not in the ball
        for kind in args.llm:
            rows: dict[int, np.ndarray] = {}
            for fold in folds:
                sub = dataclasses.replace(ds, queries=[q for i, q in enumerate(ds.queries) if i not in fold])
                with tempfile.TemporaryDirectory() as models:
                    s = method_settings("hyperrag", models_dir=models, index_root=str(cache / "index"),
                                        multi_step=False)
                    r = HyperRAGRetriever(s, encoder=enc, llm=make_llm(kind), device="cpu")
                    r.index(sub)
                    got = per_query(r.retrieve([questions[i] for i in fold], 10).indices, fold)
                rows.update({i: got[:, c] for c, i in enumerate(fold)})
            cf = np.stack([rows[i] for i in range(n)], 1).mean(1)
            result["cross_fitted"][kind] = [round(100 * float(v), 1) for v in cf]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
