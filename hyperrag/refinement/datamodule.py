"""Batches of training-question ids for the PPO policy (``python train.py task=ppo``)."""

from __future__ import annotations

import lightning as L
import torch
from torch.utils.data import DataLoader


class RolloutDataModule(L.LightningDataModule):
    """Batches of training-question ids; each batch is one PPO rollout + update.

    Args:
        ids: positions of the training questions in the environment's query list.
        batch_size: questions per rollout (``None``: all of them, one PPO iteration per epoch).
        seed: seed of the shuffling generator.
    """

    def __init__(self, ids: list[int], batch_size: int | None = None, seed: int = 0) -> None:
        super().__init__()
        self.ids = torch.tensor(ids, dtype=torch.long)  # [Q]
        self.batch_size = batch_size or len(ids)
        self.seed = seed

    def train_dataloader(self) -> DataLoader:
        return DataLoader(self.ids, batch_size=self.batch_size, shuffle=True,
                          generator=torch.Generator().manual_seed(self.seed))


__all__ = ["RolloutDataModule"]
