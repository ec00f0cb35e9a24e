"""Streaming updates: query graphs join the ball, only new + touched nodes move, stale query nodes pruned."""

from dataclasses import replace

import torch

from hyperrag.config import method_settings, task_arguments
from hyperrag.hyperbolic import PoincareEmbedding
from hyperrag.hyperbolic.ball_index import BallIndex, PassageTable
from hyperrag.hyperbolic.streaming import StreamingBall
from hyperrag.passage_graph import EdgeSet, PassageGraph


def _ball(n=30, dim=8):
    torch.manual_seed(0)
    p = torch.nn.functional.normalize(torch.randn(n, dim), dim=1)
    settings = method_settings("hyperrag", graph="fused", train={"batch_size": 64})
    settings = replace(settings, implicit=replace(settings.implicit, max_selected=4, feedback="none"))
    table = PassageTable([f"p{i}" for i in range(n)], [f"h{i}" for i in range(n)], [""] * n,
                         [f"passage {i}" for i in range(n)], p, [frozenset()] * n)
    graph = PassageGraph(n, explicit=EdgeSet.from_lists([0, 1], [1, 2], [0.5, 0.5], ["keyword"] * 2))
    model = PoincareEmbedding(n, **task_arguments("poincare_openie", init_embeddings=p, init_radius=1.0,
                                                  anchor_weight=0.1, lr=0.05, num_passages=n, query_anchor_weight=0.0))
    return p, BallIndex(settings, table, graph, encoder=None, llm=None, model=model)  # type: ignore[arg-type]


def test_stream_adds_trains_touched_only_and_prunes():
    p, ball = _ball()
    graph, model = ball.graph, ball.model
    stream = StreamingBall(ball, update_frequency=4, epochs=10, max_query_age=4)
    before = model.points.clone()
    qs = [f"q{i}" for i in range(4)]
    q_emb = torch.nn.functional.normalize(p[[5, 10, 15, 20]] + 0.01, dim=1)
    stream.observe(qs[:2], q_emb[:2])
    assert graph.num_queries == 2 and ball.model.points.shape[0] == 32 and not stream.updates  # not yet due
    assert {30, 31} <= ball.touched
    assert ball.skipped["passage_selection"] == 2  # no LLM: the stand-in chose, and that is counted
    touched = set(ball.touched)
    stream.observe(qs[2:], q_emb[2:])  # 4 observed → one update
    assert len(stream.updates) == 1 and stream.updates[0]["relations"] > 0 and not ball.touched
    moved = (ball.model.points[:30] - before).norm(dim=1) > 1e-7
    touched_passages = {t for t in touched | set(graph.implicit.child.tolist()) if t < 30}
    assert moved.any()
    assert set(torch.nonzero(moved).flatten().tolist()) <= touched_passages  # frozen nodes did not move
    assert not moved[[0, 1, 2]].any()  # explicit-only passages were frozen
    # 5 more questions later q0..q3 are older than max_query_age → pruned at the next update
    more = [f"r{i}" for i in range(5)]
    stream.observe(more[:4], torch.nn.functional.normalize(torch.randn(4, 8), dim=1))
    stream.observe(more[4:], torch.nn.functional.normalize(torch.randn(1, 8), dim=1))
    stream.update()
    assert all(not q.startswith("q") for q in graph.questions)
    assert ball.model.points.shape[0] == 30 + graph.num_queries
    assert int(graph.implicit.parent.max()) < graph.num_nodes
    assert stream.node_of(graph.questions[0]) == 30


def test_stream_batch_size_sets_the_steps_of_an_update():
    """``streaming.batch_size``: an update of R relations takes ceil(R / batch) steps an epoch (1: one a relation),
    whatever the index fit's ``train.batch_size`` (64 here: one step)."""
    steps = {}
    for batch in (None, 1):
        p, ball = _ball()
        stream = StreamingBall(ball, update_frequency=2, epochs=2, batch_size=batch)
        stream.observe(["q0", "q1"], torch.nn.functional.normalize(p[[5, 10]] + 0.01, dim=1))
        (up,) = stream.updates
        steps[batch] = (up["steps"], up["relations"])
    assert steps[None][0] == 2 and steps[1] == (2 * steps[1][1], steps[1][1]) and steps[1][1] > 1
