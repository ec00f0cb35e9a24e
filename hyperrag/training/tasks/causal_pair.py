"""``python train.py task=causal_pair data=unicausal``: CDF-RAG's causal pair classifier, trained on UniCausal.

CDF-RAG (§2.1, Appendix A.1) extracts cause → effect pairs with UniCausal's pair classifier: a BERT encoder over a
sentence whose candidate arguments are marked ``<ARG0>``/``<ARG1>``. This task fine-tunes
:class:`~hyperrag.causal.classifier.CausalPairClassifier` (MiniLM by default) on UniCausal's released train splits
(:func:`~hyperrag.data.unicausal.unicausal_dataset`), selects the weights on a held-out part of those train splits
(:class:`~hyperrag.causal.datamodule.PairDataModule`; the test splits are never looked at before the end), and
``evaluate`` reports precision / recall / F1 of the causal class on every test split next to UniCausal's published
F1 (``anchor_f1``, a BERT-base trained on six corpora including PDTB) and the share of it reached.

The checkpoint (``models/causal_pair/unicausal-<key>/model.ckpt``) carries an artifact record — dataset
``unicausal``, no query ids, the compatibility key of its marked-text format and encoder — which is what CDF-RAG's
``classifier: auto`` looks for when it scores a corpus's candidate pairs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from hyperrag.causal.classifier import CausalPairClassifier, binary_prf, classifier_compatibility
from hyperrag.causal.datamodule import PairDataModule
from hyperrag.config.validation import PositiveInt
from hyperrag.data.unicausal import UniCausalPairs
from hyperrag.utils.artifacts import ArtifactRecord
from hyperrag.utils.hashing import stable_digest
from hyperrag.utils.plotting import pyplot, save_figure

log = logging.getLogger(__name__)


def _keywords(factory: Callable[..., Any]) -> dict[str, Any]:
    return {k: v for k, v in sorted(getattr(factory, "keywords", {}).items())}


class CausalPairTask:
    """Args:
        dataset: UniCausal's pair classification splits (``data=unicausal``).
        model: partial of :class:`CausalPairClassifier`.
        datamodule: partial of :class:`PairDataModule` (all but ``examples``).
        val_every: optimiser steps between held-out passes (model selection); make ``model.max_steps`` a
            multiple of it so the last weights are judged too.
        anchor_f1: the published F1 per test corpus to compare with (percent; corpora without one are reported
            without a ratio).
        name: ``models/<name>/...``.
        torch_threads: the fit's torch intra-op threads (``train.yaml``'s ``torch_threads`` reads it; a command-line
            ``torch_threads=N`` still wins): a transformer fine-tune's matrix products are big enough for two.
    """

    plot_filename = "causal_pair_eval.png"

    def __init__(self, dataset: UniCausalPairs, model: Callable[..., CausalPairClassifier],
                 datamodule: Callable[..., PairDataModule], val_every: PositiveInt,
                 anchor_f1: dict[str, float] | None, name: str, torch_threads: PositiveInt) -> None:
        from hyperrag.errors import InputError

        if not isinstance(dataset, UniCausalPairs):
            raise InputError("the causal pair classifier trains on UniCausal's pair classification splits: use "
                             "data=unicausal", field="data")
        self.dataset = dataset
        self.model_factory = model
        self.datamodule_factory = datamodule
        self.val_every = int(val_every)
        self.anchor_f1 = dict(anchor_f1 or {})
        self.name = name
        self.torch_threads = int(torch_threads)
        self.data_name = dataset.name
        self._last_eval: dict[str, Any] | None = None

    @property
    def encoder_name(self) -> str:
        return str(_keywords(self.model_factory)["encoder"])  # task.model.encoder, always given by the YAML

    def key(self, **extra: Any) -> str:
        data = [(e.text, e.label, e.corpus) for e in self.dataset.train]
        return stable_digest(self.name, data, _keywords(self.model_factory), _keywords(self.datamodule_factory),
                             self.val_every, extra, length=10)

    def artifact(self) -> ArtifactRecord:
        """Trained on UniCausal, no question of any retrieval dataset; usable by retrievers whose marked-text
        format and classifier encoder match."""
        return ArtifactRecord(self.name, self.dataset.name, (), classifier_compatibility(self.encoder_name))

    def trainer_overrides(self) -> dict[str, Any]:
        # model selection every val_every steps, across epoch boundaries; max_steps (the model's) ends the fit
        return {"val_check_interval": self.val_every, "check_val_every_n_epoch": None}

    def build_model(self) -> CausalPairClassifier:
        return self.model_factory()

    def build_datamodule(self) -> PairDataModule:
        return self.datamodule_factory(examples=self.dataset.train)

    def load(self, checkpoint: str | Path) -> CausalPairClassifier:
        return CausalPairClassifier.load_from_checkpoint(str(checkpoint), map_location="cpu")

    @torch.no_grad()
    def evaluate(self, model: CausalPairClassifier) -> dict[str, Any]:
        """P / R / F1 of the causal class per test split (threshold 0.5), against the anchor."""
        dm = self.build_datamodule()
        out: dict[str, Any] = {"train_examples": len(dm.train_idx), "heldout_examples": len(dm.val_idx)}
        selected = [r for r in model.selection if r.get("selected")]
        if selected:
            out["selected_step"] = selected[0]["step"]
            out["heldout_macro_f1"] = selected[0]["macro_f1"]
        probs: dict[str, torch.Tensor] = {}
        for corpus, examples in self.dataset.test.items():
            order = sorted(range(len(examples)), key=lambda i: len(examples[i].text.split()))
            p = model.predict_proba([examples[i].text for i in order])
            prob = torch.empty_like(p)
            prob[torch.tensor(order)] = p
            gold = torch.tensor([e.label for e in examples])
            prf = binary_prf((prob >= 0.5).long(), gold)
            probs[corpus] = prob
            out[f"test_{corpus}_precision"] = round(100 * prf["precision"], 2)
            out[f"test_{corpus}_recall"] = round(100 * prf["recall"], 2)
            out[f"test_{corpus}_f1"] = round(100 * prf["f1"], 2)
            out[f"test_{corpus}_examples"] = prf["examples"]
            out[f"test_{corpus}_positives"] = prf["positives"]
            if corpus in self.anchor_f1:
                out[f"test_{corpus}_anchor_f1"] = self.anchor_f1[corpus]
                out[f"test_{corpus}_share_of_anchor"] = round(100 * (100 * prf["f1"]) / self.anchor_f1[corpus], 1)
        out.update({f"skipped_rows_{k}": v for k, v in self.dataset.skipped.items()})
        self._last_eval = {"probs": probs, "metrics": out}
        return out

    def plot(self, model: CausalPairClassifier, path: str | Path) -> Path:
        """Test F1 per corpus vs the anchor, and the held-out macro F1 at each model-selection pass (PNG)."""
        plt = pyplot()
        if self._last_eval is None:
            self.evaluate(model)
        assert self._last_eval is not None
        m = self._last_eval["metrics"]
        corpora = list(self.dataset.test)
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.6))
        xs = range(len(corpora))
        ax1.bar([x - 0.2 for x in xs], [m[f"test_{c}_f1"] for c in corpora], width=0.4, label="ours")
        ax1.bar([x + 0.2 for x in xs], [self.anchor_f1.get(c, 0.0) for c in corpora], width=0.4,
                label="UniCausal (BERT-base, 6 corpora)", color="tab:gray")
        ax1.set_xticks(list(xs), corpora, fontsize=8)
        ax1.set_ylabel("test F1 (causal class)")
        ax1.set_ylim(0, 100)
        ax1.legend(fontsize=8)
        steps = [r["step"] for r in model.selection]
        ax2.plot(steps, [100 * r["macro_f1"] for r in model.selection], marker="o")
        ax2.set_xlabel("optimiser step")
        ax2.set_ylabel("held-out macro F1 (train split)")
        fig.suptitle(f"{self.name} · {self.encoder_name} on {self.data_name}")
        return save_figure(fig, path)


__all__ = ["CausalPairTask"]
