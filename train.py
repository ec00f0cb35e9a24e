"""Train a model: compose the config, instantiate the task, fit with Lightning, save to models/, report.

    python train.py                                          # task=poincare on the bundled sample
    python train.py task=poincare data=musique               # the ball retrieve.py method=hyperrag loads
    python train.py task=poincare_openie data=musique trainer.max_epochs=50
    python train.py task=poincare_tree logger=csv            # tree closure (the benchmark's workload)

The checkpoint goes to ``<models_dir>/<task>/<data>-<key>/model.ckpt`` with ``metrics.json`` and
``config.yaml`` beside it; ``key`` hashes the data and every setting, so a rerun finds the model and only
evaluates it (``retrain=true`` forces training). An interrupted fit (SIGKILL included) resumes on the rerun from the
``last.ckpt`` written after each epoch and inside long epochs (``resume.every_seconds``, ``resume.every_n_steps``) to
``<data>-<key>/.partial/`` (``resume.enabled=false``: start over);
see :mod:`hyperrag.training.resume`. The run directory ``<out>`` holds the task's plot (the
Poincaré disk for ``poincare``), ``metrics.json`` and the logger's files (W&B offline unless
``WANDB_API_KEY`` is set).

A task (the ``_target_`` of ``hydra_configs/task/*.yaml``) provides: ``name``, ``data_name``,
``key(**extra) -> str``, ``build_model() -> LightningModule``, ``build_datamodule() -> LightningDataModule``,
``load(checkpoint) -> LightningModule``, ``evaluate(model) -> dict`` and ``plot(model, path) -> Path``;
optionally ``plot_filename`` (default ``<name>.png``). See :mod:`hyperrag.training.tasks`.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
if not os.environ.get("WANDB_API_KEY"):
    os.environ.setdefault("WANDB_MODE", "offline")

import hydra
from omegaconf import DictConfig, OmegaConf

from hyperrag.errors import exit_on_input_error

log = logging.getLogger("train")

# logger/wandb.yaml: offline unless an API key is configured
OmegaConf.register_new_resolver("wandb_offline", lambda: not os.environ.get("WANDB_API_KEY"), replace=True)


@hydra.main(version_base="1.3", config_path="hydra_configs", config_name="train")
@exit_on_input_error
def main(cfg: DictConfig) -> dict[str, Any]:
    return run(cfg)


def run(cfg: DictConfig) -> dict[str, Any]:
    from hyperrag.runners.run_settings import check_train_config

    check_train_config(cfg)  # a bad setting stops here, before anything is loaded, with one line naming it

    import lightning as L
    import torch
    from hydra.utils import instantiate

    if cfg.get("torch_threads"):
        torch.set_num_threads(int(cfg.torch_threads))
    L.seed_everything(cfg.seed, verbose=False)
    task = instantiate(cfg.task)
    key = task.key(max_epochs=cfg.trainer.get("max_epochs"), seed=cfg.seed)
    model_dir = Path(cfg.models_dir) / task.name / f"{task.data_name}-{key}"
    ckpt = model_dir / "model.ckpt"
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    logger = instantiate(cfg.logger) if cfg.get("logger") else False
    fit_seconds, start_epoch, start_step = 0.0, 0, 0
    if ckpt.is_file() and not cfg.retrain:
        log.info("model found at %s (retrain=true to train again)", ckpt)
        model = task.load(ckpt)
    else:
        from hyperrag.training import ResumableFit

        model, datamodule = task.build_model(), task.build_datamodule()
        # kill-and-resume: last.ckpt after each epoch (and mid-epoch) in <model_dir>/.partial/, the rerun continues
        resume = cfg.resume
        fit = ResumableFit(model_dir / ".partial", every_n_epochs=resume.every_n_epochs, enabled=resume.enabled,
                           every_n_steps=resume.every_n_steps, every_seconds=resume.every_seconds)
        # a task may fix trainer settings its key depends on (task=poincare: the hyperrag method's epochs)
        trainer = instantiate(cfg.trainer, logger=logger, **getattr(task, "trainer_overrides", dict)(),
                              **fit.trainer_kwargs())
        t0 = time.perf_counter()
        start_epoch = fit.fit(trainer, model, datamodule)
        start_step = fit.start_step
        fit_seconds = time.perf_counter() - t0
        model_dir.mkdir(parents=True, exist_ok=True)
        trainer.save_checkpoint(ckpt)
        OmegaConf.save(cfg, model_dir / "config.yaml", resolve=True)
        fit.finish()
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
    print_metrics(f"{task.name} on {task.data_name}", metrics, ckpt, plot)
    return metrics


def _finish_wandb(logger: Any) -> None:
    """Close the W&B run so that a second ``run()`` in the same process starts a new one."""
    if type(logger).__name__ == "WandbLogger":
        import wandb

        if wandb.run is not None:
            wandb.finish()


def print_metrics(title: str, metrics: dict[str, Any], ckpt: Path, plot: Path) -> None:
    width = max(len(k) for k in metrics)
    print(title)
    for k, v in metrics.items():
        print(f"  {k:<{width}}  {v:.4f}" if isinstance(v, float) else f"  {k:<{width}}  {v}")
    print(f"  checkpoint: {ckpt}\n  plot: {plot}")


if __name__ == "__main__":
    main()
