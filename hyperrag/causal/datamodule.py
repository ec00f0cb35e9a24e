"""Lightning data for the causal pair classifier: silver examples split by passage into train / held-out.

The train loader is torchdata's ``StatefulDataLoader`` (same batches as a plain shuffled ``DataLoader`` with the same
generator), so a fit killed in the middle of an epoch resumes at the next batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import lightning as L
import torch
from torch.utils.data import DataLoader, Dataset

from hyperrag.causal.labels import SilverExample, split_by_group
from hyperrag.config.validation import PositiveInt, Probability


class _Examples(Dataset):
    def __init__(self, examples: Sequence[SilverExample]) -> None:
        self.examples = list(examples)

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, i: int) -> SilverExample:
        return self.examples[i]


def collate(batch: list[SilverExample]) -> tuple[list[str], torch.Tensor]:
    """Marked texts (tokenized by the model) and labels [B]."""
    return [e.text for e in batch], torch.tensor([e.label for e in batch], dtype=torch.long)


class PairDataModule(L.LightningDataModule):
    """Args:
        examples: the silver set (:func:`~hyperrag.causal.labels.build_silver_set`).
        val_fraction: share of passages held out (all their examples go to the held-out split).
        batch_size: examples per step.
        seed: split and shuffling.
    """

    def __init__(self, examples: Sequence[SilverExample], val_fraction: Probability = 0.2,
                 batch_size: PositiveInt = 16, seed: int = 0) -> None:
        super().__init__()
        self.examples = list(examples)
        self.batch_size = batch_size
        self.seed = seed
        self.train_idx, self.val_idx = split_by_group(self.examples, val_fraction, seed)

    @property
    def train_examples(self) -> list[SilverExample]:
        return [self.examples[i] for i in self.train_idx]

    @property
    def val_examples(self) -> list[SilverExample]:
        return [self.examples[i] for i in self.val_idx]

    def train_dataloader(self) -> DataLoader:
        # resumable inside an epoch: a Lightning checkpoint holds the shuffle's state and the batches drawn
        from torchdata.stateful_dataloader import StatefulDataLoader

        gen = torch.Generator().manual_seed(self.seed)
        return StatefulDataLoader(_Examples(self.train_examples), batch_size=self.batch_size, shuffle=True,
                                   collate_fn=collate, generator=gen)

    def val_dataloader(self) -> DataLoader:
        return DataLoader(_Examples(self.val_examples), batch_size=64, shuffle=False, collate_fn=collate)


__all__ = ["PairDataModule", "collate"]
