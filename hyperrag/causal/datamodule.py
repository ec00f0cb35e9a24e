"""Lightning data for the causal pair classifier: UniCausal's train splits, a held-out part for model selection.

The held-out part is drawn from the *training* splits (``val_fraction`` of each corpus's sentences, at most
``val_max_per_corpus`` examples per corpus; all pairs of one sentence on one side), never from the test splits.
Training batches are length-bucketed (examples of similar token length together, a CPU fine-tune pays for padding)
in an order fixed by the seed; the train loader is torchdata's ``StatefulDataLoader``, so a fit killed in the middle
of an epoch resumes at the next batch.

Corpus balance (``corpus_sampling``): SemEval holds 64 % of the training examples and BECAUSE 5 %, so in proportional
order the small corpora are a few batches an epoch. An epoch instead draws corpus ``c`` in proportion to
``n_c ** a`` (``a`` = 1: proportional, every example once; ``a`` = 0.5: square-root, AltLex and BECAUSE each about
12 % of the draws; ``a`` = 0: uniform over corpora): the largest share's corpus is read once, the others as many
reshuffled passes as their share asks (the last one partial) — :func:`corpus_balanced_indices`.

Class balance per corpus (``positive_balance``): the corpora differ in how rare a causal pair is (CTB 8 %, SemEval
13 %, AltLex 52 %, BECAUSE 75 % positive), so a positive of corpus ``c`` weighs ``(negatives_c / positives_c) ** p``
in the loss — ``none`` p = 0, ``sqrt`` p = 1/2, ``full`` p = 1 — counted on the training part.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import partial
from typing import Literal

import lightning as L
import torch
from torch.utils.data import DataLoader, Dataset

from hyperrag.config.validation import PositiveInt, Probability
from hyperrag.data.unicausal import PairExample


class _Examples(Dataset):
    def __init__(self, examples: Sequence[PairExample]) -> None:
        self.examples = list(examples)

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, i: int) -> PairExample:
        return self.examples[i]


def collate(batch: list[PairExample], weights: dict[str, float] | None = None
            ) -> tuple[list[str], torch.Tensor, list[str], torch.Tensor]:
    """Marked texts (tokenized by the model), labels [B], corpus names and loss weights [B] (a positive of corpus
    ``c`` weighs ``weights[c]``, every negative 1)."""
    w = weights or {}
    return ([e.text for e in batch], torch.tensor([e.label for e in batch], dtype=torch.long), [e.corpus for e in batch],
            torch.tensor([w.get(e.corpus, 1.0) if e.label else 1.0 for e in batch], dtype=torch.float32))


BALANCE = {"none": 0.0, "sqrt": 0.5, "full": 1.0}


def positive_weights(examples: Sequence[PairExample], balance: str) -> dict[str, float]:
    """Per corpus, the weight of a positive: ``(negatives / positives) ** p`` (:data:`BALANCE`)."""
    out = {}
    for corpus in sorted({e.corpus for e in examples}):
        pos = sum(e.label for e in examples if e.corpus == corpus)
        neg = sum(1 - e.label for e in examples if e.corpus == corpus)
        out[corpus] = (neg / pos) ** BALANCE[balance] if pos and neg else 1.0
    return out


def split_heldout(examples: Sequence[PairExample], val_fraction: float, val_max_per_corpus: int | None,
                  seed: int) -> tuple[list[int], list[int]]:
    """Train / held-out indices: per corpus, a seeded share of its sentences (``group``) is held out, capped at
    ``val_max_per_corpus`` examples."""
    rng = random.Random(seed)
    train: list[int] = []
    held: list[int] = []
    for corpus in sorted({e.corpus for e in examples}):
        idx = [i for i, e in enumerate(examples) if e.corpus == corpus]
        groups = sorted({examples[i].group for i in idx})
        rng.shuffle(groups)
        n_groups = max(1, round(val_fraction * len(groups))) if val_fraction > 0 and len(groups) > 1 else 0
        chosen: set[str] = set()
        count = 0
        by_group: dict[str, int] = {}
        for i in idx:
            by_group[examples[i].group] = by_group.get(examples[i].group, 0) + 1
        for g in groups[:n_groups]:
            if val_max_per_corpus is not None and count + by_group[g] > val_max_per_corpus and chosen:
                break
            chosen.add(g)
            count += by_group[g]
        for i in idx:
            (held if examples[i].group in chosen else train).append(i)
    return sorted(train), sorted(held)


def corpus_balanced_indices(corpora: Sequence[str], exponent: float, seed: int) -> list[int]:
    """One epoch's example indices (with repeats) in which corpus ``c`` takes a share ``∝ n_c ** exponent``.

    The epoch is as long as reading the corpus with the largest share once; every other corpus fills its share with
    seeded reshuffled passes over its examples (the last pass cut short), so no example is drawn twice before every
    example of its corpus was drawn once. ``exponent`` 1 returns each index once.

    Args:
        corpora: the corpus of each example.
        exponent: 1 proportional, 0.5 square-root, 0 uniform over corpora.
        seed: the passes' shuffles.
    Returns:
        Indices into ``corpora`` grouped by corpus (order them with :func:`bucketed_order`).
    """
    rng = random.Random(seed)
    by_corpus: dict[str, list[int]] = {}
    for i, c in enumerate(corpora):
        by_corpus.setdefault(c, []).append(i)
    mass = {c: len(idx) ** exponent for c, idx in sorted(by_corpus.items())}
    share = {c: m / sum(mass.values()) for c, m in mass.items()}
    epoch = max(len(by_corpus[c]) / share[c] for c in share)  # the largest-share corpus read exactly once
    out: list[int] = []
    for c, idx in sorted(by_corpus.items()):
        want = round(epoch * share[c])
        while want > 0:
            chunk = list(idx)
            rng.shuffle(chunk)
            out += chunk[:want]
            want -= len(chunk)
    return out


def bucketed_order(lengths: Sequence[int], batch_size: int, seed: int, bucket_batches: int = 50) -> list[int]:
    """A seeded order of example indices in which each run of ``batch_size`` holds examples of similar length:
    shuffle, sort each window of ``bucket_batches`` batches by length, cut into batches, shuffle the full batches.

    The one short batch (``len(lengths) % batch_size`` examples) goes last: the loader cuts the flat order every
    ``batch_size`` examples, so a short batch in the middle would shift every later cut off its bucket (measured
    on UniCausal: padded length 52 tokens a batch instead of 38)."""
    rng = random.Random(seed)
    order = list(range(len(lengths)))
    rng.shuffle(order)
    window = batch_size * bucket_batches
    full: list[list[int]] = []
    short: list[int] = []
    for start in range(0, len(order), window):
        chunk = sorted(order[start:start + window], key=lambda i: lengths[i])
        for b in range(0, len(chunk), batch_size):
            batch = chunk[b:b + batch_size]
            if len(batch) == batch_size:
                full.append(batch)
            else:
                short = batch
    rng.shuffle(full)
    return [i for b in full for i in b] + short


class PairDataModule(L.LightningDataModule):
    """The settings are ``task.datamodule`` of ``hydra_configs/task/causal_pair.yaml``, their only source.

    Args:
        examples: UniCausal's training examples (:attr:`~hyperrag.data.unicausal.UniCausalPairs.train`).
        val_fraction: share of each corpus's sentences held out for model selection.
        val_max_per_corpus: at most this many held-out examples per corpus (``None``: no cap) — the held-out
            pass runs several times during the fit.
        batch_size: examples per step.
        positive_balance: ``none`` | ``sqrt`` | ``full``: the per-corpus weight of positives in the loss.
        corpus_sampling: exponent ``a`` of the per-corpus share of an epoch's draws, ``∝ n_c ** a`` (1 =
            proportional; see the module docstring).
        seed: held-out draw and batch order.
        length_encoder: the classifier's encoder: batches are bucketed by its token count of the marked text
            (``None``: by word count, a coarser proxy — 20 % more padding on UniCausal).
    """

    def __init__(self, examples: Sequence[PairExample], *, val_fraction: Probability,
                 val_max_per_corpus: PositiveInt | None, batch_size: PositiveInt,
                 positive_balance: Literal["none", "sqrt", "full"], corpus_sampling: Probability, seed: int,
                 length_encoder: str | None) -> None:
        super().__init__()
        self.examples = list(examples)
        self.length_encoder = length_encoder
        self.batch_size = batch_size
        self.corpus_sampling = corpus_sampling
        self.seed = seed
        self.train_idx, self.val_idx = split_heldout(self.examples, val_fraction, val_max_per_corpus, seed)
        self.weights = positive_weights(self.train_examples, positive_balance)

    @property
    def train_examples(self) -> list[PairExample]:
        return [self.examples[i] for i in self.train_idx]

    @property
    def val_examples(self) -> list[PairExample]:
        return [self.examples[i] for i in self.val_idx]

    def train_dataloader(self) -> DataLoader:
        # resumable inside an epoch: a Lightning checkpoint holds the loader's position
        from torchdata.stateful_dataloader import StatefulDataLoader

        train = self.train_examples
        lengths = self._lengths(train)  # each distinct example once; the balanced epoch repeats small corpora
        draws = (corpus_balanced_indices([e.corpus for e in train], self.corpus_sampling, self.seed)
                 if self.corpus_sampling != 1.0 else range(len(train)))
        train, lengths = [train[i] for i in draws], [lengths[i] for i in draws]
        order = bucketed_order(lengths, self.batch_size, self.seed)
        return StatefulDataLoader(_Examples([train[i] for i in order]), batch_size=self.batch_size, shuffle=False,
                                  collate_fn=partial(collate, weights=self.weights))

    def _lengths(self, examples: Sequence[PairExample]) -> list[int]:
        texts = [e.text for e in examples]
        if self.length_encoder is None:
            return [len(t.split()) for t in texts]
        from hyperrag.causal.classifier import marked_tokenizer

        return [len(ids) for ids in marked_tokenizer(self.length_encoder)(texts)["input_ids"]]

    def val_dataloader(self) -> DataLoader:
        val = sorted(self.val_examples, key=lambda e: len(e.text.split()))  # little padding, same result
        return DataLoader(_Examples(val), batch_size=64, shuffle=False, collate_fn=collate)


__all__ = ["BALANCE", "PairDataModule", "bucketed_order", "collate", "corpus_balanced_indices", "positive_weights",
           "split_heldout"]
