"""Per-query arc re-weighting of personalized PageRank (CatRAG's dynamic edge weights) as sparse corrections.

:class:`EdgeWeightDelta` names the overridden arcs per query; :func:`merge_edge_deltas` combines several of
them; :func:`plan_deltas` turns one into the :class:`DeltaPlan` the solver applies around its shared SpMM (a
rank-one correction per re-weighted tail), so the graph is never rebuilt per query.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from hyperrag.ops.ppr.graph import PPRGraph, _arc_tables, find_arcs


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
    dev = graph.device
    a = max(graph.num_arcs, 1)
    qs, ss, ts, ws, ks, part = [], [], [], [], [], []
    for i, d in enumerate(parts):
        q, s, t = (x.to(dev).long().flatten() for x in (d.query, d.src, d.dst))
        w = d.weight.to(dev, torch.float64).flatten()
        if not (q.numel() == s.numel() == t.numel() == w.numel()):
            raise ValueError("EdgeWeightDelta fields must have the same length")
        if q.numel() and q.min() < 0:
            raise ValueError("EdgeWeightDelta query out of range")
        pos, _, _ = find_arcs(graph, s, t, "EdgeWeightDelta")
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
class DeltaPlan:
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

    def block(self, c0: int, c1: int) -> BlockDelta | None:
        parts = []
        for p in (self.pairs, self.arcs, self.dang):
            lo, hi = torch.searchsorted(p[0], torch.tensor([c0, c1], device=p[0].device)).tolist()
            parts.append((p[0][lo:hi] - c0, *(e[lo:hi] for e in p[1:])))
        if all(p[0].numel() == 0 for p in parts):
            return None
        return BlockDelta(*parts)


class BlockDelta:
    """One block's :class:`DeltaPlan` as flat indices into the row-major ``[N, b]`` iterate."""

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


def plan_deltas(graph: PPRGraph, delta: EdgeWeightDelta, batch: int) -> DeltaPlan:
    """Validate arc overrides and turn them into a :class:`DeltaPlan`.

    Costs O(overrides) plus the out-degree of the tails whose column is replaced. Tail strengths are summed
    in float64, so an override that zeroes every arc of a tail makes it exactly dangling.
    """
    dev, n, f64 = graph.device, graph.num_nodes, torch.float64
    q, s, t, w = (x.to(dev).flatten() for x in (delta.query, delta.src, delta.dst, delta.weight))
    if not (q.numel() == s.numel() == t.numel() == w.numel()):
        raise ValueError("EdgeWeightDelta fields must have the same length")
    q = q.long()
    if q.numel() and (q.min() < 0 or q.max() >= batch):
        raise ValueError(f"EdgeWeightDelta query out of range [0, {batch})")
    w = w.to(f64)
    if bool((w < 0).any()) or not bool(torch.isfinite(w).all()):
        raise ValueError("EdgeWeightDelta weights must be finite and nonnegative")
    pos, s, t = find_arcs(graph, s, t, "EdgeWeightDelta")  # tails and heads in stored node order
    keys, _, s64 = _arc_tables(graph)
    num_arcs = keys.numel()
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
    return DeltaPlan(
        (pq[moved], ps[moved], ratio[moved].to(dt)),
        (a_q[nz], a_s[nz], a_t[nz], a_coef[nz].to(dt)),
        (pq[dm], ps[dm], sign[dm].to(dt)),
    )


__all__ = ["BlockDelta", "DeltaPlan", "EdgeWeightDelta", "merge_edge_deltas", "plan_deltas"]
