"""Dense retrieval: cosine between the query and passage embeddings."""

from __future__ import annotations

import torch

from hyperrag.data.types import Dataset
from hyperrag.embedding.encoder import TextEncoder
from hyperrag.retrievers.base import RetrievalOutput, Retriever, check_index_passages, topk_rows


class DenseRetriever(Retriever):
    """Args:
        encoder: sentence embedder (passages cached on disk).
        device: where the passage matrix lives for scoring.
        index_dir: retrieve over this knowledge-graph index directory's passages (its stored passage
            embeddings are reused when they come from the same encoder).
    """

    name = "dense"
    supports_index_dir = True

    def __init__(self, *, encoder: TextEncoder, llm: object = None, device: str = "auto",
                 index_dir: str | None = None) -> None:
        super().__init__(encoder=encoder, llm=llm, device=device)
        self.index_dir = index_dir
        self.passage_emb: torch.Tensor | None = None

    def index(self, dataset: Dataset) -> None:
        self.passage_emb = None
        if self.index_dir:
            from hyperrag.index.kg_index import load_kg_directory

            kg = load_kg_directory(self.index_dir)
            check_index_passages(kg.graph.passage_ids, dataset, self.index_dir)
            self.index_key = kg.key
            if kg.encoder_key == getattr(self.encoder, "model_key", None):
                self.passage_emb = kg.embeddings.passage
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
