"""Best-first typed expansion: gain = s · γ^t · w(type), order, thresholds, budget."""

import numpy as np
import pytest
import torch

from hyperrag.expansion import EdgeKind, TypedGraph, best_first_expand, kind_weight_vector

S, H, G = int(EdgeKind.STRUCTURAL), int(EdgeKind.HIERARCHY), int(EdgeKind.GATE)


@pytest.fixture()
def tiny():
    """0 –S– 1 –S– 2,  0 –H– 3 (a module),  3 –G– 4 (another module),  4 –H– 5,  2 –S– 5."""
    edges = torch.tensor([[0, 1, 0, 3, 4, 2], [1, 2, 3, 4, 5, 5]])
    kinds = torch.tensor([S, S, H, G, H, S])
    graph = TypedGraph.from_edges(edges, kinds, 6)
    score = np.array([0.9, 0.5, 0.4, 0.6, 0.5, 0.8])
    return graph, score


def test_csr_is_symmetric(tiny):
    graph, _ = tiny
    assert graph.count_by_kind() == {"structural": 3, "hierarchy": 2, "gate": 1}
    nbrs = {v: sorted(graph.idx[graph.ptr[v]: graph.ptr[v + 1]].tolist()) for v in range(6)}
    assert nbrs == {0: [1, 3], 1: [0, 2], 2: [1, 5], 3: [0, 4], 4: [3, 5], 5: [2, 4]}


def test_gain_and_order(tiny):
    graph, score = tiny
    w = kind_weight_vector()  # 0.8 structural / 1.0 hierarchy / 1.2 gate
    assert w.tolist() == [0.8, 1.0, 1.2]
    walk = best_first_expand(graph, score, [0], gamma=0.5, kind_weight=w)
    gain = dict(zip(walk.nodes, walk.gain))
    assert gain[0] == pytest.approx(0.9)
    assert gain[3] == pytest.approx(0.6 * 0.5 * 1.0)  # hierarchy, hop 1
    assert gain[1] == pytest.approx(0.5 * 0.5 * 0.8)  # structural, hop 1
    assert gain[4] == pytest.approx(0.5 * 0.25 * 1.2)  # gate, hop 2
    # 5 is reached at hop 3 from 4 (hierarchy: 0.8·0.125·1.0) or from 2 (structural, hop 3): the better wins
    assert gain[5] == pytest.approx(0.8 * 0.125 * 1.0)
    assert walk.nodes == [0, 3, 1, 4, 5, 2]  # taken in decreasing gain (a heap), all reachable
    assert walk.gain == sorted(walk.gain, reverse=True)
    assert walk.hop == [0, 1, 1, 2, 3, 2]
    assert walk.via == [-1, H, S, G, H, S] and walk.parent == [-1, 0, 0, 3, 4, 1]
    assert walk.stop == "exhausted"


def test_stops_at_gain_threshold_budget_and_max_nodes(tiny):
    graph, score = tiny
    walk = best_first_expand(graph, score, [0], gamma=0.5, min_gain=0.19)
    assert walk.nodes == [0, 3, 1] and walk.stop == "gain"  # next best gain (4 over the gate) 0.15 < 0.19
    tokens = np.array([5, 5, 5, 20, 5, 5])
    walk = best_first_expand(graph, score, [0], gamma=0.5, node_tokens=tokens, token_budget=29)
    assert walk.nodes == [0, 3] and walk.tokens == 25 and walk.stop == "budget"  # node 1 would make 30
    walk = best_first_expand(graph, score, [0, 5], gamma=0.5, max_nodes=4)
    assert walk.nodes == [0, 5, 3, 4] and walk.stop == "max_nodes"  # seeds, then 3 (0.3), 4 via 5 (0.25)


def test_gate_weight_changes_route(tiny):
    graph, score = tiny
    no_gate = kind_weight_vector({"gate": 0.0})
    walk = best_first_expand(graph, score, [0], gamma=0.5, kind_weight=no_gate, min_gain=1e-9)
    assert walk.nodes[-1] == 4 and walk.via[-1] == H  # the gate carries no gain; 4 is reached through 5
    with pytest.raises(ValueError):
        kind_weight_vector({"teleport": 1.0})


def test_hop_limit(tiny):
    """Algorithm 1's hop limit h: nothing farther than h edges from a seed is taken."""
    graph, score = tiny
    free = best_first_expand(graph, score, [0], gamma=0.5)
    assert max(free.hop) == 3 and free.hop_limited == 0
    one = best_first_expand(graph, score, [0], gamma=0.5, max_hops=1)
    assert one.nodes == [0, 3, 1] and max(one.hop) == 1 and one.stop == "hop limit" and one.hop_limited == 2
    assert one.hop_blocked >= 1  # the walk ran out of frontier because of the limit, not the gain
    two = best_first_expand(graph, score, [0], gamma=0.5, max_hops=2)
    assert sorted(two.nodes) == [0, 1, 2, 3, 4] and 5 not in two.nodes and max(two.hop) == 2
    # the limit counts from each node's own seed: seeding 5 as well brings it (hop 0) and its neighbours (hop 1)
    both = best_first_expand(graph, score, [0, 5], gamma=0.5, max_hops=1)
    assert set(both.nodes) == {0, 1, 3, 5, 2, 4} and max(both.hop) == 1


def test_stop_reason_hop_limit_vs_gain(tiny):
    """A walk that runs out of frontier because the hop limit held back a node worth taking stops on the
    ``hop limit``; when everything held back is under the threshold, on the ``gain``."""
    graph, score = tiny
    free = best_first_expand(graph, score, [0], gamma=0.5, min_gain=1e-9)
    limited = best_first_expand(graph, score, [0], gamma=0.5, min_gain=1e-9, max_hops=1)
    assert set(limited.nodes) < set(free.nodes) and limited.stop == "hop limit" and limited.hop_blocked > 0
    # a threshold above every hop-2 gain: the limit held back nothing worth taking
    high = max(g for g, h in zip(free.gain, free.hop) if h == 2) + 1e-6
    gain_stop = best_first_expand(graph, score, [0], gamma=0.5, min_gain=high, max_hops=1)
    assert gain_stop.hop_blocked == 0 and gain_stop.stop in ("gain", "exhausted")


def test_gated_parent_chains(tiny):
    """``gated()``: a node whose parent chain crosses a gate was reached only through one."""
    graph, score = tiny
    walk = best_first_expand(graph, score, [0], gamma=0.5, min_gain=1e-9)
    pos = {v: i for i, v in enumerate(walk.nodes)}
    gated = walk.gated()
    for i, v in enumerate(walk.nodes):
        chain, j = [], i
        while j >= 0:
            chain.append(walk.via[j])
            j = pos[walk.parent[j]] if walk.parent[j] >= 0 else -1
        assert gated[i] == (G in chain)
    assert any(gated) and not gated[0]
