"""Poincaré embeddings of a tree closure: our trainer vs gensim's PoincareModel, in one run.

    python benchmarks/bench_poincare.py          # branching 4, depth 6, 10 dims, 10 negatives, 50 epochs
    python benchmarks/bench_poincare.py --epochs 20 --skip-lightning

Workload (issue 5): the transitive closure of a complete tree with branching 4 and depth 6 — 5,461 nodes,
30,948 (descendant → ancestor) relations — embedded in 10 dimensions with 10 negatives per relation, the
same number of epochs for both. Ours is ``PoincareEmbedding`` (geoopt ManifoldParameter + RiemannianAdam)
with the settings of ``hyperrag/conf/task/poincare_tree.yaml``, timed through ``fit_fast`` (the same model,
loss, optimiser and data stream as ``Trainer.fit``, without the Trainer's hooks; the Lightning loop is timed
too); its runs take seconds, so the median of ``--repeats`` identical seeded runs is reported, while
gensim's single run takes minutes. gensim runs with its defaults (batch 10, lr 0.1, burn-in 10 epochs
at 0.01, regularisation 1.0) apart from dimension, negatives and epochs. Both embeddings are scored by the
same reconstruction metric (:func:`hyperrag.hyperbolic.reconstruction_metrics`: every relation ranked among
the non-relations of its source; MAP over sources). Edge updates per second = relations × epochs / training seconds.
The last printed line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("WANDB_MODE", "offline")

import torch
from omegaconf import OmegaConf

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hyperrag.hyperbolic import EdgeDataModule, PoincareEmbedding, reconstruction_metrics
from hyperrag.hyperbolic.graphs import tree_closure, tree_size


def task_defaults(seed: int) -> tuple[dict, dict]:
    yaml = OmegaConf.load(REPO / "hyperrag" / "conf" / "task" / "poincare_tree.yaml")
    cfg = OmegaConf.merge({"seed": seed}, {"task": yaml})
    task = OmegaConf.to_container(cfg.task, resolve=True)
    strip = {"_target_", "_partial_"}
    return ({k: v for k, v in task["model"].items() if k not in strip},
            {k: v for k, v in task["datamodule"].items() if k not in strip})


def run_ours(edges, n, args, model_kw, data_kw, device):
    """``--repeats`` identical, seeded runs (same result each time); the median time is reported."""
    runs = []
    for _ in range(args.repeats):
        model = PoincareEmbedding(n, **model_kw).to(device)
        data = EdgeDataModule(edges, n, **data_kw)
        cpu0 = time.process_time()
        stats = model.fit_fast(data, args.epochs)
        stats["cpu_seconds"] = time.process_time() - cpu0
        runs.append((stats["seconds"], stats, model))
    runs.sort(key=lambda r: r[0])
    _, stats, model = runs[len(runs) // 2]
    stats["all_seconds"] = [round(r[0], 3) for r in runs]
    return model, stats


def run_lightning(edges, n, args, model_kw, data_kw, device):
    import lightning as L

    model = PoincareEmbedding(n, **model_kw)
    trainer = L.Trainer(max_epochs=args.epochs, logger=False, enable_progress_bar=False,
                        enable_checkpointing=False, enable_model_summary=False,
                        accelerator="gpu" if device == "cuda" else "cpu", devices=1)
    t0 = time.perf_counter()
    trainer.fit(model, EdgeDataModule(edges, n, **data_kw))
    seconds = time.perf_counter() - t0
    return model, {"seconds": seconds, "edge_updates_per_s": edges.shape[1] * args.epochs / seconds}


def run_gensim(edges, args):
    from gensim.models.poincare import PoincareModel

    relations = [(str(a), str(b)) for a, b in edges.T.tolist()]
    model = PoincareModel(relations, size=args.dim, negative=args.negatives, seed=args.seed)
    t0, cpu0 = time.perf_counter(), time.process_time()
    model.train(epochs=args.epochs, print_every=10 ** 9)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    vectors = torch.from_numpy(model.kv.vectors[[model.kv.get_index(str(i)) for i in range(len(model.kv))]])
    return vectors, {"seconds": seconds, "cpu_seconds": cpu,
                     "edge_updates_per_s": len(relations) * args.epochs / seconds}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=50)
    p.add_argument("--branching", type=int, default=4)
    p.add_argument("--depth", type=int, default=6)
    p.add_argument("--dim", type=int, default=10)
    p.add_argument("--negatives", type=int, default=10)
    p.add_argument("--batch-size", type=int, help="default: task/poincare_tree.yaml")
    p.add_argument("--group-size", type=int,
                   help="relations sharing one draw of negatives (default: the task's)")
    p.add_argument("--lr", type=float, help="Riemannian Adam rate (default: the task's)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch intra-op threads (gensim is single-threaded)")
    p.add_argument("--device", default="cpu", help="cpu or cuda for ours")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeats", type=int, default=3,
                   help="runs of ours (seconds each); the median is reported")
    p.add_argument("--skip-gensim", action="store_true")
    p.add_argument("--skip-lightning", action="store_true")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    model_kw, data_kw = task_defaults(args.seed)
    model_kw["dim"] = args.dim
    data_kw["num_negatives"] = args.negatives
    for key, value in (("batch_size", args.batch_size), ("negative_group_size", args.group_size)):
        if value is not None:
            data_kw[key] = value
    if args.lr is not None:
        model_kw["lr"] = args.lr
    edges, n = tree_closure(args.branching, args.depth), tree_size(args.branching, args.depth)
    print(f"tree closure: branching {args.branching}, depth {args.depth}: {n} nodes, "
          f"{edges.shape[1]} relations; dim {args.dim}, {args.negatives} negatives, {args.epochs} epochs, "
          f"{args.threads} torch thread(s)")
    print(f"ours: {model_kw} | {data_kw}")

    rows = {}
    model, stats = run_ours(edges, n, args, model_kw, data_kw, args.device)
    rows["ours (fit_fast)"] = {**stats, **reconstruction_metrics(model.points.cpu(), edges)}
    if not args.skip_lightning:
        model, stats = run_lightning(edges, n, args, model_kw, data_kw, args.device)
        rows["ours (Trainer.fit)"] = {**stats, **reconstruction_metrics(model.points.cpu(), edges)}
    if not args.skip_gensim:
        vectors, stats = run_gensim(edges, args)
        rows["gensim PoincareModel"] = {**stats, **reconstruction_metrics(vectors, edges)}

    print(f"\n{'trainer':<22} {'seconds':>9} {'edge upd/s':>12} {'MAP':>7} {'mean rank':>10}")
    for name, r in rows.items():
        print(f"{name:<22} {r['seconds']:>9.2f} {r['edge_updates_per_s']:>12,.0f} {r['map']:>7.4f} "
              f"{r['mean_rank']:>10.2f}")
    ours = rows["ours (fit_fast)"]
    result = {
        "epochs": args.epochs, "nodes": n, "relations": int(edges.shape[1]), "dim": args.dim,
        "negatives": args.negatives, "batch_size": data_kw["batch_size"],
        "negative_group_size": data_kw["negative_group_size"], "lr": model_kw["lr"], "threads": args.threads,
        "device": args.device,
        "updates_per_s_ours": round(ours["edge_updates_per_s"]), "seconds_ours": round(ours["seconds"], 3),
        "seconds_ours_all_runs": ours["all_seconds"],
        "map_ours": round(ours["map"], 4), "mean_rank_ours": round(ours["mean_rank"], 2),
    }
    if "ours (Trainer.fit)" in rows:
        result["updates_per_s_lightning"] = round(rows["ours (Trainer.fit)"]["edge_updates_per_s"])
        result["map_lightning"] = round(rows["ours (Trainer.fit)"]["map"], 4)
    if "gensim PoincareModel" in rows:
        gs = rows["gensim PoincareModel"]
        result.update({
            "updates_per_s_gensim": round(gs["edge_updates_per_s"]),
            "seconds_gensim": round(gs["seconds"], 2),
            "map_gensim": round(gs["map"], 4), "mean_rank_gensim": round(gs["mean_rank"], 2),
            "speedup_vs_gensim": round(ours["edge_updates_per_s"] / gs["edge_updates_per_s"], 1),
            "cpu_time_speedup_vs_gensim": round(gs["cpu_seconds"] / max(ours["cpu_seconds"], 1e-9), 1),
        })
        if "updates_per_s_lightning" in result:
            result["lightning_speedup_vs_gensim"] = round(
                result["updates_per_s_lightning"] / gs["edge_updates_per_s"], 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
