"""Gate effectiveness metrics on a hand-made typed graph: a gate shortens the seed → gold path."""

import math

import torch

from hyperrag.eval.gate_effectiveness import (
    bootstrap_ci,
    gate_effectiveness,
    plot_gate_effectiveness,
    query_metrics,
)
from hyperrag.expansion.best_first import EdgeKind, TypedGraph


def test_gate_shortens_paths(tmp_path):
    # chain 0-1-2-3-4 (structural) plus a gate 0-4
    ei = torch.tensor([[0, 1, 2, 3, 0], [1, 2, 3, 4, 4]])
    kinds = torch.tensor([EdgeKind.STRUCTURAL] * 4 + [EdgeKind.GATE])
    g = TypedGraph.from_edges(ei, kinds, 5)
    res = gate_effectiveness(g, [[0]], [[[4], [2]]], max_hops=3, n_boot=50)
    assert res["gate_arcs"] == 1
    assert res["on"]["coverage"]["mean"] == 1.0 and res["off"]["coverage"]["mean"] == 0.5
    assert math.isclose(res["on"]["depth_weighted"]["mean"], (1 / 2 + 1 / 3) / 2)
    assert res["on"]["min_hops"]["mean"] == 1.0 and res["off"]["min_hops"]["mean"] == 2.0
    assert plot_gate_effectiveness(res, tmp_path / "g.png").exists()


def test_query_metrics_and_ci():
    m = query_metrics([math.inf, math.inf], 4)
    assert m["reachability"] == 0.0 and m["coverage"] == 0.0 and math.isnan(m["min_hops"])
    ci = bootstrap_ci([0.0, 1.0, 1.0, 1.0], n=200)
    assert ci["lo"] <= ci["mean"] == 0.75 <= ci["hi"]
