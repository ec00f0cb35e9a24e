"""The retriever interface every method implements: index a dataset once, then retrieve query batches."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from hyperrag.data.types import Dataset
from hyperrag.errors import InputError


@dataclass
class RetrievalOutput:
    """Ranked passages for a batch of B queries.

    Attributes:
        indices: LongTensor [B, k], passage positions in the dataset's corpus, best first (with ``index_dir``,
            that corpus is the index's passages in index order: see :func:`check_index_passages`).
        scores: FloatTensor [B, k].
        details: per query, method-specific facts worth keeping in predictions (seed facts, ...).
    """

    indices: torch.Tensor
    scores: torch.Tensor
    details: list[dict[str, Any]] = field(default_factory=list)


class Retriever(ABC):
    """Every method is built the same way: ``Method(encoder=..., llm=..., device=..., **method_config)``.

    Args:
        encoder: the sentence embedder (methods that need none ignore it).
        llm: an :class:`hyperrag.llm.LLM`; ``None`` or ``NoLLM`` runs the method's LLM-free form.
        device: ``auto`` / ``cpu`` / ``cuda`` for the method's tensors.

    Methods with ``supports_index_dir`` also take ``index_dir=DIR``: they retrieve over that built (and
    possibly updated) knowledge-graph index directory instead of an index keyed on the dataset; the
    dataset's corpus must then be the index's passages in index order
    (:func:`hyperrag.index.passages.dataset_for_index`, which ``retrieve.py index_dir=DIR`` applies).
    """

    name: str = "retriever"
    supports_index_dir: bool = False
    #: set when retrieving over an index directory: its manifest key (part of the batch runner's resume key)
    index_key: str | None = None

    def __init__(self, *, encoder: Any = None, llm: Any = None, device: str = "auto") -> None:
        from hyperrag.utils.availability import resolve_device

        self.encoder = encoder
        self.llm = llm
        self.device = resolve_device(device)
        #: LLM steps the method is configured to run but could not (no LLM, failed call, budget cap), by step
        self.skipped: Counter[str] = Counter()

    @property
    def llm_available(self) -> bool:
        return bool(getattr(self.llm, "available", False))

    def skip(self, step: str, count: int = 1) -> None:
        """Record that a configured LLM step did not run ``count`` times (reported as ``llm_steps_skipped``)."""
        if count > 0:
            self.skipped[step] += int(count)

    @property
    def transductive(self) -> bool:
        """Whether the method builds its index from the very questions it is scored on (reported as such)."""
        return False

    @abstractmethod
    def index(self, dataset: Dataset) -> None:
        """Build or load whatever the method needs for ``dataset`` (cached on disk)."""

    @abstractmethod
    def retrieve(self, questions: list[str], top_k: int) -> RetrievalOutput:
        """Rank the corpus for a batch of questions."""

    def describe(self) -> dict[str, Any]:
        """Settings and index statistics worth recording next to the metrics."""
        return {"method": self.name}


def check_index_passages(index_ids: list[str], dataset: Dataset, index_dir: str | Path) -> None:
    """Raise :class:`InputError` unless ``dataset``'s corpus lists exactly the index's passages, in its order."""
    if list(index_ids) != dataset.corpus.ids:
        raise InputError("the dataset's corpus is not this index's passages in index order; align it first "
                         "with hyperrag.index.passages.dataset_for_index (retrieve.py index_dir=DIR does)",
                         path=index_dir, field="index_dir")


def topk_rows(scores: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-k per row, clipped to the number of columns. Returns (indices [B, k'], values [B, k'])."""
    values, indices = torch.topk(scores, min(k, scores.shape[1]), dim=1)
    return indices, values
