"""CatRAG dynamic edge weighting: the LLM rates, per query, the relation arcs leaving the seed entities.

For each query: the top ``n_seed`` seed entities; for each, its relation neighbours ranked by query–fact
similarity — the top ``k_edge`` are scored 0–10 by the LLM (``neighbor_scoring`` task, the seed shown with
its context: an LLM summary of its facts when it has more than ``tau_facts`` of them, else the facts), the
rest get the weak multiplier. Scores map to multipliers (0–3 → 0, 4–6 → 0.2–0.3, 7–9 → 2.0–3.0, 10 → 5.0)
applied to the forward arcs seed → neighbour only, as an :class:`EdgeWeightDelta` on the batched PPR.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from hyperrag.config.validation import NonNegativeFloat, NonNegativeInt, PositiveInt, settings
from hyperrag.graph.knowledge_graph import EdgeType
from hyperrag.ops.ppr import EdgeWeightDelta

if TYPE_CHECKING:
    from hyperrag.retrievers.catrag import CatRAGRetriever
    from hyperrag.retrievers.hipporag2 import SeedBatch

log = logging.getLogger(__name__)


def score_to_multiplier(score: int) -> float:
    """CatRAG's map from a 0–10 relevance score to an edge-weight multiplier."""
    score = max(0, min(10, int(score)))
    if score <= 3:
        return 0.0
    if score <= 6:
        return 0.2 + (score - 4) * 0.05
    if score <= 9:
        return 2.0 + (score - 7) * 0.5
    return 5.0


@dataclass
class RelationAdjacency:
    """Relation arcs by tail entity (CSR), each with the facts linking the pair and the summed arc weight."""

    ptr: torch.Tensor  # [E + 1]
    dst: torch.Tensor  # [A] neighbour entity
    fact: torch.Tensor  # [A] one fact per (tail, head, fact) arc; pairs linked by several facts repeat
    entity_fact_ptr: torch.Tensor  # [E + 1] facts naming each entity
    entity_fact_idx: torch.Tensor
    arc_keys: torch.Tensor  # sorted u * N + v of every undirected pair (u < v) in the weighted graph
    arc_weight: torch.Tensor  # summed weight of that pair over all edge types

    @classmethod
    def build(cls, retriever: CatRAGRetriever) -> RelationAdjacency:
        graph = retriever.graph
        s, o = graph.fact_entities[:, 0], graph.fact_entities[:, 1]
        fid = torch.arange(len(graph.facts))
        keep = s != o
        tail = torch.cat([s[keep], o[keep]])
        head = torch.cat([o[keep], s[keep]])
        fact = torch.cat([fid[keep], fid[keep]])
        order = torch.argsort(tail * graph.num_nodes + head, stable=True)
        tail, head, fact = tail[order], head[order], fact[order]
        ptr = torch.searchsorted(tail, torch.arange(graph.num_entities + 1))
        ent = torch.cat([s, o])
        ent_order = torch.argsort(ent, stable=True)
        ef_ptr = torch.searchsorted(ent[ent_order], torch.arange(graph.num_entities + 1))
        ef_idx = torch.cat([fid, fid])[ent_order]
        type_weight = {EdgeType[k.upper()]: v for k, v in retriever.settings.edge_weights.items()}
        ei, w = graph.weighted_edges(type_weight)
        keys, inverse = torch.unique(ei[0] * graph.num_nodes + ei[1], return_inverse=True)
        summed = torch.zeros(keys.numel()).index_add_(0, inverse, w.float())
        return cls(ptr, head, fact, ef_ptr, ef_idx, keys, summed)

    def pair_weight(self, u: torch.Tensor, v: torch.Tensor, num_nodes: int) -> torch.Tensor:
        key = torch.minimum(u, v) * num_nodes + torch.maximum(u, v)
        pos = torch.searchsorted(self.arc_keys, key).clamp_max(self.arc_keys.numel() - 1)
        if bool((self.arc_keys[pos] != key).any()):
            raise KeyError("arc not in the graph")
        return self.arc_weight[pos]


@settings
class EdgeScoringSettings:
    """CatRAG's ``edge_scoring``.

    Attributes:
        n_seed: seed entities per query whose arcs are re-weighted.
        k_edge: relation arcs per seed sent to the LLM (by query–fact similarity); the rest get ``weak``.
        tau_facts: an entity with more facts than this is shown through an LLM summary of them.
        weak_multiplier: multiplier of the pruned arcs.
        max_facts_shown: facts listed as an entity's context (and summarised) at most.
    """

    n_seed: PositiveInt
    k_edge: NonNegativeInt
    tau_facts: NonNegativeInt
    weak_multiplier: NonNegativeFloat
    max_facts_shown: PositiveInt


class LLMEdgeScorer:
    """Callable ``(seeds, retriever) -> EdgeWeightDelta | None`` plugged into :class:`CatRAGRetriever`.

    Args:
        settings: seeds, arcs per seed, summary threshold, weak multiplier (:class:`EdgeScoringSettings`).
    """

    def __init__(self, settings: EdgeScoringSettings) -> None:
        s = settings
        self.n_seed, self.k_edge, self.tau_facts = s.n_seed, s.k_edge, s.tau_facts
        self.weak_multiplier = s.weak_multiplier
        self.max_facts_shown = s.max_facts_shown
        self.adjacency: RelationAdjacency | None = None
        self.calls = 0  # LLM scoring calls (not counting summaries), for per-query accounting
        self.failed_calls = 0  # seeds whose scoring call failed (their arcs keep their static weights)

    def fact_text(self, retriever: CatRAGRetriever, f: int) -> str:
        s, r, o = retriever.graph.facts[f]
        return f"{s} {r} {o}"

    def entity_context(self, retriever: CatRAGRetriever, entities: list[int]) -> dict[int, str]:
        adj = self.adjacency
        facts = {e: adj.entity_fact_idx[adj.entity_fact_ptr[e] : adj.entity_fact_ptr[e + 1]].tolist()[
            : self.max_facts_shown] for e in entities}
        context = {e: "; ".join(self.fact_text(retriever, f) for f in fs) for e, fs in facts.items()}
        long = [e for e, fs in facts.items() if len(fs) > self.tau_facts]
        if long:
            results = retriever.llm.complete_structured_batch("entity_summary", [
                {"entity": retriever.graph.entity_names[e], "descriptions": [self.fact_text(retriever, f)
                                                                             for f in facts[e]]} for e in long])
            for e, res in zip(long, results):
                if res.ok:  # a failed summary keeps the concatenated facts
                    context[e] = f"{retriever.graph.entity_names[e]}: {res.value}"
        return context

    def __call__(self, seeds: SeedBatch, retriever: CatRAGRetriever) -> EdgeWeightDelta | None:
        if not retriever.llm_available:
            return None
        if self.adjacency is None:
            self.adjacency = RelationAdjacency.build(retriever)
        adj, graph = self.adjacency, retriever.graph
        fact_emb = retriever.fact_emb.cpu()
        weights = seeds.entity_weight.cpu()
        top = torch.topk(weights, min(self.n_seed, weights.shape[1]), dim=1)
        calls: list[tuple[int, int, list[int]]] = []  # (query, seed, neighbours for the LLM)
        rows: list[tuple[int, int, int, float]] = []  # (query, seed, neighbour, multiplier) decided here
        for b in range(weights.shape[0]):
            q = seeds.query_emb[b].cpu()
            for e, w in zip(top.indices[b].tolist(), top.values[b].tolist()):
                if w <= 0:
                    continue
                lo, hi = int(adj.ptr[e]), int(adj.ptr[e + 1])
                if lo == hi:
                    continue
                nbr, fact = adj.dst[lo:hi], adj.fact[lo:hi]
                sim = fact_emb[fact] @ q
                best = torch.full((graph.num_entities,), float("-inf")).scatter_reduce(0, nbr, sim, "amax")
                uniq = nbr.unique()
                ranked = uniq[torch.argsort(best[uniq], descending=True)].tolist()
                calls.append((b, e, ranked[: self.k_edge]))
                rows.extend((b, e, n, self.weak_multiplier) for n in ranked[self.k_edge :])
        if calls:
            context = self.entity_context(retriever, sorted({e for _, e, _ in calls}))
            inputs = []
            for b, e, nbrs in calls:
                shown = []
                for n in nbrs:
                    lo, hi = int(adj.ptr[e]), int(adj.ptr[e + 1])
                    linking = adj.fact[lo:hi][adj.dst[lo:hi] == n].tolist()[:3]
                    shown.append((n, f"{graph.entity_names[n]} (via: " +
                                  "; ".join(self.fact_text(retriever, f) for f in linking) + ")"))
                inputs.append({"query": seeds.questions[b], "node": context[e], "neighbors": shown})
            results = retriever.llm.complete_structured_batch("neighbor_scoring", inputs)
            self.calls += len(calls)
            self.failed_calls += sum(not r.ok for r in results)
            for (b, e, _), res in zip(calls, results):
                if not res.ok:  # no verdict: the seed's arcs keep their weights
                    continue
                rows.extend((b, e, n, score_to_multiplier(round(s * 10))) for n, s in res.value.items())
        if not rows:
            return None
        q, s, t, mult = (torch.tensor(c) for c in zip(*rows))
        base = adj.pair_weight(s, t, graph.num_nodes)
        rel_stored = self._relation_weight(retriever, s, t)
        # only the relation part of the arc is re-weighted; synonym weight on the same pair stays
        new = base - rel_stored + rel_stored * mult.float()
        dev = retriever.device
        return EdgeWeightDelta(q.to(dev), s.to(dev), t.to(dev), new.clamp_min(0).to(dev))

    def _relation_weight(self, retriever: CatRAGRetriever, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        graph = retriever.graph
        rel = graph.edge_type == EdgeType.RELATION
        keys = graph.edge_index[0, rel] * graph.num_nodes + graph.edge_index[1, rel]
        order = torch.argsort(keys)
        relation_weight = retriever.settings.edge_weights.get("relation", 1.0)
        keys, w = keys[order], graph.edge_weight[rel][order] * relation_weight
        key = torch.minimum(u, v) * graph.num_nodes + torch.maximum(u, v)
        pos = torch.searchsorted(keys, key).clamp_max(keys.numel() - 1)
        return torch.where(keys[pos] == key, w[pos], torch.zeros_like(w[pos])).float()
