"""Batched personalized PageRank: one sparse × dense product per iteration for a whole block of queries.

Semantics are those of igraph's ``Graph.personalized_pagerank(implementation="prpack")``: parallel edges
are summed, an undirected self loop counts twice towards its node's strength (a directed one once), and
the mass of a dangling node (zero out-strength) jumps back along the query's reset vector.

The batch is laid out as ``[N, B]`` row-major so that every nonzero of the transposed transition matrix
reads one contiguous row of the iterate; queries are processed in blocks of ``block_size`` columns (cache
sized on CPU) and a query leaves the block as soon as its L1 change falls below ``tol``. Undirected graphs
are iterated with Chebyshev acceleration (their transition spectrum is real), directed ones with the power
method.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

__all__ = ["EdgeWeightDelta", "PPRGraph", "PPRStats", "personalized_pagerank"]


@dataclass
class EdgeWeightDelta:
    """Per-query overrides of directed arc weights (CatRAG dynamic edge weighting), applied inside the
    batched iteration as a sparse correction — the graph is never rebuilt per query.

    Args:
        query: LongTensor [M], row of the reset batch the override applies to.
        src: LongTensor [M], original node id of the arc's tail.
        dst: LongTensor [M], original node id of the arc's head.
        weight: Tensor [M], new (summed) weight of arc ``src -> dst`` for that query; 0 removes it. The arc
            must exist in the graph (for an undirected graph each direction is a separate arc).
    """

    query: Tensor
    src: Tensor
    dst: Tensor
    weight: Tensor


@dataclass
class PPRStats:
    """Work counters filled by :func:`personalized_pagerank` when passed as ``stats``."""

    spmm_calls: int = 0
    column_iterations: int = 0  # sum over SpMM calls of the number of active columns
    max_iterations: int = 0


class PPRGraph:
    """Immutable transition structure for :func:`personalized_pagerank`; build with :meth:`from_edges`.

    Nodes are stored in a locality-improving order (reverse Cuthill–McKee) when ``reorder=True``; inputs
    and outputs of :func:`personalized_pagerank` always use the original ids.
    """

    def __init__(self, transition_t: Tensor, out_ptr: Tensor, out_idx: Tensor, out_weight: Tensor,
                 strength: Tensor, perm: Tensor | None, directed: bool) -> None:
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
    def from_edges(cls, edge_index: Tensor, num_nodes: int, edge_weight: Tensor | None = None,
                   directed: bool = False, device: str | torch.device = "cpu",
                   dtype: torch.dtype = torch.float32, reorder: bool = True) -> PPRGraph:
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
        w = (torch.ones(src.numel(), dtype=torch.float64) if edge_weight is None
             else edge_weight.detach().to("cpu", torch.float64).flatten())
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
        transition_t = torch.sparse_csr_tensor(t_ptr, a_src[order], prob[order].to(dtype),
                                               size=(num_nodes, num_nodes))
        graph = cls(transition_t, out_ptr, a_dst, weight.to(dtype), strength.to(dtype), perm, directed)
        return graph.to(device)

    def to(self, device: str | torch.device) -> PPRGraph:
        """A copy of the graph on ``device`` (``self`` when already there)."""
        device = torch.device(device)
        if device == self.device:
            return self
        mv = lambda t: None if t is None else t.to(device)  # noqa: E731
        return PPRGraph(self.transition_t.to(device), mv(self.out_ptr), mv(self.out_idx), mv(self.out_weight),
                        mv(self.strength), mv(self.perm), self.directed)

    def __repr__(self) -> str:
        return (f"PPRGraph(num_nodes={self.num_nodes}, num_arcs={self.num_arcs}, directed={self.directed}, "
                f"dangling={self.dangling.numel()}, device={self.device}, dtype={self.dtype})")


def _rcm_order(src: Tensor, dst: Tensor, n: int) -> Tensor:
    import numpy as np
    import scipy.sparse as sp
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    pattern = sp.csr_matrix((np.ones(src.numel(), np.int8), (src.numpy(), dst.numpy())), shape=(n, n))
    return torch.from_numpy(reverse_cuthill_mckee(pattern + pattern.T, symmetric_mode=True).astype(np.int64))


def _delta_terms(graph: PPRGraph, delta: EdgeWeightDelta, batch: int):
    """Expand arc overrides into correction triplets.

    Returns ``(q, s, t, coef)`` with ``y[t, q] += coef * x[s, q]`` for every arc leaving an overridden
    tail ``s`` (``coef`` = new minus old transition probability), and ``(dq, ds, dsign)`` with
    ``dsign = +1`` where ``s`` becomes dangling for query ``dq`` and ``-1`` where it stops being dangling.
    """
    dev, n = graph.device, graph.num_nodes
    q, s, t, w = (x.to(dev).flatten() for x in (delta.query, delta.src, delta.dst, delta.weight))
    if not (q.numel() == s.numel() == t.numel() == w.numel()):
        raise ValueError("EdgeWeightDelta fields must have the same length")
    if q.numel() and (q.min() < 0 or q.max() >= batch or min(s.min(), t.min()) < 0 or max(s.max(), t.max()) >= n):
        raise ValueError("EdgeWeightDelta query/src/dst out of range")
    if bool((w < 0).any()) or not bool(torch.isfinite(w).all()):
        raise ValueError("EdgeWeightDelta weights must be finite and nonnegative")
    if graph.inv_perm is not None:
        s, t = graph.inv_perm[s], graph.inv_perm[t]
    if torch.unique(torch.stack([q, s, t]), dim=1).size(1) != q.numel():
        raise ValueError("EdgeWeightDelta overrides the same (query, arc) twice")
    row = torch.repeat_interleave(torch.arange(n, device=dev), graph.out_ptr.diff())
    arc_keys = row * n + graph.out_idx  # sorted
    pos = torch.searchsorted(arc_keys, s * n + t).clamp_(max=max(arc_keys.numel() - 1, 0))
    if arc_keys.numel() == 0 or bool((arc_keys[pos] != s * n + t).any()):
        raise ValueError("EdgeWeightDelta overrides an arc that is not in the graph")
    old = graph.out_weight[pos].to(torch.float64)
    pair_keys, pair_of = torch.unique(q * n + s, return_inverse=True)  # one entry per (query, tail)
    pq, ps = pair_keys // n, pair_keys % n
    s_old = graph.strength[ps].to(torch.float64)
    s_new = s_old.index_add(0, pair_of, w.to(torch.float64) - old).clamp_(min=0)
    s_new = torch.where(s_new <= 1e-12 * s_old, 0.0, s_new)  # exact zero when everything was removed
    inv_old = torch.where(s_old > 0, 1.0 / s_old, 0.0)
    inv_new = torch.where(s_new > 0, 1.0 / s_new, 0.0)
    # Every arc of each overridden tail: rescaled by the new strength ...
    deg = graph.out_ptr[ps + 1] - graph.out_ptr[ps]
    pair_rep = torch.repeat_interleave(torch.arange(pq.numel(), device=dev), deg)
    first = torch.cumsum(deg, 0) - deg
    arc = graph.out_ptr[ps][pair_rep] + torch.arange(pair_rep.numel(), device=dev) - first[pair_rep]
    coef = graph.out_weight[arc].to(torch.float64) * (inv_new - inv_old)[pair_rep]
    # ... and the overridden arcs themselves re-weighted.
    local = first[pair_of] + pos - graph.out_ptr[s]
    coef.index_add_(0, local, (w.to(torch.float64) - old) * inv_new[pair_of])
    keep = coef != 0
    dsign = (s_new == 0).to(torch.int8) - (s_old == 0).to(torch.int8)
    dmask = dsign != 0
    return ((pq[pair_rep][keep], ps[pair_rep][keep], graph.out_idx[arc][keep], coef[keep].to(graph.dtype)),
            (pq[dmask], ps[dmask], dsign[dmask].to(graph.dtype)))


def _default_block_size(graph: PPRGraph, batch: int) -> int:
    if graph.device.type == "cpu":
        return 32  # a [N, 32] float row is two cache lines; MKL's CSR SpMM peaks there
    budget = 1 << 30  # bytes for the ~5 [N, block] work buffers on an accelerator
    return max(1, min(batch, budget // (5 * graph.num_nodes * graph.transition_t.element_size())))


def personalized_pagerank(graph: PPRGraph, reset: Tensor, damping: float = 0.85, tol: float = 1e-7,
                          max_iter: int = 100, edge_delta: EdgeWeightDelta | None = None,
                          block_size: int | None = None, method: str = "auto",
                          stats: PPRStats | None = None) -> Tensor:
    """Personalized PageRank of a batch of reset (teleport) distributions.

    Solves ``x = damping * P^T x + (1 - damping) * r + damping * (dangling mass of x) * r`` per query.

    Args:
        graph: the :class:`PPRGraph`.
        reset: Tensor [B, N] (or [N]), nonnegative, each row with positive sum (normalised here).
        damping: probability of following an arc (igraph's ``damping``).
        tol: a query stops once the L1 norm of its update is below ``tol``; the L1 error is then at most
            ``tol * damping / (1 - damping)``. It is raised to ``2 * eps / (1 - damping)`` (``eps`` of the
            graph's dtype: 4.8e-7 for float32 at damping 0.5), below which the update is rounding noise.
        max_iter: hard cap on SpMM iterations per block.
        edge_delta: per-query arc weight overrides (see :class:`EdgeWeightDelta`).
        block_size: queries iterated together (default: 32 on CPU, as many as fit in 1 GiB on GPU).
        method: ``"power"``, ``"chebyshev"`` (only valid for undirected graphs: it needs a real spectrum;
            blocks with edge deltas fall back to power) or ``"auto"`` (Chebyshev where valid).
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
    row_sum = reset.sum(1, keepdim=True)
    if bool((reset < 0).any()) or not bool((row_sum > 0).all()) or not bool(torch.isfinite(row_sum).all()):
        raise ValueError("reset rows must be nonnegative with a positive finite sum")
    tol = max(tol, 2.0 * torch.finfo(graph.dtype).eps / (1.0 - damping))
    block = block_size or _default_block_size(graph, batch)
    mat = torch.sparse_csr_tensor(graph.transition_t.crow_indices(), graph.transition_t.col_indices(),
                                  graph.transition_t.values() * damping, size=(n, n))
    deltas = None
    if edge_delta is not None:
        (q, s, t, coef), dang = _delta_terms(graph, edge_delta, batch)
        deltas = ((q, s, t, coef * damping), dang)
    out = torch.empty(batch, n, dtype=graph.dtype, device=graph.device)
    stats = stats if stats is not None else PPRStats()
    for c0 in range(0, batch, block):
        c1 = min(c0 + block, batch)
        r = reset[c0:c1] / row_sum[c0:c1]
        if graph.perm is not None:
            r = r[:, graph.perm]
        r = r.T.contiguous()  # [N, b]
        terms = None
        if deltas is not None:
            terms = [_slice_cols(parts, c0, c1) for parts in deltas]
            terms = None if terms[0][0].numel() == 0 and terms[1][0].numel() == 0 else terms
        result = _iterate(mat, r, graph.dangling, damping, tol, max_iter,
                          chebyshev=method != "power" and not graph.directed and terms is None, terms=terms, stats=stats)
        if graph.inv_perm is not None:
            result = result.index_select(0, graph.inv_perm)
        out[c0:c1] = result.T
    return out[0] if squeeze else out


def _slice_cols(parts: tuple[Tensor, ...], c0: int, c1: int) -> tuple[Tensor, ...]:
    mask = (parts[0] >= c0) & (parts[0] < c1)
    return (parts[0][mask] - c0, *(p[mask] for p in parts[1:]))


def _iterate(mat: Tensor, r: Tensor, dangling: Tensor, d: float, tol: float, max_iter: int,
             chebyshev: bool, terms, stats: PPRStats) -> Tensor:
    """Iterate one block ``r`` [N, b] to convergence; returns the solution [N, b] (stored node order)."""
    n, b = r.shape
    result = torch.empty_like(r)
    cols = torch.arange(b, device=r.device)  # block column of each active column
    sparse_reset = torch.count_nonzero(r).item() * 16 <= r.numel()
    r_idx = r.nonzero().T if sparse_reset else None  # (row, active col)
    r_val = r[r_idx[0], r_idx[1]] if sparse_reset else None
    x, x_prev, omega, rho2 = r.clone(), None, 1.0, d * d
    y = torch.empty_like(x)
    for k in range(max_iter):
        torch.mm(mat, x, out=y)  # y = d P^T x
        stats.spmm_calls += 1
        stats.column_iterations += x.size(1)
        stats.max_iterations = max(stats.max_iterations, k + 1)
        c = x.index_select(0, dangling).sum(0).mul_(d).add_(1.0 - d)  # teleport mass per column
        if terms is not None:
            (q, s, t, coef), (dq, ds, dsign) = terms
            y.index_put_((t, q), coef * x[s, q], accumulate=True)
            c.index_add_(0, dq, d * dsign * x[ds, dq])
        if sparse_reset:
            y.index_put_((r_idx[0], r_idx[1]), r_val * c[r_idx[1]], accumulate=True)
        else:
            y.addcmul_(r, c)
        done = torch.sub(y, x).abs_().sum(0) < tol
        if k + 1 == max_iter:
            done.fill_(True)
        if chebyshev:  # x_{k+1} = x_{k-1} + omega_{k+1} (F(x_k) - x_{k-1})
            if x_prev is None:
                x_prev, x, y = x, y, torch.empty_like(y)
            else:
                omega = 1.0 / (1.0 - rho2 / 2.0) if k == 1 else 1.0 / (1.0 - rho2 * omega / 4.0)
                x_prev.lerp_(y, omega)
                x_prev, x = x, x_prev
        else:
            x, y = y, x
        n_done = int(done.sum())
        if n_done == 0:
            continue
        # F(x_k) is the answer of finished columns: it sits in y, or in x after the swap above.
        final = y if chebyshev and k > 0 else x
        result[:, cols[done]] = final[:, done]
        if n_done == cols.numel():
            break
        keep = ~done
        cols = cols[keep]
        x, y = x[:, keep].contiguous(), torch.empty(n, cols.numel(), dtype=x.dtype, device=x.device)
        x_prev = None if x_prev is None else x_prev[:, keep].contiguous()
        new_pos = torch.cumsum(keep, 0) - 1
        if sparse_reset:
            m = keep[r_idx[1]]
            r_idx, r_val = torch.stack([r_idx[0][m], new_pos[r_idx[1][m]]]), r_val[m]
        else:
            r = r[:, keep].contiguous()
        if terms is not None:
            terms = [(new_pos[p[0][keep[p[0]]]], *(e[keep[p[0]]] for e in p[1:])) for p in terms]
    return result
