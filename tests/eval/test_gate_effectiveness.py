"""Gate effectiveness (Appendix E) on hand-made retrieved subgraphs and on a walk over a typed graph."""

import math

import numpy as np
import torch

from hyperrag.eval.gate_effectiveness import (
    bootstrap_ci,
    gate_effectiveness,
    plot_gate_effectiveness,
    query_metrics,
    without_kind,
)
from hyperrag.expansion.best_first import EdgeKind, TypedGraph, best_first_expand


def test_gate_shortens_the_walk_to_gold(tmp_path):
    # chain 0-1-2-3-4 (structural) plus a gate 0-4; gold nodes 4 and 2; the walk may take 3 nodes
    ei = torch.tensor([[0, 1, 2, 3, 0], [1, 2, 3, 4, 4]])
    kinds = torch.tensor([EdgeKind.STRUCTURAL] * 4 + [EdgeKind.GATE])
    g = TypedGraph.from_edges(ei, kinds, 5)
    score = np.array([1.0, 0.5, 0.5, 0.5, 0.9])

    def walk(graph):
        w = best_first_expand(graph, score, [0], gamma=0.9, max_nodes=3)
        return dict(zip(w.nodes, w.hop))

    on, off = walk(g), walk(without_kind(g, EdgeKind.GATE))
    assert on == {0: 0, 4: 1, 1: 1} and off == {0: 0, 1: 1, 2: 2}
    res = gate_effectiveness([on, {0: 0}], [off, {0: 0}], [[4, 2], [3], []], n_boot=50, gate_arcs=1)
    assert res["queries"] == 2 and res["both_reachable"] == 1  # the query without gold nodes is left out
    assert res["on"]["reachability"]["mean"] == 0.5 and res["on"]["coverage"]["mean"] == 0.25
    assert math.isclose(res["on"]["depth_weighted"]["mean"], (1 / 2 + 0) / 2)
    assert math.isclose(res["off"]["depth_weighted"]["mean"], (1 / 3 + 0) / 2)
    assert res["on"]["min_hops"]["mean"] == 1.0 and res["off"]["min_hops"]["mean"] == 2.0  # on both-reachable only
    assert plot_gate_effectiveness(res, tmp_path / "g.png").exists()


def test_query_metrics_and_ci():
    m = query_metrics({0: 0, 5: 2}, [7, 8])
    assert m["reachability"] == 0.0 and m["coverage"] == 0.0 and m["depth_weighted"] == 0.0
    assert math.isnan(m["min_hops"])
    m = query_metrics({0: 0, 5: 2, 7: 3}, [5, 7, 9])
    assert m["depth_weighted"] == 1 / 3 and m["coverage"] == 2 / 3 and m["min_hops"] == 2.0
    ci = bootstrap_ci([0.0, 1.0, 1.0, 1.0], n=200)
    assert ci["lo"] <= ci["mean"] == 0.75 <= ci["hi"]


def test_gold_entity_nodes_are_the_entities_gold_passages_mention():
    from types import SimpleNamespace

    import torch

    from hyperrag.eval.gate_effectiveness import gold_entity_nodes

    # entity 0 in passages a, b; entity 1 in b; entity 2 in c (CSR over entities)
    g = SimpleNamespace(num_entities=3, num_passages=3, passage_ids=["a", "b", "c"],
                        entity_passage_ptr=torch.tensor([0, 2, 3, 4]), entity_passage_idx=torch.tensor([0, 1, 1, 2]))
    assert gold_entity_nodes(g, [["b"], ["a", "c"], ["zz"]]) == [[0, 1], [0, 2], []]
