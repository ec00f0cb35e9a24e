"""Dense retrieval: cosine between the query and passage embeddings."""

from __future__ import annotations

import torch

from hyperrag.data.types import Dataset
from hyperrag.embedding.encoder import TextEncoder
from hyperrag.retrievers.base import RetrievalOutput, Retriever, topk_rows


class DenseRetriever(Retriever):
    """Args:
        encoder: sentence embedder (passages cached on disk).
        device: where the passage matrix lives for scoring.
    """

    name = "dense"

    def __init__(self, *, encoder: TextEncoder, llm: object = None, device: str = "auto") -> None:
        super().__init__(encoder=encoder, llm=llm, device=device)
        self.passage_emb: torch.Tensor | None = None

    def index(self, dataset: Dataset) -> None:
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
