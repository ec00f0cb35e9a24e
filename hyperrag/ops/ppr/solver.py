"""The batched personalized PageRank solver: one sparse × dense product per iteration for a block of queries.

See :mod:`hyperrag.ops.ppr` for the semantics (igraph / prpack's) and for what makes it fast.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import Tensor

from hyperrag.ops.ppr.delta import BlockDelta, EdgeWeightDelta, plan_deltas
from hyperrag.ops.ppr.graph import PPRGraph, _csr


@dataclass
class PPRStats:
    """Work counters filled by :func:`personalized_pagerank` when passed as ``stats``."""

    spmm_calls: int = 0
    column_iterations: int = 0  # sum over SpMM calls of the number of active columns
    max_iterations: int = 0
    chebyshev_fallbacks: int = 0  # blocks with edge deltas switched from Chebyshev to power steps
    convergence_checks: int = 0  # L1 changes computed (each costs ~0.7x an SpMM)


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
    nodes: Tensor | None = None,
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
        nodes: LongTensor [M] of original node ids: return only their scores (HippoRAG 2 ranks passages, ~10%
            of the nodes; the full answer's [N, b] -> [b, N] transpose costs about one SpMM per block).

    Returns:
        Tensor [B, N] (or [N]) of the graph's dtype on its device, rows summing to 1, original node order;
        [B, M] (or [M]) with ``nodes``: columns in the order of ``nodes``.
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
    # Rows of the stored-order iterate that make the answer (None: all of them, in stored order).
    pick = graph.inv_perm
    if nodes is not None:
        nodes = nodes.to(graph.device).long()
        if nodes.dim() != 1 or (nodes.numel() and (int(nodes.min()) < 0 or int(nodes.max()) >= n)):
            raise ValueError(f"nodes must be a 1-D tensor of node ids in [0, {n})")
        pick = nodes if graph.inv_perm is None else graph.inv_perm[nodes]
    if batch == 0:
        return reset.clone() if nodes is None else reset.index_select(1, nodes)
    block = block_size or _default_block_size(graph, batch)
    entries = _sparse_entries(reset)
    if entries is not None:  # typical: a few seeds per query; never transpose the dense batch
        rq, rv, bad = entries  # sorted by row
        rval = reset[rq, rv]
        row_sum = torch.zeros(batch, dtype=reset.dtype, device=reset.device).index_add_(0, rq, rval)
        rval, rv = rval / row_sum[rq], (rv if graph.inv_perm is None else graph.inv_perm[rv])
        bounds = torch.searchsorted(rq, torch.arange(0, batch + block, block, device=rq.device)).tolist()
        _check_rows(row_sum, bad)
    # A dense batch is checked block by block below, while each block is in cache (the two passes over a
    # whole [1000, 18118] batch cost ~12 ms, 2-3% of its solve).
    tol = max(tol, 4.0 * torch.finfo(graph.dtype).eps * (1.0 - damping) / max(damping, 1e-6))
    mat = _csr(
        graph.transition_t.crow_indices(),
        graph.transition_t.col_indices(),
        graph.transition_t.values() * damping,
        n,
    )
    plan = None if edge_delta is None else plan_deltas(graph, edge_delta, batch)
    out = torch.empty(batch, n if pick is None else pick.numel(), dtype=graph.dtype, device=graph.device)
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
        else:  # (support rows [R], values [R, b]) or dense [N, b]
            blk = reset[c0:c1]
            blk_sum = blk.sum(1)
            _check_rows(blk_sum, bool(blk.min() < 0))
            r_blk = _dense_reset_block(blk, blk_sum, graph)
            if len(r_blk) == 2:
                bufs[0].zero_().index_copy_(0, r_blk[0], r_blk[1])
            else:
                bufs[0].copy_(r_blk[0])
        chebyshev = method != "power" and not graph.directed
        for cols, piece in _iterate(
            mat, bufs, r_blk, graph.dangling, damping, tol, max_iter, chebyshev, terms, stats
        ):
            if pick is not None:
                piece = piece.index_select(0, pick)
            if cols.numel() == c1 - c0:
                out[c0:c1].copy_(piece.T)
            else:
                out.index_copy_(0, cols + c0, piece.T.contiguous())
    return out[0] if squeeze else out


def _check_rows(row_sum: Tensor, negative: bool) -> None:
    if negative or not bool(torch.isfinite(row_sum).all()) or not bool((row_sum > 0).all()):
        raise ValueError("reset rows must be nonnegative with a positive finite sum")


def _dense_reset_block(reset: Tensor, row_sum: Tensor, graph: PPRGraph) -> tuple[Tensor, ...]:
    """A block of reset rows ``reset`` [b, N] (nonnegative, ``row_sum`` [b]) normalised, in stored node order:
    ``(support rows [R], values [R, b])`` when at most a quarter of the nodes carry reset mass in any of its
    columns (HippoRAG 2: every passage plus a few seed entities), so that each step's teleport term touches R
    rows instead of N; else ``(values [N, b],)``."""
    support = torch.nonzero(reset.sum(0)).flatten()  # original node ids, ascending (entries are >= 0)
    if support.numel() * 4 <= reset.size(1):
        rows = support
        if graph.inv_perm is not None:  # stored ids, ascending, so that consecutive rows form runs
            rows, order = graph.inv_perm[support].sort()
            support = support[order]
        return rows, (reset.index_select(1, support) / row_sum[:, None]).T.contiguous()
    r = reset / row_sum[:, None]
    return ((r if graph.perm is None else r.index_select(1, graph.perm)).T.contiguous(),)


def _row_runs(
    rows: Tensor, vals: Tensor, min_run: int = 64
) -> tuple[list[tuple[int, int, Tensor]], tuple[Tensor, Tensor] | None]:
    """Split support rows ``rows`` [R] (ascending) with values ``vals`` [R, b] into runs of at least ``min_run``
    consecutive rows, ``(first row, end row, values [len, b])`` each, updated in place through slices, and the
    rest ``(rows [R'], values [R', b])`` (None when empty), updated through a gather and a scatter."""
    if rows.numel() == 0:
        return [], None
    brk = torch.nonzero(rows.diff() != 1).flatten() + 1
    starts = torch.cat([brk.new_zeros(1), brk])
    ends = torch.cat([brk, brk.new_full((1,), rows.numel())])
    long = (ends - starts) >= min_run
    runs, keep = [], torch.ones(rows.numel(), dtype=torch.bool, device=rows.device)
    for a, e in zip(starts[long].tolist(), ends[long].tolist()):
        lo = int(rows[a])
        runs.append((lo, lo + e - a, vals[a:e]))
        keep[a:e] = False
    if not bool(keep.any()):
        return runs, None
    if not runs:
        return runs, (rows, vals)
    pos = torch.nonzero(keep).flatten()
    return runs, (rows[pos], vals.index_select(0, pos))


def _sparse_entries(reset: Tensor, chunk: int = 256) -> tuple[Tensor, Tensor, bool] | None:
    """``(rows, cols, any_negative)`` of the nonzeros of ``reset`` [B, N] sorted by row, or None when more
    than 1/16 of it (or of a sample of its rows) is nonzero. Chunk maxima locate the nonzeros first: 3x faster
    than ``nonzero``."""
    b, n = reset.shape
    # Dense resets stop here, after counting ~64 evenly spaced rows (counting all of a [1000, 18118] batch
    # costs 20 ms, 4% of its solve); a sample that looks sparse is confirmed on the whole batch below.
    probe = reset[:: max(1, b // 64)]
    if int(torch.count_nonzero(probe)) * 16 > probe.numel():
        return None
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
    terms: BlockDelta | None,
    stats: PPRStats,
) -> Iterator[tuple[Tensor, Tensor]]:
    """Iterate one block from ``bufs[0]`` [N, b] (``bufs``: 4 work buffers); yields ``(block columns,
    solution [N, m])`` as columns finish."""
    x, y, tmp, x_prev = bufs
    b = x.size(1)
    sparse_reset, row_reset = len(reset) == 3, len(reset) == 2  # (rows, cols, vals) / (rows, [R, b] values)
    r_rows, r_cols, r_vals = reset if sparse_reset else (None, None, None)
    s_rows, s_vals = reset if row_reset else (None, None)
    runs, rest = _row_runs(s_rows, s_vals) if row_reset else ([], None)
    r = reset[0] if len(reset) == 1 else None
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

    def add_teleport(target: Tensor, c: Tensor | None, const: float) -> None:
        """``target += reset * c`` per column (``c`` [b]), or ``reset * const`` when ``c`` is None; reads the
        reset's current (shrinking) binding."""
        if sparse_reset:
            target.index_put_((r_rows, r_cols), r_vals * (const if c is None else c[r_cols]), accumulate=True)
        elif row_reset:  # the dense update on the support rows only (same kernel: bitwise the same result)
            for lo, hi, vals in runs:  # runs of consecutive rows (HippoRAG 2's passages) through slices
                seg = target[lo:hi]
                seg.addcmul_(vals, c) if c is not None else seg.add_(vals, alpha=const)
            if rest is not None:  # the scattered rest (seed entities) through a gather and a scatter
                rows = target.index_select(0, rest[0])
                rows.addcmul_(rest[1], c) if c is not None else rows.add_(rest[1], alpha=const)
                target.index_copy_(0, rest[0], rows)
        else:
            target.addcmul_(r, c) if c is not None else target.add_(r, alpha=const)

    def next_omega(k: int, omega: float) -> float:  # Chebyshev's weight for x_{k+1}
        return 1.0 / (1.0 - rho2 / 2.0) if k == 1 else 1.0 / (1.0 - rho2 * omega / 4.0)

    cols = torch.arange(b, device=x.device)  # block column of each active column
    x_prev, omega, rho2 = (x_prev if chebyshev else None), 1.0, d * d
    # The L1 change costs a third of an SpMM, so it is only computed when a column may have reached tol:
    # Chebyshev residuals shrink at most by `rate` per step, power residuals at least by `damping`.
    rate = max(d / (1.0 + math.sqrt(1.0 - rho2)) if chebyshev else d, 1e-3)
    next_check, last = 0, None
    if chebyshev and not guarded:
        # No check at step 0: it would only size the first wait. The residual F(x_0) - x_0 = d (P^T x_0 - x_0)
        # (+ dangling mass) has L1 norm <= 2 d, and Chebyshev's error bound shrinks it by 2 rate^k, which sizes
        # the wait as well. At the retriever's settings a block now takes 1 check instead of 3 (a check costs
        # ~0.7x an SpMM), with the same 12 SpMMs.
        next_check = max(1, int(math.log(tol / (4.0 * d)) / math.log(rate))) if d > 0 else 0
    conv = torch.zeros(b, dtype=torch.bool, device=x.device)  # sticky: converged at some check
    prev_res, noise = (
        torch.full((b,), math.inf, dtype=x.dtype, device=x.device),
        32 * torch.finfo(x.dtype).eps,
    )
    def propagate(target: Tensor, beta: float, scale: float, k: int) -> Tensor | None:
        """``target = beta * target + scale * d P_q^T x`` (with the block's edge deltas); returns ``scale`` x the
        teleport mass per column, or None when it is the constant ``scale * (1 - d)``."""
        if terms is not None:
            terms.index(x.size(1))
            xf = x.view(-1)
            if terms.p_flat.numel():  # column s of P^T rescaled to S / S' for the query's tails
                saved = xf.index_select(0, terms.p_flat)
                xf.index_copy_(0, terms.p_flat, saved * terms.ratio)
        # In place (torch.mm(out=) would zero-fill the target first).
        torch.addmm(target, mat, x, beta=beta, alpha=scale, out=target)
        stats.spmm_calls += 1
        stats.column_iterations += x.size(1)
        stats.max_iterations = max(stats.max_iterations, k + 1)
        # Dangling tails are never rescaled, so their entries are read while x is.
        c = None if const_c else x.index_select(0, dangling).sum(0).mul_(d * scale).add_((1.0 - d) * scale)
        if terms is not None:
            if terms.p_flat.numel():
                xf.index_copy_(0, terms.p_flat, saved)
            if terms.a_src.numel():  # overridden arcs: target[t, q] += scale d (w' - w) / S' x[s, q]
                target.view(-1).index_add_(
                    0, terms.a_dst, xf.index_select(0, terms.a_src).mul_(terms.coef), alpha=d * scale
                )
            if c is not None and terms.d_flat.numel():
                c.index_add_(0, terms.d_col, xf.index_select(0, terms.d_flat).mul_(terms.sign), alpha=d * scale)
        return c

    for k in range(max_iter):
        if chebyshev and k > 0 and k < next_check and k + 1 < max_iter:
            # A step without a convergence check needs F(x_k) only inside the Chebyshev update, so it is
            # fused into one SpMM that accumulates into x_{k-1}: x_{k+1} = (1 - w) x_{k-1} + w (d P_q^T x_k
            # + teleport). This saves the [N, b] pass of `lerp_` (~0.7x the time of SpMM + lerp); it
            # rounds differently from the unfused step (~1e-9 here), well inside `tol`.
            omega = next_omega(k, omega)
            c = propagate(x_prev, 1.0 - omega, omega, k)
            add_teleport(x_prev, c, (1.0 - d) * omega)
            x_prev, x = x, x_prev
            continue
        c = propagate(y, 0.0, 1.0, k)  # y = F(x_k)
        add_teleport(y, c, 1.0 - d)
        check = k >= next_check or k + 1 == max_iter
        if check:
            res = torch.sub(y, x, out=tmp).abs_().sum(0)  # L1 change F(x_k) - x_k per column
            stats.convergence_checks += 1
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
                elif row_reset:
                    y.index_fill_(1, bad, 0.0)
                    y[s_rows.unsqueeze(1), bad] = s_vals.index_select(1, bad)
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
            omega = next_omega(k, omega)
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
        elif row_reset:
            s_vals = s_vals.index_select(1, kept)
            runs, rest = _row_runs(s_rows, s_vals)
        else:
            r = r.index_select(1, kept)
        if terms is not None:
            terms.drop(done, new_pos)


__all__ = ["PPRStats", "personalized_pagerank"]
