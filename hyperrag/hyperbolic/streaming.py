"""Streaming HyperRAG (§3.2, Algorithm 1 lines 9–14): query graphs join the ball as questions arrive; every
``update_frequency`` questions the new and touched nodes train, the rest frozen; stale query nodes are pruned.

:class:`StreamingBall` drives a :class:`~hyperrag.hyperbolic.ball_index.BallIndex`:

* :meth:`StreamingBall.arrive` — one question, in arrival order: its query graph (dense candidates, LLM
  selection / relations / rounds, or the counted stand-in; built from its text alone) joins the graph — in the
  question-root variant with a query node at the projected question; the graph's passages (and what they merge
  with on a key entity) are *touched* (``GetRecentNodes``). Every ``update_frequency`` arrivals
  (``GetQueryCount() ≥ update_frequency``; 1 under ``protocol=streaming``: the question's graph is trained before
  it is ranked), :meth:`StreamingBall.update`. :meth:`StreamingBall.observe` does this for a batch, in order;
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
        batch_size: relations per step of an update (``None``: the ball's ``train.batch_size``).
    """

    def __init__(self, ball: BallIndex, update_frequency: int = 16, epochs: int = 5,
                 max_query_age: int | None = 512, max_query_nodes: int | None = None,
                 batch_size: int | None = None) -> None:
        self.ball = ball
        self.update_frequency = int(update_frequency)
        self.epochs = int(epochs)
        self.batch_size = batch_size
        self.max_query_age, self.max_query_nodes = max_query_age, max_query_nodes
        self.clock = 0  # questions observed
        self.pending = 0  # since the last update
        self.last_seen: dict[str, int] = {q: 0 for q in ball.graph.questions}
        self.updates: list[dict[str, Any]] = []
        #: questions whose query graphs joined, in arrival order
        self.arrived: list[str] = []

    @property
    def graph(self):  # type: ignore[no-untyped-def]
        return self.ball.graph

    def node_of(self, question: str) -> int | None:
        try:
            return self.graph.num_passages + self.graph.questions.index(question)
        except ValueError:
            return None

    def observe(self, questions: list[str], query_emb: torch.Tensor) -> None:
        """:meth:`arrive` for each question of a batch, in order.

        Args:
            questions: B texts.
            query_emb: FloatTensor [B, D] their sentence embeddings.
        """
        for b, q in enumerate(questions):
            self.arrive(q, query_emb[b:b + 1])

    def arrive(self, question: str, query_emb: torch.Tensor) -> Any:
        """One question arrives: its query graph joins (unless it already did), the clock ticks, an update runs
        when due. Returns its :class:`~hyperrag.passage_graph.QueryGraph` (``None`` when it had joined before).

        Args:
            question: the text.
            query_emb: FloatTensor [1, D] its sentence embedding.
        """
        known = set(self.graph.questions if self.ball.query_nodes else self.arrived)
        graph = None
        # a retrieval runner may call this under inference mode (Lightning's predict): the ball trains anyway
        with torch.inference_mode(False), torch.enable_grad():
            if question not in known:
                graph = self.ball.add_queries([question], query_emb.clone())[0]
                self.arrived.append(question)
            self.clock += 1
            self.last_seen[question] = self.clock
            self.pending += 1
            if self.pending >= self.update_frequency:
                self.update()
        return graph

    def update(self) -> dict[str, Any]:
        """Train the new and touched nodes (others frozen), then prune stale query nodes."""
        self.pending = 0
        stats = self.ball.train_touched(self.epochs, seed_offset=len(self.updates), batch_size=self.batch_size)
        stats["arrived"] = len(self.arrived)
        stats["pruned"] = self.prune()
        self.updates.append(stats)
        log.debug("streaming update: %s", stats)
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
