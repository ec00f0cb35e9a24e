"""Dense retrieval: cosine between the query and passage embeddings."""

from __future__ import annotations

import torch
from typing_extensions import Unpack

from hyperrag.data.types import Dataset
from hyperrag.retrievers.base import RetrievalOutput, Retriever, RetrieverArgs, topk_rows
from hyperrag.retrievers.settings import DenseSettings


class DenseRetriever(Retriever):
    """Args:
        settings: :class:`~hyperrag.retrievers.settings.DenseSettings` (none of its own).
        encoder: sentence embedder (passages cached on disk).
        device: where the passage matrix lives for scoring.
        index_dir: retrieve over this knowledge-graph index directory's passages (its stored passage
            embeddings are reused; it must come from ``encoder``).
    """

    name = "dense"
    supports_index_dir = True
    uses_triples = False
    settings: DenseSettings

    def __init__(self, settings: DenseSettings, **kwargs: Unpack[RetrieverArgs]) -> None:
        super().__init__(settings, **kwargs)
        self.passage_emb: torch.Tensor | None = None

    def index(self, dataset: Dataset) -> None:
        self.passage_emb = None
        if self.index_dir:
            kg = self.open_index_dir(dataset)
            assert kg is not None
            if kg.encoder_key and kg.encoder_key == getattr(self.encoder, "model_key", None):
                self.passage_emb = kg.embeddings.passage  # else (unknown embedder identity): re-embedded
        if self.passage_emb is None:
            self.passage_emb = self.encoder.encode([p.content for p in dataset.corpus.passages], desc="passages")
        self.passage_emb = self.passage_emb.to(self.device)

    def scores(self, questions: list[str]) -> torch.Tensor:
        """FloatTensor [B, P] of cosines."""
        assert self.passage_emb is not None, "call index() first"
        q = self.encoder.encode(questions, desc="queries").to(self.device)
        return q @ self.passage_emb.T

    def retrieve(self, questions: list[str], top_k: int) -> RetrievalOutput:
        idx, val = topk_rows(self.scores(questions), top_k)
        return RetrievalOutput(idx.cpu(), val.cpu())
