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
  power steps if it diverges (``benchmarks/bench_catrag.py``: ~1.3x plain on MuSiQue);
* a Chebyshev step without a convergence check is one SpMM that accumulates into the previous iterate
  (``addmm(beta=1 - w, alpha=w)``), with or without edge deltas;
* the L1 change is only computed when a column can have converged (the first check is sized from the bound
  2 d on the initial residual: on MuSiQue one check per block), finished columns leave the block once a
  quarter of it is done, and sparse reset vectors are never materialised densely on input;
* a denser reset whose mass sits on at most a quarter of the nodes across a block (HippoRAG 2: every
  passage plus a few seed entities, ~11% of MuSiQue's nodes) is kept as those support rows, so the
  teleport term of each step touches them only, runs of consecutive rows (the passages) through slices
  (bitwise the dense update's result);
* ``nodes=`` returns only the scores a caller reads (HippoRAG 2 ranks passages): the [N, b] -> [b, N]
  transpose of a block's answer costs about one SpMM, a tenth of that for the passages.

float32 is the default: a float32 iterate has a rounding floor near ``eps`` in L1, so ``tol`` is clamped
accordingly and columns that stall at that floor stop; max-abs errors against prpack stay ~1e-7.

Modules: ``graph`` (:class:`PPRGraph`, the transition structure, and :func:`find_arcs`, the one arc lookup),
``delta`` (:class:`EdgeWeightDelta`, :func:`merge_edge_deltas` and the per-block correction plan), ``solver``
(:func:`personalized_pagerank`, :class:`PPRStats`).
"""

from hyperrag.ops.ppr.delta import EdgeWeightDelta, merge_edge_deltas
from hyperrag.ops.ppr.graph import PPRGraph, find_arcs
from hyperrag.ops.ppr.solver import PPRStats, personalized_pagerank

__all__ = ["EdgeWeightDelta", "PPRGraph", "PPRStats", "find_arcs", "merge_edge_deltas",
           "personalized_pagerank"]
