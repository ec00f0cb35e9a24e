"""One training run as a library call: what ``train.py`` (and cross-fitted retrieval) runs.

See ``train.py`` for the task contract; a task may also provide ``artifact() -> ArtifactRecord`` (what it
trained on; default: no questions) and ``saved(model, model_dir)`` (what it keeps beside its model).

The fit is :func:`hyperrag.utils.resume.fit_resumable` (kill-and-resume), the path HyperRAG's ball trains
through inside retrieval too.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from hyperrag.utils.artifacts import ArtifactRecord, write_record

log = logging.getLogger("train")


@dataclass
class FitResult:
    title: str
    metrics: dict[str, Any]
    checkpoint: Path
    plot: Path


def fit_task(cfg: DictConfig) -> FitResult:
    """Instantiate ``cfg.task``, fit it with Lightning (or load the model its key names), evaluate, plot, and
    save the checkpoint, its config, metrics and :mod:`artifact record <hyperrag.utils.artifacts>` under
    ``<models_dir>/<task>/<data>-<key>/``."""
    import lightning as L
    import torch
    from hydra.utils import instantiate

    from hyperrag.utils.resume import MODEL_FILE, fit_resumable

    if cfg.get("torch_threads"):
        torch.set_num_threads(int(cfg.torch_threads))
    L.seed_everything(cfg.seed, verbose=False)
    task = instantiate(cfg.task)
    key = task.key(max_epochs=cfg.trainer.get("max_epochs"), seed=cfg.seed)
    model_dir = Path(cfg.models_dir) / task.name / f"{task.data_name}-{key}"
    ckpt = model_dir / MODEL_FILE
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    logger = instantiate(cfg.logger) if cfg.get("logger") else False
    fit_seconds, start_epoch, start_step = 0.0, 0, 0
    if ckpt.is_file() and not cfg.retrain:
        log.info("model found at %s (retrain=true to train again)", ckpt)
        model = task.load(ckpt)
    else:
        model, datamodule = task.build_model(), task.build_datamodule()
        # kill-and-resume: last.ckpt after each epoch (and mid-epoch) in <model_dir>/.partial/, the rerun continues;
        # a task may fix trainer settings its key depends on (task=poincare: the hyperrag method's epochs)
        overrides = getattr(task, "trainer_overrides", dict)()
        run = fit_resumable(model, datamodule, model_dir, resume=OmegaConf.to_container(cfg.resume),
                            make_trainer=lambda kw: instantiate(cfg.trainer, logger=logger, **overrides, **kw))
        OmegaConf.save(cfg, model_dir / "config.yaml", resolve=True)
        fit_seconds, start_epoch, start_step = run.seconds, run.start_epoch, run.start_step
        if hasattr(task, "saved"):  # what else the task keeps beside its model (task=poincare: the ball's graph)
            task.saved(model, model_dir)
    # what the artifact trained on, so retrieval never scores a query with a model that saw it
    record = task.artifact() if hasattr(task, "artifact") else ArtifactRecord(task.name, task.data_name)
    write_record(model_dir, record)
    metrics: dict[str, Any] = {**task.evaluate(model), "fit_seconds": fit_seconds}
    if start_step:  # resumed: the epoch and the training step (global) the interrupted fit had reached
        metrics["resumed_at_epoch"], metrics["resumed_at_step"] = start_epoch, start_step
    plot = task.plot(model, out / getattr(task, "plot_filename", f"{task.name}.png"))
    for folder in (out, model_dir):
        (folder / "metrics.json").write_text(json.dumps(
            {"task": task.name, "data": task.data_name, "key": key, "checkpoint": str(ckpt),
             "plot": str(plot), "metrics": metrics}, indent=2, default=str))
    if logger:
        logger.log_metrics({f"final/{k}": float(v) for k, v in metrics.items()
                            if isinstance(v, (int, float)) and not isinstance(v, bool)})
        logger.finalize("success")
        _finish_wandb(logger)
    return FitResult(f"{task.name} on {task.data_name}", metrics, ckpt, plot)


def _finish_wandb(logger: Any) -> None:
    """Close the W&B run so that a second ``run()`` in the same process starts a new one."""
    if type(logger).__name__ == "WandbLogger":
        import wandb

        if wandb.run is not None:
            wandb.finish()


def print_metrics(result: FitResult) -> None:
    title, metrics, ckpt, plot = result.title, result.metrics, result.checkpoint, result.plot
    width = max(len(k) for k in metrics)
    print(title)
    for k, v in metrics.items():
        print(f"  {k:<{width}}  {v:.4f}" if isinstance(v, float) else f"  {k:<{width}}  {v}")
    print(f"  checkpoint: {ckpt}\n  plot: {plot}")
