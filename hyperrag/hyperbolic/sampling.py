"""Vectorised negative sampling for Nickel & Kiela training: uniform nodes, true neighbours masked out.

For each source ``u`` of a batch, ``k`` candidates are drawn uniformly from all nodes in one
``torch.randint`` call (``distribution="degree"``: in proportion to how often a node occurs in the relations,
gensim's ``PoincareModel`` protocol — one ``randint`` into the cumulative counts and a ``searchsorted``). Candidates that are ``u`` itself or a true neighbour of ``u`` are not resampled
(a Python loop) but *masked*: the loss drops them from the softmax. Membership of a pair ``u·N + v`` is a
lookup in a packed bit matrix (N² bits, used while that is at most ``max_bitmap_bytes``) or else one
``searchsorted`` into the sorted keys of the known relations — either way a few tensor ops per batch on the
batch's device, CPU or CUDA.
"""

from __future__ import annotations

import torch

from hyperrag.graph.utils import distinct_edges, ptr_from_counts


def relation_keys(edges: torch.Tensor, num_nodes: int, exclude: str = "out") -> torch.Tensor:
    """Sorted unique int64 keys ``u·N + v`` of the pairs that are *not* negatives for ``u``.

    Args:
        edges: LongTensor [2, E] of relations ``u → v``.
        num_nodes: N.
        exclude: ``"out"`` — ``v`` is not a negative for ``u`` when ``u → v`` is a relation (Nickel &
            Kiela, gensim); ``"both"`` — nor when ``v → u`` is.
    """
    if exclude not in ("out", "both"):
        raise ValueError(f"exclude must be 'out' or 'both', got {exclude!r}")
    pairs = distinct_edges(edges, num_nodes, both_ways=exclude == "both")  # sorted by (u, v): keys ascending
    return pairs[0] * num_nodes + pairs[1]


class NegativeSampler:
    """Uniform negatives with true neighbours masked.

    Args:
        edges: LongTensor [2, E] of relations.
        num_nodes: N.
        exclude: see :func:`relation_keys`.
    """

    def __init__(self, edges: torch.Tensor, num_nodes: int, exclude: str = "out",
                 max_bitmap_bytes: int = 64 << 20, distribution: str = "uniform") -> None:
        if distribution not in ("uniform", "degree"):
            raise ValueError(f"distribution must be 'uniform' or 'degree', got {distribution!r}")
        self.num_nodes = int(num_nodes)
        self.exclude = exclude
        self.keys = relation_keys(edges, self.num_nodes, exclude)
        # degree: cumulative counts of each node's occurrences in the relations (both ends), as gensim samples
        self.cum_counts = (ptr_from_counts(torch.bincount(edges.reshape(-1).long(), minlength=self.num_nodes))[1:]
                           if distribution == "degree" else None)
        # pair keys u·N + v fit int32 for N ≤ 46,340: half the memory traffic of int64
        self.key_dtype = torch.int32 if self.num_nodes ** 2 < 2 ** 31 else torch.long
        self.bitmap: torch.Tensor | None = None
        if self.num_nodes ** 2 <= 8 * max_bitmap_bytes:
            # 32-bit words; keys are unique, so the bits added to one word are distinct and their sum is
            # their OR (int64 accumulation, then the low 32 bits as int32)
            words = torch.zeros((self.num_nodes ** 2 + 31) // 32, dtype=torch.long, device=self.keys.device)
            words.index_add_(0, self.keys >> 5, torch.ones_like(self.keys) << (self.keys & 31))
            self.bitmap = torch.where(words >= 2 ** 31, words - 2 ** 32, words).to(torch.int32)

    def to(self, device: torch.device | str) -> NegativeSampler:
        self.keys = self.keys.to(device)
        if self.cum_counts is not None:
            self.cum_counts = self.cum_counts.to(device)
        if self.bitmap is not None:
            self.bitmap = self.bitmap.to(device)
        return self

    def _lookup(self, query: torch.Tensor) -> torch.Tensor:
        """Bool tensor like ``query``: is the pair key a known relation."""
        if self.keys.numel() == 0:
            return torch.zeros_like(query, dtype=torch.bool)
        if self.bitmap is not None:
            bits = self.bitmap.index_select(0, (query >> 5).reshape(-1)).view(query.shape)
            return bits.bitwise_right_shift_(query & 31).bitwise_and_(1).bool()
        flat = query.reshape(-1).long()
        pos = torch.searchsorted(self.keys, flat).clamp_max(self.keys.numel() - 1)
        return (self.keys[pos] == flat).view(query.shape)

    def is_relation(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Bool tensor (shape of the broadcast of ``u`` and ``v``): is ``u → v`` a known relation."""
        return self._lookup(u.to(self.key_dtype) * self.num_nodes + v.to(self.key_dtype))

    def sample(self, u: torch.Tensor, k: int, generator: torch.Generator | None = None, group_size: int = 1
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """Draw ``k`` negatives per source; consecutive sources in groups of ``group_size`` share them.

        Args:
            u: LongTensor [B] sources.
            k: negatives per source.
            generator: a ``torch.Generator`` on ``u``'s device.
            group_size: ``g``; 1 gives every source its own negatives (Nickel & Kiela, gensim). Larger groups
                draw ``ceil(B / g)·k`` nodes instead of ``B·k`` (PyTorch-BigGraph's chunked negatives): each
                source still sees ``k`` uniform negatives, and the model gathers g× fewer rows.

        Returns:
            ``(neg, valid)``: LongTensor [ceil(B / g), k] candidates per group and BoolTensor [B, k], False
            where the candidate is the source itself or a true neighbour of it (left out of the loss).
        """
        b = u.shape[0]
        groups = -(-b // max(1, int(group_size)))
        g = -(-b // groups) if groups else 1
        if self.cum_counts is None:
            neg = torch.randint(0, self.num_nodes, (groups, k), device=u.device, generator=generator)
        else:  # P(node) ∝ its count: a uniform draw in [1, total] falls in its slice of the cumulative counts
            total = int(self.cum_counts[-1])
            draw = torch.randint(1, total + 1, (groups, k), device=u.device, generator=generator)
            neg = torch.searchsorted(self.cum_counts, draw)
        pad = groups * g - b
        uk = u.to(self.key_dtype)
        if pad:
            uk = torch.cat([uk, uk.new_zeros(pad)])
        # keys of all (source, shared negative) pairs by broadcasting: [G, g, k], never repeated per source
        keys = (uk * self.num_nodes).view(groups, g, 1) + neg.to(self.key_dtype).view(groups, 1, k)
        invalid = self._lookup(keys)
        invalid |= keys == (uk * (self.num_nodes + 1)).view(groups, g, 1)  # the source itself
        return neg, ~invalid.view(groups * g, k)[:b]
