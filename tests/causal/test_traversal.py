from dataclasses import replace

import pytest
import torch

from hyperrag.causal.graph import CausalGraph
from hyperrag.causal.traversal import CausalTraversal
from hyperrag.config import method_settings

TRAVERSAL = method_settings("cdfrag").traversal


def traversal(graph, **changes) -> CausalTraversal:
    """A traversal over ``graph`` with the configured settings, ``changes`` applied."""
    return CausalTraversal(graph, replace(TRAVERSAL, **changes))


def toy_graph(alias: bool = False) -> CausalGraph:
    """a -> b -> c -> d (passages 0, 1, 2), e -> b (passage 3); node i has embedding e_i; optional alias c ~ x,
    x -> y (passage 4)."""
    names = ["a", "b", "c", "d", "e", "x", "y"]
    emb = torch.eye(len(names), 8)
    src, dst, psg = [0, 1, 2, 4, 5], [1, 2, 3, 1, 6], [0, 1, 2, 3, 4]
    info = [{"passage_id": f"p{p}", "sentence": f"s{p}"} for p in psg]
    alias_index = torch.tensor([[2, 5], [5, 2]]) if alias else torch.empty(2, 0, dtype=torch.long)
    alias_weight = torch.tensor([0.9, 0.9]) if alias else torch.empty(0)
    return CausalGraph(names, emb, torch.tensor([src, dst]), torch.tensor([1.0, 0.5, 1.0, 1.0, 1.0]),
                       torch.tensor(psg), info, alias_index, alias_weight, [f"p{i}" for i in range(5)])


def query(*nodes: int, sim: float = 1.0) -> torch.Tensor:
    q = torch.zeros(1, 8)
    for n in nodes:
        q[0, n] = sim
    return q


def test_forward_paths_depth_limited_and_scored():
    tr = traversal(toy_graph(), max_depth=2, decay=0.5, seed_top_n=1, seed_min_sim=0.5, backward=False)
    (paths,) = tr(query(0))
    got = {tuple(p.edges): round(p.score, 4) for p in paths}
    # a->b (1.0), a->b->c: 1.0 * 0.5 * decay 0.5; depth 3 (->d) is cut
    assert got == {(0,): 1.0, (0, 1): 0.25}
    assert paths[0].describe(tr.graph)["chain"] == "a → b"
    assert paths[1].node_texts(tr.graph) == ["a", "b", "c"] and paths[1].depth == 2


def test_backward_paths_are_reported_cause_first():
    tr = traversal(toy_graph(), max_depth=3, decay=1.0, seed_top_n=1, seed_min_sim=0.5)
    (paths,) = tr(query(2))  # seed c
    chains = {" → ".join(p.node_texts(tr.graph)): p.direction for p in paths}
    assert chains["c → d"] == "forward"
    assert chains["b → c"] == "backward" and chains["a → b → c"] == "backward" and chains["e → b → c"] == "backward"
    assert all(p.edges == sorted(p.edges, key=lambda e: p.edges.index(e)) for p in paths)


def test_seed_threshold_and_no_cycles():
    tr = traversal(toy_graph(), seed_min_sim=0.5)
    assert tr(query(0, sim=0.3)) == [[]]  # below seed_min_sim: no seed, no path
    ids, sims = tr.seeds(query(0, 3, sim=0.8))
    assert set(ids[0, :2].tolist()) == {0, 3} and float(sims[0, 0]) == pytest.approx(0.8)
    assert ids[0, 2:].tolist() == [-1] * (ids.shape[1] - 2)
    cyc = toy_graph()
    cyc.edge_index = torch.tensor([[0, 1, 2, 3, 5], [1, 2, 3, 0, 6]])  # a -> b -> c -> d -> a
    (paths,) = traversal(cyc, max_depth=10, seed_top_n=1, backward=False)(query(0))
    assert max(p.depth for p in paths) == 3  # stops before returning to a


def test_alias_step_continues_a_chain():
    plain = traversal(toy_graph(alias=False), max_depth=3, decay=1.0, seed_top_n=1, backward=False)
    (paths,) = plain(query(1))
    assert 4 not in {e for p in paths for e in p.edges}  # x -> y unreachable
    tr = traversal(toy_graph(alias=True), max_depth=3, decay=1.0, seed_top_n=1, backward=False)
    (paths,) = tr(query(1))
    via = [p for p in paths if 4 in p.edges]
    assert via and via[0].edges == [1, 4] and via[0].aliases == [(2, 5)]
    assert round(via[0].score, 4) == round(0.5 * 0.9 * 1.0, 4)  # b->c (0.5) · alias 0.9 · x->y (1.0)


def test_passage_scores_take_the_best_path_through_a_passage():
    tr = traversal(toy_graph(), max_depth=2, decay=0.5, seed_top_n=1, backward=False)
    paths = tr(query(0))
    s = tr.passage_scores(paths, 5)
    assert s.shape == (1, 5)
    assert s[0].tolist() == [1.0, 0.25, 0.0, 0.0, 0.0]


def test_empty_graph():
    g = CausalGraph([], torch.empty(0, 8), torch.empty(2, 0, dtype=torch.long), torch.empty(0),
                    torch.empty(0, dtype=torch.long), [], torch.empty(2, 0, dtype=torch.long), torch.empty(0), ["p0"])
    tr = CausalTraversal(g, TRAVERSAL)
    assert tr(torch.randn(2, 8)) == [[], []]
    assert tr.passage_scores([[], []], 1).sum() == 0
