"""The causal pair classifier: a small transformer encoder (MiniLM) reading a sentence with two marked spans.

Input: ``… [E1] span one [/E1] … [C] … [E2] span two [/E2] …`` (see :func:`~hyperrag.causal.labels.mark_pair`;
``[C]`` masks the connective); the five markers are added to the tokenizer as special tokens. Representation: the encoder's hidden states at the
``[E1]`` and ``[E2]`` tokens and the attention-masked mean, concatenated; an MLP head gives one logit for
"E1 causes E2" (binary cross-entropy). The encoder is fine-tuned (a smaller learning rate than the head).

Trained by ``python train.py task=causal_pair`` (:class:`~hyperrag.training.tasks.causal_pair.CausalPairTask`); the
checkpoint is loaded with :meth:`CausalPairClassifier.load_from_checkpoint` and applied with
:meth:`CausalPairClassifier.predict_proba`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import lightning as L
import torch
from torch import nn

from hyperrag.causal.labels import MARKERS
from hyperrag.config.validation import (
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    Probability,
)


class CausalPairClassifier(L.LightningModule):
    """Args:
        encoder: a MiniLM-style encoder: name (``all-MiniLM-L6-v2`` is packaged offline) or local folder.
        lr: encoder learning rate (AdamW); ``head_lr`` for the MLP head.
        weight_decay: AdamW weight decay.
        dropout: before the head's output layer.
        max_length: tokens per example (the marked text is cropped around the spans beforehand).
        max_steps: stop training after this many optimiser steps (``trainer.should_stop``), so a Trainer
            configured for many epochs still does a bounded fine-tune on a CPU; ``None`` = the Trainer decides.
        freeze_layers: keep the embeddings and the first N transformer layers frozen (0 = fine-tune all).
        pos_weight: weight of positive examples in the loss (``None`` = 1).
        mask_rate: share of training texts whose connective was masked as ``[C]`` (connective dropout, see
            :mod:`hyperrag.causal.labels`); > 0 tells the graph builder to show weak candidates masked.
    """

    def __init__(self, encoder: str = "all-MiniLM-L6-v2", lr: PositiveFloat = 3e-5,
                 head_lr: PositiveFloat = 1e-3, weight_decay: NonNegativeFloat = 0.01,
                 dropout: Probability = 0.1, max_length: PositiveInt = 128,
                 max_steps: PositiveInt | None = None, freeze_layers: NonNegativeInt = 0,
                 pos_weight: PositiveFloat | None = None, mask_rate: Probability = 0.5) -> None:
        super().__init__()
        self.save_hyperparameters()
        from transformers import AutoModel, AutoTokenizer

        from hyperrag.embedding.encoder import resolve_model_path

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        path = resolve_model_path(encoder)
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.tokenizer.add_special_tokens({"additional_special_tokens": list(MARKERS)})
        self.encoder = AutoModel.from_pretrained(path)
        self.encoder.resize_token_embeddings(len(self.tokenizer), mean_resizing=False)
        self.encoder.train()  # from_pretrained returns eval mode; dropout belongs to fine-tuning
        self.marker_ids = self.tokenizer.convert_tokens_to_ids(list(MARKERS))
        hidden = int(self.encoder.config.hidden_size)
        self.head = nn.Sequential(nn.Linear(3 * hidden, hidden), nn.GELU(), nn.Dropout(dropout), nn.Linear(hidden, 1))
        if freeze_layers:
            for p in self.encoder.embeddings.parameters():
                p.requires_grad_(False)
            for layer in self.encoder.encoder.layer[:freeze_layers]:
                for p in layer.parameters():
                    p.requires_grad_(False)
        self._train_correct = 0
        self._train_seen = 0

    # ---- model ---------------------------------------------------------------------------------------
    def tokenize(self, texts: Sequence[str]) -> dict[str, torch.Tensor]:
        enc = self.tokenizer(list(texts), padding=True, truncation=True, max_length=self.hparams.max_length,
                             return_tensors="pt")
        return {k: v.to(self.device) for k, v in enc.items()}

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, **extra: torch.Tensor) -> torch.Tensor:
        """Logits [B] of "E1 causes E2"."""
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask, **extra).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        mean = (hidden * mask).sum(1) / mask.sum(1).clamp_min(1.0)
        rows = torch.arange(hidden.shape[0], device=hidden.device)

        def at(marker: int) -> torch.Tensor:
            hit = input_ids == marker
            # first occurrence; a marker lost to truncation falls back to the [CLS] position
            pos = torch.where(hit.any(1), hit.float().argmax(1), torch.zeros_like(hit[:, 0], dtype=torch.long))
            return hidden[rows, pos]

        rep = torch.cat([at(self.marker_ids[0]), at(self.marker_ids[2]), mean], dim=-1)
        return self.head(rep).squeeze(-1)

    def logits(self, texts: Sequence[str]) -> torch.Tensor:
        return self(**self.tokenize(texts))

    @torch.no_grad()
    def predict_proba(self, texts: Sequence[str], batch_size: int = 64) -> torch.Tensor:
        """P(E1 causes E2) for each marked text, FloatTensor [N] on the CPU."""
        if not texts:
            return torch.empty(0)
        was_training = self.training
        self.eval()
        out = [torch.sigmoid(self.logits(texts[i : i + batch_size])).float().cpu()
               for i in range(0, len(texts), batch_size)]
        self.train(was_training)
        return torch.cat(out)

    # ---- training ------------------------------------------------------------------------------------
    def _loss(self, batch: tuple[list[str], torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        texts, labels = batch
        labels = labels.float().to(self.device)
        logits = self.logits(texts)
        pw = None if self.hparams.pos_weight is None else torch.tensor(float(self.hparams.pos_weight), device=self.device)
        loss = nn.functional.binary_cross_entropy_with_logits(logits, labels, pos_weight=pw)
        return loss, logits, labels

    def training_step(self, batch: tuple[list[str], torch.Tensor], batch_idx: int) -> torch.Tensor:
        loss, logits, labels = self._loss(batch)
        acc = ((logits > 0).float() == labels).float().mean()
        self.log("train/loss", loss, prog_bar=True, batch_size=len(labels))
        self.log("train/acc", acc, prog_bar=True, on_epoch=True, on_step=False, batch_size=len(labels))
        return loss

    def on_train_batch_end(self, outputs: Any, batch: Any, batch_idx: int) -> None:
        max_steps = self.hparams.max_steps
        if max_steps is not None and self.trainer is not None and self.trainer.global_step >= max_steps:
            self.trainer.should_stop = True

    def validation_step(self, batch: tuple[list[str], torch.Tensor], batch_idx: int) -> None:
        loss, logits, labels = self._loss(batch)
        self.log("val/loss", loss, prog_bar=True, batch_size=len(labels))
        self.log("val/acc", ((logits > 0).float() == labels).float().mean(), prog_bar=True, batch_size=len(labels))

    def configure_optimizers(self) -> torch.optim.Optimizer:
        enc = [p for p in self.encoder.parameters() if p.requires_grad]
        groups = [{"params": self.head.parameters(), "lr": self.hparams.head_lr}]
        if enc:
            groups.append({"params": enc, "lr": self.hparams.lr})
        return torch.optim.AdamW(groups, weight_decay=self.hparams.weight_decay)


__all__ = ["CausalPairClassifier"]
