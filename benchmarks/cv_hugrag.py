"""Cross-validated choice of HugRAG's LLM-free settings on musique_dev: settings are never scored on the questions
they were chosen on.

    python benchmarks/cv_hugrag.py [--folds 5] [--seed 0] [--grid token_budget=256,512,1024 ...]

The questions are split into ``--folds`` folds (seeded shuffle). For every fold, each setting of the grid is scored
(mean of R@5 and FCR@5) on the *other* folds' questions and the best one is applied to the held-out fold; the
held-out rankings of all folds together give the cross-validated R@5 / FCR@5. Dense retrieval (MiniLM) is scored on
the same questions. The setting most often chosen is printed as the recommended default (its in-sample figure is
printed too, labelled as such). Prints one JSON object last.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DEFAULT_GRID = ("token_budget=256,512,1024", "node_tokens=64,256", "entity_specificity=log,none",
                "dense_mix=0,0.3,0.5,0.7")


def parse_grid(specs: list[str]) -> dict[str, list]:
    grid: dict[str, list] = {}
    for spec in specs:
        key, values = spec.split("=", 1)
        grid[key] = [json.loads(v) if v.replace(".", "", 1).isdigit() else v for v in values.split(",")]
        if key == "dense_mix":
            grid[key] = [float(v) for v in grid[key]]
    return grid


def per_query(ranked: list[list[str]], gold: list[list[str]], k: int = 5) -> list[tuple[float, float]]:
    from hyperrag.eval.retrieval import full_chain_at_k, recall_at_k

    return [(recall_at_k(r, g, k), full_chain_at_k(r, g, k)) for r, g in zip(ranked, gold)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.environ.get("HYPERRAG_SHARED_DATA", "../shared/data") + "/musique_dev")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--grid", nargs="*", default=list(DEFAULT_GRID))
    args = ap.parse_args()

    import torch

    from hyperrag.config import method_settings
    from hyperrag.data import musique_dataset
    from hyperrag.embedding import TextEncoder
    from hyperrag.eval.folds import split_folds
    from hyperrag.retrievers.hugrag import HugRAGRetriever

    t0 = time.perf_counter()
    dataset = musique_dataset(dir=args.data, name="musique")
    encoder = TextEncoder()
    questions = [q.question for q in dataset.queries]
    gold = [list(q.gold_ids) for q in dataset.queries]
    ids = dataset.corpus.ids
    grid = parse_grid(args.grid)
    combos = [dict(zip(grid, values)) for values in itertools.product(*grid.values())]
    scores: list[list[tuple[float, float]]] = []
    for combo in combos:
        ret = HugRAGRetriever(method_settings("hugrag", **combo), encoder=encoder, llm=None, device="cpu")
        ret.index(dataset)
        out = ret.retrieve(questions, 5)
        ranked = [[ids[j] for j in row if j >= 0] for row in out.indices.tolist()]
        scores.append(per_query(ranked, gold))
    q = encoder.encode(questions, desc="queries")
    p = encoder.encode([x.content for x in dataset.corpus.passages], desc="passages")
    dense_rank = torch.topk(q @ p.T, 5, dim=1).indices.tolist()
    dense = per_query([[ids[j] for j in row] for row in dense_rank], gold)

    folds = split_folds(range(len(questions)), args.folds, args.seed)  # a seeded shuffle dealt round robin
    held: dict[int, tuple[float, float]] = {}
    chosen = []
    for f, test in enumerate(folds):
        train = [i for g, fold in enumerate(folds) if g != f for i in fold]
        best = max(range(len(combos)), key=lambda c: (sum(scores[c][i][0] + scores[c][i][1] for i in train), -c))
        chosen.append(combos[best])
        for i in test:
            held[i] = scores[best][i]

    def mean(rows: list[tuple[float, float]]) -> dict[str, float]:
        return {"R@5": round(100 * sum(r for r, _ in rows) / len(rows), 1),
                "FCR@5": round(100 * sum(c for _, c in rows) / len(rows), 1)}

    counts: dict[str, int] = {}
    for c in chosen:
        counts[json.dumps(c, sort_keys=True)] = counts.get(json.dumps(c, sort_keys=True), 0) + 1
    recommended = json.loads(max(counts, key=lambda k: (counts[k], k)))
    rec_index = combos.index(recommended)
    result = {
        "folds": args.folds, "seed": args.seed, "queries": len(questions), "grid": grid, "settings_scored": len(combos),
        "cross_validated_hugrag": mean([held[i] for i in range(len(questions))]),
        "dense_same_questions": mean(dense),
        "chosen_per_fold": chosen, "recommended": recommended,
        "recommended_in_sample (tuned on all, optimistic)": mean(scores[rec_index]),
        "per_fold": [{"hugrag": mean([held[i] for i in test]), "dense": mean([dense[i] for i in test])}
                     for test in folds],
        "seconds": round(time.perf_counter() - t0, 1)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
