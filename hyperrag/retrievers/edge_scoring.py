"""CatRAG query-aware dynamic edge weighting (§3.3): the LLM re-weights the relation arcs leaving the seeds.

Per query, inside the same batched PPR call:

* **Stage I, coarse pruning** (LLM-free): the top ``n_seed`` seed entities by initial reset weight; for each,
  its relation neighbours ranked by the best query–fact similarity among the facts linking seed and neighbour.
  The top ``k_edge`` go to the LLM; every other neighbour gets the ``weak_multiplier``.
* **Stage II, semantic alignment**: one ``neighbor_scoring`` call per seed (Table 10) shows the query, the
  seed's name, the verified seed facts ``T_seed`` and, for each top neighbour, the triples linking it to the
  seed and its context ``C(v)`` (Eq. 2): an ``entity_summary`` of its facts (Table 9) when it has more than
  ``tau_facts`` of them, else the facts themselves. Summaries do not depend on the query: each is asked once
  per index.
* Scores map to multipliers (Table 8: 0–3 → 0, 4–6 → 0.2–0.3, 7–9 → 2.0–3.0, 10 → 5.0) of the *relation* part
  of the forward arc seed → neighbour (a synonym edge on the same pair keeps its weight); the result is an
  :class:`EdgeWeightDelta` on the batched PPR, never a rebuilt graph.

A seed whose call fails — or whose reply scores none of the neighbours it was shown — keeps *every* arc at its
static weight, pruned ones included, and is counted in ``llm_steps_skipped`` (``edge_scoring``: seeds);
without an LLM every planned seed is counted so. A summary that fails falls back to the facts
(``entity_summary``). A top neighbour that a valid reply leaves out keeps its static weight (no verdict).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from hyperrag.config.validation import NonNegativeFloat, NonNegativeInt, PositiveInt, settings
from hyperrag.graph.knowledge_graph import EdgeType, KnowledgeGraph
from hyperrag.graph.utils import csr_by_row, ptr_from_sorted_rows, sort_edges
from hyperrag.ops.ppr import EdgeWeightDelta

if TYPE_CHECKING:
    from hyperrag.retrievers.catrag import CatRAGRetriever
    from hyperrag.retrievers.hipporag2 import SeedBatch
    from hyperrag.retrievers.settings import KGEdgeWeights

#: linking triples shown per neighbour at most
MAX_LINKS_SHOWN = 3


def score_to_multiplier(score: int) -> float:
    """CatRAG's map (Table 8) from a 0–10 relevance score to an edge-weight multiplier."""
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
    """Relation arcs by tail entity (CSR) with their facts, the facts of each entity, and the stored relation
    weight of every entity pair. Built from one graph: rebuild it whenever the graph changes.

    Attributes:
        ptr: [E + 1]; ``dst[ptr[e]:ptr[e + 1]]`` are the neighbours of ``e`` (a pair linked by several facts
            repeats, once per fact), ``fact`` the linking fact of each.
        entity_fact_ptr / entity_fact_idx: CSR, the facts naming each entity (``F(v)``).
        rel_keys / rel_weight: sorted ``u * N + v`` (``u < v``) of the relation edges and their stored weight
            times the relation edge-type multiplier.
    """

    ptr: torch.Tensor
    dst: torch.Tensor
    fact: torch.Tensor
    entity_fact_ptr: torch.Tensor
    entity_fact_idx: torch.Tensor
    rel_keys: torch.Tensor
    rel_weight: torch.Tensor
    num_nodes: int

    @classmethod
    def build(cls, graph: KnowledgeGraph, edge_weights: KGEdgeWeights) -> RelationAdjacency:
        s, o = graph.fact_entities[:, 0], graph.fact_entities[:, 1]
        fid = torch.arange(len(graph.facts))
        keep = s != o
        tail = torch.cat([s[keep], o[keep]])
        head = torch.cat([o[keep], s[keep]])
        fact = torch.cat([fid[keep], fid[keep]])
        arcs, fact = sort_edges(torch.stack([tail, head]), fact, num_nodes=graph.num_nodes, stable=True)
        ptr, head = ptr_from_sorted_rows(arcs[0], graph.num_entities), arcs[1]
        ef_ptr, ef_idx = csr_by_row(torch.cat([s, o]), graph.num_entities, torch.cat([fid, fid]))
        rel = graph.edge_type == EdgeType.RELATION
        keys = graph.edge_index[0, rel] * graph.num_nodes + graph.edge_index[1, rel]
        key_order = torch.argsort(keys)
        weight = graph.edge_weight[rel][key_order].float() * float(edge_weights["relation"])
        return cls(ptr, head, fact, ef_ptr, ef_idx, keys[key_order], weight, graph.num_nodes)

    def neighbours(self, entity: int) -> tuple[torch.Tensor, torch.Tensor]:
        """``(neighbour [A], linking fact [A])`` of one entity's relation arcs."""
        lo, hi = int(self.ptr[entity]), int(self.ptr[entity + 1])
        return self.dst[lo:hi], self.fact[lo:hi]

    def facts_of(self, entity: int) -> list[int]:
        """``F(v)``: the facts naming an entity."""
        return self.entity_fact_idx[self.entity_fact_ptr[entity] : self.entity_fact_ptr[entity + 1]].tolist()

    def relation_weight(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Stored relation weight (× the relation multiplier) of each pair ``(u, v)``; 0 where none."""
        if self.rel_keys.numel() == 0:
            return torch.zeros(u.shape, dtype=torch.float32)
        key = torch.minimum(u, v) * self.num_nodes + torch.maximum(u, v)
        pos = torch.searchsorted(self.rel_keys, key).clamp_max(self.rel_keys.numel() - 1)
        return torch.where(self.rel_keys[pos] == key, self.rel_weight[pos], torch.zeros_like(self.rel_weight[pos]))


@dataclass
class SeedPlan:
    """Stage I's decision for one seed of one query.

    Attributes:
        query: row of the batch.
        seed: entity node id.
        scored: the top ``k_edge`` neighbours by query–fact similarity, best first (sent to the LLM).
        pruned: the other neighbours (weak weight once the seed's call succeeded).
        links: per scored neighbour, the facts linking it to the seed (at most :data:`MAX_LINKS_SHOWN`).
    """

    query: int
    seed: int
    scored: list[int]
    pruned: list[int]
    links: dict[int, list[int]] = field(default_factory=dict)


@settings
class EdgeScoringSettings:
    """CatRAG's ``edge_scoring``.

    Attributes:
        n_seed: seed entities per query whose arcs are re-weighted (N_seed).
        k_edge: relation neighbours per seed sent to the LLM, by query–fact similarity (K_edge); the rest get
            ``weak_multiplier``.
        tau_facts: a neighbour with more facts than this is shown through an LLM summary of them (τ, Eq. 2).
        weak_multiplier: multiplier of the pruned arcs (the bottom of the weak tier).
        max_facts_shown: facts of one entity listed as its context, or given to its summary, at most.
    """

    n_seed: PositiveInt
    k_edge: NonNegativeInt
    tau_facts: NonNegativeInt
    weak_multiplier: NonNegativeFloat
    max_facts_shown: PositiveInt


class LLMEdgeScorer:
    """Callable ``(seeds, retriever) -> EdgeWeightDelta | None`` plugged into :class:`CatRAGRetriever`.

    Args:
        settings: seeds, neighbours per seed, summary threshold, weak multiplier (:class:`EdgeScoringSettings`).
    """

    def __init__(self, settings: EdgeScoringSettings) -> None:
        self.settings = settings
        self.adjacency: RelationAdjacency | None = None
        self.summaries: dict[int, str] = {}  # entity -> its LLM summary, for the graph bound last
        self.calls = 0  # neighbour-scoring calls (summaries not counted)
        self.failed_calls = 0  # seeds whose call failed or scored nothing (their arcs stay static)

    def bind(self, graph: KnowledgeGraph, edge_weights: KGEdgeWeights) -> None:
        """Index (or re-index) on ``graph``: rebuilds the relation adjacency, forgets the summaries."""
        self.adjacency = RelationAdjacency.build(graph, edge_weights)
        self.summaries = {}

    # ---- Stage I -----------------------------------------------------------------------------------------
    def plan(self, seeds: SeedBatch, fact_emb: torch.Tensor) -> list[SeedPlan]:
        """The seeds to score and, for each, its top-``k_edge`` and pruned neighbours.

        Args:
            seeds: the batch's seeds (``entity_weight`` [B, E], ``query_emb`` [B, D]).
            fact_emb: [F, D] unit fact embeddings.
        """
        adj = self._adjacency()
        weights = seeds.entity_weight.detach().cpu()
        query_emb, fact_emb = seeds.query_emb.detach().cpu().float(), fact_emb.detach().cpu().float()
        top = torch.topk(weights, min(self.settings.n_seed, weights.shape[1]), dim=1)
        plans = []
        for b in range(weights.shape[0]):
            for e, w in zip(top.indices[b].tolist(), top.values[b].tolist()):
                if w <= 0:
                    continue
                nbr, fact = adj.neighbours(e)
                if nbr.numel() == 0:
                    continue
                sim = fact_emb[fact] @ query_emb[b]
                uniq, inverse = nbr.unique(return_inverse=True)
                best = torch.full((uniq.numel(),), float("-inf")).scatter_reduce(0, inverse, sim, "amax")
                ranked = uniq[torch.argsort(best, descending=True, stable=True)].tolist()
                k = self.settings.k_edge
                scored = ranked[:k]
                links = {n: fact[nbr == n].tolist()[:MAX_LINKS_SHOWN] for n in scored}
                plans.append(SeedPlan(b, e, scored, ranked[k:], links))
        return plans

    # ---- Stage II ----------------------------------------------------------------------------------------
    def contexts(self, retriever: CatRAGRetriever, entities: list[int]) -> dict[int, str]:
        """``C(v)`` per entity (Eq. 2): its summary when it has more than ``tau_facts`` facts, else its facts.

        A failed summary falls back to the facts (counted as a skipped ``entity_summary``) and is asked again
        the next time the entity is shown.
        """
        from hyperrag.llm.tasks.neighbor_scoring import triple_text

        adj, graph, cap = self._adjacency(), retriever.graph, self.settings.max_facts_shown
        facts = {e: adj.facts_of(e) for e in entities}
        context = {e: "; ".join(triple_text(graph.facts[f]) for f in fs[:cap]) for e, fs in facts.items()}
        dense = [e for e, fs in facts.items() if len(fs) > self.settings.tau_facts]
        todo = [e for e in dense if e not in self.summaries]
        if todo:
            results = retriever.llm.complete_structured_batch("entity_summary", [
                {"entity": graph.entity_names[e], "facts": [list(graph.facts[f]) for f in facts[e][:cap]]}
                for e in todo])
            for e, res in zip(todo, results):
                if res.ok and res.value:
                    self.summaries[e] = res.value
            retriever.skip("entity_summary", sum(e not in self.summaries for e in todo))
        context.update({e: self.summaries[e] for e in dense if e in self.summaries})
        return context

    def score(self, plans: list[SeedPlan], seeds: SeedBatch, retriever: CatRAGRetriever
              ) -> list[dict[int, int] | None]:
        """One ``neighbor_scoring`` call per plan: ``{neighbour: score 0–10}``, or ``None`` (no verdict)."""
        graph = retriever.graph
        context = self.contexts(retriever, sorted({n for p in plans for n in p.scored}))
        verified = [[list(graph.facts[f]) for f, k in zip(ids, kp) if k]
                    for ids, kp in zip(seeds.fact_ids.tolist(), seeds.keep.tolist())]
        inputs = [{"query": seeds.questions[p.query], "entity": graph.entity_names[p.seed],
                   "facts": verified[p.query],
                   "neighbors": [{"id": n, "name": graph.entity_names[n], "text": context[n],
                                  "links": [list(graph.facts[f]) for f in p.links[n]]} for n in p.scored]}
                  for p in plans]
        results = retriever.llm.complete_structured_batch("neighbor_scoring", inputs)
        scores = [dict(r.value) if r.ok and r.value else None for r in results]
        self.calls += len(plans)
        self.failed_calls += sum(s is None for s in scores)
        return scores

    def delta(self, plans: list[SeedPlan], scores: list[dict[int, int] | None], ppr_graph: Any,
              device: str | torch.device) -> EdgeWeightDelta | None:
        """The forward arcs seed → neighbour of every seed with a verdict, re-weighted.

        Args:
            plans / scores: from :meth:`plan` and :meth:`score` (``None``: the seed keeps its static weights).
            ppr_graph: the :class:`~hyperrag.ops.ppr.PPRGraph` (stored, summed arc weights).
        """
        adj = self._adjacency()
        rows: list[tuple[int, int, int, float]] = []
        weak = self.settings.weak_multiplier
        for p, verdict in zip(plans, scores):
            if verdict is None:
                continue
            rows.extend((p.query, p.seed, n, score_to_multiplier(verdict[n])) for n in p.scored if n in verdict)
            rows.extend((p.query, p.seed, n, weak) for n in p.pruned)
        if not rows:
            return None
        q, s, t, mult = (torch.tensor(c) for c in zip(*rows))
        stored = ppr_graph.arc_weight(s, t).float().cpu()
        rel = adj.relation_weight(s, t)
        # only the relation part of the arc is re-weighted; a synonym weight on the same pair stays
        new = (stored - rel + rel * mult.float()).clamp_min(0)
        return EdgeWeightDelta(q.to(device), s.to(device), t.to(device), new.to(device))

    def __call__(self, seeds: SeedBatch, retriever: CatRAGRetriever) -> EdgeWeightDelta | None:
        plans = self.plan(seeds, retriever.fact_emb)
        if not plans:
            return None
        if not retriever.llm_available:
            retriever.skip("edge_scoring", len(plans))
            return None
        scores = self.score(plans, seeds, retriever)
        retriever.skip("edge_scoring", sum(s is None for s in scores))
        seeds.edge_scores = [(p, s) for p, s in zip(plans, scores)]  # type: ignore[attr-defined]
        return self.delta(plans, scores, retriever.ppr_graph, retriever.device)

    def _adjacency(self) -> RelationAdjacency:
        if self.adjacency is None:
            raise RuntimeError("LLMEdgeScorer.bind(graph, edge_weights) first (CatRAGRetriever.index does)")
        return self.adjacency
