"""One way to train and save a model: a resumable Lightning fit into its model folder.

``train.py`` (every task) and HyperRAG's ball (:class:`~hyperrag.hyperbolic.ball_index.BallIndex`, so also
``retrieve.py method=hyperrag``) train through :func:`fit_resumable`: ``Trainer.fit`` with
:class:`~hyperrag.training.resume.ResumableFit` (``last.ckpt`` in ``<model_dir>/.partial/``; a rerun after a
kill continues there), then ``trainer.save_checkpoint(<model_dir>/model.ckpt)`` and the work folder removed.

:func:`save_module_checkpoint` writes a module that changed outside a fit (a ball after an incremental update)
in the same layout, which ``LightningModule.load_from_checkpoint`` reads.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hyperrag.training.resume import ResumableFit

MODEL_FILE = "model.ckpt"


@dataclass
class FitRun:
    """What :func:`fit_resumable` did: the trainer, where the fit started (> 0: resumed) and its wall time."""

    trainer: Any
    start_epoch: int
    start_step: int
    seconds: float
    checkpoint: Path


def fit_resumable(model: Any, datamodule: Any, model_dir: str | Path,
                  make_trainer: Callable[[dict[str, Any]], Any], resume: Mapping[str, Any] | None = None,
                  save: bool = True) -> FitRun:
    """Fit ``model`` on ``datamodule``, resuming an interrupted fit of the same folder, and save it.

    Args:
        model: a ``LightningModule``.
        datamodule: its ``LightningDataModule``.
        model_dir: the model's folder (``model.ckpt`` is written there; the resume state in ``.partial/``).
        make_trainer: builds the ``Trainer`` from the resume machinery's keyword arguments (plugins,
            callbacks, checkpointing), e.g. ``lambda kw: Trainer(max_epochs=3, **kw)``.
        resume: :class:`~hyperrag.training.resume.ResumableFit` options (``enabled``, ``every_n_epochs``,
            ``min_interval_s``, ``every_n_steps``, ``every_seconds``); ``None``: enabled, after every epoch.
        save: write ``model.ckpt`` (``trainer.save_checkpoint``) and remove the resume state afterwards.
    """
    model_dir = Path(model_dir)
    opts = dict(resume or {})
    fit = ResumableFit(model_dir / ".partial", every_n_epochs=opts.get("every_n_epochs", 1),
                       min_interval_s=opts.get("min_interval_s", 0.0), enabled=opts.get("enabled", True),
                       every_n_steps=opts.get("every_n_steps"), every_seconds=opts.get("every_seconds"))
    trainer = make_trainer(fit.trainer_kwargs())
    t0 = time.perf_counter()
    start_epoch = fit.fit(trainer, model, datamodule)
    seconds = time.perf_counter() - t0
    ckpt = model_dir / MODEL_FILE
    if save:
        model_dir.mkdir(parents=True, exist_ok=True)
        trainer.save_checkpoint(ckpt)
        fit.finish()
    return FitRun(trainer, start_epoch, fit.start_step, seconds, ckpt)


def save_module_checkpoint(module: Any, path: str | Path) -> Path:
    """Write ``module`` (a ``LightningModule``) where ``load_from_checkpoint`` reads it; atomic, on the CPU."""
    import lightning as L

    from hyperrag.utils.atomic import atomic_torch_save

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu() for k, v in module.state_dict().items()}
    atomic_torch_save({"state_dict": state, "hyper_parameters": dict(module.hparams),
                       "pytorch-lightning_version": L.__version__}, path)
    return path
