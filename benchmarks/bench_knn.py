"""Synonym-edge kNN at 10^6 entities: exact blockwise vs approximate (FAISS IVF) top-k cosine, side by side.

    python benchmarks/bench_knn.py                                   # both workloads, 1,000,000 × 384, k = 10
    python benchmarks/bench_knn.py --workload entities --entities 200000 --nprobe 16
    python benchmarks/bench_knn.py --workload random --exact-rows 0   # recall and exact time skipped
    python benchmarks/bench_knn.py --workload entities --refine-rounds 2 --reuse-exact  # another setting, same truth

Workloads (N × 384 unit vectors, what graph building feeds ``hyperrag.ops.knn_graph.cosine_knn_graph`` for
synonym edges):

* ``entities`` — the one that models synonym detection: MiniLM embeddings (the project's ``TextEncoder``, the
  ``embedder/minilm.yaml`` model) of N distinct short strings from the shared corpora (2WikiMultiHopQA and
  MuSiQue dev passages and titles): capitalised phrases first, then every distinct word 1-, 2-, 3- and 4-gram
  until there are N. Embedded once (setup, timed and reported, not part of the kNN time) and cached outside the
  repository under ``$HYPERRAG_CACHE/bench_knn`` (default ``~/.cache/hyperrag/bench_knn``).
* ``random`` — iid Gaussian directions: no structure at all, the adversarial case for any cell-based index
  (a row's 10 nearest neighbours are barely closer than the rest, so they sit in cells the query does not probe).

Each side runs in its own subprocess, so its peak RSS (``ru_maxrss``) is its own:

* ``approximate`` — ``approximate_topk_cosine_neighbors`` over all N rows: index training, adding and the search
  of every row (the whole kNN graph), wall-clock; the IVF settings are ``graph.knn`` of
  ``hydra_configs/graph/default.yaml`` unless ``--list-size`` / ``--nprobe`` say otherwise.
* ``exact`` — the exact top-k of ``--exact-rows`` random rows (10,000 by default) against all N rows: the truth the
  approximate graph's recall@k is measured on, and the exact operator's throughput: the exact operator
  (``topk_cosine_neighbors``, the same block matrix products) is timed on ``--exact-blocks`` of its row blocks and
  the full exact run is extrapolated from them — labelled ``exact_seconds_is_extrapolated``; it takes hours on
  two cores at N = 10^6.

Last line: one JSON object (per workload: the two sides, recall@k, the speed-up).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's hyperrag, not an installed one
DATA = REPO.parent / "shared" / "data"
CORPORA = ("2wikimultihopqa_corpus/corpus.json", "musique_dev/corpus.json")
POOL = 1_000_000  # distinct strings drawn from the corpora (shuffled; the entities workload takes the first N)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")
_CAPITALISED = re.compile(r"[A-Z][\w'\-]*(?:\s+(?:of|the|de|von|and|[A-Z][\w'\-]*))*")


def cache_dir() -> Path:
    root = Path(os.environ.get("HYPERRAG_CACHE", Path.home() / ".cache" / "hyperrag")) / "bench_knn"
    root.mkdir(parents=True, exist_ok=True)
    return root


def peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # Linux: KiB


def entity_like_strings(n: int, data: Path) -> list[str]:
    """Up to ``n`` distinct short strings of the shared corpora: capitalised phrases, then word 1–4-grams."""
    texts = []
    for name in CORPORA:
        texts += [t for p in json.loads((data / name).read_text()) for t in (p["title"], p["text"])]
    seen: dict[str, None] = {}
    for t in texts:
        for m in _CAPITALISED.findall(t):
            seen.setdefault(m.strip(), None)
    for width in (1, 2, 3, 4):
        for t in texts:
            words = _WORD.findall(t)
            for i in range(len(words) - width + 1):
                seen.setdefault(" ".join(words[i:i + width]), None)
                if len(seen) >= n:
                    return list(seen)[:n]
    return list(seen)


def entity_vectors(n: int, data: Path, batch_size: int) -> tuple[Path, dict]:
    """The cached ``entities`` matrix [n, 384] (float32 .npy), embedding it first when absent."""
    path = cache_dir() / f"entities-{n}.npy"
    info_path = path.with_suffix(".json")
    if path.is_file() and info_path.is_file():
        return path, {**json.loads(info_path.read_text()), "embedded_now": False}
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from hyperrag.embedding.encoder import TextEncoder

    # the pool is always the 10^6 strings, shuffled: a smaller N (an embedding budget) is a sample of the same pool
    pool = entity_like_strings(POOL, data)
    np.random.default_rng(0).shuffle(pool)
    if len(pool) < n:
        raise SystemExit(f"error: the corpora hold only {len(pool):,} distinct strings (asked {n:,})")
    strings = pool[:n]
    # its own cache folder: a million benchmark strings stay out of the project's embedding cache
    encoder = TextEncoder("all-MiniLM-L6-v2", device="cpu", batch_size=batch_size,
                          cache_dir=cache_dir() / "encoder", show_progress=False)
    t0 = time.perf_counter()
    chunks, step = [], 25_000
    for start in range(0, n, step):  # chunked: the encoder's sqlite cache makes an interrupted run resume
        chunks.append(encoder.encode(strings[start:start + step], desc="bench strings").numpy())
        print(f"embedded {start + len(chunks[-1]):,}/{n:,} strings in {time.perf_counter() - t0:.0f} s",
              file=sys.stderr, flush=True)
    x = np.concatenate(chunks)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    np.save(path, x.astype(np.float32))
    info = {"strings": n, "embed_seconds": round(time.perf_counter() - t0, 1), "model": encoder.model_name,
            "mean_chars": round(sum(map(len, strings)) / n, 1), "examples": strings[:: max(1, n // 8)][:8],
            "embed_threads": int(__import__("torch").get_num_threads()), "embed_load": os.getloadavg()[0]}
    info_path.write_text(json.dumps(info))
    return path, {**info, "embedded_now": True}


def load_vectors(spec: str):
    """``random:<n>:<dim>`` (seeded iid directions) or the path of a .npy matrix → FloatTensor [N, D]."""
    import torch

    if spec.startswith("random:"):
        _, n, dim = spec.split(":")
        g = torch.Generator().manual_seed(0)
        x = torch.randn(int(n), int(dim), generator=g)
        return torch.nn.functional.normalize(x, dim=1, out=x)
    return torch.from_numpy(np.load(spec))


def side_approximate(args: argparse.Namespace) -> dict:
    import torch

    from hyperrag.ops.ann import approximate_topk_cosine_neighbors

    x = load_vectors(args.vectors)
    rss_inputs = peak_rss_gib()
    t0 = time.perf_counter()
    src, dst, _ = approximate_topk_cosine_neighbors(x, args.k, -1.0, list_size=args.list_size, nprobe=args.nprobe,
                                                    refine_rounds=args.refine_rounds)
    seconds = time.perf_counter() - t0
    sample = np.load(args.sample)
    # neighbours of the sample rows, for recall: src is ascending, so each row's pairs are one slice
    lo = torch.searchsorted(src, torch.from_numpy(sample))
    hi = torch.searchsorted(src, torch.from_numpy(sample), right=True)
    rows = [dst[a:b].tolist() for a, b in zip(lo.tolist(), hi.tolist())]
    Path(args.out).write_text(json.dumps(rows))
    return {"seconds": round(seconds, 1), "pairs": int(src.numel()), "list_size": args.list_size,
            "nprobe": args.nprobe, "refine_rounds": args.refine_rounds, "lists": max(1, round(x.shape[0] / args.list_size)),
            "peak_rss_gib": round(peak_rss_gib(), 2), "rss_after_loading_vectors_gib": round(rss_inputs, 2)}


def side_exact(args: argparse.Namespace) -> dict:
    import torch

    from hyperrag.ops.knn import topk_cosine_neighbors

    x = load_vectors(args.vectors)
    n = x.shape[0]
    rss_inputs = peak_rss_gib()
    block_elements = 1 << 27  # the operator's default block: rows × N scores at once
    rows_per_block = max(1, min(n, block_elements // n))
    blocks = -(-n // rows_per_block)
    timed = min(args.exact_blocks, blocks)
    t0 = time.perf_counter()
    topk_cosine_neighbors(x, args.k, -1.0, max_block_elements=block_elements, row_range=(0, min(n, timed * rows_per_block)))
    block_seconds = time.perf_counter() - t0
    # the truth for recall: the same products for the sampled rows against all N (on --truth-device: a GPU, where
    # there is one, computes it in seconds; the CPU timing above is the exact operator's)
    xt = x.to(args.truth_device)
    sample = torch.from_numpy(np.load(args.sample)).to(args.truth_device)
    truth, truth_sim, t1 = [], [], time.perf_counter()
    for start in range(0, len(sample), rows_per_block):
        rows = sample[start:start + rows_per_block]
        scores = xt[rows] @ xt.T
        scores[torch.arange(len(rows), device=xt.device), rows] = float("-inf")
        top = torch.topk(scores, args.k, dim=1)
        truth += top.indices.tolist()
        truth_sim += top.values.tolist()
    sample_seconds = time.perf_counter() - t1
    Path(args.out).write_text(json.dumps({"ids": truth, "sims": truth_sim}))
    return {"seconds": round(block_seconds * blocks / timed, 1), "seconds_is_extrapolated": timed < blocks,
            "timed_blocks": timed, "blocks": blocks, "rows_per_block": rows_per_block,
            "timed_seconds": round(block_seconds, 1), "sample_rows": len(sample), "truth_device": args.truth_device,
            "sample_seconds": round(sample_seconds, 1), "peak_rss_gib": round(peak_rss_gib(), 2),
            "rss_after_loading_vectors_gib": round(rss_inputs, 2)}


def run_side(side: str, vectors: str, sample: Path, out: Path, args: argparse.Namespace) -> dict:
    cmd = [sys.executable, __file__, "--side", side, "--vectors", vectors, "--sample", str(sample), "--out", str(out),
           "--k", str(args.k), "--list-size", str(args.list_size), "--nprobe", str(args.nprobe),
           "--refine-rounds", str(args.refine_rounds), "--exact-blocks", str(args.exact_blocks),
           "--threads", str(args.threads), "--truth-device", args.truth_device]
    load = os.getloadavg()[0]
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": path}, check=True)
    return {**json.loads(proc.stdout.strip().splitlines()[-1]), "load_1min_at_start": round(load, 2)}


def workload(name: str, args: argparse.Namespace) -> dict:
    n = args.entities
    setup: dict = {}
    if name == "random":
        vectors = f"random:{n}:{args.dim}"
    else:
        path, setup = entity_vectors(n, Path(args.data), args.embed_batch)
        vectors = str(path)
    rng = np.random.default_rng(1)
    sample = cache_dir() / f"sample-{name}-{n}.npy"
    rows = min(n, args.exact_rows)
    np.save(sample, np.sort(rng.choice(n, rows, replace=False)))
    approx_out, exact_out = cache_dir() / f"approx-{name}-{n}.json", cache_dir() / f"exact-{name}-{n}.json"
    exact_record = exact_out.with_suffix(".side.json")
    print(f"[{name}] approximate … (uptime: {os.getloadavg()})", file=sys.stderr, flush=True)
    approx = run_side("approximate", vectors, sample, approx_out, args)
    print(f"[{name}] approximate: {approx}", file=sys.stderr, flush=True)
    result = {"workload": name, "entities": n, "dim": args.dim, "k": args.k, "setup": setup, "approximate": approx}
    if rows and args.reuse_exact and exact_out.is_file() and exact_record.is_file():
        # the same seeded sample and vectors: the saved truth is this run's truth; its timing is an earlier run's
        exact = {**json.loads(exact_record.read_text()), "reused_from_earlier_run": True}
        print(f"[{name}] exact: reused {exact_out}", file=sys.stderr, flush=True)
    elif rows:
        print(f"[{name}] exact … (uptime: {os.getloadavg()})", file=sys.stderr, flush=True)
        exact = run_side("exact", vectors, sample, exact_out, args)
        exact_record.write_text(json.dumps(exact))
        print(f"[{name}] exact: {exact}", file=sys.stderr, flush=True)
    if rows:
        found, truth = json.loads(approx_out.read_text()), json.loads(exact_out.read_text())
        hits = sum(len(set(a) & set(t)) for a, t in zip(found, truth["ids"]))
        # the pairs a synonym edge needs: true neighbours at or above the synonym threshold
        close = [[j for j, v in zip(t, sims) if v >= args.threshold] for t, sims in zip(truth["ids"], truth["sims"])]
        close_hits = sum(len(set(a) & set(c)) for a, c in zip(found, close))
        result.update({"exact": exact, "recall_at_k": round(hits / sum(map(len, truth["ids"])), 4),
                       "recall_rows": rows, "speedup": round(exact["seconds"] / approx["seconds"], 1),
                       "threshold": args.threshold, "true_pairs_above_threshold": sum(map(len, close)),
                       "recall_above_threshold": round(close_hits / max(1, sum(map(len, close))), 4)})
    print(f"[{name}] {json.dumps(result)}", file=sys.stderr, flush=True)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", choices=["entities", "random", "both"], default="both")
    ap.add_argument("--entities", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=384, help="random workload only (MiniLM: 384)")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--list-size", type=int, default=None, help="default: graph.knn.ann_list_size")
    ap.add_argument("--nprobe", type=int, default=None, help="default: graph.knn.ann_nprobe")
    ap.add_argument("--refine-rounds", type=int, default=None, help="default: graph.knn.ann_refine_rounds")
    ap.add_argument("--threshold", type=float, default=0.8, help="recall is also reported for the true pairs at or "
                    "above this cosine (graph.synonym_threshold)")
    ap.add_argument("--truth-device", default="cpu", help="where the exact neighbours of the sample are computed")
    ap.add_argument("--exact-rows", type=int, default=10_000, help="rows whose exact neighbours give recall")
    ap.add_argument("--exact-blocks", type=int, default=8, help="blocks of the exact operator timed")
    ap.add_argument("--reuse-exact", action="store_true", help="take the exact side (truth and timing) from the "
                    "last run on the same workload and size instead of recomputing it (labelled in the output)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--embed-batch", type=int, default=256)
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--side", choices=["approximate", "exact"], help=argparse.SUPPRESS)
    ap.add_argument("--vectors", help=argparse.SUPPRESS)
    ap.add_argument("--sample", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    if args.side:
        print(json.dumps((side_approximate if args.side == "approximate" else side_exact)(args)))
        return
    if args.list_size is None or args.nprobe is None or args.refine_rounds is None:
        from hyperrag.index.kg_index import graph_settings

        knn = graph_settings().knn
        args.list_size = args.list_size or knn.ann_list_size
        args.nprobe = args.nprobe or knn.ann_nprobe
        args.refine_rounds = knn.ann_refine_rounds if args.refine_rounds is None else args.refine_rounds
    names = ["entities", "random"] if args.workload == "both" else [args.workload]
    t0 = time.perf_counter()
    results = {name: workload(name, args) for name in names}
    print(json.dumps({"workloads": results, "threads": args.threads, "seconds": round(time.perf_counter() - t0, 1),
                      "load_1min_at_end": round(os.getloadavg()[0], 2)}))


if __name__ == "__main__":
    main()
