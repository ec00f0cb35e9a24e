"""``python train.py task=causal_pair``: fine-tune the causal pair classifier on a corpus's silver labels.

The task mines candidates from ``data`` (connectives + OpenIE relations), builds the silver set
(:func:`~hyperrag.causal.labels.build_silver_set`), splits it by passage into train / held-out
(:class:`~hyperrag.causal.datamodule.PairDataModule`) and fine-tunes
:class:`~hyperrag.causal.classifier.CausalPairClassifier`. ``evaluate`` reports held-out accuracy against the
majority-class baseline (the training split's majority label predicted for every held-out example), precision /
recall / F1 of the causal class and accuracy per label source (``reversed`` = direction accuracy).

The checkpoint (``models/causal_pair/<data>-<key>/model.ckpt``) is what ``method=cdfrag`` finds with
``classifier: auto`` to score candidate pairs when it builds the causal graph.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import Any

import torch
from typing_extensions import TypedDict

from hyperrag.causal.candidates import extract_candidates
from hyperrag.causal.classifier import CausalPairClassifier
from hyperrag.causal.datamodule import PairDataModule
from hyperrag.causal.labels import SilverSet, build_silver_set
from hyperrag.config.validation import NonNegativeFloat, NonNegativeInt, PositiveInt
from hyperrag.data.types import Dataset
from hyperrag.utils.hashing import stable_digest
from hyperrag.utils.plotting import pyplot, save_figure

log = logging.getLogger(__name__)




def _settings(factory: Callable[..., Any]) -> dict[str, Any]:
    return {k: v for k, v in sorted(getattr(factory, "keywords", {}).items())}


class LabelSettings(TypedDict, total=False):
    """``task.labels``: :func:`build_silver_set`'s arguments."""

    negative_ratio: NonNegativeFloat
    reversed_negatives: bool
    adjacent_ratio: NonNegativeFloat
    seed: int
    llm_max_pairs: NonNegativeInt


class CausalPairTask:
    """Args:
        dataset: the corpus to mine (its OpenIE file, when present, adds entity-level candidates/negatives).
        model: partial of :class:`CausalPairClassifier`.
        datamodule: partial of :class:`PairDataModule` (all but ``examples``).
        labels: keyword arguments of :func:`build_silver_set` (``negative_ratio``, ``reversed_negatives``,
            ``seed``, ``llm_max_pairs``).
        max_span_words: span length bound of the candidate miner.
        llm: optional LLM config (Hydra node) for verifier labels (``labels.llm_max_pairs`` > 0).
        min_examples: fewer silver examples than this is an input error (the corpus has too few connectives).
        name: ``models/<name>/...``.
    """

    def __init__(self, dataset: Dataset, model: Callable[..., CausalPairClassifier],
                 datamodule: Callable[..., PairDataModule], labels: LabelSettings | None = None,
                 max_span_words: PositiveInt = 14, llm: Any = None, min_examples: PositiveInt = 20,
                 name: str = "causal_pair") -> None:
        self.dataset = dataset
        self.model_factory = model
        self.datamodule_factory = datamodule
        self.label_settings = dict(labels or {})
        self.max_span_words = max_span_words
        self.llm_config = llm
        self.min_examples = min_examples
        self.name = name
        self.data_name = dataset.name

    @cached_property
    def candidates(self):  # type: ignore[no-untyped-def]
        triples = None
        if self.dataset.openie_path is not None:
            from hyperrag.data.openie import read_openie

            triples = read_openie(self.dataset.openie_path, self.dataset.corpus).triples
        return extract_candidates(self.dataset.corpus, triples, max_words=self.max_span_words)

    @cached_property
    def silver(self) -> SilverSet:
        from hyperrag.errors import InputError
        from hyperrag.llm import build_llm

        settings = dict(self.label_settings)
        settings.setdefault("mask_rate", _settings(self.model_factory).get("mask_rate", 0.5))
        with build_llm(self.llm_config) as llm:
            silver = build_silver_set(self.candidates, llm=llm, **settings)
        pos = sum(silver.labels)
        if len(silver) < self.min_examples or pos == 0 or pos == len(silver):
            raise InputError(f"dataset {self.dataset.name!r} yields {len(silver)} silver causal-pair examples "
                             f"({pos} positive) from {self.candidates.count()}; the classifier needs at least "
                             f"{self.min_examples} of both labels — use a corpus with explicit causal connectives "
                             "(e.g. data=musique)", field="data")
        return silver

    def key(self, **extra: Any) -> str:
        data = [(e.text, e.label, e.group) for e in self.silver.examples]
        return stable_digest(self.name, data, _settings(self.model_factory), _settings(self.datamodule_factory), extra,
                             length=10)

    def build_model(self) -> CausalPairClassifier:
        return self.model_factory()

    def build_datamodule(self) -> PairDataModule:
        return self.datamodule_factory(examples=self.silver.examples)

    def load(self, checkpoint: str | Path) -> CausalPairClassifier:
        return CausalPairClassifier.load_from_checkpoint(str(checkpoint), map_location="cpu")

    @torch.no_grad()
    def evaluate(self, model: CausalPairClassifier) -> dict[str, Any]:
        dm = self.build_datamodule()
        train, held = dm.train_examples, dm.val_examples
        y = torch.tensor([e.label for e in held])
        prob = model.predict_proba([e.text for e in held])
        pred = (prob >= 0.5).long()
        majority = int(sum(e.label for e in train) * 2 >= len(train))
        tp = int(((pred == 1) & (y == 1)).sum())
        precision = tp / max(1, int((pred == 1).sum()))
        recall = tp / max(1, int((y == 1).sum()))
        out: dict[str, Any] = {
            "heldout_accuracy": float((pred == y).float().mean()),
            "majority_baseline": float((y == majority).float().mean()),
            "heldout_precision": precision, "heldout_recall": recall,
            "heldout_f1": 2 * precision * recall / max(1e-9, precision + recall),
        }
        for source in sorted({e.source for e in held}):
            idx = [i for i, e in enumerate(held) if e.source == source]
            out[f"heldout_accuracy_{source}"] = float((pred[idx] == y[idx]).float().mean())
        for masked in (False, True):
            idx = [i for i, e in enumerate(held) if e.masked == masked]
            if idx:
                name = "masked" if masked else "verbatim"
                out[f"heldout_accuracy_{name}"] = float((pred[idx] == y[idx]).float().mean())
                maj = float((y[idx] == majority).float().mean())
                out[f"majority_baseline_{name}"] = maj
        out.update({"train_examples": len(train), "heldout_examples": len(held),
                    "heldout_positive_share": float(y.float().mean()),
                    "heldout_passages": len({e.group for e in held})})
        out.update({f"candidates_{k}": v for k, v in self.candidates.count().items()})
        self._last_eval = (prob, y, out)
        return out

    def plot(self, model: CausalPairClassifier, path: str | Path) -> Path:
        """Held-out P(causal) histograms per label and accuracy vs the majority baseline (PNG)."""
        plt = pyplot()

        if getattr(self, "_last_eval", None) is None:
            self.evaluate(model)
        prob, y, metrics = self._last_eval
        out = Path(path).with_name("causal_pair_eval.png")
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
        bins = torch.linspace(0, 1, 21).tolist()
        ax1.hist(prob[y == 1].tolist(), bins=bins, alpha=0.6, label="silver causal (E1→E2)")
        ax1.hist(prob[y == 0].tolist(), bins=bins, alpha=0.6, label="silver non-causal / reversed")
        ax1.set_xlabel("P(E1 causes E2)")
        ax1.set_ylabel("held-out examples")
        ax1.legend(fontsize=8)
        ax2.bar(["classifier", "majority class"], [metrics["heldout_accuracy"], metrics["majority_baseline"]],
                color=["tab:blue", "tab:gray"])
        ax2.set_ylim(0, 1)
        ax2.set_ylabel("held-out accuracy")
        fig.suptitle(f"{self.name} · {self.data_name} ({metrics['heldout_examples']} held-out)")
        return save_figure(fig, out)


__all__ = ["CausalPairTask"]
