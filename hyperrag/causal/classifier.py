"""The causal pair classifier: a small transformer encoder (MiniLM) reading a sentence with two marked spans.

Input: ``… [E1] candidate cause [/E1] … [E2] candidate effect [/E2] …`` (:mod:`hyperrag.causal.marking`); the four
markers are added to the tokenizer as special tokens. Representation: the encoder's hidden states at the first
``[E1]`` and ``[E2]`` tokens and the attention-masked mean, concatenated; an MLP head gives one logit for "E1 causes
E2" (binary cross-entropy). The encoder is fine-tuned (a smaller learning rate than the head, linear warm-up and
decay over ``max_steps``).

This is UniCausal's pair classification model (Tan et al., 2023: a BERT encoder over ``<ARG0>``/``<ARG1>``-marked
text, ``ŷ = g(r_[CLS])``) with MiniLM as the encoder and the marker tokens' states in the representation.

Model selection: every validation pass (``val_check_interval`` steps, on a held-out part of the *training* splits)
computes F1 per corpus; the weights with the best macro F1 are kept and restored when training ends, so the saved
checkpoint is the selected one (``selection`` in the checkpoint lists every pass). Trained by
``python train.py task=causal_pair data=unicausal`` (:class:`~hyperrag.training.tasks.causal_pair.CausalPairTask`).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Sequence
from typing import Any

import lightning as L
import torch
from torch import nn

from hyperrag.causal.marking import MARKERS, MARKING_FORMAT
from hyperrag.config.validation import (
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    Probability,
)
from hyperrag.utils.hashing import stable_digest

Batch = tuple  # (marked texts, labels [B], corpus names[, loss weights [B]])


def classifier_compatibility(encoder: str) -> str:
    """What a retriever needs to match to use a pair classifier: the marked-text format and the encoder.
    The causal graph builder looks classifiers up by it (``classifier: auto``)."""
    return stable_digest("causal_pair", MARKING_FORMAT, str(encoder), length=16)


def marked_tokenizer(encoder: str) -> Any:
    """The encoder's tokenizer with the four span markers added as special tokens (what the classifier reads, and
    what the training batches are length-bucketed by)."""
    from transformers import AutoTokenizer

    from hyperrag.embedding.encoder import resolve_model_path

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(encoder))
    tokenizer.add_special_tokens({"additional_special_tokens": list(MARKERS)})
    return tokenizer


def binary_prf(pred: torch.Tensor, gold: torch.Tensor) -> dict[str, float]:
    """Precision, recall and F1 of the positive class (0 where undefined), and the counts."""
    tp = int(((pred == 1) & (gold == 1)).sum())
    npred, ngold = int((pred == 1).sum()), int((gold == 1).sum())
    p = tp / npred if npred else 0.0
    r = tp / ngold if ngold else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0,
            "examples": int(gold.numel()), "positives": ngold}


class CausalPairClassifier(L.LightningModule):
    """Every argument is a setting of ``hydra_configs/task/causal_pair.yaml`` (``task.model``), its only source: build
    one by hand with ``CausalPairClassifier(**task_arguments("causal_pair", ...))`` (:mod:`hyperrag.config`).

    Args:
        encoder: a MiniLM-style encoder: name (``all-MiniLM-L6-v2`` is packaged offline) or local folder.
        lr: encoder learning rate (AdamW); ``head_lr`` for the MLP head.
        weight_decay: AdamW weight decay.
        dropout: before the head's output layer.
        max_length: tokens per example.
        max_steps: stop training after this many optimiser steps (``trainer.should_stop``), so a Trainer
            configured for many epochs still does a bounded fine-tune on a CPU; also the length of the learning-rate
            schedule. ``None`` = the Trainer decides, constant rates.
        warmup: share of ``max_steps`` with a linearly rising learning rate.
        freeze_embeddings: keep the pretrained token / position embeddings frozen (the marker tokens' embeddings,
            new to the model, still learn: a separate ``[4, hidden]`` parameter at ``head_lr``). On a CPU this saves
            the dense gradient of the 30k-row embedding table and most of the AdamW update (measured on 2 shared
            cores: the optimiser's part of a ~2.1 s step fell from ~0.2 s to ~0.06 s).
        freeze_layers: also keep the first N transformer layers frozen (0 = fine-tune all); with N > 0 the
            embeddings are frozen whatever ``freeze_embeddings`` says.
        pos_weight: weight of positive examples in the loss (``None`` = 1).
    """

    def __init__(self, *, encoder: str, lr: PositiveFloat, head_lr: PositiveFloat, weight_decay: NonNegativeFloat,
                 dropout: Probability, max_length: PositiveInt, max_steps: PositiveInt | None, warmup: Probability,
                 freeze_embeddings: bool, freeze_layers: NonNegativeInt, pos_weight: PositiveFloat | None) -> None:
        super().__init__()
        self.save_hyperparameters()
        from transformers import AutoModel

        from hyperrag.embedding.encoder import resolve_model_path

        self.tokenizer = marked_tokenizer(encoder)
        self.encoder = AutoModel.from_pretrained(resolve_model_path(encoder))
        self.encoder.resize_token_embeddings(len(self.tokenizer), mean_resizing=False)
        self.encoder.train()  # from_pretrained returns eval mode; dropout belongs to fine-tuning
        self.marker_ids = self.tokenizer.convert_tokens_to_ids(list(MARKERS))
        # the same ids as a tensor that follows the module's device (read every forward with frozen embeddings)
        self.register_buffer("marker_id_tensor", torch.tensor(self.marker_ids), persistent=False)
        hidden = int(self.encoder.config.hidden_size)
        self.head = nn.Sequential(nn.Linear(3 * hidden, hidden), nn.GELU(), nn.Dropout(dropout), nn.Linear(hidden, 1))
        self.marker_embeddings: nn.Parameter | None = None
        if freeze_embeddings or freeze_layers:
            for p in self.encoder.embeddings.parameters():
                p.requires_grad_(False)
            # the markers are new tokens: their rows start from the resize's random init and must learn
            table = self.encoder.get_input_embeddings().weight
            self.marker_embeddings = nn.Parameter(table[self.marker_ids].detach().clone())
            for layer in self.encoder.encoder.layer[:freeze_layers]:
                for p in layer.parameters():
                    p.requires_grad_(False)
        self.selection: list[dict[str, Any]] = []
        self._best: tuple[float, dict[str, torch.Tensor]] | None = None
        self._val: list[tuple[torch.Tensor, torch.Tensor, list[str]]] = []

    @property
    def compatibility(self) -> str:
        return classifier_compatibility(self.hparams.encoder)

    # ---- model ---------------------------------------------------------------------------------------
    def tokenize(self, texts: Sequence[str]) -> dict[str, torch.Tensor]:
        enc = self.tokenizer(list(texts), padding=True, truncation=True, max_length=self.hparams.max_length,
                             return_tensors="pt")
        return {k: v.to(self.device) for k, v in enc.items()}

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, **extra: torch.Tensor) -> torch.Tensor:
        """Logits [B] of "E1 causes E2"."""
        if self.marker_embeddings is None:
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask, **extra).last_hidden_state
        else:  # frozen table, trainable marker rows: the marker tokens' input vectors come from marker_embeddings
            embeds = self.encoder.get_input_embeddings()(input_ids)
            slot = (input_ids.unsqueeze(-1) == self.marker_id_tensor).long()  # [B, T, 4]
            is_marker = slot.sum(-1, keepdim=True).bool()
            from_markers = self.marker_embeddings[slot.argmax(-1)]  # [B, T, H]
            embeds = torch.where(is_marker, from_markers.to(embeds.dtype), embeds)
            hidden = self.encoder(inputs_embeds=embeds, attention_mask=attention_mask, **extra).last_hidden_state
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
    def _loss(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        texts, labels = batch[0], batch[1]
        labels = labels.float().to(self.device)
        weight = batch[3].to(self.device) if len(batch) > 3 else None  # per example (per-corpus class balance)
        logits = self.logits(texts)
        pw = None if self.hparams.pos_weight is None else torch.tensor(float(self.hparams.pos_weight), device=self.device)
        loss = nn.functional.binary_cross_entropy_with_logits(logits, labels, weight=weight, pos_weight=pw)
        return loss, logits, labels

    def training_step(self, batch: Batch, batch_idx: int) -> torch.Tensor:
        loss, logits, labels = self._loss(batch)
        acc = ((logits > 0).float() == labels).float().mean()
        self.log("train/loss", loss, prog_bar=True, batch_size=len(labels))
        self.log("train/acc", acc, prog_bar=True, on_epoch=True, on_step=False, batch_size=len(labels))
        return loss

    def on_train_batch_end(self, outputs: Any, batch: Any, batch_idx: int) -> None:
        max_steps = self.hparams.max_steps
        if max_steps is not None and self.trainer is not None and self.trainer.global_step >= max_steps:
            self.trainer.should_stop = True

    def validation_step(self, batch: Batch, batch_idx: int) -> None:
        loss, logits, labels = self._loss(batch)
        self.log("val/loss", loss, batch_size=len(labels))
        self._val.append((logits.detach().cpu(), labels.detach().cpu(), list(batch[2])))

    def on_validation_epoch_end(self) -> None:
        """F1 per corpus on the held-out part of train; keep the weights with the best macro F1."""
        if not self._val:
            return
        logits = torch.cat([v[0] for v in self._val])
        labels = torch.cat([v[1] for v in self._val]).long()
        corpora = [c for v in self._val for c in v[2]]
        self._val = []
        pred = (logits > 0).long()
        row: dict[str, Any] = {"step": int(self.global_step)}
        for name in sorted(set(corpora)):
            idx = torch.tensor([i for i, c in enumerate(corpora) if c == name])
            row[f"f1_{name}"] = binary_prf(pred[idx], labels[idx])["f1"]
        row["macro_f1"] = sum(v for k, v in row.items() if k.startswith("f1_")) / max(1, len(set(corpora)))
        self.log_dict({f"val/{k}": float(v) for k, v in row.items() if k != "step"})
        if self.trainer is not None and self.trainer.sanity_checking:
            return
        self.selection.append(row)
        if self._best is None or row["macro_f1"] > self._best[0]:
            self._best = (row["macro_f1"], {k: v.detach().clone() for k, v in self.state_dict().items()})

    def on_train_end(self) -> None:
        """Restore the selected weights (the best held-out macro F1) before the checkpoint is saved."""
        if self._best is not None:
            self.load_state_dict(self._best[1])
            best = max(self.selection, key=lambda r: r["macro_f1"])
            for r in self.selection:
                r["selected"] = r is best
            self._best = None  # the final checkpoint holds the selected weights once

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        checkpoint["selection"] = copy.deepcopy(self.selection)
        if self._best is not None:  # a fit in progress (resume checkpoint): the best weights so far travel along
            checkpoint["selection_best"] = {"macro_f1": self._best[0], "state_dict": self._best[1]}

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        self.selection = list(checkpoint.get("selection", []))
        best = checkpoint.get("selection_best")
        self._best = None if best is None else (float(best["macro_f1"]), best["state_dict"])

    def configure_optimizers(self) -> Any:
        enc = [p for p in self.encoder.parameters() if p.requires_grad]
        head = list(self.head.parameters()) + ([self.marker_embeddings] if self.marker_embeddings is not None else [])
        groups = [{"params": head, "lr": self.hparams.head_lr}]
        if enc:
            groups.append({"params": enc, "lr": self.hparams.lr})
        opt = torch.optim.AdamW(groups, weight_decay=self.hparams.weight_decay)
        if self.hparams.max_steps is None:
            return opt
        from transformers import get_linear_schedule_with_warmup

        total = int(self.hparams.max_steps)
        sched = get_linear_schedule_with_warmup(opt, int(self.hparams.warmup * total), total)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


__all__ = ["CausalPairClassifier", "binary_prf", "classifier_compatibility", "marked_tokenizer"]
