"""Kill-and-resume for a Lightning fit (issue 9 item 1): a fit killed with SIGKILL at any point is rerun and
finishes only the training steps that were not done.

:class:`ResumableFit` is used by ``train.py`` for every task (``poincare*``, ``causal_pair``, ``ppo``):

* :class:`ResumeCheckpoint` writes ``<work_dir>/last.ckpt`` after every ``every_n_epochs`` epochs and, inside an
  epoch, every ``every_n_steps`` training steps and/or once ``every_seconds`` passed since the last save — weights,
  optimiser and LR-scheduler state, loop progress (epoch, batch in the epoch, global step), the module's own
  checkpoint extras (``PPOPolicy.history``), the position of the train dataloader inside the epoch and every random
  state the rest of the fit draws from: the global torch / numpy / python generators and each ``torch.Generator``
  held by the module, the datamodule, its dataset or the train dataloader and its sampler (the edge sampler's
  permutation and negatives, the PPO rollout and minibatch generator, the shuffling of the batches). A resumed fit
  therefore continues exactly as the uninterrupted one would have (same weights at the end, up to floating-point
  nondeterminism of the kernels);
* mid-epoch: Lightning (≥ 2.3) keeps ``state_dict()`` of a train dataloader that has one in the checkpoint's loop
  state and gives it back before the restarted epoch's iterator is made; the tasks' loaders are
  :class:`~hyperrag.utils.resumable_loader.ResumableDataLoader` (the Poincaré edge stream, the causal pair batches) and
  :meth:`ResumableFit.fit` turns any other plain ``DataLoader`` of a datamodule into one (the PPO rollout batches),
  so the restarted epoch yields only its remaining batches, the very ones of the uninterrupted fit. A mid-epoch
  save is skipped when a loader is not resumable (then a kill loses the epoch in progress, as before) or has drawn
  batches ahead of the training, and at an epoch's last batch (the epoch-end save follows);
* an early stop (``trainer.should_stop``: the classifier's ``max_steps``, PPO's ``max_iterations``) is part of the
  state, so a fit killed after its last save but before the final model was written does not train on;
* the write is atomic (:class:`AtomicCheckpointIO`: temp file, fsync, ``os.replace``), so a kill during the save
  leaves the previous ``last.ckpt``;
* the rerun (same key, so same data and settings) passes ``ckpt_path=last.ckpt`` to ``trainer.fit``;
* :meth:`ResumableFit.finish` removes ``work_dir`` once the caller has saved the final model.

Limits: metrics aggregated over an epoch (``on_epoch=True``) cover only the resumed part of a restarted epoch, and
Lightning does not step a ``ReduceLROnPlateau`` at the end of such an epoch (no task here uses one; step- and
epoch-interval schedulers step as uninterrupted). The PPO task is an ordinary ``Trainer.fit`` (manual optimisation,
one step = one PPO iteration on a batch of questions; with ``rollout_batch: null`` an epoch is that one step, so
only epoch ends are saved there); the rollout generator ``PPOPolicy._gen`` and the Adam state are in the
checkpoint, the rewards come from the deterministic, cached reward table.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any

import torch
from lightning.fabric.utilities.seed import _collect_rng_states, _set_rng_states
from lightning.fabric.utilities.types import _Stateful
from lightning.pytorch.callbacks import Checkpoint
from lightning.pytorch.plugins.io import TorchCheckpointIO

from hyperrag.utils.atomic import atomic_torch_save
from hyperrag.utils.resumable_loader import resumable

log = logging.getLogger(__name__)

LAST = "last.ckpt"


class AtomicCheckpointIO(TorchCheckpointIO):
    """``TorchCheckpointIO`` whose writes are temp file + fsync + ``os.replace`` (a kill never leaves half a file)."""

    def save_checkpoint(self, checkpoint: dict[str, Any], path: Any, storage_options: Any | None = None) -> None:
        if storage_options is not None:
            raise TypeError(f"{type(self).__name__} takes no storage_options, got {storage_options!r}")
        atomic_torch_save(checkpoint, path)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(path, 0o666 & ~umask)  # the temp file was created 0600; give the usual permissions


def _generators(trainer: Any) -> dict[str, torch.Generator]:
    """Every ``torch.Generator`` that the fit draws from, by a stable name (``model._gen``, ``datamodule.dataset.generator``...)."""
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
        if isinstance(obj, dict):
            return
        attrs = getattr(obj, "__dict__", None)
        if not isinstance(attrs, dict):
            return
        for key, value in list(attrs.items()):
            # the module's parameters/buffers/submodules and the trainer back-reference hold no generator we own
            if key in ("_modules", "_parameters", "_buffers", "_trainer", "trainer", "_fabric", "env"):
                continue
            if isinstance(value, torch.Generator) or hasattr(value, "__dict__") or isinstance(value, (list, tuple)):
                walk(value, f"{name}.{key}", depth - 1)

    for root, obj in roots.items():
        walk(obj, root, 3)
    return found


def _plain_rng_states() -> dict[str, Any]:
    """Lightning's global RNG states with numpy's as plain ints (``torch.load(weights_only=True)`` reads them)."""
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


class ResumeCheckpoint(Checkpoint):
    """Writes ``<dirpath>/last.ckpt`` after every ``every_n_epochs`` training epochs and inside epochs, with the
    RNG states.

    A :class:`~lightning.pytorch.callbacks.Checkpoint` subclass, so Lightning runs its ``on_train_epoch_end``
    after the module's (``PPOPolicy`` appends the epoch's history row there). ``min_interval_s`` > 0 skips
    epoch-end saves closer together than that (short epochs; the last epoch is always saved). Inside an epoch it
    saves after a training step once ``every_n_steps`` steps or ``every_seconds`` seconds passed since the last
    save (either may be ``None``: off). ``start_epoch`` / ``start_step``: where the fit started (resumed when > 0);
    ``batches_run``: training steps this process ran; ``saves``: counts of epoch-end and mid-epoch saves.
    """

    def __init__(self, dirpath: str | Path, every_n_epochs: int = 1, min_interval_s: float = 0.0,
                 every_n_steps: int | None = None, every_seconds: float | None = None) -> None:
        self.dirpath = Path(dirpath)
        self.every_n_epochs = max(1, int(every_n_epochs))
        self.min_interval_s = float(min_interval_s)
        self.every_n_steps = int(every_n_steps) if every_n_steps else None
        self.every_seconds = float(every_seconds) if every_seconds else None
        self.start_epoch = 0
        self.start_step = 0
        self.batches_run = 0  # training batches run by this process's fit
        self.saves = {"epoch": 0, "mid_epoch": 0}
        self.resumed = False
        self.resumed_mid_epoch = False
        self._trainer: Any = None
        self._pending: dict[str, Any] | None = None
        self._last_save = 0.0
        self._steps_since_save = 0
        self._warned_unresumable = False

    @property
    def last_path(self) -> Path:
        return self.dirpath / LAST

    def setup(self, trainer: Any, pl_module: Any, stage: str) -> None:
        self._trainer = trainer

    # ---- state carried in the checkpoint -----------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        if self._trainer is None:
            return {}
        return {"rng": _plain_rng_states(),
                # an early stop (the module's max_steps, PPO's max_iterations) set before this save: the resumed fit
                # must stop too instead of running one more epoch
                "should_stop": bool(self._trainer.should_stop),
                "generators": {name: g.get_state() for name, g in _generators(self._trainer).items()},
                # optimisers that count steps in a python int (geoopt's RiemannianAdam) come back with a float32
                # tensor, and betas ** step in float32 would drift from the uninterrupted run's
                "int_steps": [bool(opt.state) and all(isinstance(st.get("step"), int) for st in opt.state.values())
                              for opt in self._trainer.optimizers]}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self._pending = dict(state_dict) if state_dict else None  # applied once the dataloaders exist

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        self.start_epoch = int(trainer.current_epoch)
        self.start_step = int(trainer.global_step)
        self.batches_run = 0
        self._last_save = time.monotonic()
        self._steps_since_save = 0
        if self._pending is None:
            return
        state, self._pending = self._pending, None
        gens = _generators(trainer)
        missing = sorted(set(state.get("generators", {})) - set(gens))
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
        # FitLoop.setup_data already made this epoch's dataloader iterator, drawing its shuffle and worker seeds
        # from the fresh generators; make it again from the restored ones, as the uninterrupted fit did (a resumable
        # loader restarted mid-epoch still holds its position: the new iterator continues there too)
        fetcher = getattr(trainer.fit_loop, "_data_fetcher", None)
        if fetcher is not None:
            iter(fetcher)
        else:
            log.warning("resume: no train data fetcher to rewind; the first resumed epoch may shuffle differently")
        self.resumed = True
        self.resumed_mid_epoch = bool(trainer.fit_loop.restarted_mid_epoch)
        log.info("resumed at epoch %d, batch %d (global step %d) from %s%s", self.start_epoch,
                 trainer.fit_loop.epoch_loop.batch_progress.current.ready if self.resumed_mid_epoch else 0,
                 trainer.global_step, self.last_path, f"; generators not found: {missing}" if missing else "")

    # ---- saving -----------------------------------------------------------------------------------
    def _save(self, trainer: Any, kind: str) -> None:
        trainer.save_checkpoint(self.last_path, weights_only=False)
        self._last_save = time.monotonic()
        self._steps_since_save = 0
        self.saves[kind] += 1

    def _loaders_at(self, trainer: Any, batches: int) -> bool:
        """Whether every train dataloader can resume mid-epoch and has drawn exactly the ``batches`` trained."""
        loader = getattr(trainer.fit_loop, "_combined_loader", None)
        flat = list(loader.flattened) if loader is not None else []
        if flat and all(isinstance(dl, _Stateful) for dl in flat):
            if all(getattr(dl, "position", batches) == batches for dl in flat):
                return True
            why = "a train dataloader has drawn batches ahead of the training (prefetching)"
        else:
            why = "the train dataloader has no state_dict/load_state_dict (see hyperrag.utils.resumable_loader)"
        if not self._warned_unresumable:
            log.warning("no mid-epoch checkpoints: %s; a kill loses the epoch in progress", why)
            self._warned_unresumable = True
        return False

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
        self.batches_run += 1
        self._steps_since_save += 1
        if trainer.sanity_checking or not (self.every_n_steps or self.every_seconds):
            return
        due = ((self.every_n_steps is not None and self._steps_since_save >= self.every_n_steps)
               or (self.every_seconds is not None and time.monotonic() - self._last_save >= self.every_seconds))
        if not due or batch_idx + 1 >= trainer.num_training_batches:  # the epoch-end save comes next
            return
        if (batch_idx + 1) % max(1, int(trainer.accumulate_grad_batches)):  # gradients half accumulated
            return
        if self._loaders_at(trainer, batch_idx + 1):
            self._save(trainer, "mid_epoch")

    def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        if trainer.sanity_checking:
            return
        last_epoch = trainer.max_epochs is not None and trainer.current_epoch + 1 >= trainer.max_epochs
        if not (last_epoch or trainer.should_stop):
            if (trainer.current_epoch + 1) % self.every_n_epochs:
                return
            if time.monotonic() - self._last_save < self.min_interval_s:
                return
        self._save(trainer, "epoch")


class ResumableFit:
    """Resumable ``trainer.fit`` with its work folder (one per model key).

        fit = ResumableFit(model_dir / ".partial")
        trainer = Trainer(..., **fit.trainer_kwargs())
        start_epoch = fit.fit(trainer, model, datamodule)
        trainer.save_checkpoint(model_dir / "model.ckpt")
        fit.finish()

    ``enabled=False``: no per-epoch checkpoint, a plain fit (the atomic checkpoint writer is still used).
    """

    def __init__(self, work_dir: str | Path, every_n_epochs: int = 1, min_interval_s: float = 0.0,
                 enabled: bool = True, every_n_steps: int | None = None, every_seconds: float | None = None) -> None:
        self.work_dir = Path(work_dir)
        self.enabled = enabled
        self.callback = (ResumeCheckpoint(self.work_dir, every_n_epochs, min_interval_s, every_n_steps=every_n_steps,
                                          every_seconds=every_seconds) if enabled else None)

    @property
    def start_step(self) -> int:
        """Global step the last :meth:`fit` started at (> 0: resumed)."""
        return self.callback.start_step if self.callback is not None else 0

    @property
    def last_path(self) -> Path:
        return self.work_dir / LAST

    def trainer_kwargs(self, callbacks: list[Any] | None = None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"plugins": [AtomicCheckpointIO()]}
        if self.callback is not None:
            kwargs.update(enable_checkpointing=True, callbacks=[*(callbacks or []), self.callback])
        return kwargs

    def fit(self, trainer: Any, model: Any, datamodule: Any = None) -> int:
        """``trainer.fit`` from ``last.ckpt`` when there is one; returns the epoch the fit started at."""
        ckpt_path = None
        if self.enabled and self.last_path.is_file():
            ckpt_path = str(self.last_path)
            log.info("interrupted fit found: resuming from %s", ckpt_path)
        elif not self.enabled and self.work_dir.exists():
            shutil.rmtree(self.work_dir, ignore_errors=True)
        # a task's plain DataLoader becomes resumable mid-epoch (same batches; hyperrag.utils.resumable_loader)
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
        return self.callback.start_epoch if self.callback is not None else 0

    def finish(self) -> None:
        """Remove the work folder (call once the final model is saved)."""
        shutil.rmtree(self.work_dir, ignore_errors=True)


__all__ = ["AtomicCheckpointIO", "ResumableFit", "ResumeCheckpoint"]
