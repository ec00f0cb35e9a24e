"""Streaming HyperRAG (§3.2, Algorithm 1 lines 9–14): query graphs join the ball as questions arrive; every
``update_frequency`` questions the new and touched nodes train, the rest frozen; stale query nodes are pruned.

:class:`StreamingBall` drives a :class:`~hyperrag.hyperbolic.ball_index.BallIndex`:

* :meth:`StreamingBall.observe` — for each question not yet a node, its query graph (dense candidates, LLM
  selection / relations / rounds, or the counted stand-in) joins the graph; the query node starts at the
  projected question; it and its graph's passages are *touched* (``GetRecentNodes``). Every
  ``update_frequency`` observed questions (``GetQueryCount() ≥ update_frequency``), :meth:`StreamingBall.update`;
* :meth:`StreamingBall.update` — ``UpdateEmbeddings(G, V_new)``: ``epochs`` epochs of the relations touching the
  touched nodes (:meth:`~hyperrag.hyperbolic.ball_index.BallIndex.train_touched`, a Lightning fit, every other
  row frozen), then ``PruneOldNodes``: query nodes not seen for ``max_query_age`` observed questions, or the
  oldest beyond ``max_query_nodes``; ``ResetQueryCount()``.
"""

from __future__ import annotations

import logging
from typing import Any

import torch

from hyperrag.hyperbolic.ball_index import BallIndex

log = logging.getLogger(__name__)


class StreamingBall:
    """Args:
        ball: the trained ball index (its graph and model evolve in place).
        update_frequency: observed questions between two updates.
        epochs: epochs per update.
        max_query_age: a query node not seen for this many observed questions is pruned (``None``: never).
        max_query_nodes: keep at most this many query nodes (oldest pruned first; ``None``: no cap).
    """

    def __init__(self, ball: BallIndex, update_frequency: int = 16, epochs: int = 5,
                 max_query_age: int | None = 512, max_query_nodes: int | None = None) -> None:
        self.ball = ball
        self.update_frequency = int(update_frequency)
        self.epochs = int(epochs)
        self.max_query_age, self.max_query_nodes = max_query_age, max_query_nodes
        self.clock = 0  # questions observed
        self.pending = 0  # since the last update
        self.last_seen: dict[str, int] = {q: 0 for q in ball.graph.questions}
        self.updates: list[dict[str, Any]] = []

    @property
    def graph(self):  # type: ignore[no-untyped-def]
        return self.ball.graph

    def node_of(self, question: str) -> int | None:
        try:
            return self.graph.num_passages + self.graph.questions.index(question)
        except ValueError:
            return None

    def observe(self, questions: list[str], query_emb: torch.Tensor) -> None:
        """Add the query graphs of unseen questions; update every ``update_frequency`` questions.

        Args:
            questions: B texts.
            query_emb: FloatTensor [B, D] their sentence embeddings.
        """
        known = set(self.graph.questions)
        fresh = [i for i, q in enumerate(questions) if q not in known and q not in questions[:i]]
        if fresh:
            self.ball.add_queries([questions[i] for i in fresh], query_emb[fresh])
        for q in questions:
            self.clock += 1
            self.last_seen[q] = self.clock
        self.pending += len(questions)
        if self.pending >= self.update_frequency:
            self.update()

    def update(self) -> dict[str, Any]:
        """Train the new and touched nodes (others frozen), then prune stale query nodes."""
        self.pending = 0
        stats = self.ball.train_touched(self.epochs, seed_offset=len(self.updates))
        stats["pruned"] = self.prune()
        self.updates.append(stats)
        log.info("streaming update: %s", stats)
        return stats

    def forget(self, questions: list[str]) -> None:
        """Questions whose query nodes left the ball by other means (a corpus delete)."""
        for q in questions:
            self.last_seen.pop(q, None)

    def prune(self) -> int:
        """Drop stale query nodes from the graph and the ball; returns how many."""
        qs = self.graph.questions
        if not qs:
            return 0
        age = torch.tensor([self.clock - self.last_seen.get(q, 0) for q in qs])
        keep = torch.ones(len(qs), dtype=torch.bool)
        if self.max_query_age is not None:
            keep &= age <= self.max_query_age
        if self.max_query_nodes is not None and int(keep.sum()) > self.max_query_nodes:
            order = torch.argsort(age, stable=True)  # freshest first
            cap = torch.zeros_like(keep)
            cap[order[: self.max_query_nodes]] = True
            keep &= cap
        dropped = int((~keep).sum())
        if dropped:
            self.forget([q for q, k in zip(qs, keep.tolist()) if not k])
            self.ball.drop_queries(keep)
        return dropped
