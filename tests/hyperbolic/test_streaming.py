"""Streaming updates: query graphs join the ball, only new + touched nodes move, stale query nodes pruned."""

from dataclasses import replace

import torch

from hyperrag.config import method_settings
from hyperrag.hyperbolic import PoincareEmbedding
from hyperrag.hyperbolic.streaming import StreamingBall
from hyperrag.passage_graph import EdgeSet, PassageGraph, QueryGraphBuilder


def _setup(n=30, dim=8):
    torch.manual_seed(0)
    p = torch.nn.functional.normalize(torch.randn(n, dim), dim=1)
    graph = PassageGraph(n, explicit=EdgeSet.from_lists([0, 1], [1, 2], [0.5, 0.5], ["keyword"] * 2))
    model = PoincareEmbedding(n, init_embeddings=p, init_radius=1.0, anchor_weight=0.1, lr=0.05)
    implicit = replace(method_settings("hyperrag").implicit, max_selected=4)
    builder = QueryGraphBuilder(p, [f"p{i}" for i in range(n)], implicit, llm=None)
    return p, graph, model, builder


def test_stream_adds_trains_touched_only_and_prunes():
    p, graph, model, builder = _setup()
    ball = StreamingBall(model, graph, "fused", builder, update_frequency=4, epochs=10, max_query_age=4)
    before = model.points.clone()
    qs = [f"q{i}" for i in range(4)]
    q_emb = torch.nn.functional.normalize(p[[5, 10, 15, 20]] + 0.01, dim=1)
    ball.observe(qs[:2], q_emb[:2])
    assert graph.num_queries == 2 and model.points.shape[0] == 32 and not ball.updates  # not yet due
    touched = set(ball.touched)
    ball.observe(qs[2:], q_emb[2:])  # 4 observed → one update
    assert len(ball.updates) == 1 and ball.updates[0]["relations"] > 0
    moved = (model.points[:30] - before).norm(dim=1) > 1e-7
    touched_passages = {t for t in touched | set(ball.graph.implicit.child.tolist()) if t < 30}
    assert moved.any()
    assert set(torch.nonzero(moved).flatten().tolist()) <= touched_passages  # frozen nodes did not move
    assert not moved[[0, 1, 2]].any()  # explicit-only passages were frozen
    # 5 more questions later q0..q3 are older than max_query_age → pruned at the next update
    more = [f"r{i}" for i in range(5)]
    ball.observe(more[:4], torch.nn.functional.normalize(torch.randn(4, 8), dim=1))
    ball.observe(more[4:], torch.nn.functional.normalize(torch.randn(1, 8), dim=1))
    ball.update()
    assert all(not q.startswith("q") for q in graph.questions)
    assert model.points.shape[0] == 30 + graph.num_queries
    assert int(graph.implicit.parent.max()) < graph.num_nodes
    assert ball.node_of(graph.questions[0]) == 30


def test_add_passages_shifts_query_nodes():
    p, graph, model, builder = _setup()
    ball = StreamingBall(model, graph, "fused", builder, update_frequency=100, epochs=2)
    ball.observe(["q"], p[:1])
    qpoint = model.points[30].clone()
    new = torch.nn.functional.normalize(torch.randn(2, 8), dim=1)
    ball.add_passages(new, EdgeSet.from_lists([0], [30], [0.3], ["keyword"]))
    assert graph.num_passages == 32 and graph.num_nodes == 33
    assert torch.allclose(model.points[32], qpoint)  # the query node moved to id 32
    assert {30, 31, 32} <= ball.touched
    assert torch.allclose(model.points[30:32], model.embed(new), atol=1e-6)
    stats = ball.update()
    assert stats["trained_nodes"] >= 3
