"""Depth-limited traversal of the directed causal graph from query-aligned nodes.

Seeds: the ``seed_top_n`` nodes most similar to the query (cosine of the node and query embeddings), kept when
the similarity is at least ``seed_min_sim``. From each seed, a depth-first walk of at most ``max_depth`` causal
edges follows cause → effect (consequences of the seed) and, with ``backward``, effect → cause (its causes);
paths are always reported in cause → effect order. At a node the walk may also step through an *alias* link
(a node whose text embedding is ``>= alias_threshold`` similar) before taking the next causal edge — the step
costs no depth and multiplies the score by the alias similarity.

Path score: ``seed similarity × Π edge weights × Π alias similarities × decay^(edges − 1)``. Every prefix of a
walk is a path; the best ``max_paths`` distinct edge sequences are kept per query.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from hyperrag.causal.graph import CausalGraph
from hyperrag.config.validation import Cosine, NonNegativeInt, PositiveInt, Probability, settings


@dataclass
class CausalPath:
    edges: list[int]  # edge ids in cause -> effect order
    score: float
    seed: int  # the query-aligned node the walk started from
    seed_sim: float
    direction: str  # forward (seed is the first cause) | backward (seed is the last effect)
    aliases: list[tuple[int, int]] = field(default_factory=list)  # (from node, to node) alias steps taken

    @property
    def depth(self) -> int:
        return len(self.edges)

    def describe(self, graph: CausalGraph) -> dict[str, Any]:
        """JSON-ready record: the chain as text plus provenance of each edge."""
        return {
            "chain": " → ".join(self.node_texts(graph)),
            "edges": [{"cause": graph.triple(e)[0], "effect": graph.triple(e)[1],
                       "passage_id": graph.edge_info[e]["passage_id"], "sentence": graph.edge_info[e]["sentence"],
                       "weight": round(float(graph.edge_weight[e]), 4)} for e in self.edges],
            "score": round(self.score, 6), "depth": self.depth, "direction": self.direction,
            "seed": graph.node_names[self.seed], "seed_sim": round(self.seed_sim, 4),
        }

    def node_texts(self, graph: CausalGraph) -> list[str]:
        out: list[str] = []
        for e in self.edges:
            c, f = graph.triple(e)
            if not out or out[-1] != c:
                out.append(c)
            out.append(f)
        return out


@settings
class TraversalSettings:
    """CDF-RAG's ``traversal``.

    Attributes:
        max_depth: causal edges per path at most.
        decay: score multiplier per extra edge.
        seed_top_n / seed_min_sim: query-aligned seed nodes (the top n, with at least this cosine).
        max_paths: paths kept per query (best first).
        backward: also walk effect → cause from the seeds.
        use_aliases: allow alias steps between similar nodes.
    """

    max_depth: PositiveInt
    decay: Probability
    seed_top_n: NonNegativeInt
    seed_min_sim: Cosine
    max_paths: PositiveInt
    backward: bool
    use_aliases: bool


class CausalTraversal:
    """Args:
        graph: the causal graph.
        settings: depth, decay, seeds and path count (:class:`TraversalSettings`).
    """

    def __init__(self, graph: CausalGraph, settings: TraversalSettings) -> None:
        self.graph = graph
        self.max_depth, self.decay = settings.max_depth, settings.decay
        self.seed_top_n, self.seed_min_sim = settings.seed_top_n, settings.seed_min_sim
        self.max_paths, self.backward = settings.max_paths, settings.backward
        self.use_aliases = settings.use_aliases
        n = graph.num_nodes
        self.out_edges: list[list[int]] = [[] for _ in range(n)]
        self.in_edges: list[list[int]] = [[] for _ in range(n)]
        for e, (u, v) in enumerate(graph.edge_index.t().tolist()):
            self.out_edges[u].append(e)
            self.in_edges[v].append(e)
        self.alias: list[list[tuple[int, float]]] = [[] for _ in range(n)]
        if self.use_aliases:
            for (u, v), w in zip(graph.alias_index.t().tolist(), graph.alias_weight.tolist()):
                self.alias[u].append((v, w))
        self.weight = graph.edge_weight.tolist()
        self.src = graph.edge_index[0].tolist()
        self.dst = graph.edge_index[1].tolist()

    def seeds(self, query_emb: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Top seed nodes per query: ``(ids [B, n], sims [B, n])``; entries below ``seed_min_sim`` are -1 / 0."""
        b = query_emb.shape[0]
        if self.graph.num_nodes == 0:
            return torch.full((b, 0), -1, dtype=torch.long), torch.zeros(b, 0)
        sims = query_emb.float() @ self.graph.node_emb.T.to(query_emb.device).float()
        val, idx = torch.topk(sims, min(self.seed_top_n, sims.shape[1]), dim=1)
        keep = val >= self.seed_min_sim
        return torch.where(keep, idx, torch.full_like(idx, -1)).cpu(), torch.where(keep, val, torch.zeros_like(val)).cpu()

    def _steps(self, node: int, forward: bool) -> list[tuple[int, int, float, tuple[int, int] | None]]:
        """``(edge, next node, multiplier, alias step)`` from ``node``, through at most one alias link."""
        out = []
        starts = [(node, 1.0, None)] + [(a, w, (node, a)) for a, w in self.alias[node]]
        for start, mult, alias in starts:
            for e in (self.out_edges[start] if forward else self.in_edges[start]):
                out.append((e, self.dst[e] if forward else self.src[e], mult * self.weight[e], alias))
        return out

    def walk(self, seed: int, seed_sim: float) -> list[CausalPath]:
        paths: list[CausalPath] = []
        directions = [True, False] if self.backward else [True]
        for forward in directions:
            stack: list[tuple[int, list[int], float, set[int], list[tuple[int, int]]]] = [(seed, [], seed_sim, {seed}, [])]
            while stack:
                node, edges, score, seen, aliases = stack.pop()
                if len(edges) >= self.max_depth:
                    continue
                for e, nxt, mult, alias in self._steps(node, forward):
                    if nxt in seen or e in edges:
                        continue
                    new_score = score * mult * (self.decay if edges else 1.0)
                    new_edges = edges + [e]
                    new_aliases = aliases + ([alias] if alias else [])
                    ordered = new_edges if forward else new_edges[::-1]
                    paths.append(CausalPath(ordered, new_score, seed, seed_sim, "forward" if forward else "backward",
                                            new_aliases))
                    stack.append((nxt, new_edges, new_score, seen | {nxt}, new_aliases))
        return paths

    def __call__(self, query_emb: torch.Tensor) -> list[list[CausalPath]]:
        """Best paths per query for ``query_emb`` [B, D] (unit rows)."""
        ids, sims = self.seeds(query_emb)
        out: list[list[CausalPath]] = []
        for b in range(ids.shape[0]):
            best: dict[tuple[int, ...], CausalPath] = {}
            for s, sim in zip(ids[b].tolist(), sims[b].tolist()):
                if s < 0:
                    continue
                for p in self.walk(s, sim):
                    key = tuple(p.edges)
                    if key not in best or best[key].score < p.score:
                        best[key] = p
            out.append(sorted(best.values(), key=lambda p: -p.score)[: self.max_paths])
        return out

    def passage_scores(self, paths: list[list[CausalPath]], num_passages: int) -> torch.Tensor:
        """[B, P]: per passage, the best score of a path with an edge from that passage (0 elsewhere)."""
        out = torch.zeros(len(paths), num_passages)
        for b, ps in enumerate(paths):
            for p in ps:
                for e in p.edges:
                    j = int(self.graph.edge_passage[e])
                    out[b, j] = max(float(out[b, j]), p.score)
        return out


__all__ = ["CausalPath", "CausalTraversal"]
