"""Maximal marginal relevance, batched: k diverse, relevant items per query.

Step by step, each query picks ``argmax_i λ · rel_i − (1 − λ) · max_{j ∈ S} sim(i, j)`` among its ``pool``
most relevant items (Carbonell & Goldstein, 1998); every step is one batched tensor operation.
"""

from __future__ import annotations

import torch


def mmr_select(relevance: torch.Tensor, embeddings: torch.Tensor, k: int, lam: float = 0.7, pool: int = 64
               ) -> tuple[torch.Tensor, torch.Tensor]:
    """Args:
        relevance: FloatTensor [B, N], query–item relevance.
        embeddings: FloatTensor [N, D], L2-normalised (similarity = dot product).
        k: items to select per query (clipped to N).
        lam: λ ∈ [0, 1]; 1 = plain top-k by relevance, lower = more diversity.
        pool: candidates per query (the ``pool`` most relevant), ≥ k.

    Returns:
        ``(indices [B, k'], relevance [B, k'])`` in selection order.
    """
    b, n = relevance.shape
    k = min(k, n)
    if k == 0:
        empty = torch.empty(b, 0, dtype=torch.long, device=relevance.device)
        return empty, relevance.new_empty(b, 0)
    pool = min(max(pool, k), n)
    rel, cand = torch.topk(relevance, pool, dim=1)  # [B, P]
    emb = embeddings[cand]  # [B, P, D]
    sim = emb @ emb.transpose(1, 2)  # [B, P, P]
    max_sim = torch.zeros_like(rel)
    chosen = torch.zeros_like(rel, dtype=torch.bool)
    rows = torch.arange(b, device=relevance.device)
    picks = []
    for step in range(k):
        score = lam * rel - (1.0 - lam) * max_sim if step else rel.clone()
        score = score.masked_fill(chosen, float("-inf"))
        pick = score.argmax(dim=1)  # [B]
        picks.append(pick)
        chosen[rows, pick] = True
        max_sim = torch.maximum(max_sim, sim[rows, pick]) if step else sim[rows, pick]
    pos = torch.stack(picks, dim=1)
    return cand.gather(1, pos), rel.gather(1, pos)
