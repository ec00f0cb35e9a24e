"""The transition structure of batched personalized PageRank (:class:`PPRGraph`) and its arc lookup.

:func:`find_arcs` is the one place that maps arcs ``src -> dst`` (original node ids) to their position in the
graph's forward CSR; :meth:`PPRGraph.arc_weight`, :func:`~hyperrag.ops.ppr.delta.merge_edge_deltas` and the
delta plan of the solver all go through it.
"""

from __future__ import annotations

import warnings

import torch
from torch import Tensor


class PPRGraph:
    """Immutable transition structure for :func:`personalized_pagerank`; build with :meth:`from_edges`.

    Attributes:
        transition_t: sparse CSR [N, N] (int32 indices when they fit), ``P^T``: entry ``(t, s)`` is
            ``w(s -> t) / strength(s)``, in stored node order.
        out_ptr, out_idx, out_weight: forward CSR of the coalesced arcs with raw summed weights ([N + 1],
            [A], [A]), used to expand :class:`EdgeWeightDelta` overrides.
        strength: [N] out-strength; ``dangling``: LongTensor of the nodes where it is 0.
        perm, inv_perm: stored-to-original and original-to-stored node ids, or None (no reordering).

    With ``reorder=True`` nodes are stored in reverse Cuthill–McKee order (inputs and outputs of
    :func:`personalized_pagerank` keep the original ids). It is off by default: on the MuSiQue graph the
    iterate block fits in cache and on power-law graphs there is no locality to recover (see
    ``benchmarks/bench_ppr.py --ablate``).
    """

    def __init__(
        self,
        transition_t: Tensor,
        out_ptr: Tensor,
        out_idx: Tensor,
        out_weight: Tensor,
        strength: Tensor,
        perm: Tensor | None,
        directed: bool,
    ) -> None:
        self.transition_t = transition_t  # CSR [N, N]: entry (t, s) = P[s, t] = w(s->t) / strength(s)
        self.out_ptr, self.out_idx, self.out_weight = out_ptr, out_idx, out_weight  # forward CSR, raw weights
        self.strength = strength  # [N] out-strength
        self.dangling = torch.nonzero(strength == 0).flatten()
        self.perm = perm  # perm[i] = original id of stored node i
        self.inv_perm = None if perm is None else torch.argsort(perm)
        self.directed = directed

    @property
    def num_nodes(self) -> int:
        return self.strength.numel()

    @property
    def num_arcs(self) -> int:
        return self.out_idx.numel()

    @property
    def device(self) -> torch.device:
        return self.strength.device

    @property
    def dtype(self) -> torch.dtype:
        return self.strength.dtype

    @classmethod
    def from_edges(
        cls,
        edge_index: Tensor,
        num_nodes: int,
        edge_weight: Tensor | None = None,
        directed: bool = False,
        device: str | torch.device = "cpu",
        dtype: torch.dtype = torch.float32,
        reorder: bool = False,
    ) -> PPRGraph:
        """Build the transition matrix of a (weighted) graph.

        Args:
            edge_index: LongTensor [2, E], ``(src, dst)`` pairs in ``[0, num_nodes)``.
            num_nodes: N; nodes without edges are isolated (dangling).
            edge_weight: Tensor [E], nonnegative; ``None`` means 1. Parallel edges are summed.
            directed: when False every edge is used in both directions (a self loop adds ``2 w`` to its
                node's strength, as in igraph).
            device, dtype: where and in which floating type the matrix lives.
            reorder: store nodes in reverse Cuthill–McKee order for locality (undone on output).
        """
        if edge_index.dim() != 2 or edge_index.size(0) != 2:
            raise ValueError(f"edge_index must be [2, E], got {tuple(edge_index.shape)}")
        src, dst = edge_index.detach().to("cpu", torch.long)
        w = (
            torch.ones(src.numel(), dtype=torch.float64)
            if edge_weight is None
            else edge_weight.detach().to("cpu", torch.float64).flatten()
        )
        if w.numel() != src.numel():
            raise ValueError("edge_weight must have one entry per edge")
        if src.numel() and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= num_nodes):
            raise ValueError("edge_index refers to nodes outside [0, num_nodes)")
        if not bool(torch.isfinite(w).all()) or bool((w < 0).any()):
            raise ValueError("edge weights must be finite and nonnegative")
        if not directed:
            src, dst, w = torch.cat([src, dst]), torch.cat([dst, src]), torch.cat([w, w])
        perm = _rcm_order(src, dst, num_nodes) if reorder and num_nodes > 1 else None
        if perm is not None:
            inv = torch.argsort(perm)
            src, dst = inv[src], inv[dst]
        # Coalesce arcs into forward CSR (sorted by src, dst), summing parallel weights.
        keys, inverse = torch.unique(src * num_nodes + dst, return_inverse=True)
        weight = torch.zeros(keys.numel(), dtype=torch.float64).index_add_(0, inverse, w)
        a_src, a_dst = keys // num_nodes, keys % num_nodes
        counts = torch.bincount(a_src, minlength=num_nodes)
        out_ptr = torch.zeros(num_nodes + 1, dtype=torch.long)
        torch.cumsum(counts, 0, out=out_ptr[1:])
        strength = torch.zeros(num_nodes, dtype=torch.float64).index_add_(0, a_src, weight)
        prob = weight / torch.where(strength > 0, strength, 1.0)[a_src]
        # Transpose: row t of transition_t holds the arcs entering t.
        order = torch.argsort(a_dst * num_nodes + a_src)
        t_ptr = torch.zeros(num_nodes + 1, dtype=torch.long)
        torch.cumsum(torch.bincount(a_dst, minlength=num_nodes), 0, out=t_ptr[1:])
        idx = torch.int32 if max(num_nodes, keys.numel()) < 2**31 else torch.long  # int32: no copy for MKL
        transition_t = _csr(t_ptr.to(idx), a_src[order].to(idx), prob[order].to(dtype), num_nodes)
        graph = cls(transition_t, out_ptr, a_dst, weight.to(dtype), strength.to(dtype), perm, directed)
        return graph.to(device)

    def arc_weight(self, src: Tensor, dst: Tensor) -> Tensor:
        """Stored (summed) weight of the arcs ``src -> dst`` (LongTensor [M] each, original node ids):
        Tensor [M]; raises ValueError when one is not in the graph."""
        pos, _, _ = find_arcs(self, src, dst, "arc_weight")
        return self.out_weight[pos]

    def to(self, device: str | torch.device) -> PPRGraph:
        """A copy of the graph on ``device`` (``self`` when already there)."""
        device = torch.device(device)
        if device == self.device:
            return self
        perm = None if self.perm is None else self.perm.to(device)
        return PPRGraph(
            self.transition_t.to(device),
            self.out_ptr.to(device),
            self.out_idx.to(device),
            self.out_weight.to(device),
            self.strength.to(device),
            perm,
            self.directed,
        )

    def __repr__(self) -> str:
        return (
            f"PPRGraph(num_nodes={self.num_nodes}, num_arcs={self.num_arcs}, directed={self.directed}, "
            f"dangling={self.dangling.numel()}, device={self.device}, dtype={self.dtype})"
        )


def find_arcs(graph: PPRGraph, src: Tensor, dst: Tensor, what: str = "arc") -> tuple[Tensor, Tensor, Tensor]:
    """Where the arcs ``src -> dst`` sit in ``graph``'s forward CSR.

    Args:
        graph: the graph.
        src, dst: LongTensor [M] (flattened when not 1-D), original node ids of the arcs' tails and heads.
        what: who asks, for the error messages (``"EdgeWeightDelta"``, ``"arc_weight"``).

    Returns:
        ``(pos, tail, head)``, LongTensor [M] each: the arcs' positions in ``out_idx`` / ``out_weight`` and
        their tails and heads in stored node order.

    Raises:
        ValueError: an endpoint outside ``[0, N)`` or an arc that is not in the graph (for an undirected graph
            each direction is a separate arc).
    """
    n = graph.num_nodes
    s, t = src.to(graph.device).long().flatten(), dst.to(graph.device).long().flatten()
    if s.numel() != t.numel():
        raise ValueError(f"{what}: src and dst must have the same length")
    if s.numel() and (min(s.min(), t.min()) < 0 or max(s.max(), t.max()) >= n):
        raise ValueError(f"{what}: arc endpoints out of range [0, {n})")
    if graph.inv_perm is not None:
        s, t = graph.inv_perm[s], graph.inv_perm[t]
    keys = _arc_tables(graph)[0]
    key = s * n + t
    pos = torch.searchsorted(keys, key).clamp_(max=max(keys.numel() - 1, 0))
    if s.numel():
        missing = torch.ones_like(key, dtype=torch.bool) if keys.numel() == 0 else keys[pos] != key
        if bool(missing.any()):
            i = int(missing.nonzero()[0])
            arc = f"{int(src.flatten()[i])} -> {int(dst.flatten()[i])}"
            raise ValueError(f"{what}: arc {arc} is not in the graph")
    return pos, s, t


def _arc_tables(graph: PPRGraph) -> tuple[Tensor, Tensor, Tensor]:
    """Cached ``(sorted arc keys tail * N + head, arc tails, float64 out-strength from out_weight)``."""
    cache = getattr(graph, "_arc_cache", None)
    if cache is None:
        n, dev = graph.num_nodes, graph.device
        tail = torch.repeat_interleave(torch.arange(n, device=dev), graph.out_ptr.diff())
        s64 = torch.zeros(n, dtype=torch.float64, device=dev).index_add_(
            0, tail, graph.out_weight.to(torch.float64)
        )
        cache = graph._arc_cache = (tail * n + graph.out_idx, tail, s64)
    return cache


def _csr(crow: Tensor, col: Tensor, values: Tensor, n: int) -> Tensor:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
        return torch.sparse_csr_tensor(crow, col, values, size=(n, n), check_invariants=False)


def _rcm_order(src: Tensor, dst: Tensor, n: int) -> Tensor:
    import numpy as np
    import scipy.sparse as sp
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    pattern = sp.csr_matrix((np.ones(src.numel(), np.int8), (src.numpy(), dst.numpy())), shape=(n, n))
    return torch.from_numpy(reverse_cuthill_mckee(pattern + pattern.T, symmetric_mode=True).astype(np.int64))


__all__ = ["PPRGraph", "find_arcs"]
