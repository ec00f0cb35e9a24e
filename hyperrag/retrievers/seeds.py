"""What a batch of queries seeds HippoRAG 2's graph with: the record its retriever, CatRAG and CatRAG's edge
scorer pass around (one module, so that none of them imports another for it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch


@dataclass
class SeedBatch:
    """Seeds of a batch of B queries.

    Attributes:
        questions: B strings.
        query_emb: [B, D].
        fact_ids / fact_scores / keep: [B, k] top facts, their min-max normalised scores, filter verdicts.
        entity_weight: [B, E] entity reset weights.
        dense: [B, P] query–passage cosines.
        filtered: [B] bool, the LLM fact filter gave this query a verdict (False: LLM-free, or its call failed
            and the query kept every top fact).
        anchors / anchor_source: CatRAG's anchor entities per query and how they were found (``None``: no
            anchoring step ran).
        edge_scores: CatRAG's LLM edge scores, ``(plan, {neighbour: score} or None)`` per scored seed.
    """

    questions: list[str]
    query_emb: torch.Tensor
    fact_ids: torch.Tensor
    fact_scores: torch.Tensor
    keep: torch.Tensor
    entity_weight: torch.Tensor
    dense: torch.Tensor
    filtered: torch.Tensor
    anchors: list[list[int]] | None = None
    anchor_source: list[str] | None = None
    edge_scores: list[tuple[Any, dict[int, int] | None]] = field(default_factory=list)

    @property
    def kept_any(self) -> torch.Tensor:
        """[B] bool: the query kept at least one fact (HippoRAG 2 falls back to dense retrieval otherwise)."""
        return self.keep.any(dim=1)


def min_max(x: torch.Tensor) -> torch.Tensor:
    """Row-wise min-max normalisation of a [B, N] tensor (constant rows → 0)."""
    lo = x.min(dim=1, keepdim=True).values
    hi = x.max(dim=1, keepdim=True).values
    return (x - lo) / (hi - lo).clamp_min(1e-12)


__all__ = ["SeedBatch", "min_max"]
