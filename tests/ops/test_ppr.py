"""Batched personalized PageRank against igraph/prpack, plus properties and the CatRAG edge-delta hook."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hyperrag.ops.ppr import EdgeWeightDelta, PPRGraph, PPRStats, personalized_pagerank

ig = pytest.importorskip("igraph")


def random_graph(rng: np.random.Generator, n: int, m: int, isolated: int = 5, loops: int = 4):
    """Edges among the first n - isolated nodes, with parallel edges and self loops; random weights."""
    ei = rng.integers(0, n - isolated, (2, m))
    ei[1, :loops] = ei[0, :loops]  # self loops
    ei[:, loops : 2 * loops] = ei[:, 2 * loops : 3 * loops]  # parallel edges
    return ei, rng.random(m) + 0.05


def random_resets(rng: np.random.Generator, b: int, n: int, isolated: int = 5) -> np.ndarray:
    reset = np.zeros((b, n))
    for q in range(b):
        k = int(rng.integers(1, 6))
        reset[q, rng.choice(n, k, replace=False)] = rng.random(k) + 0.01
    reset[0] = 0.0
    reset[0, n - 1] = 1.0  # only an isolated node
    reset[1, n - isolated :] = 0.3  # isolated nodes plus graph nodes
    return reset


def igraph_ppr(n, ei, w, directed, damping, reset) -> np.ndarray:
    g = ig.Graph(n=n, edges=ei.T.tolist(), directed=directed)
    weights = None if w is None else list(w)
    return np.array(
        [
            g.personalized_pagerank(
                vertices=None,
                directed=directed,
                damping=damping,
                reset=list(r),
                weights=weights,
                implementation="prpack",
            )
            for r in reset
        ]
    )


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("damping", [0.5, 0.85])
@pytest.mark.parametrize("weighted", [False, True])
def test_matches_igraph_float32(directed, damping, weighted):
    rng = np.random.default_rng(int(directed) * 4 + int(damping * 10) + int(weighted))
    n = 400
    ei, w = random_graph(rng, n, 1200)
    w = w if weighted else None
    reset = random_resets(rng, 70, n)
    graph = PPRGraph.from_edges(
        torch.from_numpy(ei), n, None if w is None else torch.from_numpy(w), directed=directed
    )
    out = personalized_pagerank(graph, torch.from_numpy(reset).float(), damping=damping)
    assert out.dtype == torch.float32 and out.shape == (70, n)
    ref = igraph_ppr(n, ei, w, directed, damping, reset)
    assert np.abs(out.double().numpy() - ref).max() <= 1e-6


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("reorder", [False, True])
@pytest.mark.parametrize("method", ["auto", "power"])
def test_matches_igraph_float64_exactly(directed, reorder, method):
    """In float64 the operator reproduces prpack to 1e-9: multi-edges, self loops, dangling nodes."""
    rng = np.random.default_rng(7)
    n = 120
    ei, w = random_graph(rng, n, 200, isolated=8)
    reset = random_resets(rng, 40, n, isolated=8)
    graph = PPRGraph.from_edges(
        torch.from_numpy(ei), n, torch.from_numpy(w), directed=directed, dtype=torch.float64, reorder=reorder
    )
    assert graph.dangling.numel() >= 8
    for damping in (0.3, 0.85):
        out = personalized_pagerank(
            graph, torch.from_numpy(reset), damping=damping, tol=1e-13, max_iter=400, method=method
        )
        ref = igraph_ppr(n, ei, w, directed, damping, reset)
        assert np.abs(out.numpy() - ref).max() <= 1e-9


def test_semantics_small_cases():
    # Undirected self loop counts twice, directed once; a sink sends its mass back along the reset vector.
    for directed in (False, True):
        ei = np.array([[0, 0, 1, 2], [0, 1, 2, 2]])
        graph = PPRGraph.from_edges(torch.from_numpy(ei), 4, directed=directed, dtype=torch.float64)
        reset = np.array([[1.0, 0, 0, 0], [0, 0.5, 0, 0.5], [0, 0, 0, 1.0]])
        out = personalized_pagerank(graph, torch.from_numpy(reset), damping=0.7, tol=1e-14, max_iter=300)
        assert np.abs(out.numpy() - igraph_ppr(4, ei, None, directed, 0.7, reset)).max() <= 1e-10
        assert torch.equal(out[2], torch.tensor([0, 0, 0, 1.0], dtype=torch.float64))  # isolated seed


def test_dense_reset_is_global_pagerank():
    rng = np.random.default_rng(3)
    n = 200
    ei, w = random_graph(rng, n, 500)
    graph = PPRGraph.from_edges(torch.from_numpy(ei), n, torch.from_numpy(w), directed=True)
    out = personalized_pagerank(graph, torch.ones(3, n), damping=0.85)
    ref = np.array(ig.Graph(n=n, edges=ei.T.tolist(), directed=True).pagerank(weights=list(w), damping=0.85))
    assert np.abs(out.double().numpy() - ref[None]).max() <= 1e-6


@pytest.mark.parametrize("directed", [False, True])
def test_block_size_and_early_exit_do_not_change_results(directed):
    rng = np.random.default_rng(11)
    n = 300
    ei, w = random_graph(rng, n, 900)
    graph = PPRGraph.from_edges(torch.from_numpy(ei), n, torch.from_numpy(w), directed=directed)
    reset = torch.from_numpy(random_resets(rng, 40, n)).float()
    base = personalized_pagerank(graph, reset, damping=0.85, block_size=40)
    for block in (1, 7, 32):
        stats = PPRStats()
        out = personalized_pagerank(graph, reset, damping=0.85, block_size=block, stats=stats)
        assert (out - base).abs().max() <= 1e-6
        assert stats.column_iterations < 100 * 40  # columns leave the loop early
    assert torch.allclose(personalized_pagerank(graph, reset[3], damping=0.85), base[3], atol=1e-6)


def passage_weighted_resets(rng: np.random.Generator, b: int, n: int, passages: int) -> np.ndarray:
    """HippoRAG 2-like resets [b, n]: 1-5 seeds among the first nodes, plus a small weight on every one of
    the last ``passages`` nodes (too dense for the sparse-entry path, a few support rows per block)."""
    reset = np.zeros((b, n))
    for q in range(b):
        k = int(rng.integers(1, 6))
        reset[q, rng.choice(n - passages, k, replace=False)] = rng.random(k) + 0.01
    reset[:, n - passages :] = 0.05 * rng.random((b, passages))
    return reset


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("reorder", [False, True])
def test_passage_weighted_resets_take_support_rows_and_match_dense_update(directed, reorder, monkeypatch):
    """Resets with mass on few rows per block (the passage weights) update only those rows each step: the
    result matches igraph and is bitwise the one of the dense [N, b] teleport update."""
    from hyperrag.ops.ppr import solver

    rng = np.random.default_rng(21 + 2 * directed + reorder)
    n = 400
    ei, w = random_graph(rng, n, 1200)
    graph = PPRGraph.from_edges(
        torch.from_numpy(ei), n, torch.from_numpy(w), directed=directed, dtype=torch.float64, reorder=reorder
    )
    reset = passage_weighted_resets(rng, 24, n, passages=80)
    r = torch.from_numpy(reset)
    block = solver._dense_reset_block(r[:4], r[:4].sum(1), graph)
    assert len(block) == 2 and block[0].numel() <= n // 4  # support rows, not the dense block
    runs, rest = solver._row_runs(*block)
    assert sum(hi - lo for lo, hi, _ in runs) + (0 if rest is None else rest[0].numel()) == block[0].numel()
    if not reorder:  # the passages are consecutive rows: updated through one slice, the seeds through indices
        assert [(lo, hi) for lo, hi, _ in runs] == [(n - 80, n)] and rest is not None
    for damping in (0.5, 0.85):
        out = personalized_pagerank(graph, r, damping=damping, tol=1e-13, block_size=4)
        ref = igraph_ppr(n, ei, w, directed, damping, reset)
        assert np.abs(out.numpy() - ref).max() <= 1e-8  # prpack's own float64 tolerance, not ours
        with monkeypatch.context() as m:  # the same solve with the dense teleport update
            m.setattr(solver, "_dense_reset_block", lambda rb, rs, g: (
                (rb / rs[:, None] if g.perm is None else (rb / rs[:, None]).index_select(1, g.perm)).T.contiguous(),))
            dense = personalized_pagerank(graph, r, damping=damping, tol=1e-13, block_size=4)
        assert torch.equal(out, dense)


@pytest.mark.parametrize("reorder", [False, True])
def test_nodes_returns_those_columns_of_the_full_answer(reorder):
    """``nodes`` picks columns of the answer (any order, repeats allowed): bitwise the full answer's, for sparse
    and passage-weighted resets, with and without edge deltas."""
    rng = np.random.default_rng(5 + reorder)
    n = 300
    ei, w = random_graph(rng, n, 900)
    graph = PPRGraph.from_edges(torch.from_numpy(ei), n, torch.from_numpy(w), reorder=reorder)
    nodes = torch.from_numpy(rng.choice(n, 40, replace=False))
    nodes = torch.cat([nodes, nodes[:3]])
    delta = EdgeWeightDelta(torch.tensor([0, 2]), torch.from_numpy(ei[0, :2]), torch.from_numpy(ei[1, :2]),
                            torch.tensor([0.0, 3.0]))
    for reset in (random_resets(rng, 12, n), passage_weighted_resets(rng, 12, n, passages=60)):
        r = torch.from_numpy(reset).float()
        for kw in ({}, {"edge_delta": delta}):
            full = personalized_pagerank(graph, r, damping=0.5, block_size=4, **kw)
            picked = personalized_pagerank(graph, r, damping=0.5, block_size=4, nodes=nodes, **kw)
            assert picked.shape == (12, nodes.numel()) and torch.equal(picked, full[:, nodes])
    one = personalized_pagerank(graph, r[0], nodes=nodes)
    assert one.shape == (nodes.numel(),) and torch.equal(one, personalized_pagerank(graph, r[0])[nodes])
    assert personalized_pagerank(graph, torch.ones(0, n), nodes=nodes).shape == (0, nodes.numel())
    with pytest.raises(ValueError, match="nodes"):
        personalized_pagerank(graph, torch.ones(0, n), nodes=torch.tensor([n]))
    for bad in (torch.tensor([n]), torch.tensor([-1]), torch.zeros(2, 2, dtype=torch.long)):
        with pytest.raises(ValueError, match="nodes"):
            personalized_pagerank(graph, r, nodes=bad)


def test_chebyshev_first_check_is_sized_from_the_residual_bound():
    """A plain Chebyshev block skips the convergence check at step 0 (its residual is bounded by 2 d): at
    damping 0.5 and tol 1e-6 at most two checks per block (one on the retriever's graph), and still prpack's
    answer."""
    rng = np.random.default_rng(8)
    n = 400
    ei, w = random_graph(rng, n, 1600, isolated=0)
    graph = PPRGraph.from_edges(torch.from_numpy(ei), n, torch.from_numpy(w))
    reset = passage_weighted_resets(rng, 16, n, passages=80)
    for damping in (0.5, 0.85):
        stats = PPRStats()
        out = personalized_pagerank(graph, torch.from_numpy(reset).float(), damping=damping, tol=1e-6,
                                    block_size=8, stats=stats)
        assert damping > 0.5 or stats.convergence_checks <= 2 * 2  # two blocks, at most two checks each
        assert np.abs(out.double().numpy() - igraph_ppr(n, ei, w, False, damping, reset)).max() <= 1e-6


def delta_reference(n, ei, w, directed, damping, reset, overrides):
    """igraph on the directed arc list of the graph with one query's arcs re-weighted."""
    arcs: dict[tuple[int, int], float] = {}
    pairs = list(zip(ei[0], ei[1], w)) + ([] if directed else list(zip(ei[1], ei[0], w)))
    for s, t, x in pairs:
        arcs[(int(s), int(t))] = arcs.get((int(s), int(t)), 0.0) + float(x)
    out = []
    for q, r in enumerate(reset):
        a = dict(arcs)
        a.update({(s, t): x for qq, s, t, x in overrides if qq == q})
        a = {k: v for k, v in a.items() if v > 0}
        e = np.array(list(a.keys())).T
        out.append(igraph_ppr(n, e, np.array(list(a.values())), True, damping, r[None])[0])
    return np.array(out)


@pytest.mark.parametrize("directed", [False, True])
def test_edge_delta_matches_igraph_reweighted_graph(directed):
    rng = np.random.default_rng(5)
    n = 150
    ei, w = random_graph(rng, n, 400, loops=2)
    graph = PPRGraph.from_edges(
        torch.from_numpy(ei), n, torch.from_numpy(w), directed=directed, dtype=torch.float64
    )
    reset = random_resets(rng, 12, n)
    arcs = set(zip(ei[0].tolist(), ei[1].tolist())) | (
        set() if directed else set(zip(ei[1].tolist(), ei[0].tolist()))
    )
    arcs = sorted(arcs)
    overrides = []
    for q in (2, 3, 5, 11):
        for i in rng.choice(len(arcs), 12, replace=False):
            overrides.append((q, *arcs[i], float(rng.choice([0.0, rng.random() * 3]))))
    # Query 4 removes every arc leaving node s: s becomes dangling for that query only.
    s0 = arcs[0][0]
    overrides += [(4, s, t, 0.0) for s, t in arcs if s == s0]
    q, s, t, x = (torch.tensor(c) for c in zip(*overrides))
    delta = EdgeWeightDelta(query=q, src=s, dst=t, weight=x.double())
    for damping in (0.5, 0.85):
        out = personalized_pagerank(
            graph,
            torch.from_numpy(reset),
            damping=damping,
            edge_delta=delta,
            tol=1e-13,
            max_iter=400,
            block_size=4,
        )
        ref = delta_reference(n, ei, w, directed, damping, reset, overrides)
        assert np.abs(out.numpy() - ref).max() <= 1e-9
        plain = personalized_pagerank(
            graph, torch.from_numpy(reset), damping=damping, tol=1e-13, max_iter=400
        )
        untouched = [0, 1, 6, 7, 8, 9, 10]
        assert torch.allclose(out[untouched], plain[untouched], atol=1e-12)
    # float32, default tolerance: within 1e-6 as well.
    g32 = PPRGraph.from_edges(torch.from_numpy(ei), n, torch.from_numpy(w), directed=directed)
    out = personalized_pagerank(g32, torch.from_numpy(reset).float(), damping=0.5, edge_delta=delta)
    assert (
        np.abs(out.double().numpy() - delta_reference(n, ei, w, directed, 0.5, reset, overrides)).max()
        <= 1e-6
    )


def test_edge_delta_rejects_unknown_arcs_and_duplicates():
    graph = PPRGraph.from_edges(torch.tensor([[0, 1], [1, 2]]), 3, directed=True)
    reset = torch.ones(2, 3)
    with pytest.raises(ValueError, match="not in the graph"):
        personalized_pagerank(
            graph,
            reset,
            edge_delta=EdgeWeightDelta(
                torch.tensor([0]), torch.tensor([2]), torch.tensor([0]), torch.tensor([1.0])
            ),
        )
    with pytest.raises(ValueError, match="twice"):
        personalized_pagerank(
            graph,
            reset,
            edge_delta=EdgeWeightDelta(
                torch.tensor([0, 0]), torch.tensor([0, 0]), torch.tensor([1, 1]), torch.tensor([1.0, 2.0])
            ),
        )


def test_input_validation():
    graph = PPRGraph.from_edges(torch.tensor([[0, 1], [1, 2]]), 3)
    with pytest.raises(ValueError):
        personalized_pagerank(graph, torch.tensor([[1.0, -1.0, 0.5]]))
    with pytest.raises(ValueError):
        personalized_pagerank(graph, torch.zeros(2, 3))
    with pytest.raises(ValueError):
        personalized_pagerank(graph, torch.ones(2, 4))
    with pytest.raises(ValueError):
        personalized_pagerank(graph, torch.ones(1, 3), method="chebyshev", damping=1.0)
    with pytest.raises(ValueError):
        PPRGraph.from_edges(torch.tensor([[0, 3], [1, 2]]), 3)
    with pytest.raises(ValueError):
        PPRGraph.from_edges(torch.tensor([[0], [1]]), 3, edge_weight=torch.tensor([-1.0]))
    assert graph.to("cpu") is graph and graph.num_nodes == 3 and "PPRGraph" in repr(graph)
    assert personalized_pagerank(graph, torch.ones(0, 3)).shape == (0, 3)


graphs = st.integers(2, 25).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.floats(0.1, 5.0)), max_size=60),
        st.booleans(),
        st.floats(0.05, 0.95),
    )
)


@settings(max_examples=40, deadline=None)
@given(graphs, st.data())
def test_properties_rows_are_distributions(g, data):
    n, edges, directed, damping = g
    ei = torch.tensor([[e[0] for e in edges], [e[1] for e in edges]], dtype=torch.long).reshape(2, -1)
    w = torch.tensor([e[2] for e in edges], dtype=torch.float64)
    graph = PPRGraph.from_edges(ei, n, w, directed=directed, dtype=torch.float64)
    b = data.draw(st.integers(1, 5))
    reset = torch.tensor(
        data.draw(st.lists(st.lists(st.floats(0, 1), min_size=n, max_size=n), min_size=b, max_size=b)),
        dtype=torch.float64,
    )
    reset[:, 0] += 0.01  # positive row sums
    out = personalized_pagerank(graph, reset, damping=damping, tol=1e-12, max_iter=500)
    assert (out >= 0).all()
    assert torch.allclose(out.sum(1), torch.ones(b, dtype=torch.float64), atol=1e-9)
    if edges:
        ref = igraph_ppr(n, ei.numpy(), w.numpy(), directed, damping, reset.numpy())
        assert np.abs(out.numpy() - ref).max() <= 1e-7


@settings(max_examples=40, deadline=None)
@given(st.integers(3, 30), st.floats(0.1, 0.9), st.floats(0.0, 1.0), st.integers(0, 10_000))
def test_property_linear_in_reset_without_dangling_nodes(n, damping, alpha, seed):
    """Without dangling nodes PPR is linear in the (normalised) reset distribution."""
    rng = np.random.default_rng(seed)
    ring = np.stack([np.arange(n), (np.arange(n) + 1) % n])  # every node has an arc
    ei = np.concatenate([ring, rng.integers(0, n, (2, 2 * n))], axis=1)
    graph = PPRGraph.from_edges(
        torch.from_numpy(ei),
        n,
        torch.from_numpy(rng.random(ei.shape[1]) + 0.1),
        directed=bool(seed % 2),
        dtype=torch.float64,
    )
    r1, r2 = torch.from_numpy(rng.dirichlet(np.ones(n))), torch.from_numpy(rng.dirichlet(np.ones(n)))
    x = personalized_pagerank(
        graph, torch.stack([r1, r2, alpha * r1 + (1 - alpha) * r2]), damping=damping, tol=1e-13, max_iter=500
    )
    assert torch.allclose(x[2], alpha * x[0] + (1 - alpha) * x[1], atol=1e-10)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA not available")
def test_cuda_matches_cpu():
    rng = np.random.default_rng(0)
    n = 2000
    ei, w = random_graph(rng, n, 8000)
    reset = torch.from_numpy(random_resets(rng, 300, n)).float()
    q = torch.tensor([3, 3, 7])
    arcs = torch.from_numpy(ei[:, :3])
    delta = EdgeWeightDelta(q, arcs[0], arcs[1], torch.tensor([0.0, 2.0, 0.5]))
    for directed in (False, True):
        cpu = PPRGraph.from_edges(torch.from_numpy(ei), n, torch.from_numpy(w), directed=directed)
        gpu = cpu.to("cuda")
        for kw in ({}, {"edge_delta": delta}):
            a = personalized_pagerank(cpu, reset, damping=0.85, **kw)
            b = personalized_pagerank(gpu, reset.cuda(), damping=0.85, **kw)
            assert b.device.type == "cuda"
            assert (a - b.cpu()).abs().max() <= 1e-6


def _apply(arcs: dict, overrides, q):
    a = dict(arcs)
    a.update({(s, t): x for qq, s, t, x in overrides if qq == q})
    return a


@pytest.mark.parametrize("damping", [0.3, 0.5, 0.85])
@pytest.mark.parametrize("reorder", [False, True])
def test_chebyshev_with_edge_deltas_matches_rebuilt_graph(damping, reorder):
    """Undirected graphs keep Chebyshev with deltas; every kind of override is exact against igraph on the
    per-query rebuilt graph: mild changes (rescaled column), heavy down-weighting (replaced column), a whole
    out-row zeroed (tail dangling for that query only), a zero-weight tail revived (stops being dangling),
    self loops, and isolated nodes elsewhere in the graph."""
    rng = np.random.default_rng(int(damping * 10) + 100 * reorder)
    n = 160
    ei, w = random_graph(rng, n, 480, isolated=10, loops=3)
    ei = np.concatenate([ei, [[n - 9, n - 8], [n - 9, n - 7]]], axis=1)  # zero-weight arcs only
    w = np.concatenate([w, [0.0, 0.0]])
    graph = PPRGraph.from_edges(
        torch.from_numpy(ei), n, torch.from_numpy(w), dtype=torch.float64, reorder=reorder
    )
    assert int(graph.dangling.numel()) >= 6
    reset = random_resets(rng, 16, n)
    arcs: dict[tuple[int, int], float] = {}
    for s, t, x in list(zip(ei[0], ei[1], w)) + list(zip(ei[1], ei[0], w)):
        arcs[(int(s), int(t))] = arcs.get((int(s), int(t)), 0.0) + float(x)
    out_arcs: dict[int, list[int]] = {}
    for s, t in arcs:
        out_arcs.setdefault(s, []).append(t)
    hubs = sorted(out_arcs, key=lambda s: -len(out_arcs[s]))
    overrides = []
    for q in (2, 3, 4, 5, 6, 9, 13):
        for s in rng.choice(hubs[:40], 3, replace=False):
            ts = out_arcs[int(s)]
            for t in rng.choice(ts, min(len(ts), 4), replace=False):
                x = float(rng.choice([0.0, 0.2, 1.5, 3.5, 5.0])) * arcs[(int(s), int(t))]
                overrides.append((q, int(s), int(t), x))
    ts = out_arcs[hubs[0]]
    overrides += [(7, hubs[0], t, 0.0) for t in ts]  # tail becomes dangling
    overrides += [(8, hubs[1], t, 0.0) for t in out_arcs[hubs[1]][1:]]  # one small arc left: replaced column
    overrides += [(8, n - 9, n - 9, 2.0)]  # a dangling tail (zero-weight self loop) gets an arc
    overrides += [(10, n - 8, n - 7, 1.0), (10, n - 7, n - 8, 0.5)]
    q, s, t, x = (torch.tensor(c) for c in zip(*overrides))
    delta = EdgeWeightDelta(query=q, src=s, dst=t, weight=x.double())
    reset[7, hubs[0]] += 1.0  # make sure the overridden tails carry mass
    reset[8, [hubs[1], n - 9]] += 1.0
    reset[10, n - 8] += 1.0
    stats = PPRStats()
    out = personalized_pagerank(
        graph,
        torch.from_numpy(reset),
        damping=damping,
        edge_delta=delta,
        tol=1e-13,
        max_iter=400,
        block_size=5,
        stats=stats,
    )
    ref = []
    for b, r in enumerate(reset):
        a = {k: v for k, v in _apply(arcs, overrides, b).items() if v > 0}
        ref.append(igraph_ppr(n, np.array(list(a)).T, np.array(list(a.values())), True, damping, r[None])[0])
    assert np.abs(out.numpy() - np.array(ref)).max() <= 1e-9
    power = PPRStats()
    out_p = personalized_pagerank(
        graph,
        torch.from_numpy(reset),
        damping=damping,
        edge_delta=delta,
        tol=1e-13,
        max_iter=400,
        block_size=5,
        stats=power,
        method="power",
    )
    assert np.abs(out_p.numpy() - np.array(ref)).max() <= 1e-9
    if damping <= 0.5:  # Chebyshev is provably convergent with deltas here, and faster than power
        assert stats.chebyshev_fallbacks == 0
        assert stats.column_iterations < power.column_iterations
    # float32 at the default tolerance: as close as the plain float32 solve is to prpack (1e-6 here).
    g32 = PPRGraph.from_edges(torch.from_numpy(ei), n, torch.from_numpy(w), reorder=reorder)
    out32 = personalized_pagerank(g32, torch.from_numpy(reset).float(), damping=damping, edge_delta=delta)
    assert np.abs(out32.double().numpy() - np.array(ref)).max() <= 1e-6


def test_chebyshev_with_deltas_falls_back_to_power_when_diverging():
    """A delta that turns an undirected ring into a one-way ring puts eigenvalues d e^{2 pi i k/n} outside
    Chebyshev's ellipse when d > 1/sqrt(2): the block switches to power steps and still converges."""
    n = 24
    ring = np.stack([np.arange(n), (np.arange(n) + 1) % n])
    graph = PPRGraph.from_edges(torch.from_numpy(ring), n, dtype=torch.float64)
    back = [(0, (i + 1) % n, i, 0.0) for i in range(n)]
    q, s, t, x = (torch.tensor(c) for c in zip(*back))
    delta = EdgeWeightDelta(q, s, t, x.double())
    reset = np.zeros((2, n))
    reset[:, 0] = 1.0
    mixed = 0.9 * reset + 0.1 / n  # a dense reset takes the other restart branch
    rows = np.zeros((2, n))
    rows[:, [0, 5, 9]] = [0.6, 0.3, 0.1]  # 1/8 of the nodes: neither sparse entries nor dense, the row branch
    for block, r in ((2, reset), (1, reset), (2, mixed), (2, rows)):
        ref = igraph_ppr(n, ring, None, True, 0.95, r[:1])[0]  # query 0: the one-way ring
        ref1 = igraph_ppr(n, ring, None, False, 0.95, r[1:])[0]  # query 1: no delta
        stats = PPRStats()
        out = personalized_pagerank(
            graph,
            torch.from_numpy(r),
            damping=0.95,
            edge_delta=delta,
            tol=1e-12,
            max_iter=1000,
            stats=stats,
            block_size=block,
        )
        assert np.abs(out[0].numpy() - ref).max() <= 1e-9
        assert np.abs(out[1].numpy() - ref1).max() <= 1e-9
        assert stats.chebyshev_fallbacks >= 1
        assert stats.max_iterations < 2 * math.log(1e-12) / math.log(0.95)


def test_merge_edge_deltas_dedupes_and_combines():
    from hyperrag.ops.ppr import merge_edge_deltas

    ei = torch.tensor([[0, 0, 1], [1, 2, 2]])
    graph = PPRGraph.from_edges(ei, 3, torch.tensor([2.0, 1.0, 4.0]), reorder=True)
    a = EdgeWeightDelta(
        torch.tensor([0, 0, 1, 0]),
        torch.tensor([0, 1, 0, 0]),
        torch.tensor([1, 2, 1, 1]),
        torch.tensor([6.0, 8.0, 1.0, 7.0]),
    )  # (0, 0->1) twice: last (7) wins
    b = EdgeWeightDelta(
        torch.tensor([0, 1]), torch.tensor([0, 2]), torch.tensor([1, 1]), torch.tensor([1.0, 0.0])
    )
    got = {}
    for how in ("multiply", "last"):
        m = merge_edge_deltas(graph, [a, None, b], combine=how)
        got[how] = {(int(q), int(s), int(t)): float(x) for q, s, t, x in zip(m.query, m.src, m.dst, m.weight)}
    # stored weights: 0->1: 2, 1->2: 4, 2->1: 4. Multiply: 2 * (7/2) * (1/2) = 3.5
    assert got["multiply"] == {(0, 0, 1): 3.5, (0, 1, 2): 8.0, (1, 0, 1): 1.0, (1, 2, 1): 0.0}
    assert got["last"] == {(0, 0, 1): 1.0, (0, 1, 2): 8.0, (1, 0, 1): 1.0, (1, 2, 1): 0.0}
    assert merge_edge_deltas(graph, [None]) is None
    reset = torch.ones(2, 3)
    m = merge_edge_deltas(graph, [a, b])
    personalized_pagerank(graph, reset, edge_delta=m)  # unique (query, arc): accepted
    with pytest.raises(ValueError, match="twice"):
        personalized_pagerank(graph, reset, edge_delta=a)
    with pytest.raises(ValueError, match="not in the graph"):
        merge_edge_deltas(graph, [EdgeWeightDelta(*(torch.tensor([v]) for v in (0, 2, 2, 1.0)))])
    assert torch.equal(graph.arc_weight(torch.tensor([0, 2]), torch.tensor([1, 1])), torch.tensor([2.0, 4.0]))
