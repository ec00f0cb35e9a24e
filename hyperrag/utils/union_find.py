"""Disjoint sets (union–find), shared by entity deduplication and tree fusion."""

from __future__ import annotations

import torch


class UnionFind:
    """Disjoint sets over ``0..n-1`` with path halving and union by size."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))
        self.size = [1] * n

    def find(self, x: int) -> int:
        parent = self.parent
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(self, a: int, b: int) -> bool:
        """Join the sets of ``a`` and ``b``; False when they already were one."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        if self.size[ra] < self.size[rb]:
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.size[ra] += self.size[rb]
        return True

    def labels(self) -> torch.Tensor:
        """LongTensor [n]: group of every element, groups numbered by first appearance."""
        roots = [self.find(i) for i in range(len(self.parent))]
        first: dict[int, int] = {}
        return torch.tensor([first.setdefault(r, len(first)) for r in roots], dtype=torch.long)
