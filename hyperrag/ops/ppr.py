"""Batched personalized PageRank: one sparse × dense product per iteration for a whole block of queries.

Semantics are those of igraph's ``Graph.personalized_pagerank(implementation="prpack")``: parallel edges
are summed, an undirected self loop counts twice towards its node's strength (a directed one once), and
the mass of a dangling node (zero out-strength) jumps back along the query's reset vector.

How it is fast (see ``benchmarks/bench_ppr.py --ablate``):

* the batch is laid out as ``[N, b]`` row-major, so each nonzero of the transposed transition matrix (CSR,
  int32 indices, damping folded into the values) reads one contiguous row: one MKL / cuSPARSE SpMM per
  iteration, written in place (``addmm(beta=0, out=)``) into reused work buffers;
* queries run in blocks of ``block_size`` columns (32 on CPU: the block stays in cache);
* undirected graphs use Chebyshev semi-iteration (their transition spectrum is real, in [-1, 1]): on
  MuSiQue 14 instead of 18 iterations at damping 0.5, 35 instead of 69 at 0.85; directed graphs use the
  power method;
* per-query edge deltas (:class:`EdgeWeightDelta`) are a rank-one correction per re-weighted tail, applied
  around the shared SpMM with precomputed flat indices (a rescaling of the tail's input entry plus one
  scatter-add per overridden arc), so blocks with deltas keep Chebyshev: the re-weighted operator is still
  column-stochastic, its spectrum lies in the disc of radius ``damping``, which Chebyshev's convergence
  region contains for ``damping <= 1/sqrt(2)``; above that the block is residual-guarded and falls back to
  power steps if it diverges (``benchmarks/bench_catrag.py``: ~1.1x plain on MuSiQue);
* the L1 change is only computed when a column can have converged, finished columns leave the block once
  a quarter of it is done, and sparse reset vectors are never materialised densely on input.

float32 is the default: a float32 iterate has a rounding floor near ``eps`` in L1, so ``tol`` is clamped
accordingly and columns that stall at that floor stop; max-abs errors against prpack stay ~1e-7.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import Tensor

__all__ = ["EdgeWeightDelta", "PPRGraph", "PPRStats", "merge_edge_deltas", "personalized_pagerank"]


@dataclass
class EdgeWeightDelta:
    """Per-query overrides of directed arc weights (CatRAG dynamic edge weighting), applied inside the
    batched iteration as a sparse correction — the graph is never rebuilt per query.

    Args:
        query: LongTensor [M], row of the reset batch the override applies to.
        src: LongTensor [M], original node id of the arc's tail.
        dst: LongTensor [M], original node id of the arc's head.
        weight: Tensor [M], new (summed) weight of arc ``src -> dst`` for that query; 0 removes it. The arc
            must exist in the graph (for an undirected graph each direction is a separate arc). Each
            ``(query, arc)`` may appear once (:func:`merge_edge_deltas` combines several deltas).
    """

    query: Tensor
    src: Tensor
    dst: Tensor
    weight: Tensor


def merge_edge_deltas(
    graph: PPRGraph, deltas: list[EdgeWeightDelta | None], combine: str = "multiply"
) -> EdgeWeightDelta | None:
    """Merge several :class:`EdgeWeightDelta` into one that names each ``(query, arc)`` once.

    Inside one delta a repeated ``(query, arc)`` keeps its last weight. Across deltas, ``combine="last"``
    keeps the weight of the last delta naming the arc; ``combine="multiply"`` reads each delta as a
    multiplier of the graph's stored arc weight (``w_i / w``) and applies all of them: ``w * prod(w_i / w)``
    (an arc stored with weight 0 keeps the last delta's weight). ``None`` and empty deltas are skipped;
    returns None when nothing is left.
    """
    if combine not in ("multiply", "last"):
        raise ValueError(f"combine must be 'multiply' or 'last', got {combine!r}")
    parts = [d for d in deltas if d is not None and d.query.numel()]
    if not parts:
        return None
    dev, n = graph.device, graph.num_nodes
    keys, _, _ = _arc_tables(graph)
    a = max(keys.numel(), 1)
    qs, ss, ts, ws, ks, part = [], [], [], [], [], []
    for i, d in enumerate(parts):
        q, s, t = (x.to(dev).long().flatten() for x in (d.query, d.src, d.dst))
        w = d.weight.to(dev, torch.float64).flatten()
        if not (q.numel() == s.numel() == t.numel() == w.numel()):
            raise ValueError("EdgeWeightDelta fields must have the same length")
        if min(s.min(), t.min()) < 0 or max(s.max(), t.max()) >= n or q.min() < 0:
            raise ValueError("EdgeWeightDelta query/src/dst out of range")
        ss_, ts_ = (s, t) if graph.inv_perm is None else (graph.inv_perm[s], graph.inv_perm[t])
        pos = torch.searchsorted(keys, ss_ * n + ts_).clamp_(max=a - 1)
        if keys.numel() == 0 or bool((keys[pos] != ss_ * n + ts_).any()):
            raise ValueError("EdgeWeightDelta overrides an arc that is not in the graph")
        key = q * a + pos
        order = torch.argsort(key, stable=True)
        key, counts = torch.unique_consecutive(key[order], return_counts=True)
        last = order[torch.cumsum(counts, 0) - 1]  # last occurrence of each (query, arc)
        qs.append(q[last]), ss.append(s[last]), ts.append(t[last]), ws.append(w[last]), ks.append(key)
        part.append(torch.full_like(key, i))
    q, s, t, w, key, part = (torch.cat(x) for x in (qs, ss, ts, ws, ks, part))
    order = torch.argsort(key, stable=True)  # within a key, parts stay in order
    q, s, t, w, key = q[order], s[order], t[order], w[order], key[order]
    uniq, group, counts = torch.unique_consecutive(key, return_inverse=True, return_counts=True)
    last = torch.cumsum(counts, 0) - 1
    out_w = w[last]
    if combine == "multiply":
        base = graph.out_weight[uniq % a].to(torch.float64)
        factor = w / base[group].clamp_min(torch.finfo(torch.float64).tiny)
        prod = torch.ones_like(base).scatter_reduce_(0, group, factor, "prod")
        out_w = torch.where(base > 0, base * prod, out_w)
    dtype = parts[-1].weight.dtype if parts[-1].weight.is_floating_point() else torch.float64
    return EdgeWeightDelta(q[last], s[last], t[last], out_w.to(dtype))


@dataclass
class PPRStats:
    """Work counters filled by :func:`personalized_pagerank` when passed as ``stats``."""

    spmm_calls: int = 0
    column_iterations: int = 0  # sum over SpMM calls of the number of active columns
    max_iterations: int = 0
    chebyshev_fallbacks: int = 0  # blocks with edge deltas switched from Chebyshev to power steps


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
        """Stored (summed) weight of the arcs ``src -> dst`` (original node ids); raises ValueError when one
        is not in the graph."""
        n = self.num_nodes
        s, t = src.to(self.device).long().flatten(), dst.to(self.device).long().flatten()
        if s.numel() and (min(s.min(), t.min()) < 0 or max(s.max(), t.max()) >= n):
            raise ValueError("arc endpoints out of range")
        if self.inv_perm is not None:
            s, t = self.inv_perm[s], self.inv_perm[t]
        keys = _arc_tables(self)[0]
        pos = torch.searchsorted(keys, s * n + t).clamp_(max=max(keys.numel() - 1, 0))
        if s.numel() and (keys.numel() == 0 or bool((keys[pos] != s * n + t).any())):
            raise ValueError("arc not in the graph")
        return self.out_weight[pos] if s.numel() else self.out_weight.new_zeros(0)

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


@dataclass
class _DeltaPlan:
    """Per-query corrections of the transition matrix, every part sorted by query.

    The override of tail ``s`` for query ``q`` turns column ``s`` of ``P^T`` from ``w / S`` into
    ``w' / S'``. Written as ``(S / S') (w / S) + (w' - w) / S'``, it costs per iteration one rescaling of the
    SpMM input ``x[s, q] *= S / S'`` (undone after the product) plus one scatter-add per overridden arc —
    a rank-one correction per touched tail, never the whole out-row. Where ``S' < S / 2`` (heavy
    down-weighting) the rescaling would amplify rounding in the cancelling arcs, so that tail's column is
    replaced instead: ``x[s, q] *= 0`` and every arc with ``w' > 0`` is added explicitly.

    pairs: ``(q, s, ratio)``: input rescaling (``ratio`` 0 replaces the column);
    arcs: ``(q, s, t, coef)``: ``y[t, q] += damping * coef * x[s, q]``;
    dang: ``(q, s, sign)``: +1 where ``s`` becomes dangling for ``q``, -1 where it stops being dangling.
    """

    pairs: tuple[Tensor, Tensor, Tensor]
    arcs: tuple[Tensor, Tensor, Tensor, Tensor]
    dang: tuple[Tensor, Tensor, Tensor]

    def block(self, c0: int, c1: int) -> _BlockDelta | None:
        parts = []
        for p in (self.pairs, self.arcs, self.dang):
            lo, hi = torch.searchsorted(p[0], torch.tensor([c0, c1], device=p[0].device)).tolist()
            parts.append((p[0][lo:hi] - c0, *(e[lo:hi] for e in p[1:])))
        if all(p[0].numel() == 0 for p in parts):
            return None
        return _BlockDelta(*parts)


class _BlockDelta:
    """One block's :class:`_DeltaPlan` as flat indices into the row-major ``[N, b]`` iterate."""

    def __init__(self, pairs, arcs, dang) -> None:
        self.pairs, self.arcs, self.dang = pairs, arcs, dang
        self.width = -1

    def index(self, b: int) -> None:
        """(Re)compute the flat indices for a block of ``b`` columns."""
        if b == self.width:
            return
        (pq, ps, self.ratio), (aq, as_, at, self.coef), (dq, ds, self.sign) = self.pairs, self.arcs, self.dang
        self.p_flat = ps * b + pq
        self.a_src, self.a_dst = as_ * b + aq, at * b + aq
        self.d_flat, self.d_col = ds * b + dq, dq
        self.width = b

    def drop(self, done: Tensor, new_pos: Tensor) -> None:
        """Forget finished block columns (``done`` [b] bool) and renumber the rest (``new_pos``)."""

        def keep(p):
            m = ~done[p[0]]
            return (new_pos[p[0][m]], *(e[m] for e in p[1:]))

        self.pairs, self.arcs, self.dang = keep(self.pairs), keep(self.arcs), keep(self.dang)
        self.width = -1

    @property
    def changes_dangling(self) -> bool:
        return self.dang[0].numel() > 0


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


def _delta_terms(graph: PPRGraph, delta: EdgeWeightDelta, batch: int) -> _DeltaPlan:
    """Validate arc overrides and turn them into a :class:`_DeltaPlan`.

    Costs O(overrides) plus the out-degree of the tails whose column is replaced. Tail strengths are summed
    in float64, so an override that zeroes every arc of a tail makes it exactly dangling.
    """
    dev, n, f64 = graph.device, graph.num_nodes, torch.float64
    q, s, t, w = (x.to(dev).flatten() for x in (delta.query, delta.src, delta.dst, delta.weight))
    if not (q.numel() == s.numel() == t.numel() == w.numel()):
        raise ValueError("EdgeWeightDelta fields must have the same length")
    q, s, t = q.long(), s.long(), t.long()
    if q.numel() and (
        q.min() < 0 or q.max() >= batch or min(s.min(), t.min()) < 0 or max(s.max(), t.max()) >= n
    ):
        raise ValueError("EdgeWeightDelta query/src/dst out of range")
    w = w.to(f64)
    if bool((w < 0).any()) or not bool(torch.isfinite(w).all()):
        raise ValueError("EdgeWeightDelta weights must be finite and nonnegative")
    if graph.inv_perm is not None:
        s, t = graph.inv_perm[s], graph.inv_perm[t]
    keys, _, s64 = _arc_tables(graph)
    num_arcs = keys.numel()
    pos = torch.searchsorted(keys, s * n + t).clamp_(max=max(num_arcs - 1, 0))
    if q.numel() and (num_arcs == 0 or bool((keys[pos] != s * n + t).any())):
        raise ValueError("EdgeWeightDelta overrides an arc that is not in the graph")
    # One sort by (query, arc) orders overrides by query, then tail, and exposes duplicates.
    qa = q * max(num_arcs, 1) + pos
    order = torch.argsort(qa)
    q, s, t, w, pos, qa = q[order], s[order], t[order], w[order], pos[order], qa[order]
    if qa.numel() > 1 and bool((qa[1:] == qa[:-1]).any()):
        raise ValueError("EdgeWeightDelta overrides the same (query, arc) twice")
    w_old = graph.out_weight[pos].to(f64)
    pair_keys, pair_of = torch.unique_consecutive(q * n + s, return_inverse=True)  # (query, tail) pairs
    pq, ps = pair_keys // n, pair_keys % n
    s_old = s64[ps]
    s_new = s_old.clone().index_add_(0, pair_of, w - w_old)
    old_dangling = graph.strength[ps] == 0
    replace = ~old_dangling & (s_new < 0.5 * s_old)
    # Scaled tails: rescale the input, add the change of each overridden arc.
    scaled = ~replace[pair_of]
    inv_new = torch.where(s_new > 0, 1.0 / s_new, 0.0)
    a_coef = ((w - w_old) * inv_new[pair_of])[scaled]
    a_q, a_s, a_t = q[scaled], s[scaled], t[scaled]
    ratio = torch.where(old_dangling, 0.0, s_old * inv_new)  # a dangling tail's column is zero anyway
    # Replaced tails: the whole new out-row, summed exactly.
    r_pair = torch.nonzero(replace).flatten()
    if r_pair.numel():
        deg = graph.out_ptr[ps[r_pair] + 1] - graph.out_ptr[ps[r_pair]]
        rep = torch.repeat_interleave(torch.arange(r_pair.numel(), device=dev), deg)
        first = torch.cumsum(deg, 0) - deg
        arc = graph.out_ptr[ps[r_pair]][rep] + torch.arange(rep.numel(), device=dev) - first[rep]
        row_w = graph.out_weight[arc].to(f64)
        rank = torch.full((pq.numel(),), -1, dtype=torch.long, device=dev)
        rank[r_pair] = torch.arange(r_pair.numel(), device=dev)
        over = ~scaled
        row_w[first[rank[pair_of[over]]] + pos[over] - graph.out_ptr[s[over]]] = w[over]
        exact = torch.zeros(r_pair.numel(), dtype=f64, device=dev).index_add_(0, rep, row_w)
        s_new[r_pair] = exact
        ratio[r_pair] = 0.0
        coef = row_w * torch.where(exact > 0, 1.0 / exact, 0.0)[rep]
        live = coef > 0
        a_q = torch.cat([a_q, pq[r_pair][rep][live]])
        a_s = torch.cat([a_s, ps[r_pair][rep][live]])
        a_t = torch.cat([a_t, graph.out_idx[arc][live]])
        a_coef = torch.cat([a_coef, coef[live]])
        o = torch.argsort(a_q, stable=True)
        a_q, a_s, a_t, a_coef = a_q[o], a_s[o], a_t[o], a_coef[o]
    nz = a_coef != 0
    moved = (ratio != 1.0) & ~old_dangling
    sign = (s_new == 0).to(torch.int8) - old_dangling.to(torch.int8)
    dm = sign != 0
    dt = graph.dtype
    return _DeltaPlan(
        (pq[moved], ps[moved], ratio[moved].to(dt)),
        (a_q[nz], a_s[nz], a_t[nz], a_coef[nz].to(dt)),
        (pq[dm], ps[dm], sign[dm].to(dt)),
    )


def _default_block_size(graph: PPRGraph, batch: int) -> int:
    if graph.device.type == "cpu":
        return 32  # a [N, 32] float row is two cache lines; MKL's CSR SpMM peaks there
    budget = 1 << 30  # bytes for the ~5 [N, block] work buffers on an accelerator
    return max(1, min(batch, budget // (5 * graph.num_nodes * graph.transition_t.element_size())))


def personalized_pagerank(
    graph: PPRGraph,
    reset: Tensor,
    damping: float = 0.85,
    tol: float = 1e-7,
    max_iter: int = 100,
    edge_delta: EdgeWeightDelta | None = None,
    block_size: int | None = None,
    method: str = "auto",
    stats: PPRStats | None = None,
) -> Tensor:
    """Personalized PageRank of a batch of reset (teleport) distributions.

    Solves ``x = damping * P^T x + (1 - damping) * r + damping * (dangling mass of x) * r`` per query.

    Args:
        graph: the :class:`PPRGraph`.
        reset: Tensor [B, N] (or [N]), nonnegative, each row with positive sum (normalised here).
        damping: probability of following an arc (igraph's ``damping``).
        tol: a query stops once the L1 norm of its update is below ``tol``; the L1 error is then at most
            ``tol * damping / (1 - damping)``; ``tol`` is raised to where that bound is ``4 eps`` of the dtype
            (float32, damping 0.5: 4.8e-7), and a column whose change stops shrinking below ``32 eps`` has
            reached rounding noise and stops too.
        max_iter: hard cap on SpMM iterations per block.
        edge_delta: per-query arc weight overrides (see :class:`EdgeWeightDelta`).
        block_size: queries iterated together (default: 32 on CPU, as many as fit in 1 GiB on GPU).
        method: ``"power"``, ``"chebyshev"`` (only valid for undirected graphs: it needs a real spectrum;
            with edge deltas and ``damping > 1/sqrt(2)`` it is residual-guarded and a diverging block
            switches to power steps) or ``"auto"`` (Chebyshev where valid).
        stats: optional :class:`PPRStats` that receives work counters.

    Returns:
        Tensor [B, N] (or [N]) of the graph's dtype on its device, rows summing to 1, original node order.
    """
    if not 0.0 <= damping < 1.0:
        raise ValueError("damping must be in [0, 1)")
    if method not in ("auto", "power", "chebyshev") or (method == "chebyshev" and graph.directed):
        raise ValueError(f"method must be 'auto', 'power' or 'chebyshev' (undirected only), got {method!r}")
    squeeze = reset.dim() == 1
    reset = reset.unsqueeze(0) if squeeze else reset
    n, batch = graph.num_nodes, reset.size(0)
    if reset.dim() != 2 or reset.size(1) != n:
        raise ValueError(f"reset must be [B, {n}], got {tuple(reset.shape)}")
    reset = reset.to(graph.device, graph.dtype)
    if batch == 0:
        return reset.clone()
    block = block_size or _default_block_size(graph, batch)
    entries = _sparse_entries(reset)
    if entries is not None:  # typical: a few seeds per query; never transpose the dense batch
        rq, rv, bad = entries  # sorted by row
        rval = reset[rq, rv]
        row_sum = torch.zeros(batch, dtype=reset.dtype, device=reset.device).index_add_(0, rq, rval)
        rval, rv = rval / row_sum[rq], (rv if graph.inv_perm is None else graph.inv_perm[rv])
        bounds = torch.searchsorted(rq, torch.arange(0, batch + block, block, device=rq.device)).tolist()
    else:
        row_sum = reset.sum(1)
        bad = bool(reset.min() < 0)
    if bad or not bool(torch.isfinite(row_sum).all()) or not bool((row_sum > 0).all()):
        raise ValueError("reset rows must be nonnegative with a positive finite sum")
    tol = max(tol, 4.0 * torch.finfo(graph.dtype).eps * (1.0 - damping) / max(damping, 1e-6))
    mat = _csr(
        graph.transition_t.crow_indices(),
        graph.transition_t.col_indices(),
        graph.transition_t.values() * damping,
        n,
    )
    plan = None if edge_delta is None else _delta_terms(graph, edge_delta, batch)
    out = torch.empty(batch, n, dtype=graph.dtype, device=graph.device)
    work = torch.empty(4, n * min(block, batch), dtype=graph.dtype, device=graph.device)  # reused per block
    stats = stats if stats is not None else PPRStats()
    for i, c0 in enumerate(range(0, batch, block)):
        c1 = min(c0 + block, batch)
        terms = None if plan is None else plan.block(c0, c1)
        bufs = [w[: n * (c1 - c0)].view(n, c1 - c0) for w in work]  # x0, y, tmp, x_prev: [N, b] each
        if entries is not None:  # reset block as (rows, cols, vals) in stored node order
            lo, hi = bounds[i], bounds[i + 1]
            r_blk = (rv[lo:hi], rq[lo:hi] - c0, rval[lo:hi])
            bufs[0].zero_()[r_blk[0], r_blk[1]] = r_blk[2]
        else:  # dense reset block [N, b]
            r = reset[c0:c1] / row_sum[c0:c1, None]
            r_blk = ((r if graph.perm is None else r.index_select(1, graph.perm)).T.contiguous(),)
            bufs[0].copy_(r_blk[0])
        chebyshev = method != "power" and not graph.directed
        for cols, piece in _iterate(
            mat, bufs, r_blk, graph.dangling, damping, tol, max_iter, chebyshev, terms, stats
        ):
            if graph.inv_perm is not None:
                piece = piece.index_select(0, graph.inv_perm)
            if cols.numel() == c1 - c0:
                out[c0:c1].copy_(piece.T)
            else:
                out.index_copy_(0, cols + c0, piece.T.contiguous())
    return out[0] if squeeze else out


def _sparse_entries(reset: Tensor, chunk: int = 256) -> tuple[Tensor, Tensor, bool] | None:
    """``(rows, cols, any_negative)`` of the nonzeros of ``reset`` [B, N] sorted by row, or None when more
    than 1/16 of it is nonzero. Chunk maxima locate the nonzeros first: 3x faster than ``nonzero``."""
    b, n = reset.shape
    m = n - n % chunk
    head = reset[:, :m].reshape(b, m // chunk, chunk)
    cand = (head.amax(2) != 0).nonzero() if m else torch.zeros(0, 2, dtype=torch.long, device=reset.device)
    if cand.size(0) * chunk * 4 > reset.numel():
        return None
    negative = bool(reset.min() < 0) if m == 0 else bool(head.amin(2).min() < 0)
    k, j = head[cand[:, 0], cand[:, 1]].nonzero(as_tuple=True)
    tail_rows, tail_cols = reset[:, m:].nonzero(as_tuple=True)
    rows = torch.cat([cand[k, 0], tail_rows])
    cols = torch.cat([cand[k, 1] * chunk + j, tail_cols + m])
    if rows.numel() * 16 > reset.numel():
        return None
    order = torch.argsort(rows * n + cols)
    return rows[order], cols[order], negative or (m < n and bool(reset[:, m:].min() < 0))


def _iterate(
    mat: Tensor,
    bufs: list[Tensor],
    reset: tuple[Tensor, ...],
    dangling: Tensor,
    d: float,
    tol: float,
    max_iter: int,
    chebyshev: bool,
    terms: _BlockDelta | None,
    stats: PPRStats,
) -> Iterator[tuple[Tensor, Tensor]]:
    """Iterate one block from ``bufs[0]`` [N, b] (``bufs``: 4 work buffers); yields ``(block columns,
    solution [N, m])`` as columns finish."""
    x, y, tmp, x_prev = bufs
    b = x.size(1)
    sparse_reset = len(reset) == 3
    r_rows, r_cols, r_vals = reset if sparse_reset else (None, None, None)
    r = None if sparse_reset else reset[0]
    # Without dangling nodes the teleport mass per column is the constant 1 - d.
    const_c = dangling.numel() == 0 and (terms is None or not terms.changes_dangling)
    # With edge deltas the operator is no longer reversible, so its spectrum may leave the real axis. It
    # still lies in the disc |z| <= d (P_q stays column-stochastic), which is inside Chebyshev's
    # convergence ellipse (foci +-d, through +-1) when d <= 1/sqrt(2). Beyond that the block is guarded:
    # checked at least every `guard_every` steps, and a residual that grew since the last check switches
    # the block to the power method (which converges from any iterate), the grown columns restarted from
    # their reset vector.
    guarded = chebyshev and terms is not None and d * d > 0.5
    guard_every = 8
    r_add = r_vals * (1.0 - d) if sparse_reset and const_c else None
    cols = torch.arange(b, device=x.device)  # block column of each active column
    x_prev, omega, rho2 = (x_prev if chebyshev else None), 1.0, d * d
    # The L1 change costs a third of an SpMM, so it is only computed when a column may have reached tol:
    # Chebyshev residuals shrink at most by `rate` per step, power residuals at least by `damping`.
    rate = max(d / (1.0 + math.sqrt(1.0 - rho2)) if chebyshev else d, 1e-3)
    next_check, last = 0, None
    conv = torch.zeros(b, dtype=torch.bool, device=x.device)  # sticky: converged at some check
    prev_res, noise = (
        torch.full((b,), math.inf, dtype=x.dtype, device=x.device),
        32 * torch.finfo(x.dtype).eps,
    )
    for k in range(max_iter):
        if terms is not None:
            terms.index(x.size(1))
            xf = x.view(-1)
            if terms.p_flat.numel():  # column s of P^T rescaled to S / S' for the query's tails
                saved = xf.index_select(0, terms.p_flat)
                xf.index_copy_(0, terms.p_flat, saved * terms.ratio)
        torch.addmm(y, mat, x, beta=0.0, out=y)  # y = d P^T x (torch.mm(out=) would zero-fill y first)
        stats.spmm_calls += 1
        stats.column_iterations += x.size(1)
        stats.max_iterations = max(stats.max_iterations, k + 1)
        c = None if const_c else x.index_select(0, dangling).sum(0).mul_(d).add_(1.0 - d)  # teleport mass
        if terms is not None:
            if terms.p_flat.numel():
                xf.index_copy_(0, terms.p_flat, saved)
            if terms.a_src.numel():  # overridden arcs: y[t, q] += d (w' - w) / S' x[s, q]
                y.view(-1).index_add_(
                    0, terms.a_dst, xf.index_select(0, terms.a_src).mul_(terms.coef), alpha=d
                )
            if c is not None and terms.d_flat.numel():
                c.index_add_(0, terms.d_col, xf.index_select(0, terms.d_flat).mul_(terms.sign), alpha=d)
        if sparse_reset:
            y.index_put_((r_rows, r_cols), r_add if c is None else r_vals * c[r_cols], accumulate=True)
        else:
            y.addcmul_(r, c) if c is not None else y.add_(r, alpha=1.0 - d)
        check = k >= next_check or k + 1 == max_iter
        if check:
            res = torch.sub(y, x, out=tmp).abs_().sum(0)  # L1 change F(x_k) - x_k per column
            stalled = (res < noise) & (res >= 0.9 * prev_res)
            grown = (res > prev_res) & ~conv & ~stalled if guarded else None
            if grown is not None and bool(grown.any()):
                chebyshev = guarded = False  # diverging: finish with power steps from y = F(x_k) ...
                rate, x_prev = d, None
                stats.chebyshev_fallbacks += 1
                bad = torch.nonzero(grown).flatten()  # ... or, for the grown columns, from the reset
                if sparse_reset:
                    y.index_fill_(1, bad, 0.0)
                    m = grown[r_cols]
                    y[r_rows[m], r_cols[m]] = r_vals[m]
                else:
                    y.index_copy_(1, bad, r.index_select(1, bad))
                res = res.masked_fill(grown, math.inf)
            conv |= (res < tol) | stalled  # converged, or stalled at noise
            prev_res = res
            if k + 1 == max_iter:
                conv.fill_(True)
            left = res[~conv]
            if left.numel():
                low = left.min().item()
                if last is not None and not chebyshev and 0 < low < last[1]:  # observed power-method rate
                    rate = max(min(rate, (low / last[1]) ** (1.0 / (k - last[0]))), 1e-3)
                # power: an upper bound, so go half way; restarted columns (inf): look again next step
                steps = math.log(tol / low) / math.log(rate) if low < math.inf else 0.0
                step = max(1, int(steps if chebyshev else steps / 2))
                next_check, last = k + (min(step, guard_every) if guarded else step), (k, low)
        if chebyshev and k > 0:  # x_{k+1} = x_{k-1} + omega_{k+1} (F(x_k) - x_{k-1})
            omega = 1.0 / (1.0 - rho2 / 2.0) if k == 1 else 1.0 / (1.0 - rho2 * omega / 4.0)
            x_prev.lerp_(y, omega)
            x_prev, x = x, x_prev
        elif chebyshev:  # Chebyshev's first step is a power step; keep x_0
            x_prev, x, y = x, y, x_prev
        else:  # power step x_{k+1} = F(x_k)
            x, y = y, x
        if not check:
            continue
        n_conv = int(conv.sum())
        if n_conv == 0 or (n_conv * 4 < conv.numel() and k + 1 < max_iter):
            continue  # a few finished columns ride along until a quarter of the block can be dropped
        # F(x_k), the answer of finished columns, sits in x after a power step and in y after Chebyshev.
        final = y if chebyshev and k > 0 else x
        if n_conv == conv.numel():
            yield cols, final
            return
        done, (finished, kept) = conv, (torch.nonzero(conv).flatten(), torch.nonzero(~conv).flatten())
        conv, prev_res = conv[kept], prev_res[kept]
        yield cols[finished], final.index_select(1, finished)
        cols, new_pos = cols[kept], torch.cumsum(~done, 0) - 1
        x = x.index_select(1, kept)
        y, tmp = torch.empty_like(x), torch.empty_like(x)
        x_prev = None if x_prev is None else x_prev.index_select(1, kept)
        if sparse_reset:
            m = ~done[r_cols]
            r_rows, r_cols, r_vals = r_rows[m], new_pos[r_cols[m]], r_vals[m]
            r_add = None if r_add is None else r_add[m]
        else:
            r = r.index_select(1, kept)
        if terms is not None:
            terms.drop(done, new_pos)
