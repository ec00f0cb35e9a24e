"""Blockwise top-k cosine neighbours: memory O(block_rows × N), never an N × N matrix."""

from __future__ import annotations

import torch
from tqdm.auto import tqdm


def topk_cosine_neighbors(
    x: torch.Tensor,
    k: int,
    threshold: float = 0.0,
    block_rows: int | None = None,
    max_block_elements: int = 1 << 27,
    exclude_self: bool = True,
    show_progress: bool = False,
    row_range: tuple[int, int] | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """For every row of ``x``, its ``k`` most similar rows with similarity ``>= threshold``.

    Args:
        x: FloatTensor [N, D], L2-normalised rows (so dot product = cosine). Any device.
        k: neighbours kept per row (before thresholding).
        threshold: minimum similarity of a returned pair.
        block_rows: query rows per block; default from ``max_block_elements`` (block × N scores at once).
        exclude_self: drop the pair (i, i).
        row_range: ``(start, stop)``: only these query rows (all N rows stay candidates) — one shard of the
            work when several processes or devices split it.

    Returns:
        ``(src, dst, sim)``: LongTensor [M], LongTensor [M], FloatTensor [M] on ``x``'s device, one entry per
        kept (row, neighbour) pair, src ascending.
    """
    n = x.shape[0]
    if n == 0:
        empty = torch.empty(0, dtype=torch.long, device=x.device)
        return empty, empty, torch.empty(0, dtype=x.dtype, device=x.device)
    kk = min(k + int(exclude_self), n)
    rows = block_rows or max(1, min(n, max_block_elements // max(n, 1)))
    srcs, dsts, sims = [], [], []
    lo, hi = row_range if row_range is not None else (0, n)
    if not 0 <= lo <= hi <= n:
        raise ValueError(f"row_range {row_range} outside [0, {n}]")
    if lo == hi:
        empty = torch.empty(0, dtype=torch.long, device=x.device)
        return empty, empty, torch.empty(0, dtype=x.dtype, device=x.device)
    starts = range(lo, hi, rows)
    for start in tqdm(starts, desc="knn", disable=not show_progress, leave=False):
        block = x[start : min(start + rows, hi)] @ x.T  # [b, N]
        if exclude_self:
            idx = torch.arange(block.shape[0], device=x.device)
            block[idx, idx + start] = float("-inf")
        val, nbr = torch.topk(block, kk, dim=1)
        keep = val >= threshold
        if exclude_self and kk > k:  # the -inf self column sorted last; trim to k
            keep[:, k:] = False
        row = torch.arange(start, start + block.shape[0], device=x.device).unsqueeze(1).expand_as(nbr)
        srcs.append(row[keep])
        dsts.append(nbr[keep])
        sims.append(val[keep])
    return torch.cat(srcs), torch.cat(dsts), torch.cat(sims)
