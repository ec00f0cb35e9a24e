"""Edge-list data for Poincaré training: shuffled batches of relations with their negatives.

A "sample" of the Nickel & Kiela objective is a relation ``(u, v)`` plus ``k`` negatives for ``u``.
:class:`EdgeBatches` yields whole batches — a permutation slice and one vectorised draw of negatives — so
the ``DataLoader`` runs with ``batch_size=None`` and no per-edge Python or collation.

The stream is resumable inside an epoch (issue 9 item 1): :meth:`EdgeBatches.state_dict` is the generator's state at
the start of the epoch (it draws the permutation), the batches yielded so far and the generator's state now (it
draws the next batch's negatives); after :meth:`EdgeBatches.load_state_dict` the next pass draws the same
permutation and yields the remaining batches with the very negatives of an uninterrupted epoch.
:class:`EdgeDataModule` serves it through torchdata's ``StatefulDataLoader``, which saves and restores that state,
so a Lightning checkpoint holds it.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any, Literal

import lightning as L
import torch
from torch.utils.data import DataLoader, IterableDataset

from hyperrag.config.validation import PositiveInt
from hyperrag.hyperbolic.sampling import NegativeSampler

# EdgeBatches knows its length exactly (it is single-process: num_workers=0); Lightning warns regardless.
warnings.filterwarnings("ignore", message="Your `IterableDataset` has `__len__` defined")


def _check_edges(edges: torch.Tensor, num_nodes: int) -> torch.Tensor:
    edges = torch.as_tensor(edges, dtype=torch.long)
    if edges.ndim != 2 or edges.shape[0] != 2:
        raise ValueError(f"edges must be a LongTensor [2, E], got shape {tuple(edges.shape)}")
    if edges.numel() and (int(edges.min()) < 0 or int(edges.max()) >= num_nodes):
        raise ValueError(f"edge endpoints must lie in [0, {num_nodes})")
    return edges


class EdgeBatches(IterableDataset):
    """One pass = one epoch of shuffled relation batches with negatives.

    Each item is a dict of tensors: ``u`` [B], ``v`` [B], ``neg`` [ceil(B / g), k] (the negatives shared by
    each group of ``g = negative_group_size`` consecutive relations; [B, k] when ``g = 1``) and
    ``neg_valid`` [B, k] (bool, False for a candidate that is the source or one of its true neighbours).

    Args:
        edges: LongTensor [2, E] of relations ``u → v``.
        num_nodes: N.
        batch_size: relations per batch.
        num_negatives: ``k`` per relation.
        negative_group_size: relations sharing one draw of negatives (see
            :meth:`~hyperrag.hyperbolic.sampling.NegativeSampler.sample`).
        exclude: which known relations are masked out of the negatives (see
            :func:`~hyperrag.hyperbolic.sampling.relation_keys`).
        negative_distribution: ``uniform`` over the nodes, or ``degree`` (∝ occurrences in the relations, gensim's).
        shuffle: new permutation each epoch.
        drop_last: drop the final short batch.
        seed: seed of the dataset's own generator (epochs differ, runs repeat).
        device: where batches are built (``cpu`` for a ``DataLoader``; the model's device for the fast path).
    """

    def __init__(self, edges: torch.Tensor, num_nodes: int, batch_size: int = 1024, num_negatives: int = 10,
                 negative_group_size: int = 1, exclude: str = "out", shuffle: bool = True,
                 drop_last: bool = False, seed: int = 0, device: torch.device | str = "cpu",
                 negative_distribution: str = "uniform") -> None:
        super().__init__()
        self.num_nodes = int(num_nodes)
        self.edges = _check_edges(edges, self.num_nodes)
        self.batch_size = int(batch_size)
        self.num_negatives = int(num_negatives)
        self.negative_group_size = int(negative_group_size)
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.seed = seed
        self.sampler = NegativeSampler(self.edges, self.num_nodes, exclude, distribution=negative_distribution)
        self.device: torch.device | None = None
        self._position = 0  # batches of the current pass yielded
        self._epoch_state: torch.Tensor | None = None  # generator state at the start of the current pass
        self._resume: dict[str, Any] | None = None
        self.to(device)

    def to(self, device: torch.device | str) -> EdgeBatches:
        """Move edges and sampler to ``device`` (the generator is re-seeded there)."""
        if self.device == torch.device(device):
            return self
        self.device = torch.device(device)
        self.edges = self.edges.to(self.device)
        self.sampler.to(self.device)
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(self.seed)
        return self

    @property
    def num_edges(self) -> int:
        return int(self.edges.shape[1])

    def __len__(self) -> int:
        full, rest = divmod(self.num_edges, self.batch_size)
        return full + int(rest > 0 and not self.drop_last)

    def state_dict(self) -> dict[str, Any]:
        """Position in the current pass: ``batches`` yielded, generator ``epoch_state`` (start) and ``state`` (now)."""
        return {"batches": self._position, "epoch_state": self._epoch_state, "state": self.generator.get_state()}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """The next pass continues the one ``state_dict`` was taken in (at its start or end: a new pass)."""
        batches = int(state_dict.get("batches", 0))
        if 0 < batches < len(self) and state_dict.get("epoch_state") is not None:
            self._resume = dict(state_dict)
        else:
            self._resume = None
            if state_dict.get("state") is not None:
                self.generator.set_state(state_dict["state"])

    def __iter__(self) -> Iterator[dict[str, torch.Tensor]]:
        e = self.num_edges
        resume, self._resume = self._resume, None  # runs at the first batch drawn: an unused pass keeps it pending
        start = 0
        if resume is not None:
            self.generator.set_state(resume["epoch_state"])
        self._epoch_state, self._position = self.generator.get_state(), 0
        order = (torch.randperm(e, device=self.device, generator=self.generator) if self.shuffle
                 else torch.arange(e, device=self.device))
        if resume is not None:
            self.generator.set_state(resume["state"])
            start = self._position = int(resume["batches"])
        for i in range(start, len(self)):
            idx = order[i * self.batch_size:(i + 1) * self.batch_size]
            u, v = self.edges.index_select(1, idx)
            neg, valid = self.sampler.sample(u, self.num_negatives, self.generator, self.negative_group_size)
            self._position = i + 1
            yield {"u": u, "v": v, "neg": neg, "neg_valid": valid}


class EdgeDataModule(L.LightningDataModule):
    """Lightning wrapper of :class:`EdgeBatches` (train split only: the task is reconstruction).

    Args: as :class:`EdgeBatches`.
    """

    def __init__(self, edges: torch.Tensor, num_nodes: int, batch_size: PositiveInt = 1024,
                 num_negatives: PositiveInt = 10, negative_group_size: PositiveInt = 1,
                 exclude: Literal["out", "both"] = "out", shuffle: bool = True, drop_last: bool = False,
                 seed: int = 0, negative_distribution: Literal["uniform", "degree"] = "uniform") -> None:
        super().__init__()
        self.save_hyperparameters(ignore=["edges"])
        self.dataset = EdgeBatches(edges, num_nodes, batch_size=batch_size, num_negatives=num_negatives,
                                   negative_group_size=negative_group_size, exclude=exclude, shuffle=shuffle,
                                   drop_last=drop_last, seed=seed, negative_distribution=negative_distribution)

    @property
    def edges(self) -> torch.Tensor:
        return self.dataset.edges

    @property
    def num_nodes(self) -> int:
        return self.dataset.num_nodes

    def train_dataloader(self) -> DataLoader:
        self.dataset.to("cpu")  # Lightning moves each batch to the model's device
        from torchdata.stateful_dataloader import StatefulDataLoader

        # resumable inside an epoch: a Lightning checkpoint holds the dataset's position (see the module docstring)
        return StatefulDataLoader(self.dataset, batch_size=None, num_workers=0)

    def batches(self, device: torch.device | str) -> EdgeBatches:
        """The batch stream built directly on ``device`` (no ``DataLoader``, no host→device copies)."""
        return self.dataset.to(device)
