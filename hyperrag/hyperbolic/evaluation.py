"""Reconstruction metrics of an embedded graph (Nickel & Kiela 2017, §4.1): mean rank and MAP.

For every relation ``(u, v)`` its distance ``d(u, v)`` is ranked among the distances from ``u`` to the
*negatives* of ``u`` — every node except ``u`` itself and the nodes related to ``u``:
``rank = 1 + #{w negative: d(u, w) < d(u, v)}`` (1 is perfect). Average precision of ``u`` puts its
``m`` positives, sorted by rank ``r_1 ≤ … ≤ r_m``, at list positions ``r_j + j − 1`` and averages the
precisions ``j / (r_j + j − 1)``; MAP averages over the nodes with at least one relation. This is gensim's
``ReconstructionEvaluation`` formula, except that ``u`` itself is not counted as a negative (gensim's ranks
it first at distance 0, adding 1 to every rank); the official Nickel & Kiela code excludes it too.

Computed blockwise over source nodes: one [block, N] distance matrix, a row sort of the negatives and a
``searchsorted`` for all positives at once; memory O(block × N).
"""

from __future__ import annotations

import torch

from hyperrag.graph.utils import ptr_from_sorted_rows, unique_edges, with_reverse
from hyperrag.hyperbolic.distance import pairwise_delta


def _csr(edges: torch.Tensor, num_nodes: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Deduplicated, self-loop-free relations as CSR (rowptr [N+1], col [E'])."""
    row, col = unique_edges(edges, num_nodes)
    return ptr_from_sorted_rows(row, num_nodes), col


@torch.no_grad()
def reconstruction_metrics(points: torch.Tensor, edges: torch.Tensor, curvature: float = 1.0,
                           symmetric: bool = False, max_block_elements: int = 1 << 24,
                           dtype: torch.dtype = torch.float64) -> dict[str, float]:
    """Mean rank and MAP of the relations ``edges`` reconstructed from ``points``.

    Args:
        points: FloatTensor [N, D] in the Poincaré ball (any device).
        edges: LongTensor [2, E] of relations ``u → v``.
        curvature: ``c`` of the ball.
        symmetric: also count ``v → u`` for every relation.
        max_block_elements: bound on block × N entries held at once.
        dtype: precision of the distance computation (float64 keeps near-ties exact).

    Returns:
        ``mean_rank``, ``map``, ``num_relations`` (ranked pairs) and ``num_sources`` (nodes with relations).
    """
    n = points.shape[0]
    x = points.detach().to(dtype)
    edges = edges.to(x.device)
    if symmetric:
        (edges,) = with_reverse(edges)
    rowptr, col = _csr(edges, n)
    degree = rowptr[1:] - rowptr[:-1]
    sources = torch.nonzero(degree > 0).flatten()
    if sources.numel() == 0:
        return {"mean_rank": float("nan"), "map": float("nan"), "num_relations": 0, "num_sources": 0}
    rank_sum = torch.zeros((), dtype=torch.float64, device=x.device)
    ap_sum = torch.zeros((), dtype=torch.float64, device=x.device)
    block = max(1, min(sources.numel(), max_block_elements // max(n, 1)))
    for start in range(0, sources.numel(), block):
        src = sources[start:start + block]  # [b]
        b = src.numel()
        deg = degree[src]
        m = int(deg.max())
        # padded positives [b, m]: col[rowptr[s] + j] for j < deg[s]
        j = torch.arange(m, device=x.device)
        valid = j[None, :] < deg[:, None]
        zero = torch.zeros_like(valid, dtype=torch.long)
        pos_idx = torch.where(valid, rowptr[src][:, None] + j[None, :], zero)
        pos = torch.where(valid, col[pos_idx], zero)
        dist = pairwise_delta(x[src], x, curvature)  # monotone in the distance: same ranks
        d_pos = dist.gather(1, pos)
        rows = torch.arange(b, device=x.device)
        neg = dist.clone()
        neg[rows[:, None].expand_as(pos)[valid], pos[valid]] = float("inf")
        neg[rows, src] = float("inf")
        neg, _ = torch.sort(neg, dim=1)
        ranks = torch.searchsorted(neg, d_pos.contiguous(), right=False).to(torch.float64) + 1.0  # [b, m]
        rank_sum += ranks[valid].sum()
        ranks_sorted, _ = torch.sort(torch.where(valid, ranks, torch.full_like(ranks, float("inf"))), dim=1)
        k = torch.arange(1, m + 1, device=x.device, dtype=torch.float64)
        precision = torch.where(valid, k[None, :] / (ranks_sorted + k[None, :] - 1.0),
                                torch.zeros_like(ranks))
        ap_sum += (precision.sum(1) / deg.to(torch.float64)).sum()
    num_rel = int(degree.sum())
    return {"mean_rank": float(rank_sum) / num_rel, "map": float(ap_sum) / sources.numel(),
            "num_relations": num_rel, "num_sources": int(sources.numel())}
