"""The CUDA paths side by side with the CPU paths, in one run on a GPU machine (``hardware=gpu`` vs ``hardware=cpu``).

    python benchmarks/bench_gpu.py --prepare .gpu        # on any machine with the embedder: cache the embeddings
    python benchmarks/bench_gpu.py --carried .gpu        # on the GPU machine: every section below

Sections (each ours-on-GPU beside ours-on-CPU, same process or same machine):
- ``methods``: ``retrieve.py method=M data=sample llm=none`` for every method, ``hardware=cpu`` and ``hardware=gpu``
  in fresh caches: wall time, recall@5 and whether the two rankings agree (top-5 lists equal per query).
- ``ppr``: batched personalized PageRank on the MuSiQue graph built from the OpenIE file (entity + passage nodes),
  1,000 reset columns, CPU (all cores) vs CUDA: seconds per query and the max abs difference.
- ``knn``: exact top-10 cosine neighbours of 10^6 × 384 random unit vectors — the whole job on CUDA; on the CPU a
  few blocks timed and the total extrapolated (labelled).
- ``poincare``: Poincaré-ball training (Riemannian Adam) on a tree closure, edge updates per second CPU vs CUDA.

``--prepare`` runs every method once on the CPU with its cache under ``DIR/cache`` and keeps only the embedding
cache (``DIR/embeddings``) plus the embedder's model path: a GPU machine without the model's weights then finds
every text already embedded (the sentence encoder is sentence-transformers' code, not ours; everything after the
embedding runs on the device under test). ``--carried`` also needs ``DIR/musique`` (corpus + OpenIE file) for ppr.
The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))  # the other benchmarks' loaders (bench_ppr, bench_poincare)

DEVICE = "cuda"  # --device cpu: a dry run of every section on a machine without a GPU


def sync() -> None:
    if DEVICE == "cuda":
        torch.cuda.synchronize()


METHODS = ["dense", "bm25", "hipporag2", "catrag", "linearrag", "hugrag", "hyperrag", "cdfrag", "graphrag_local",
           "lightrag", "raptor", "naive"]


def log(msg: str) -> None:
    print(msg, flush=True)


def retrieve(method: str, hardware: str, cache: Path, out: Path, model: str | None) -> dict:
    cmd = [sys.executable, str(REPO / "retrieve.py"), f"method={method}", "data=sample", "llm=none",
           "tracking=none", f"hardware={hardware}", f"out={out}", "resume=false"]
    if model:
        cmd.append(f"embedder.model={model}")
    env = dict(os.environ, HYPERRAG_CACHE=str(cache), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               WANDB_MODE="offline")
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, check=False, cwd=REPO, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        return {"ok": False, "seconds": round(seconds, 2), "error": (proc.stderr or proc.stdout)[-1500:]}
    metrics = json.loads((out / "metrics.json").read_text())
    rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines() if line.strip()]
    ranked = {r["id"]: [str(p) for p in r.get("ranked_ids", [])][:5] for r in rows}
    return {"ok": True, "seconds": round(seconds, 2), "recall@5": metrics.get("metrics", metrics).get("recall@5"), "ranked": ranked}


def methods_section(carried: Path, methods: list[str]) -> dict:
    model = (carried / "embedder_model.txt").read_text().strip() if (carried / "embedder_model.txt").exists() else None
    out: dict = {}
    for m in methods:
        row = {}
        for label, hw in (("cpu", "cpu"), ("gpu", "gpu" if DEVICE == "cuda" else "cpu")):
            with tempfile.TemporaryDirectory() as tmp:
                cache = Path(tmp) / "cache"
                if (carried / "embeddings").exists():
                    shutil.copytree(carried / "embeddings", cache / "embeddings")
                row[label] = retrieve(m, hw, cache, Path(tmp) / "run", model)
        cpu, gpu = row["cpu"], row["gpu"]
        summary = {"cpu_seconds": cpu["seconds"], "gpu_seconds": gpu["seconds"], "cpu_ok": cpu["ok"],
                   "gpu_ok": gpu["ok"]}
        if cpu["ok"] and gpu["ok"]:
            same = sum(cpu["ranked"].get(q) == r for q, r in gpu["ranked"].items())
            summary.update({"recall@5_cpu": cpu["recall@5"], "recall@5_gpu": gpu["recall@5"],
                            "top5_equal": f"{same}/{len(gpu['ranked'])}"})
        else:
            summary["error"] = (gpu.get("error") or cpu.get("error") or "")[-600:]
        log(f"  {m}: {summary}")
        out[m] = summary
    return out


def ppr_section(musique: Path, queries: int) -> dict:
    from bench_ppr import musique_graph

    from hyperrag.ops.ppr import PPRGraph, personalized_pagerank

    n, edges, passages = musique_graph(musique)
    g = torch.Generator().manual_seed(0)
    reset = torch.zeros(queries, n)
    seeds = torch.randint(passages, n, (queries, 4), generator=g)
    reset.scatter_(1, seeds, 1.0)
    reset /= reset.sum(1, keepdim=True)
    graph = PPRGraph.from_edges(torch.as_tensor(edges), n)
    res = {"nodes": n, "edges": int(edges.shape[1]), "queries": queries, "cpu_threads": torch.get_num_threads()}
    personalized_pagerank(graph, reset[:64], damping=0.5)  # warm-up
    t0 = time.perf_counter()
    cpu = personalized_pagerank(graph, reset, damping=0.5)
    res["cpu_ms_per_query"] = round((time.perf_counter() - t0) * 1000 / queries, 4)
    gg, rr = graph.to(DEVICE), reset.to(DEVICE)
    personalized_pagerank(gg, rr[:64], damping=0.5)
    sync()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        out = personalized_pagerank(gg, rr, damping=0.5)
        sync()
        best = min(best, time.perf_counter() - t0)
    res["gpu_ms_per_query"] = round(best * 1000 / queries, 4)
    res["speedup_gpu_vs_cpu"] = round(res["cpu_ms_per_query"] / res["gpu_ms_per_query"], 1)
    res["max_abs_diff"] = float((out.cpu() - cpu).abs().max())
    return res


def knn_section(n: int, dim: int, k: int, cpu_blocks: int) -> dict:
    from hyperrag.ops.knn import topk_cosine_neighbors

    g = torch.Generator().manual_seed(0)
    x = torch.nn.functional.normalize(torch.randn(n, dim, generator=g), dim=1)
    xc = x.to(DEVICE)
    topk_cosine_neighbors(xc[:4096], k=k)  # warm-up
    sync()
    t0 = time.perf_counter()
    src, dst, _ = topk_cosine_neighbors(xc, k=k, max_block_elements=1 << 30)
    sync()
    gpu_s = time.perf_counter() - t0
    rows = max(1, (1 << 27) // n)
    t0 = time.perf_counter()
    _, d_cpu, _ = topk_cosine_neighbors(x, k=k, row_range=(0, cpu_blocks * rows))
    cpu_part = time.perf_counter() - t0
    blocks = -(-n // rows)
    gpu_first = dst[: d_cpu.numel()].cpu()
    return {"entities": n, "dim": dim, "k": k, "gpu_seconds_whole_job": round(gpu_s, 2),
            "cpu_seconds_extrapolated": round(cpu_part * blocks / cpu_blocks, 1), "cpu_timed_blocks": cpu_blocks,
            "cpu_threads": torch.get_num_threads(), "pairs": int(src.numel()),
            "first_rows_same_neighbours": float((gpu_first == d_cpu).float().mean())}


def poincare_section(epochs: int) -> dict:
    """The reconstruction setting of benchmarks/bench_poincare.py (task/poincare_tree.yaml's model and batches)."""
    from bench_poincare import task_defaults

    from hyperrag.hyperbolic import EdgeDataModule, PoincareEmbedding
    from hyperrag.hyperbolic.graphs import tree_closure

    edges = tree_closure(branching=4, depth=6)
    n = int(edges.max()) + 1
    model_kw, data_kw = task_defaults(0)
    res = {"nodes": n, "closure_edges": int(edges.shape[1]), "epochs": epochs, "batch_size": data_kw["batch_size"]}
    for label, device in (("cpu", "cpu"), ("gpu", DEVICE)):
        model = PoincareEmbedding(n, **model_kw).to(device)
        model.fit_fast(EdgeDataModule(edges, n, **data_kw), 2)  # warm-up (CUDA context, kernels)
        model = PoincareEmbedding(n, **model_kw).to(device)
        stats = model.fit_fast(EdgeDataModule(edges, n, **data_kw), epochs)
        sync()
        res[f"{label}_edge_updates_per_s"] = round(edges.shape[1] * epochs / stats["seconds"])
    res["speedup_gpu_vs_cpu"] = round(res["gpu_edge_updates_per_s"] / res["cpu_edge_updates_per_s"], 1)
    return res


def prepare(dest: Path, methods: list[str]) -> None:
    from hyperrag.embedding.encoder import resolve_model_path

    dest.mkdir(parents=True, exist_ok=True)
    model = resolve_model_path("all-MiniLM-L6-v2")
    (dest / "embedder_model.txt").write_text(model + "\n")
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        for m in methods:
            r = retrieve(m, "cpu", cache, Path(tmp) / m, model)
            log(f"  prepared {m}: ok={r['ok']} {r.get('error', '')[-300:]}")
        shutil.rmtree(dest / "embeddings", ignore_errors=True)
        shutil.copytree(cache / "embeddings", dest / "embeddings")
    musique = REPO.parent / "shared" / "data" / "musique_dev"
    (dest / "musique").mkdir(exist_ok=True)
    for name in ("corpus.json", "openie_gpt-3.5-turbo-1106.json"):
        shutil.copy(musique / name, dest / "musique" / name)
    log(f"carried inputs in {dest}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prepare", type=Path, help="write the carried inputs here and stop")
    ap.add_argument("--carried", type=Path, default=REPO / ".gpu")
    ap.add_argument("--methods", nargs="*", default=METHODS)
    ap.add_argument("--sections", nargs="*", default=["methods", "ppr", "knn", "poincare"])
    ap.add_argument("--ppr-queries", type=int, default=1000)
    ap.add_argument("--knn-entities", type=int, default=1_000_000)
    ap.add_argument("--knn-cpu-blocks", type=int, default=2)
    ap.add_argument("--poincare-epochs", type=int, default=50)
    ap.add_argument("--device", default="cuda", help="cpu: a dry run of the code paths (no speed figures)")
    args = ap.parse_args()
    global DEVICE
    DEVICE = args.device
    if args.prepare:
        prepare(args.prepare, args.methods)
        return
    if DEVICE == "cuda" and not torch.cuda.is_available():
        print("bench_gpu: no CUDA device visible", file=sys.stderr)
        sys.exit(2)
    name = torch.cuda.get_device_name(0) if DEVICE == "cuda" else "cpu (dry run)"
    result: dict = {"device": name, "torch": torch.__version__}
    log(f"device: {result['device']}, torch {result['torch']}")
    for section in args.sections:
        t0 = time.perf_counter()
        try:
            if section == "methods":
                result["methods"] = methods_section(args.carried, args.methods)
            elif section == "ppr":
                result["ppr"] = ppr_section(args.carried / "musique", args.ppr_queries)
            elif section == "knn":
                result["knn"] = knn_section(args.knn_entities, 384, 10, args.knn_cpu_blocks)
            elif section == "poincare":
                result["poincare"] = poincare_section(args.poincare_epochs)
        except Exception as exc:  # noqa: BLE001 — one section's failure must not lose the others' figures
            result[section] = {"error": f"{type(exc).__name__}: {exc}"}
        log(f"[{section}] {time.perf_counter() - t0:.1f} s: {json.dumps(result.get(section))[:800]}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
