"""Streaming HyperRAG: query graphs (and new passages) join the ball; only new and touched nodes train.

:class:`StreamingBall` owns a trained :class:`~hyperrag.hyperbolic.PoincareEmbedding` and the evolving
:class:`~hyperrag.passage_graph.PassageGraph`:

* :meth:`StreamingBall.observe` — for each question not yet a node: its query graph (dense candidates,
  LLM selection / relations / rounds or the stand-in) is added; the query node starts at the projected
  question (the same map as the passages); its passages are marked *touched*. Every ``update_frequency``
  observed questions, :meth:`StreamingBall.update` runs.
* :meth:`StreamingBall.add_passages` — new passages are projected into the ball, their keyword edges against
  the corpus are added (the caller computes them), and they count as new nodes.
* :meth:`StreamingBall.update` — trains ``epochs`` epochs on the variant's forest relations that have an
  endpoint among the new/touched nodes, with every other node frozen by a gradient mask
  (:meth:`~hyperrag.hyperbolic.PoincareEmbedding.set_trainable`; frozen rows are bit-identical afterwards); then prunes stale query nodes (those not
  seen for ``max_query_age`` observed questions, or the oldest beyond ``max_query_nodes``).
"""

from __future__ import annotations

import logging
from typing import Any

import torch

from hyperrag.hyperbolic.datamodule import EdgeBatches
from hyperrag.hyperbolic.poincare_model import PoincareEmbedding
from hyperrag.passage_graph.edges import EdgeSet
from hyperrag.passage_graph.graph import PassageGraph

log = logging.getLogger(__name__)


class StreamingBall:
    """Args:
        model: the trained ball (nodes: passages then query nodes, as in ``graph``).
        graph: the evolving passage graph.
        variant: ``explicit`` / ``implicit`` / ``fused`` (explicit ignores query graphs for training).
        builder: a :class:`~hyperrag.passage_graph.QueryGraphBuilder` (query graphs of new questions).
        update_frequency: observed questions between two updates.
        epochs: epochs per update.
        max_query_age: a query node not seen for this many observed questions is pruned (``None``: never).
        max_query_nodes: keep at most this many query nodes (oldest pruned first; ``None``: no cap).
        batch_size / num_negatives: of the update's relation batches.
    """

    def __init__(self, model: PoincareEmbedding, graph: PassageGraph, variant: str, builder: Any,
                 update_frequency: int = 16, epochs: int = 5, max_query_age: int | None = 512,
                 max_query_nodes: int | None = None, batch_size: int = 1024, num_negatives: int = 10,
                 seed: int = 0, query_closure_depth: int = 1) -> None:
        self.model, self.graph, self.variant, self.builder = model, graph, variant, builder
        self.query_closure_depth = int(query_closure_depth)
        self.update_frequency = int(update_frequency)
        self.epochs = int(epochs)
        self.max_query_age, self.max_query_nodes = max_query_age, max_query_nodes
        self.batch_size, self.num_negatives, self.seed = batch_size, num_negatives, seed
        self.clock = 0  # questions observed
        self.pending = 0  # since the last update
        self.last_seen: dict[str, int] = {q: 0 for q in graph.questions}
        self.touched: set[int] = set()
        self.updates: list[dict[str, float]] = []

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
            new_q = [questions[i] for i in fresh]
            emb = query_emb[fresh]
            edges, _ = self.builder.build(new_q, emb, query_offset=self.graph.num_queries,
                                          num_passages=self.graph.num_passages)
            first = self.graph.num_nodes
            self.graph.add_queries(new_q, edges)
            source = torch.cat([torch.arange(first), torch.full((len(new_q),), -1)])
            self.model.remap_nodes(source, self.model.embed(emb))
            self.touched.update(range(first, first + len(new_q)))
            self.touched.update(edges.parent.tolist())
            self.touched.update(edges.child.tolist())
        for q in questions:
            self.clock += 1
            self.last_seen[q] = self.clock
        self.pending += len(questions)
        if self.pending >= self.update_frequency:
            self.update()

    def add_passages(self, passage_emb: torch.Tensor, explicit: EdgeSet) -> None:
        """Insert new passages (after the current ones) with their keyword edges (new numbering)."""
        p, n = self.graph.num_passages, self.graph.num_nodes
        k = passage_emb.shape[0]
        self.graph.add_passages(k, explicit)
        source = torch.cat([torch.arange(p), torch.full((k,), -1), torch.arange(p, n)])
        self.model.remap_nodes(source, self.model.embed(passage_emb))
        if self.model.hparams.get("num_passages") is not None:  # query nodes keep their own anchor weight
            self.model.hparams["num_passages"] = self.graph.num_passages
        self.touched = {t + k if t >= p else t for t in self.touched}
        self.touched.update(range(p, p + k))
        self.touched.update(explicit.parent.tolist())
        self.touched.update(explicit.child.tolist())

    def update(self) -> dict[str, float]:
        """Train the new and touched nodes (others frozen), then prune stale query nodes."""
        self.pending = 0
        n = self.graph.num_nodes
        mask = torch.zeros(n, dtype=torch.bool)
        if self.touched:
            mask[torch.tensor(sorted(self.touched), dtype=torch.long)] = True
        rel = self.graph.relations(self.variant, self.query_closure_depth)
        rel = rel[:, mask[rel[0]] | mask[rel[1]]]
        stats: dict[str, float] = {"trained_nodes": int(mask.sum()), "relations": int(rel.shape[1])}
        if rel.shape[1] and self.epochs > 0:
            self.model.set_trainable(mask)
            frozen = ~mask.to(self.model.embeddings.device)
            before = self.model.embeddings.data[frozen].clone()
            data = EdgeBatches(rel, n, batch_size=self.batch_size, num_negatives=self.num_negatives,
                               exclude="both", seed=self.seed + len(self.updates))
            stats.update(self.model.fit_fast(data, self.epochs))
            self.model.set_trainable(None)
            # a zero gradient is a zero step, but a retraction / ``stabilize`` projection may still round
            # the last bit: frozen rows are put back exactly
            self.model.embeddings.data[frozen] = before
        self.touched.clear()
        stats["pruned"] = self.prune()
        self.updates.append(stats)
        log.info("streaming update: %s", stats)
        return stats

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
            for q, k in zip(qs, keep.tolist()):
                if not k:
                    self.last_seen.pop(q, None)
            source = self.graph.drop_queries(keep)
            self.model.remap_nodes(source)
        return dropped
