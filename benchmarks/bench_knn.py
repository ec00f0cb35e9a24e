"""Synonym-edge kNN at 10^6 entities: peak memory of the blockwise top-k cosine operator, and its speed.

    python benchmarks/bench_knn.py                          # 1,000,000 × 384 embeddings, 8 blocks timed
    python benchmarks/bench_knn.py --entities 200000 --blocks 0   # 0: every block (the whole job)

Workload: N random unit vectors of MiniLM's width (384), the k = 10 nearest neighbours of every row above a
cosine threshold — what graph building does for synonym edges (``hyperrag.ops.knn.topk_cosine_neighbors``).
The full N × 384 matrix is held and every block scores its rows against all N rows, so the peak memory
measured over the timed blocks is the peak of the whole job (later blocks are the same size). On a CPU the
all-pairs work (N² × 384 multiply-adds) takes hours at N = 10^6, so by default only ``--blocks`` blocks
(through the operator's ``row_range``, the same path a sharded run takes) are timed and the total is
extrapolated — reported as such. The peer: the same scores as one dense N × N matrix, whose size is computed,
not allocated. Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import resource
import time

import torch

from hyperrag.ops.knn import topk_cosine_neighbors


def peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # Linux: KiB


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entities", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--threshold", type=float, default=0.8)
    ap.add_argument("--block-elements", type=int, default=1 << 27, help="scores per block (rows × N)")
    ap.add_argument("--blocks", type=int, default=8, help="blocks to time; 0 = all")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    n = args.entities
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, args.dim, generator=g)
    x = torch.nn.functional.normalize(x, dim=1, out=x)
    rows = max(1, min(n, args.block_elements // n))
    n_blocks = -(-n // rows)
    timed_blocks = n_blocks if args.blocks <= 0 else min(args.blocks, n_blocks)
    stop = min(n, timed_blocks * rows)
    t0 = time.perf_counter()
    src, _, _ = topk_cosine_neighbors(x, k=args.k, threshold=args.threshold, max_block_elements=args.block_elements,
                                      row_range=(0, stop))
    seconds = time.perf_counter() - t0
    total = seconds * n_blocks / timed_blocks
    result = {
        "entities": n, "dim": args.dim, "k": args.k, "block_rows": rows, "blocks": n_blocks,
        "timed_blocks": timed_blocks, "timed_seconds": round(seconds, 2),
        "total_seconds": round(total, 1), "total_is_extrapolated": timed_blocks < n_blocks,
        "pairs_found_in_timed_rows": int(src.numel()),
        "peak_rss_gib": round(peak_rss_gib(), 2), "embeddings_gib": round(x.numel() * 4 / 2**30, 2),
        "dense_all_pairs_gib": round(n * n * 4 / 2**30, 1), "fits_24_gib": peak_rss_gib() < 24,
        "threads": args.threads,
    }
    print(f"{n:,} × {args.dim}: {timed_blocks}/{n_blocks} blocks of {rows} rows in {seconds:.1f} s; "
          f"peak RSS {result['peak_rss_gib']} GiB (a dense N×N score matrix: {result['dense_all_pairs_gib']} GiB)")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
