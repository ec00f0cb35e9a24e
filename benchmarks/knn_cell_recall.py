"""How many of each row's true top-k neighbours the IVF cells of ``hyperrag.ops.ann`` can reach, by (list_size,
nprobe): the parameter sweep behind ``graph.knn`` (BENCHMARKS.md, "Synonym kNN at 10^6 (issue 21)").

    python benchmarks/knn_cell_recall.py --entities 1000000 --device cuda   # after bench_knn.py cached the vectors
    python benchmarks/knn_cell_recall.py --vectors random:200000:384

The cell search compares a row exactly with every member of the ``nprobe`` cells nearest to it, so its recall is
read off the cells alone: a true neighbour is found iff its cell is among the row's ``nprobe`` nearest. Per
``list_size`` the cells are trained as the operator trains them (``train_cells``: FAISS spherical k-means, same
seed); the true top-k of ``--sample`` rows (bench_knn's sample rows) are exact. Reported per (list_size, nprobe):
recall@k of the cell search before refinement, the mean candidates a row is compared with, and the dot products per
row (cell assignment + candidates + k-means training spread over the rows) — the cost model of the choice.
``--embed-strings``/``--model``: embed bench_knn's entity strings first (on ``--device``; how the 10^6-string matrix
was made on a GPU, with sentence-transformers' encode as ``TextEncoder`` calls it). Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entities", type=int, default=1_000_000, help="bench_knn's cached entities-N matrix")
    ap.add_argument("--vectors", default=None, help="random:N:D, or a .npy path (instead of --entities)")
    ap.add_argument("--embed-strings", default=None, help="a .json.gz list of strings to embed first (first N)")
    ap.add_argument("--model", default=None, help="sentence-transformers folder for --embed-strings")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--sample", type=int, default=10_000)
    ap.add_argument("--list-sizes", default="256,512,1024,2048")
    ap.add_argument("--nprobes", default="1,2,4,6,8,12,16,24,32,48,64")
    args = ap.parse_args()
    from bench_knn import cache_dir, load_vectors

    from hyperrag.ops.ann import TRAIN_ITERATIONS, TRAIN_ROWS_PER_LIST, nearest_cells, train_cells

    dev = args.device
    embedding: dict = {}
    if args.embed_strings:
        from sentence_transformers import SentenceTransformer

        with gzip.open(args.embed_strings, "rt") as f:
            strings = json.load(f)[:args.entities]
        t0 = time.perf_counter()
        model = SentenceTransformer(args.model, device=dev)
        vec = model.encode(strings, batch_size=1024, convert_to_numpy=True, normalize_embeddings=True)
        vec = vec.astype(np.float32) / np.linalg.norm(vec, axis=1, keepdims=True)
        embedding = {"strings": len(strings), "embed_seconds": round(time.perf_counter() - t0, 1), "device": dev}
        np.save(cache_dir() / f"entities-{len(strings)}.npy", vec)
    spec = args.vectors or str(cache_dir() / f"entities-{args.entities}.npy")
    x = load_vectors(spec)
    n = x.shape[0]
    torch.set_num_threads(os.cpu_count() or 1)
    xg = x.to(dev)
    sample = torch.from_numpy(np.sort(np.random.default_rng(1).choice(n, min(n, args.sample), replace=False))).to(dev)
    truth = []
    for s in range(0, len(sample), 1000):
        rows = sample[s:s + 1000]
        scores = xg[rows] @ xg.T
        scores[torch.arange(len(rows), device=dev), rows] = float("-inf")
        truth.append(torch.topk(scores, args.k, dim=1).indices)
    truth = torch.cat(truth)
    probes_grid = [int(p) for p in args.nprobes.split(",")]
    out = []
    for list_size in (int(v) for v in args.list_sizes.split(",")):
        cells_n = max(1, round(n / list_size))
        t = time.perf_counter()
        centroids = train_cells(x, cells_n).to(dev)
        train_s = time.perf_counter() - t
        cell = nearest_cells(xg, centroids, 1)[:, 0]
        sizes = torch.bincount(cell, minlength=cells_n)
        grid = [p for p in probes_grid if p <= cells_n]
        probes = nearest_cells(xg[sample], centroids, max(grid))
        match = probes.unsqueeze(1) == cell[truth].unsqueeze(2)  # [S, k, P]: true neighbour's cell at probe rank
        reached = torch.where(match.any(2), match.float().argmax(2), torch.full_like(truth, 1 << 30))
        for p in grid:
            candidates = float(sizes[probes[:, :p]].sum(1).float().mean())
            train_dots = cells_n * min(n, cells_n * TRAIN_ROWS_PER_LIST) * TRAIN_ITERATIONS / n
            out.append({"list_size": list_size, "cells": cells_n, "nprobe": p,
                        "recall": round(float((reached < p).float().mean()), 4), "candidates": round(candidates),
                        "dots_per_row": round(cells_n + candidates + train_dots), "train_seconds": round(train_s, 1),
                        "largest_cell": int(sizes.max())})
            print(out[-1], file=sys.stderr, flush=True)
    print(json.dumps({"vectors": spec, "rows": n, "k": args.k, "sample": len(sample), "threads": torch.get_num_threads(),
                      "embedding": embedding, "sweep": out}))


if __name__ == "__main__":
    main()
