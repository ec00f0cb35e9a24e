"""Incremental insert into a trained HyperRAG ball vs a full retrain, on MuSiQue.

    python benchmarks/bench_hyperrag_update.py [--holdout 0.05] [--seed 0] [--graph fused]
    python benchmarks/bench_hyperrag_update.py --holdout 0.01 --delete-fraction 0.01   # delete + insert

The passages are split at random (``--seed``): 95 % form the base corpus, whose fused ball is trained from
scratch (the default ``method=hyperrag`` settings, llm=none, query graphs of the query file's questions); the
held-out 5 % are then inserted incrementally (:meth:`HyperRAGRetriever.insert`: new keyword edges, projection,
new + touched nodes trained, the rest frozen). The full retrain trains a fresh ball on the whole corpus. Both are
scored by R@5 / FCR@5 over every question, and over the questions with a gold passage among the inserted ones.
Times: base training, insert, full retrain (each an ``index`` / ``insert`` wall time, fresh models dir and
fresh YAKE cache — a grown corpus is a new keyword-cache key; the sentence-embedding cache is warm, which
favours the full retrain) and the full retrain's training alone (``Trainer.fit``, 40 epochs). Last line: one JSON object.

``--delete-fraction F``: the index-directory path instead. After the base ball is trained, ``F`` of the base
passages (at random) are deleted and the held-out ones appended — the corpus an index has after
``python -m hyperrag.index delete`` and ``insert``. A fresh retriever's ``index`` over that corpus finds the base
ball (``loaded_from: updated``), deletes, inserts, and saves a generation: ``update_s`` is that whole call (load,
embeddings from the warm cache, YAKE of the new passages, delete, insert, save). Queries whose gold passages were
deleted count as misses for both the update and the retrain; ``deleted_gold_queries`` says how many.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import yaml

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hyperrag.data import musique_dataset
from hyperrag.data.types import Corpus
from hyperrag.embedding import TextEncoder
from hyperrag.eval.retrieval import retrieval_metrics
from hyperrag.retrievers.hyperrag import HyperRAGRetriever


def settings(graph: str, seed: int) -> dict:
    cfg = yaml.safe_load((ROOT / "hyperrag" / "conf" / "method" / "hyperrag.yaml").read_text())["retriever"]
    for k in ("_target_", "_partial_", "models_dir", "index_root", "device", "retrain", "update_epochs"):
        cfg.pop(k, None)
    cfg["graph"] = graph
    cfg["train"]["seed"] = seed
    return cfg


def evaluate(r: HyperRAGRetriever, queries, subset: set[str]) -> dict[str, float]:
    out = r.retrieve([q.question for q in queries], 5)
    ranked = [[r.passage_ids[i] for i in row] for row in out.indices.tolist()]
    golds = [list(q.gold_ids) for q in queries]
    every = retrieval_metrics(ranked, golds, ks=(5,))
    sub = retrieval_metrics([x for x, q in zip(ranked, queries) if q.id in subset],
                            [g for g, q in zip(golds, queries) if q.id in subset], ks=(5,))
    return {"recall@5": round(every["recall@5"], 2), "fcr@5": round(every["fcr@5"], 2),
            "inserted_gold_queries": int(sub["queries_with_gold"]),
            "recall@5_inserted_gold": round(sub.get("recall@5", float("nan")), 2),
            "fcr@5_inserted_gold": round(sub.get("fcr@5", float("nan")), 2)}


def delete_and_insert(args, ds, base_ds, inserted, subset, encoder, cfg, rng) -> dict:
    """Base ball → (delete ``--delete-fraction`` of it, append the held-out passages) through ``index`` vs a
    full retrain on that corpus."""
    base = list(base_ds.corpus.passages)
    gone = set(rng.sample(range(len(base)), max(1, round(args.delete_fraction * len(base)))))
    deleted_ids = {base[i].id for i in gone}
    final = dataclasses.replace(ds, corpus=Corpus([p for i, p in enumerate(base) if i not in gone] + inserted))
    queries = final.queries
    lost = {q.id for q in queries if set(q.gold_ids) & deleted_ids}
    with tempfile.TemporaryDirectory() as tmp:
        def make(name: str, **kw) -> HyperRAGRetriever:
            return HyperRAGRetriever(encoder=encoder, models_dir=Path(tmp) / name, index_root=Path(tmp) / "kw",
                                     device="cpu", update_epochs=args.update_epochs, **{**cfg, **kw})

        t0 = time.perf_counter()
        make("incremental").index(base_ds)
        base_s = time.perf_counter() - t0
        upd = make("incremental")
        t0 = time.perf_counter()
        upd.index(final)
        update_s = time.perf_counter() - t0
        assert upd.info["loaded_from"] == "updated", upd.info.get("loaded_from")
        assert upd.passage_ids == final.corpus.ids
        ops = {k: v for op in upd.info["updates"] for k, v in op.items()}
        upd_metrics = evaluate(upd, queries, subset)

        full = make("full")
        t0 = time.perf_counter()
        full.index(final)
        full_s = time.perf_counter() - t0
        assert full.info["loaded_from"] == "trained"
        full_metrics = evaluate(full, queries, subset)
    return {"bench": "hyperrag_update", "mode": "delete+insert", "graph": args.graph, "seed": args.seed,
            "passages": len(ds.corpus), "base_passages": len(base), "deleted": len(gone),
            "inserted": len(inserted), "final_passages": len(final.corpus), "queries": len(queries),
            "deleted_gold_queries": len(lost), "update_epochs": args.update_epochs,
            "base_index_s": round(base_s, 2), "update_s": round(update_s, 2), "full_retrain_s": round(full_s, 2),
            "speedup_vs_retrain": round(full_s / max(update_s, 1e-9), 1),
            "reused_passages": upd.info["reused_passages"], "trained_passages": len(upd.updated_passage_ids),
            "delete": {k: ops["delete"][k] for k in ("deleted", "pruned_queries", "reattached", "trained_nodes",
                                                      "seconds")},
            "insert": {k: ops["insert"][k] for k in ("new_edges", "refreshed_queries", "trained_nodes",
                                                      "seconds", "train_s")},
            "updated": upd_metrics, "full_retrain": full_metrics}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--musique-dir", default=os.environ.get("MUSIQUE_DIR", ROOT.parent / "shared" / "data" / "musique_dev"))
    ap.add_argument("--holdout", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--graph", default="fused")
    ap.add_argument("--update-epochs", type=int, default=10)
    ap.add_argument("--no-refresh", action="store_true", help="leave existing query graphs as built")
    ap.add_argument("--delete-fraction", type=float, default=0.0,
                    help="also delete this share of the base passages; the update goes through index()")
    args = ap.parse_args()

    ds = musique_dataset(args.musique_dir)
    cache = Path(os.environ.get("HYPERRAG_CACHE", Path.home() / ".cache" / "hyperrag"))
    encoder = TextEncoder(cache_dir=cache, show_progress=False)
    passages = list(ds.corpus.passages)
    rng = random.Random(args.seed)
    held = set(rng.sample(range(len(passages)), max(1, round(args.holdout * len(passages)))))
    base_ds = dataclasses.replace(ds, corpus=Corpus([p for i, p in enumerate(passages) if i not in held]))
    inserted = [p for i, p in enumerate(passages) if i in held]
    inserted_ids = {p.id for p in inserted}
    subset = {q.id for q in ds.queries if set(q.gold_ids) & inserted_ids}
    cfg = settings(args.graph, args.seed)
    if args.delete_fraction > 0:
        print(json.dumps(delete_and_insert(args, ds, base_ds, inserted, subset, encoder, cfg, rng)))
        return

    with tempfile.TemporaryDirectory() as tmp:
        def make(name: str) -> HyperRAGRetriever:  # cold YAKE cache: a grown corpus is a new keyword-cache key
            return HyperRAGRetriever(encoder=encoder, models_dir=Path(tmp) / name, index_root=Path(tmp) / "kw",
                                     device="cpu", update_epochs=args.update_epochs, **cfg)

        inc = make("incremental")
        t0 = time.perf_counter()
        inc.index(base_ds)
        base_s = time.perf_counter() - t0
        base_metrics = evaluate(inc, ds.queries, subset)  # the inserted passages are not in the ball yet
        t0 = time.perf_counter()
        ins = inc.insert(inserted, refresh_queries=not args.no_refresh)
        insert_s = time.perf_counter() - t0
        inc_metrics = evaluate(inc, ds.queries, subset)

        full = make("full")
        t0 = time.perf_counter()  # = full.index(ds) (no saved ball), with the training part timed apart
        prep = full.prepare(ds)
        t1 = time.perf_counter()
        full.model, _ = full._load_or_train(prep["path"], prep["relations"], prep["init"])
        full_train_s = time.perf_counter() - t1
        full.info = {"checkpoint": str(prep["path"]), "base_checkpoint": str(prep["path"])}
        full._ready(True, t0)
        full_s = time.perf_counter() - t0
        full_metrics = evaluate(full, ds.queries, subset)

    result = {"bench": "hyperrag_update", "graph": args.graph, "passages": len(passages),
              "inserted": len(inserted), "queries": len(ds.queries), "update_epochs": args.update_epochs,
              "base_index_s": round(base_s, 2), "insert_s": round(insert_s, 2), "full_retrain_s": round(full_s, 2),
              "speedup_vs_retrain": round(full_s / max(insert_s, 1e-9), 1),
              "full_retrain_train_only_s": round(full_train_s, 2),
              "refresh_queries": not args.no_refresh,
              "insert": {k: ins[k] for k in ("new_edges", "refreshed_queries", "refresh_edges", "trained_nodes",
                                             "relations", "embed_keywords_s", "graph_s", "train_s")},
              "base_before_insert": base_metrics, "incremental": inc_metrics, "full_retrain": full_metrics}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
