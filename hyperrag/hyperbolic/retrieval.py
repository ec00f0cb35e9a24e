"""Batched nearest neighbours by hyperbolic distance: queries [B, D] × points [N, D] → top-k, CPU or CUDA.

For one query ``q`` the distance to ``p`` increases with ``δ ∝ ||q - p||² / (1 - c||p||²)`` (the
query's own factor ``1 - c||q||²`` is common to the row), so candidates are ranked by that key from one
matrix product per block of queries; ``arcosh`` is evaluated only for the ``k`` winners, with the exact
difference form.
Memory is O(block × N), never B × N at once.
"""

from __future__ import annotations

import torch

from hyperrag.hyperbolic.distance import BOUNDARY_EPS, poincare_distance


@torch.no_grad()
def topk_poincare(queries: torch.Tensor, points: torch.Tensor, k: int, curvature: float = 1.0,
                  block_rows: int | None = None, max_block_elements: int = 1 << 26,
                  exclude: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The ``k`` points nearest to each query in the Poincaré ball.

    Args:
        queries: FloatTensor [B, D] inside the ball.
        points: FloatTensor [N, D] inside the ball, same device.
        k: neighbours per query (clipped to N).
        curvature: ``c`` of the ball.
        block_rows: queries per block; default from ``max_block_elements`` (block × N keys at once).
        exclude: optional LongTensor [B] — a point index to leave out per query (e.g. the query itself when
            queries are rows of ``points``); -1 for none.

    Returns:
        ``(indices, distances)``: LongTensor [B, k] and FloatTensor [B, k], nearest first.
    """
    b, n = queries.shape[0], points.shape[0]
    k = min(k, n - (1 if exclude is not None else 0))
    c = float(curvature)
    pn = points.pow(2).sum(-1)
    inv_beta = 1.0 / (1.0 - c * pn).clamp_min(BOUNDARY_EPS)  # [N]
    rows = block_rows or max(1, min(b, max_block_elements // max(n, 1)))
    out_idx, out_dist = [], []
    for start in range(0, b, rows):
        q = queries[start:start + rows]
        qn = q.pow(2).sum(-1, keepdim=True)
        key = (qn + pn - 2.0 * (q @ points.T)).clamp_min_(0.0).mul_(inv_beta)  # ∝ δ, [b, N]
        if exclude is not None:
            ex = exclude[start:start + rows]
            has = ex >= 0
            key[torch.nonzero(has).flatten(), ex[has]] = float("inf")
        _, idx = torch.topk(key, k, dim=1, largest=False)
        dist = poincare_distance(q.unsqueeze(1), points[idx], c)  # exact, [b, k]
        dist, order = torch.sort(dist, dim=1)
        out_idx.append(idx.gather(1, order))
        out_dist.append(dist)
    if not out_idx:
        return (torch.empty(0, k, dtype=torch.long, device=queries.device),
                torch.empty(0, k, dtype=queries.dtype, device=queries.device))
    return torch.cat(out_idx), torch.cat(out_dist)
