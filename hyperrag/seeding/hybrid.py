"""Hybrid dense + lexical scores: ``s = α · cos + (1 − α) · lexical`` for a query batch against N items."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from hyperrag.seeding.lexical import LexicalScorer


class HybridScorer:
    """Args:
        embeddings: FloatTensor [N, D] of L2-normalised item embeddings (any device).
        texts: the N item texts (for the lexical part).
        alpha: weight of the cosine; ``1 − alpha`` goes to the lexical score.
        lexical: ``token_overlap`` (HugRAG's normalised token overlap), ``bm25`` or ``overlap`` (see
            :mod:`hyperrag.seeding.lexical`).
    """

    def __init__(self, embeddings: torch.Tensor, texts: Sequence[str], alpha: float = 0.7, lexical: str = "token_overlap",
                 **lexical_kwargs) -> None:
        if embeddings.shape[0] != len(texts):
            raise ValueError(f"{embeddings.shape[0]} embeddings for {len(texts)} texts")
        self.embeddings = embeddings
        self.alpha = alpha
        self.lexical = LexicalScorer(texts, lexical, **lexical_kwargs) if alpha < 1.0 else None

    def scores(self, query_emb: torch.Tensor, queries: Sequence[str]) -> torch.Tensor:
        """Args:
            query_emb: FloatTensor [B, D] (same device as the item embeddings).
            queries: the B query strings.
        Returns:
            FloatTensor [B, N] on the embeddings' device.
        """
        score = self.alpha * (query_emb @ self.embeddings.T)
        if self.lexical is not None:
            score = score + (1.0 - self.alpha) * self.lexical.scores(queries).to(score.device)
        return score
