"""Dataloaders whose position inside an epoch is part of a checkpoint (mid-epoch kill-and-resume, issue 9 item 1).

Lightning (≥ 2.3) saves ``state_dict()`` of every train dataloader that has ``state_dict`` / ``load_state_dict``
(its ``_Stateful`` protocol) in the loop state of a checkpoint, and on a restart in the middle of an epoch calls
``load_state_dict`` before it makes the epoch's iterator. The loader must then yield only the batches that were not
trained yet, the very ones the uninterrupted fit would have yielded. :class:`ResumableDataLoader` does that for

* a map-style dataset (any batch sampler, e.g. ``shuffle=True`` with a ``generator``): it records the random state
  the epoch's iterator and its sampler were made from; on a restart it makes the sampler's iterator again from that
  state (the same permutation), skips the ``k`` batches already trained by drawing their *indices* only (no sample
  is loaded or collated) and puts the random state back where the checkpoint had it;
* an ``IterableDataset`` that is itself stateful (:class:`~hyperrag.hyperbolic.datamodule.EdgeBatches`): the state is
  the dataset's own (its generator at the start of the epoch, the batches yielded, its generator now).

The random state is the loader's ``generator`` or, without one, the global torch generator (then the replay leaves
the global state as it found it: :class:`~hyperrag.training.resume.ResumeCheckpoint` restores that one).
A pending position is kept until the first batch is drawn, so an iterator made again before that (the resume
callback makes one after restoring the random states) resumes at the same place.
:func:`resumable` turns a plain ``DataLoader`` of a task into one (``ResumableFit`` does it for every task).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch
from torch.utils.data import DataLoader, IterableDataset, Sampler


def _is_stateful(obj: Any) -> bool:
    return callable(getattr(obj, "state_dict", None)) and callable(getattr(obj, "load_state_dict", None))


class _RngHandle:
    """The generator a loader draws from: its own ``generator`` or the global torch one."""

    def __init__(self, loader: DataLoader) -> None:
        self.loader = loader

    def get(self) -> torch.Tensor:
        gen = self.loader.generator
        return gen.get_state() if gen is not None else torch.get_rng_state()

    def set(self, state: torch.Tensor) -> None:
        gen = self.loader.generator
        if gen is not None:
            gen.set_state(state)
        else:
            torch.set_rng_state(state)


class _SkippingSampler(Sampler):
    """Wraps the loader's index (batch) sampler: records the random state at the epoch's first draw and, when armed,
    makes its iterator from a recorded state and skips the first ``k`` items (indices only) at once."""

    def __init__(self, inner: Any, rng: _RngHandle) -> None:
        self.inner = inner
        self.rng = rng
        self.first_draw_state: torch.Tensor | None = None
        self.armed: tuple[torch.Tensor, int] | None = None

    # what Lightning and torch read from a batch sampler
    @property
    def sampler(self) -> Any:
        return getattr(self.inner, "sampler", self.inner)

    @property
    def batch_size(self) -> Any:
        return getattr(self.inner, "batch_size", None)

    @property
    def drop_last(self) -> Any:
        return getattr(self.inner, "drop_last", False)

    def __len__(self) -> int:
        return len(self.inner)

    def __iter__(self) -> Iterator[Any]:
        if self.armed is None:
            return self._recording()
        state, skip = self.armed
        now = self.rng.get()
        self.rng.set(state)
        it = iter(self.inner)
        for _ in range(skip):  # the first draw happens here, from the state the original epoch drew it from
            next(it)
        self.first_draw_state = state
        self.rng.set(now)
        return it

    def _recording(self) -> Iterator[Any]:
        self.first_draw_state = self.rng.get()
        yield from self.inner


class _Counted:
    """The epoch's iterator: counts the batches drawn; the first one ends a pending resume."""

    def __init__(self, loader: ResumableDataLoader, it: Iterator[Any]) -> None:
        self.loader = loader
        self.it = it

    def __iter__(self) -> _Counted:
        return self

    def __next__(self) -> Any:
        batch = next(self.it)
        loader = self.loader
        if loader._pending is not None:
            loader._pending = None
            if loader._skipper is not None:
                loader._skipper.armed = None
        loader._yielded += 1
        return batch

    def __getattr__(self, name: str) -> Any:  # _shutdown_workers & co. of the DataLoader iterator
        return getattr(self.it, name)


class ResumableDataLoader(DataLoader):
    """A ``DataLoader`` with ``state_dict`` / ``load_state_dict``: the position inside the current epoch.

    Takes the ``DataLoader`` arguments. The dataset must be map-style or a stateful ``IterableDataset``
    (``state_dict`` / ``load_state_dict`` that resume its own stream); single-process or with workers.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        rng = _RngHandle(self)
        self._yielded = 0
        self._epoch_state: torch.Tensor | None = None
        self._pending: dict[str, Any] | None = None
        self._skipper: _SkippingSampler | None = None
        if isinstance(self.dataset, IterableDataset):
            if not _is_stateful(self.dataset):
                raise TypeError(f"{type(self).__name__} needs a map-style dataset or an IterableDataset with "
                                f"state_dict/load_state_dict, got {type(self.dataset).__name__}")
            return
        # DataLoader forbids reassigning its samplers after __init__ (they must agree with batch_size & co.);
        # the wrapper yields exactly what the wrapped sampler yields, so they still agree
        if self.batch_sampler is not None:
            self._skipper = _SkippingSampler(self.batch_sampler, rng)
            object.__setattr__(self, "batch_sampler", self._skipper)
        else:
            self._skipper = _SkippingSampler(self.sampler, rng)
            object.__setattr__(self, "sampler", self._skipper)

    @classmethod
    def from_dataloader(cls, loader: DataLoader) -> ResumableDataLoader:
        """The same loader (same dataset, samplers, generator, collate function and workers), resumable."""
        kwargs: dict[str, Any] = {
            "num_workers": loader.num_workers, "collate_fn": loader.collate_fn, "pin_memory": loader.pin_memory,
            "timeout": loader.timeout, "worker_init_fn": loader.worker_init_fn, "generator": loader.generator,
            "multiprocessing_context": loader.multiprocessing_context,
            "persistent_workers": loader.persistent_workers}
        if loader.num_workers:
            kwargs["prefetch_factor"] = loader.prefetch_factor
        if isinstance(loader.dataset, IterableDataset):
            kwargs.update(batch_size=loader.batch_size, drop_last=loader.drop_last)
        elif loader.batch_sampler is not None:
            kwargs["batch_sampler"] = loader.batch_sampler
        else:
            kwargs.update(sampler=loader.sampler, batch_size=None)
        return cls(loader.dataset, **kwargs)

    def __iter__(self) -> Iterator[Any]:  # type: ignore[override]
        rng = _RngHandle(self)
        pending = self._pending
        if pending is None:
            self._epoch_state, self._yielded = rng.get(), 0
            return _Counted(self, super().__iter__())
        now = rng.get()
        # the iterator's own draws (torch's base seed for the workers) from the state they were made from
        rng.set(pending["epoch_rng"])
        if self._skipper is not None:
            self._skipper.armed = (pending["sampler_rng"], int(pending["batches"]))
        else:
            self.dataset.load_state_dict(pending["dataset"])  # type: ignore[attr-defined]
        it = super().__iter__()
        # the random state the checkpoint had (the loader's generator) or the one found (the global generator,
        # which the resume callback restores itself)
        rng.set(pending["rng"] if self.generator is not None and pending.get("rng") is not None else now)
        self._epoch_state, self._yielded = pending["epoch_rng"], int(pending["batches"])
        return _Counted(self, it)

    @property
    def position(self) -> int:
        """Batches of the current epoch drawn so far."""
        return self._yielded

    def state_dict(self) -> dict[str, Any]:
        state: dict[str, Any] = {"batches": self._yielded, "epoch_rng": self._epoch_state,
                                 "rng": self.generator.get_state() if self.generator is not None else None}
        if self._skipper is not None:
            state["sampler_rng"] = self._skipper.first_draw_state
        else:
            state["dataset"] = self.dataset.state_dict()  # type: ignore[attr-defined]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Resume at ``state_dict``'s position with the next iterator (nothing to do at an epoch's start or end)."""
        batches = int(state_dict.get("batches", 0))
        if not 0 < batches < len(self) or state_dict.get("epoch_rng") is None:
            self._pending = None
            return
        if self._skipper is not None and state_dict.get("sampler_rng") is None:
            raise ValueError("dataloader state without the sampler's random state: it was saved by another loader")
        self._pending = dict(state_dict)


def resumable(loader: Any) -> Any:
    """``loader`` as a :class:`ResumableDataLoader` when it is a plain ``DataLoader`` that can be one; else as is."""
    if _is_stateful(loader) or type(loader) is not DataLoader:
        return loader
    if isinstance(loader.dataset, IterableDataset) and not _is_stateful(loader.dataset):
        return loader
    return ResumableDataLoader.from_dataloader(loader)


__all__ = ["ResumableDataLoader", "resumable"]
