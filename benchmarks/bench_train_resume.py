"""Training steps lost to a SIGKILL: epoch-end checkpoints only vs mid-epoch checkpoints (issue 9 item 1).

    python benchmarks/bench_train_resume.py [--kills 10] [--epochs 3] [--batch-size 64] [--every-n-steps 25]

``train.py task=poincare_tree`` (5,461 nodes, 30,948 closure relations; ``--batch-size 64``: 484 Riemannian Adam
steps an epoch) is run in a child process that journals every training step it starts (global step, one
``os.write``). The fit is killed with SIGKILL ``--kills`` times, each once the run has started a random training step
(uniform over the steps still to do; the same random draws for both modes), and rerun after each kill; the
last rerun finishes. Two modes:

* ``epoch``: checkpoints at epoch ends only (``resume.every_n_steps=null resume.every_seconds=null``), the
  behaviour before mid-epoch resume;
* ``mid_epoch``: also every ``--every-n-steps`` training steps inside an epoch (``resume.every_seconds=null`` so
  the figure does not depend on the machine's speed).

Per kill: ``lost_steps`` = steps the killed process had started − the step the rerun resumed at (work done
twice). ``identical``: the final weights equal an uninterrupted fit's (same key, so same data and settings).
``overhead_s``: wall time of an uninterrupted fit with the mode's checkpoints minus one with none
(``resume.enabled=false``). The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MODES = {
    "epoch": ["resume.every_n_steps=null", "resume.every_seconds=null"],
    "mid_epoch": ["resume.every_seconds=null"],  # + resume.every_n_steps=<--every-n-steps>
}


def child(journal: str, overrides: list[str]) -> None:
    """Run ``train.run`` with every PoincareEmbedding training step journalled (the benchmark's child process)."""
    sys.path.insert(0, str(ROOT))
    from hydra import compose, initialize_config_dir

    import train
    from hyperrag.hyperbolic import PoincareEmbedding

    fd = os.open(journal, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    step = PoincareEmbedding.training_step

    def journalled(self, *args, **kwargs):
        os.write(fd, f"{int(self.global_step)}\n".encode())
        return step(self, *args, **kwargs)

    PoincareEmbedding.training_step = journalled
    with initialize_config_dir(config_dir=str(ROOT / "hyperrag" / "conf"), version_base="1.3"):
        cfg = compose("train", overrides=overrides)
    metrics = train.run(cfg)
    Path(journal + ".metrics.json").write_text(json.dumps(metrics, default=str))


def steps_of(journal: Path) -> list[int]:
    return [int(s) for s in journal.read_text().split()] if journal.is_file() else []


def launch(journal: Path, overrides: list[str]) -> subprocess.Popen:
    journal.unlink(missing_ok=True)
    return subprocess.Popen([sys.executable, __file__, "--child", str(journal), "--", *overrides], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def run_to_end(journal: Path, overrides: list[str]) -> tuple[dict, float]:
    t0 = time.perf_counter()
    proc = launch(journal, overrides)
    _, err = proc.communicate()
    if proc.returncode:
        raise SystemExit(f"train.py failed ({proc.returncode}):\n{err[-3000:]}")
    return json.loads(Path(str(journal) + ".metrics.json").read_text()), time.perf_counter() - t0


def killed_run(journal: Path, overrides: list[str], target: int) -> list[int] | None:
    """Start a fit, SIGKILL it once it has started training step ``target``; the steps it started (None: it
    ended first)."""
    proc = launch(journal, overrides)
    while not (done := steps_of(journal)) or done[-1] < target:
        if proc.poll() is not None:
            return None
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return steps_of(journal)


def last_checkpoint_step(models: Path) -> int:
    import torch

    found = list(models.glob("poincare_tree/*/.partial/last.ckpt"))
    return int(torch.load(found[0], map_location="cpu", weights_only=False)["global_step"]) if found else 0


def weights(models: Path) -> dict:
    import torch

    (ckpt,) = models.glob("poincare_tree/*/model.ckpt")
    return torch.load(ckpt, map_location="cpu", weights_only=False)["state_dict"]


def same_weights(a: dict, b: dict) -> bool:
    import torch

    return a.keys() == b.keys() and all(torch.allclose(a[k], b[k], rtol=1e-6, atol=1e-7) for k in a)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--every-n-steps", type=int, default=25)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    positions = [rng.random() for _ in range(args.kills)]
    task = ["task=poincare_tree", f"trainer.max_epochs={args.epochs}", f"task.datamodule.batch_size={args.batch_size}",
            "logger=none", "hardware=cpu", "torch_threads=1", "trainer.enable_progress_bar=false"]
    modes = {**MODES, "mid_epoch": [*MODES["mid_epoch"], f"resume.every_n_steps={args.every_n_steps}"]}
    result: dict = {"bench": "train_resume", "task": "poincare_tree", "epochs": args.epochs,
                    "batch_size": args.batch_size, "every_n_steps": args.every_n_steps, "kills": args.kills}
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)

        def overrides(name: str, *extra: str) -> list[str]:
            return [*task, *extra, f"out={tmp_path / name / 'run'}", f"models_dir={tmp_path / name / 'models'}",
                    f"cache_dir={tmp_path / 'cache'}"]

        ref_metrics, _ = run_to_end(tmp_path / "ref.journal", overrides("reference", "resume.enabled=false"))
        reference = weights(tmp_path / "reference" / "models")
        total = len(steps_of(tmp_path / "ref.journal"))
        result["steps_per_fit"] = total
        result["uninterrupted_fit_s"] = round(float(ref_metrics["fit_seconds"]), 2)
        for mode, extra in modes.items():
            plain, _ = run_to_end(tmp_path / f"{mode}-plain.journal", overrides(f"{mode}-plain", *extra))
            journal = tmp_path / f"{mode}.journal"
            lost, started = [], 0
            for u in positions:
                resume_at = last_checkpoint_step(tmp_path / mode / "models")
                target = resume_at + 1 + int(u * (total - resume_at - 2))  # a step the next run will start
                done = killed_run(journal, overrides(mode, *extra), target)
                if done is None:
                    break
                started += len(done)
                # the rerun resumes at the last checkpoint's global step (tests/reliability/test_train_resume.py)
                lost.append(max(done) + 1 - last_checkpoint_step(tmp_path / mode / "models"))
            metrics, _ = run_to_end(journal, overrides(mode, *extra))
            started += len(steps_of(journal))
            result[mode] = {
                "kills": len(lost),
                "lost_steps": lost,
                "lost_steps_mean": round(statistics.mean(lost), 1) if lost else 0.0,
                "lost_steps_max": max(lost, default=0),
                "lost_epoch_share_mean": round(statistics.mean(lost) / (total / args.epochs), 3) if lost else 0.0,
                "resumed_at_step": metrics.get("resumed_at_step"),
                "identical": same_weights(weights(tmp_path / mode / "models"), reference),
                "last_rerun_fit_s": round(float(metrics["fit_seconds"]), 2),
                "steps_started": started,
                "redone_steps": started - total,
                "overhead_s": round(float(plain["fit_seconds"]) - float(ref_metrics["fit_seconds"]), 2),
            }
        seconds_per_step = float(ref_metrics["fit_seconds"]) / total
        for mode in modes:
            result[mode]["lost_s_mean"] = round(result[mode]["lost_steps_mean"] * seconds_per_step, 2)
        e, m = result["epoch"]["lost_steps_mean"], result["mid_epoch"]["lost_steps_mean"]
        result["lost_work_ratio"] = round(e / m, 1) if m else None
    print(json.dumps(result))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[4:] if sys.argv[3:4] == ["--"] else sys.argv[3:])
    else:
        main()
