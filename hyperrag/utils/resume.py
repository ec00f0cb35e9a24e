"""Kill-and-resume for a Lightning fit (issue 9 item 1): a fit killed with SIGKILL at any point is rerun and
finishes only the training steps that were not done, ending at the weights of an uninterrupted fit.

:class:`ResumableFit` is used by ``train.py`` for every task (``poincare*``, ``causal_pair``, ``ppo``). What
the libraries already do is theirs:

* the saves are Lightning's ``ModelCheckpoint``s writing ``<work_dir>/last.ckpt``: one at the end of every
  ``every_n_epochs`` epochs, one every ``every_n_steps`` optimiser steps (``every_n_train_steps``) and one
  once ``every_seconds`` passed (``train_time_interval``; Lightning's own rule: automatic optimisation only).
  A checkpoint holds weights, optimiser and LR-scheduler states and loop progress (epoch, batch in the epoch,
  global step), the module's own extras (``PPOPolicy.history``) and the train dataloader's position;
* the position is torchdata's ``StatefulDataLoader`` (Lightning ≥ 2.3 saves and restores ``state_dict()`` of a
  train dataloader that has one): the tasks' datamodules build one, and :meth:`ResumableFit.fit` turns any
  other plain ``DataLoader`` into one (:func:`resumable`), so a restarted epoch yields only its remaining
  batches — the shuffled permutation from the sampler's saved generator state, a stateful ``IterableDataset``
  (:class:`~hyperrag.hyperbolic.datamodule.EdgeBatches`) from its own state, any other stream replayed;
* the write is atomic (:class:`AtomicCheckpointIO`: temp file, fsync, ``os.replace``), so a kill during a save
  leaves the previous ``last.ckpt``.

What they lack is :class:`RandomState`, a small callback whose state rides in the same checkpoint: the global
torch / numpy / python generators (dropout, the edge sampler's negatives...), every ``torch.Generator`` held
by the module, the datamodule or the train dataloader (PPO's rollout generator, the shuffling generator), the
early stop flag (``trainer.should_stop`` set by the classifier's ``max_steps`` or PPO's ``max_iterations``: a
fit killed after its last save must not train on) and geoopt's integer Adam step counts (a float32 step would
make ``betas ** step`` drift from the uninterrupted run). :class:`MidEpochCheckpoint` adds two rules to
Lightning's step and time saves: none at an epoch's last batch (the epoch-end save follows) and none while a
train loader cannot resume mid-epoch (a resume would then train the wrong batches; a kill loses the epoch in
progress).

The rerun (same key, so same data and settings) passes ``ckpt_path=last.ckpt`` to ``trainer.fit``;
:meth:`ResumableFit.finish` removes ``work_dir`` once the caller has saved the final model.

:func:`fit_resumable` is that whole path for a model folder — ``Trainer.fit`` under :class:`ResumableFit` (work
folder ``<model_dir>/.partial/``), ``trainer.save_checkpoint(<model_dir>/model.ckpt)``, work folder removed —
and every fit goes through it: ``train.py`` (:func:`hyperrag.training.fit.fit_task`, every task) and HyperRAG's
ball (:meth:`hyperrag.hyperbolic.ball_index.BallIndex.train`, so also ``retrieve.py method=hyperrag``). It sits
here, below the retrievers, because the ball trains inside retrieval. :func:`save_module_checkpoint` writes a
module that changed outside a fit (a ball after an incremental update) in the layout
``LightningModule.load_from_checkpoint`` reads.

Limits: metrics aggregated over an epoch (``on_epoch=True``) cover only the resumed part of a restarted epoch;
Lightning does not step a ``ReduceLROnPlateau`` at the end of such an epoch (no task here uses one); for a
module with manual optimisation (PPO) Lightning's step saves count optimiser steps and its time saves do not
run (with ``rollout_batch: null`` an epoch is one PPO iteration, saved at its end).
"""

from __future__ import annotations

import logging
import os
import shutil
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
from lightning.fabric.utilities.seed import _collect_rng_states, _set_rng_states
from lightning.fabric.utilities.types import _Stateful
from lightning.pytorch.callbacks import Callback, ModelCheckpoint
from lightning.pytorch.plugins.io import TorchCheckpointIO

from hyperrag.utils.atomic import atomic_torch_save

log = logging.getLogger(__name__)

LAST = "last.ckpt"

# Lightning suggests keeping a pre-optimisation copy of the weights for manual optimisation (PPO); a resume
# wants the state after the step, which is what it saves
warnings.filterwarnings("ignore", message="Using ModelCheckpoint with manual optimization")
# a resumed fit writes into the folder that holds the last.ckpt it resumed from: that is the point
warnings.filterwarnings("ignore", message="Checkpoint directory .* exists and is not empty")


class AtomicCheckpointIO(TorchCheckpointIO):
    """``TorchCheckpointIO`` whose writes are temp file + fsync + ``os.replace`` (a kill never leaves half
    a file)."""

    def save_checkpoint(self, checkpoint: dict[str, Any], path: Any,
                        storage_options: Any | None = None) -> None:
        if storage_options is not None:
            raise TypeError(f"{type(self).__name__} takes no storage_options, got {storage_options!r}")
        atomic_torch_save(checkpoint, path)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(path, 0o666 & ~umask)  # the temp file was created 0600; give the usual permissions


def _generators(trainer: Any) -> dict[str, torch.Generator]:
    """Every ``torch.Generator`` the fit draws from, by a stable name (``model._gen``,
    ``datamodule.dataset.generator``)."""
    roots: dict[str, Any] = {"model": trainer.lightning_module, "datamodule": trainer.datamodule,
                             "train_dataloader": trainer.train_dataloader}  # None before the fit sets it up
    found: dict[str, torch.Generator] = {}
    seen: set[int] = set()

    def walk(obj: Any, name: str, depth: int) -> None:
        if obj is None or id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, torch.Generator):
            found[name] = obj
            return
        if depth == 0 or isinstance(obj, (torch.Tensor, str, bytes, int, float, Path)):
            return
        if isinstance(obj, (list, tuple)):
            for i, item in enumerate(obj[:8]):
                walk(item, f"{name}.{i}", depth - 1)
            return
        attrs = getattr(obj, "__dict__", None)
        if isinstance(obj, dict) or not isinstance(attrs, dict):
            return
        for key, value in list(attrs.items()):
            # the module's parameters/buffers/submodules and the trainer back-reference hold no generator we
            # own
            if key in ("_modules", "_parameters", "_buffers", "_trainer", "trainer", "_fabric", "env"):
                continue
            if isinstance(value, (torch.Generator, list, tuple)) or hasattr(value, "__dict__"):
                walk(value, f"{name}.{key}", depth - 1)

    for root, obj in roots.items():
        walk(obj, root, 3)
    return found


def _plain_rng_states() -> dict[str, Any]:
    """Lightning's global RNG states with numpy's as plain ints (``torch.load(weights_only=True)`` reads
    them)."""
    states = _collect_rng_states(include_cuda=torch.cuda.is_available())
    if "numpy" in states:
        kind, keys, pos, has_gauss, gauss = states["numpy"]
        states["numpy"] = (str(kind), [int(k) for k in keys], int(pos), int(has_gauss), float(gauss))
    return states


def _numpy_rng_states(states: dict[str, Any]) -> dict[str, Any]:
    import numpy as np

    states = dict(states)
    if "numpy" in states:
        kind, keys, pos, has_gauss, gauss = states["numpy"]
        states["numpy"] = (kind, np.asarray(keys, dtype=np.uint32), pos, has_gauss, gauss)
    return states


class RandomState(Callback):
    """The random state of a fit, saved in every checkpoint and put back when the fit resumes from one.

    Restored at ``on_train_start``, once the train dataloader and its restored iterator exist (what the rest
    of the fit draws comes from the restored generators; at an epoch's start the iterator is made again from
    them). Also records where the fit started: ``start_epoch`` / ``start_step`` (> 0: resumed), ``resumed``,
    and ``batches_run`` (training batches this process ran).
    """

    def __init__(self) -> None:
        self.start_epoch = 0
        self.start_step = 0
        self.batches_run = 0
        self.resumed = False
        self._trainer: Any = None
        self._pending: dict[str, Any] | None = None

    def setup(self, trainer: Any, pl_module: Any, stage: str) -> None:
        self._trainer = trainer

    def state_dict(self) -> dict[str, Any]:
        if self._trainer is None:
            return {}
        return {"rng": _plain_rng_states(),
                "should_stop": bool(self._trainer.should_stop),
                "generators": {name: g.get_state() for name, g in _generators(self._trainer).items()},
                "int_steps": [bool(opt.state) and all(isinstance(st.get("step"), int)
                                                      for st in opt.state.values())
                              for opt in self._trainer.optimizers]}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self._pending = dict(state_dict) if state_dict else None  # applied once the dataloaders exist

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        self.start_epoch, self.start_step = int(trainer.current_epoch), int(trainer.global_step)
        self.batches_run = 0
        if self._pending is None:
            return
        state, self._pending = self._pending, None
        gens = _generators(trainer)
        for name, gen_state in state.get("generators", {}).items():
            if name in gens:
                gens[name].set_state(gen_state)
        if state.get("rng"):
            _set_rng_states(_numpy_rng_states(state["rng"]))
        for opt, int_steps in zip(trainer.optimizers, state.get("int_steps", [])):
            for st in opt.state.values() if int_steps else ():
                if isinstance(st.get("step"), torch.Tensor):
                    st["step"] = int(st["step"].item())
        if state.get("should_stop"):
            trainer.should_stop = True
        if not trainer.fit_loop.restarted_mid_epoch:
            # at an epoch's start FitLoop.setup_data already made the epoch's iterator, drawing its
            # permutation and worker seed from the fresh generators: make it again from the restored ones, as
            # the uninterrupted fit did (mid-epoch, the restored iterator holds the saved position and
            # permutation: it stays)
            fetcher = getattr(trainer.fit_loop, "_data_fetcher", None)
            if fetcher is not None:
                iter(fetcher)
        self.resumed = True
        missing = sorted(set(state.get("generators", {})) - set(gens))
        log.info("resumed at epoch %d, global step %d%s", self.start_epoch, trainer.global_step,
                 f"; generators not found: {missing}" if missing else "")

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any,
                           batch_idx: int) -> None:
        self.batches_run += 1


class MidEpochCheckpoint(ModelCheckpoint):
    """Lightning's step or time save of ``last.ckpt``, skipped at an epoch's last batch (the epoch-end save
    follows) and while the train dataloader's position is not the training's: a loader without
    ``state_dict`` (a custom sampler left alone by :func:`resumable`), or one Lightning reads ahead of the
    training (it prefetches a batch from a loader without a length). A kill then loses the epoch in
    progress, never a batch.

    A save due at a batch that a validation pass follows (``val_check_interval``) is made at the end of that pass
    instead: Lightning resumes a checkpoint taken at the batch's end *past* the pass that followed it, so the pass
    would be lost (``task=causal_pair`` selects its weights from those passes); one taken at the pass's end
    resumes with the next batch."""

    _after_validation: tuple[Any, Any, int] | None = None

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any,
                           batch_idx: int) -> None:
        fetcher = getattr(trainer.fit_loop, "_data_fetcher", None)
        if batch_idx + 1 >= trainer.num_training_batches or getattr(fetcher, "done", False):
            return  # the epoch's last batch
        loader = getattr(trainer.fit_loop, "_combined_loader", None)
        flat = list(loader.flattened) if loader is not None else []
        if not flat or not all(isinstance(dl, _Stateful) for dl in flat):
            self._skip(trainer, "the train dataloader has no state_dict/load_state_dict")
            return
        if getattr(fetcher, "batches", None):
            self._skip(trainer, "the train dataloader has no length, so Lightning reads it a batch ahead")
            return
        if fetcher is not None and trainer.fit_loop.epoch_loop._should_check_val_fx(fetcher):
            self._after_validation = (outputs, batch, batch_idx)  # a validation pass follows this batch
            return
        super().on_train_batch_end(trainer, pl_module, outputs, batch, batch_idx)

    def on_validation_end(self, trainer: Any, pl_module: Any) -> None:
        pending, self._after_validation = self._after_validation, None
        if pending is not None and not trainer.sanity_checking:
            super().on_train_batch_end(trainer, pl_module, *pending)  # the step / time rule, now after the pass
            return
        super().on_validation_end(trainer, pl_module)

    def _skip(self, trainer: Any, why: str) -> None:
        if not getattr(self, "_warned", False):
            log.warning("no mid-epoch checkpoints: %s; a kill loses the epoch in progress", why)
            self._warned = True


def resumable(loader: Any) -> Any:
    """A plain ``DataLoader`` as a torchdata ``StatefulDataLoader`` with the same batches; anything else as
    is.

    The dataset, batch size, collate function, workers and generator are kept; a ``RandomSampler`` becomes the
    loader's ``shuffle`` (torchdata's stateful sampler draws the same permutation from the same generator
    state).
    """
    from torch.utils.data import DataLoader, RandomSampler, SequentialSampler
    from torchdata.stateful_dataloader import StatefulDataLoader

    if type(loader) is not DataLoader:
        return loader
    sampler = loader.sampler
    batch_sampler = getattr(loader, "batch_sampler", None)
    if batch_sampler is not None and type(batch_sampler).__name__ != "BatchSampler":
        return loader  # a custom batch sampler: left alone (mid-epoch saves are then skipped)
    kwargs: dict[str, Any] = {"num_workers": loader.num_workers, "collate_fn": loader.collate_fn,
                              "pin_memory": loader.pin_memory, "timeout": loader.timeout,
                              "worker_init_fn": loader.worker_init_fn,
                              "persistent_workers": loader.persistent_workers,
                              "multiprocessing_context": loader.multiprocessing_context,
                              "batch_size": loader.batch_size, "drop_last": loader.drop_last}
    if loader.num_workers:
        kwargs["prefetch_factor"] = loader.prefetch_factor
    if isinstance(sampler, RandomSampler) and not sampler.replacement and sampler._num_samples is None:
        generator = sampler.generator if sampler.generator is not None else loader.generator
        kwargs.update(shuffle=True, generator=generator)
    elif not isinstance(sampler, SequentialSampler) and type(sampler).__name__ != "_InfiniteConstantSampler":
        return loader  # a custom sampler: left alone
    return StatefulDataLoader(loader.dataset, **kwargs)


class ResumableFit:
    """Resumable ``trainer.fit`` with its work folder (one per model key).

        fit = ResumableFit(model_dir / ".partial", every_n_steps=..., every_seconds=...)
        trainer = Trainer(..., **fit.trainer_kwargs())
        start_epoch = fit.fit(trainer, model, datamodule)
        trainer.save_checkpoint(model_dir / "model.ckpt")
        fit.finish()

    Args:
        work_dir: where ``last.ckpt`` is written.
        every_n_epochs: save at the end of every n-th epoch (Lightning's ``every_n_epochs``).
        enabled: ``False``: no checkpoints, a plain fit (the atomic checkpoint writer is still used).
        every_n_steps: also save every n optimiser steps inside an epoch (``None``: off).
        every_seconds: also save once this many seconds passed since the last save (``None``: off).
    """

    def __init__(self, work_dir: str | Path, every_n_epochs: int = 1, enabled: bool = True,
                 every_n_steps: int | None = None, every_seconds: float | None = None) -> None:
        self.work_dir = Path(work_dir)
        self.enabled = enabled
        self.state = RandomState() if enabled else None
        self.checkpoints: list[ModelCheckpoint] = []
        if enabled:
            last = {"dirpath": self.work_dir, "filename": LAST.removesuffix(".ckpt"), "save_top_k": 1,
                    "enable_version_counter": False, "save_on_train_epoch_end": True}
            self.checkpoints.append(ModelCheckpoint(**last, every_n_epochs=max(1, int(every_n_epochs))))
            if every_n_steps:
                self.checkpoints.append(MidEpochCheckpoint(**last, every_n_train_steps=int(every_n_steps)))
            if every_seconds:
                self.checkpoints.append(MidEpochCheckpoint(**last,
                                                           train_time_interval=timedelta(seconds=float(every_seconds))))

    @property
    def start_step(self) -> int:
        """Global step the last :meth:`fit` started at (> 0: resumed)."""
        return self.state.start_step if self.state is not None else 0

    @property
    def last_path(self) -> Path:
        return self.work_dir / LAST

    def trainer_kwargs(self, callbacks: list[Any] | None = None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"plugins": [AtomicCheckpointIO()]}
        if self.enabled:
            kwargs.update(enable_checkpointing=True,
                          callbacks=[*(callbacks or []), self.state, *self.checkpoints])
        return kwargs

    def fit(self, trainer: Any, model: Any, datamodule: Any = None) -> int:
        """``trainer.fit`` from ``last.ckpt`` when there is one; returns the epoch the fit started at."""
        ckpt_path = None
        if self.enabled and self.last_path.is_file():
            ckpt_path = str(self.last_path)
            log.info("interrupted fit found: resuming from %s", ckpt_path)
        elif not self.enabled and self.work_dir.exists():
            shutil.rmtree(self.work_dir, ignore_errors=True)
        # a task's plain DataLoader becomes a StatefulDataLoader (same batches) that resumes mid-epoch
        hook = getattr(datamodule, "train_dataloader", None) if self.enabled else None
        own = vars(datamodule).get("train_dataloader") if datamodule is not None else None
        if callable(hook):
            datamodule.train_dataloader = lambda: resumable(hook())
        try:
            trainer.fit(model, datamodule=datamodule, ckpt_path=ckpt_path)
        finally:
            if callable(hook):
                if own is None:
                    del datamodule.train_dataloader
                else:
                    datamodule.train_dataloader = own
        return self.state.start_epoch if self.state is not None else 0

    def finish(self) -> None:
        """Remove the work folder (call once the final model is saved)."""
        shutil.rmtree(self.work_dir, ignore_errors=True)


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
        resume: :class:`ResumableFit` options (``enabled``, ``every_n_epochs``,
            ``every_n_steps``, ``every_seconds``); ``None``: enabled, after every epoch.
        save: write ``model.ckpt`` (``trainer.save_checkpoint``) and remove the resume state afterwards.
    """
    model_dir = Path(model_dir)
    opts = dict(resume or {})
    fit = ResumableFit(model_dir / ".partial", every_n_epochs=opts.get("every_n_epochs", 1),
                       enabled=opts.get("enabled", True), every_n_steps=opts.get("every_n_steps"),
                       every_seconds=opts.get("every_seconds"))
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

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu() for k, v in module.state_dict().items()}
    atomic_torch_save({"state_dict": state, "hyper_parameters": dict(module.hparams),
                       "pytorch-lightning_version": L.__version__}, path)
    return path


__all__ = ["MODEL_FILE", "AtomicCheckpointIO", "FitRun", "MidEpochCheckpoint", "RandomState", "ResumableFit",
           "fit_resumable", "resumable", "save_module_checkpoint"]
