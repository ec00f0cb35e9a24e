"""Planted-partition test graphs (seeded, so every run sees the same graph)."""

from __future__ import annotations

import torch


def planted_partition(blocks: list[int], p_in: float, p_out: float, seed: int = 0,
                      groups: list[int] | None = None, p_group: float | None = None
                      ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Undirected random graph with planted blocks (and optional groups of consecutive blocks).

    Returns:
        ``(edge_index [2, M] with u < v, weights [M] (all 1), block LongTensor [N])``.
    """
    gen = torch.Generator().manual_seed(seed)
    block = torch.repeat_interleave(torch.arange(len(blocks)), torch.tensor(blocks))
    n = block.shape[0]
    prob = torch.full((n, n), p_out)
    same = block[:, None] == block[None, :]
    if groups is not None:
        group_of_block = torch.repeat_interleave(torch.arange(len(groups)), torch.tensor(groups))
        group = group_of_block[block]
        prob[group[:, None] == group[None, :]] = p_group
    prob[same] = p_in
    upper = torch.triu(torch.rand(n, n, generator=gen) < prob, diagonal=1)
    edge_index = upper.nonzero().T.contiguous()
    return edge_index, torch.ones(edge_index.shape[1]), block
