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
* Scores map to multipliers (Table 8: 0–3 → 0, 4–6 → 0.2–0.3, 7–9 → 2.0–3.0, 10 → 5.0; times ``score_scale``)
  of the forward arc seed → neighbour, ``ŵ_uv = φ · w_uv`` (``target: arc``, the authors' code: the arc's whole
  static weight, a synonym share included; ``target: relation``: its E_rel part only, a synonym share stays);
  pruned neighbours get ``weak_multiplier`` (``prune_scope``: the seed's own, or — the authors' code — any the
  query's seeds pruned); the result is an :class:`EdgeWeightDelta` on the batched PPR, never a rebuilt graph.

The scorer is bound to one graph (:meth:`LLMEdgeScorer.bind`) and called with the batch's seeds, the LLM and a
skip counter: it never sees the retriever.

A seed whose call fails — or whose reply scores none of the neighbours it was shown — is counted in
``llm_steps_skipped`` (``edge_scoring``: seeds); without an LLM every planned seed is counted so and no arc
changes. What a failed call and a neighbour left out of a valid reply do to the arcs are settings
(``failed_call``, ``missing_neighbour``): ours keep the static weight (a failed seed keeps *every* arc static,
pruned ones included); the authors' code (kwunhang/CatRAG ``call_llm_score``) gives such a neighbour its
default score 4 (``default_score``). Where a verdict and the weak weight reach is two more (``score_scope``,
``arcs``): per seed over its relation neighbours (ours), or — the authors' code — one best score per neighbour
for the whole query applied to every top seed's arc to it, and the weak weight on every out-arc of the top
seeds (synonym-only arcs included) whose target some seed pruned and no seed scored. A summary that fails
falls back to the facts (``entity_summary``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Literal

import torch
from pydantic import Field

from hyperrag.config.validation import NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt, settings
from hyperrag.graph.knowledge_graph import KnowledgeGraph
from hyperrag.graph.reference_weights import PPRWeights
from hyperrag.graph.utils import csr_by_row, ptr_from_sorted_rows, sort_edges
from hyperrag.ops.ppr import EdgeWeightDelta, PPRGraph
from hyperrag.retrievers.seeds import SeedBatch

if TYPE_CHECKING:
    from hyperrag.protocols import LanguageModel

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
    """Relation arcs by tail entity (CSR) with their facts, and the facts of each entity. Built from one graph:
    rebuild it whenever the graph changes.

    Attributes:
        ptr: [E + 1]; ``dst[ptr[e]:ptr[e + 1]]`` are the neighbours of ``e`` (a pair linked by several facts
            repeats, once per fact), ``fact`` the linking fact of each.
        entity_fact_ptr / entity_fact_idx: CSR, the facts naming each entity (``F(v)``).
    """

    ptr: torch.Tensor
    dst: torch.Tensor
    fact: torch.Tensor
    entity_fact_ptr: torch.Tensor
    entity_fact_idx: torch.Tensor

    @classmethod
    def build(cls, graph: KnowledgeGraph) -> RelationAdjacency:
        s, o = graph.fact_entities[:, 0], graph.fact_entities[:, 1]
        fid = torch.arange(len(graph.facts))
        keep = s != o
        tail = torch.cat([s[keep], o[keep]])
        head = torch.cat([o[keep], s[keep]])
        fact = torch.cat([fid[keep], fid[keep]])
        arcs, fact = sort_edges(torch.stack([tail, head]), fact, num_nodes=graph.num_nodes, stable=True)
        ptr, head = ptr_from_sorted_rows(arcs[0], graph.num_entities), arcs[1]
        ef_ptr, ef_idx = csr_by_row(torch.cat([s, o]), graph.num_entities, torch.cat([fid, fid]))
        return cls(ptr, head, fact, ef_ptr, ef_idx)

    def neighbours(self, entity: int) -> tuple[torch.Tensor, torch.Tensor]:
        """``(neighbour [A], linking fact [A])`` of one entity's relation arcs."""
        lo, hi = int(self.ptr[entity]), int(self.ptr[entity + 1])
        return self.dst[lo:hi], self.fact[lo:hi]

    def facts_of(self, entity: int) -> list[int]:
        """``F(v)``: the facts naming an entity."""
        return self.entity_fact_idx[self.entity_fact_ptr[entity] : self.entity_fact_ptr[entity + 1]].tolist()


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
        weak_multiplier: multiplier of the pruned arcs (the paper's "minimal weak" weight).
        max_facts_shown: facts of one entity listed as its context, or given to its summary, at most (``null``:
            all of them).
        score_scale: factor on the score map φ (Table 8); the authors' code doubles it.
        seed_pool: which reset mass picks the ``n_seed`` seeds: ``facts`` (the fact-derived entity seeds, the
            paper) or ``facts_and_anchors`` (anchors compete too, as in the authors' code).
        prune_scope: whose pruned neighbours get the weak weight on a seed's arcs: ``per_seed`` (that seed's own
            pruned neighbours, the paper's Stage I) or ``global`` (any neighbour some seed of the query pruned and
            this seed did not score, as the authors' code's one ``skipped_neighbor_indices`` set does).
        target: what ``φ`` multiplies: ``arc`` (the arc's whole static weight, a synonym share of the same pair
            included; the authors' code) or ``relation`` (only its relation part, the E_rel weight; a synonym
            share stays).
        missing_neighbour: a top neighbour that a valid reply leaves out: ``static`` (no verdict, its arc keeps
            its static weight; ours) or ``default_score`` (scored ``default_score``, the authors' code).
        failed_call: a seed whose call fails (or whose reply scores none of its neighbours): ``static`` (every
            arc of that seed, pruned ones included, keeps its static weight; ours) or ``default_score`` (every
            neighbour it showed scored ``default_score``, its pruned ones weak: the authors' parser).
        default_score: the 0–10 score of those neighbours (the authors': 4, i.e. ``score_scale × 0.2``).
        score_scope: whose arcs a verdict re-weights: ``per_seed`` (the seed that asked, on its arc to the
            neighbour) or ``query`` (one map per query, each neighbour's best score over the seeds that scored
            it, applied to every top seed's arc to that neighbour: the authors' ``cur_score_update_dict``).
        arcs: which out-arcs of a seed a query-wide score or the ``global`` weak weight reaches: ``relation``
            (arcs to its relation neighbours) or ``all`` (every arc to an entity, synonym-only arcs included,
            from every top seed, also one with no relation neighbour: the authors' code edits each out-edge of
            the top seeds whose target was scored or skipped).
    """

    n_seed: PositiveInt
    k_edge: NonNegativeInt
    tau_facts: NonNegativeInt
    weak_multiplier: NonNegativeFloat
    max_facts_shown: PositiveInt | None
    score_scale: PositiveFloat
    seed_pool: Literal["facts", "facts_and_anchors"]
    prune_scope: Literal["per_seed", "global"]
    target: Literal["arc", "relation"]
    missing_neighbour: Literal["static", "default_score"]
    failed_call: Literal["static", "default_score"]
    default_score: Annotated[int, Field(ge=0, le=10)]
    score_scope: Literal["per_seed", "query"]
    arcs: Literal["relation", "all"]


#: ``skip(step, count)``: records LLM steps that did not run (the retriever's ``llm_steps_skipped``)
SkipFn = Callable[[str, int], None]


class LLMEdgeScorer:
    """Callable ``(seeds, llm, skip) -> EdgeWeightDelta | None``: CatRAG's dynamic edge weights for one batch.

    It works on the graph it was bound to (:meth:`bind`) and the batch's seeds; the LLM and the skip counter
    are the caller's.

    Args:
        settings: seeds, neighbours per seed, summary threshold, weak multiplier (:class:`EdgeScoringSettings`).
    """

    def __init__(self, settings: EdgeScoringSettings) -> None:
        self.settings = settings
        self.adjacency: RelationAdjacency | None = None
        self.graph: KnowledgeGraph | None = None
        self.fact_emb: torch.Tensor | None = None
        self.ppr_graph: PPRGraph | None = None
        self.relation_lookup: tuple[torch.Tensor, torch.Tensor, int] | None = None
        self.summaries: dict[int, str] = {}  # entity -> its LLM summary, for the graph bound last
        self.calls = 0  # neighbour-scoring calls (summaries not counted)
        self.failed_calls = 0  # seeds whose call failed or scored nothing (``failed_call`` says what follows)
        self.scored_arcs = 0  # arcs re-weighted by a verdict (any ``target``)
        self.zero_relation_arcs = 0  # of them, under ``target: relation``, arcs whose relation part is 0 (unmoved)
        self._out: dict[int, list[int]] = {}  # entity -> its out-arc entity targets in the PPR graph (``arcs: all``)

    def bind(self, graph: KnowledgeGraph, fact_emb: torch.Tensor, ppr_graph: PPRGraph,
             relation_weights: PPRWeights | None = None) -> None:
        """Index (or re-index) on ``graph``, its unit fact embeddings [F, D], its PPR graph and (for
        ``target: relation``) the relation part of the PPR graph's undirected weights; rebuilds the relation
        adjacency, forgets the summaries."""
        if self.settings.target == "relation" and relation_weights is None:
            raise ValueError("edge_scoring.target=relation needs the relation-only weights (relation_weights)")
        self.graph, self.fact_emb, self.ppr_graph = graph, fact_emb, ppr_graph
        self.relation_lookup = None
        if relation_weights is not None:  # both arcs of each undirected edge, sorted by u * N + v
            u, v = relation_weights.edge_index
            n = graph.num_nodes
            keys = torch.cat([u * n + v, v * n + u])
            vals = torch.cat([relation_weights.weight, relation_weights.weight]).float()
            keys, inverse = torch.unique(keys, return_inverse=True)
            summed = torch.zeros(keys.numel()).index_add_(0, inverse, vals)
            self.relation_lookup = (keys, summed, n)
        self.adjacency = RelationAdjacency.build(graph)
        self.summaries = {}
        self._out = {}

    # ---- Stage I -----------------------------------------------------------------------------------------
    def plan(self, seeds: SeedBatch, seed_weight: torch.Tensor) -> list[SeedPlan]:
        """The seeds to score and, for each, its top-``k_edge`` and pruned neighbours.

        Args:
            seeds: the batch's seeds (``query_emb`` [B, D]).
            seed_weight: [B, E] the reset mass the ``n_seed`` seeds are picked by (:meth:`top_seeds`).
        """
        return self.plan_seeds(seeds, self.top_seeds(seed_weight))

    def plan_seeds(self, seeds: SeedBatch, top_seeds: list[list[int]]) -> list[SeedPlan]:
        """:meth:`plan` for seeds already picked: per query, its top seeds (:meth:`top_seeds`)."""
        adj = self._adjacency()
        assert self.fact_emb is not None
        query_emb, fact_emb = seeds.query_emb.detach().cpu().float(), self.fact_emb.detach().cpu().float()
        plans = []
        for b, top in enumerate(top_seeds):
            for e in top:
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

    def top_seeds(self, seed_weight: torch.Tensor) -> list[list[int]]:
        """Per query, the top ``n_seed`` entities by ``seed_weight`` [B, E] with positive mass, best first."""
        weights = seed_weight.detach().cpu()
        top = torch.topk(weights, min(self.settings.n_seed, weights.shape[1]), dim=1)
        return [[e for e, w in zip(i, v) if w > 0] for i, v in zip(top.indices.tolist(), top.values.tolist())]

    # ---- Stage II ----------------------------------------------------------------------------------------
    def contexts(self, entities: list[int], llm: LanguageModel, skip: SkipFn) -> dict[int, str]:
        """``C(v)`` per entity (Eq. 2): its summary when it has more than ``tau_facts`` facts, else its facts.

        A failed summary falls back to the facts (counted as a skipped ``entity_summary``) and is asked again
        the next time the entity is shown.
        """
        from hyperrag.llm.tasks.neighbor_scoring import triple_text

        adj, graph, cap = self._adjacency(), self._graph(), self.settings.max_facts_shown
        facts = {e: adj.facts_of(e)[:cap] for e in entities}
        context = {e: "; ".join(triple_text(graph.facts[f]) for f in fs) for e, fs in facts.items()}
        dense = [e for e, fs in facts.items() if len(adj.facts_of(e)) > self.settings.tau_facts]
        todo = [e for e in dense if e not in self.summaries]
        if todo:
            results = llm.complete_structured_batch("entity_summary", [
                {"entity": graph.entity_names[e], "facts": [list(graph.facts[f]) for f in facts[e]]} for e in todo])
            for e, res in zip(todo, results):
                if res.ok and res.value:
                    self.summaries[e] = res.value
            skip("entity_summary", sum(e not in self.summaries for e in todo))
        context.update({e: self.summaries[e] for e in dense if e in self.summaries})
        return context

    def score(self, plans: list[SeedPlan], seeds: SeedBatch, llm: LanguageModel, skip: SkipFn
              ) -> list[dict[int, int] | None]:
        """One ``neighbor_scoring`` call per plan: ``{neighbour: score 0–10}``, or ``None`` (no verdict)."""
        graph = self._graph()
        context = self.contexts(sorted({n for p in plans for n in p.scored}), llm, skip)
        verified = [[list(graph.facts[f]) for f, k in zip(ids, kp) if k]
                    for ids, kp in zip(seeds.fact_ids.tolist(), seeds.keep.tolist())]
        inputs = [{"query": seeds.questions[p.query], "entity": graph.entity_names[p.seed],
                   "facts": verified[p.query],
                   "neighbors": [{"id": n, "name": graph.entity_names[n], "text": context[n],
                                  "links": [list(graph.facts[f]) for f in p.links[n]]} for n in p.scored]}
                  for p in plans]
        results = llm.complete_structured_batch("neighbor_scoring", inputs)
        scores = [dict(r.value) if r.ok and r.value else None for r in results]
        self.calls += len(plans)
        self.failed_calls += sum(s is None for s in scores)
        return scores

    def delta(self, plans: list[SeedPlan], scores: list[dict[int, int] | None],
              device: str | torch.device, top_seeds: list[list[int]] | None = None) -> EdgeWeightDelta | None:
        """The forward arcs of the seeds, re-weighted: a scored arc's static weight (``target: relation``: its
        relation part) times ``score_scale × φ(score)``; a pruned one ``weak_multiplier``.

        Which arcs (the settings): ``score_scope: per_seed`` — a seed's verdict on its own arcs; ``query`` — each
        neighbour's best score over the query's verdicts, on every top seed's arc to it. Pruned targets
        (``prune_scope``): the seed's own, or any the query's seeds pruned, less the scored ones; with
        ``arcs: all`` a query-wide score or a global weak weight reaches every out-arc of a top seed to an
        entity (synonym-only arcs included), with ``relation`` only its relation neighbours. A seed whose call
        failed keeps every arc static under ``failed_call: static``, else its neighbours get ``default_score``;
        a neighbour a valid reply left out likewise (``missing_neighbour``).

        Args:
            plans / scores: from :meth:`plan` and :meth:`score` (``None``: the call failed).
            device: where the delta goes.
            top_seeds: per query, its top seeds (:meth:`top_seeds`; ``None``: the seeds of ``plans``), the seeds
                a query-wide score or weak weight reaches under ``arcs: all``.
        """
        assert self.ppr_graph is not None
        st = self.settings
        weak, scale = st.weak_multiplier, st.score_scale
        verdicts: list[dict[int, float] | None] = []  # per plan: neighbour -> multiplier, None: arcs static
        for p, verdict in zip(plans, scores):
            if verdict is None and st.failed_call == "static":
                verdicts.append(None)
                continue
            given = verdict or {}
            got = {n: given[n] for n in p.scored if n in given}
            if st.missing_neighbour == "default_score" or verdict is None:
                got = {n: got.get(n, st.default_score) for n in p.scored}
            verdicts.append({n: scale * score_to_multiplier(v) for n, v in got.items()})
        by_query: dict[int, list[tuple[SeedPlan, dict[int, float] | None]]] = {}
        for p, v in zip(plans, verdicts):
            by_query.setdefault(p.query, []).append((p, v))
        if top_seeds is None:
            top_seeds = [[] for _ in range(max(by_query, default=-1) + 1)]
            for p in plans:
                top_seeds[p.query].append(p.seed)
        rows: list[tuple[int, int, int, float]] = []
        scored_rows: list[bool] = []
        for q, q_plans in by_query.items():
            pruned = set().union(*(p.pruned for p, _ in q_plans))  # Stage I is LLM-free: a failed seed prunes
            if st.score_scope == "per_seed":
                acting = [(p.seed, v, p) for p, v in q_plans if v is not None]
                if st.arcs == "all":  # a top seed with no relation neighbour (no plan) still gets the weak weight
                    planned = {p.seed for p, _ in q_plans}
                    acting += [(e, {}, None) for e in top_seeds[q] if e not in planned]
            else:
                silent = {p.seed for p, v in q_plans if v is None}  # failed calls under ``failed_call: static``
                best: dict[int, float] = {}
                for _, v in q_plans:
                    for n, m in (v or {}).items():
                        best[n] = max(best.get(n, m), m)
                plan_of = {p.seed: p for p, _ in q_plans}
                acting = [(e, best, plan_of.get(e)) for e in top_seeds[q] if e not in silent]
            for seed, score_map, plan in acting:
                reach = self._reach(seed)
                if st.score_scope == "per_seed":
                    scored = dict(score_map)
                else:
                    scored = {n: m for n, m in score_map.items() if n in reach}
                if st.prune_scope == "per_seed":
                    weak_set = set(plan.pruned) if plan is not None else set()
                else:
                    weak_set = pruned & reach
                weak_set = sorted(weak_set - set(scored))
                rows.extend((q, seed, n, m) for n, m in scored.items())
                rows.extend((q, seed, n, weak) for n in weak_set)
                scored_rows.extend([True] * len(scored) + [False] * len(weak_set))
        if not rows:
            return None
        q, s, t, mult = (torch.tensor(c) for c in zip(*rows))
        stored = self.ppr_graph.arc_weight(s, t).float().cpu()
        self.scored_arcs += sum(scored_rows)
        if st.target == "arc":
            new = stored * mult.float()
        else:  # only the relation part is re-weighted; a synonym share of the same pair stays
            rel = self.relation_weight(s, t)
            self.zero_relation_arcs += int(((rel == 0) & torch.tensor(scored_rows)).sum())
            new = (stored - rel + rel * mult.float()).clamp_min(0)
        return EdgeWeightDelta(q.to(device), s.to(device), t.to(device), new.to(device))

    def _reach(self, seed: int) -> set[int]:
        """The entities a query-wide score or the global weak weight may reach from ``seed`` (``arcs``): its
        relation neighbours, or every entity an out-arc of the PPR graph leads to (synonym-only ones too)."""
        if self.settings.arcs == "relation":
            return set(self._adjacency().neighbours(seed)[0].tolist())
        if seed not in self._out:
            g = self.ppr_graph
            assert g is not None and self.graph is not None
            stored = seed if g.inv_perm is None else int(g.inv_perm[seed])
            dst = g.out_idx[int(g.out_ptr[stored]): int(g.out_ptr[stored + 1])].cpu()
            if g.perm is not None:
                dst = g.perm.cpu()[dst]
            self._out[seed] = [int(t) for t in dst.tolist() if t < self.graph.num_entities and t != seed]
        return set(self._out[seed])

    def relation_weight(self, src: torch.Tensor, dst: torch.Tensor) -> torch.Tensor:
        """The relation part [M] of each arc ``src → dst`` (0 where the pair has none, e.g. both of its relation
        keys replaced by synonym keys)."""
        assert self.relation_lookup is not None
        keys, vals, n = self.relation_lookup
        key = src.cpu() * n + dst.cpu()
        pos = torch.searchsorted(keys, key).clamp_max(max(keys.numel() - 1, 0))
        if keys.numel() == 0:
            return torch.zeros(key.shape)
        return torch.where(keys[pos] == key, vals[pos], torch.zeros_like(vals[pos]))

    def __call__(self, seeds: SeedBatch, llm: LanguageModel | None, skip: SkipFn,
                 seed_weight: torch.Tensor | None = None) -> EdgeWeightDelta | None:
        """The batch's LLM edge weights (``None``: no arc changes).

        Args:
            seeds: the batch's seeds; their ``edge_scores`` are filled in.
            llm: the LLM (``None`` or unavailable: every planned seed is counted as skipped).
            skip: counts the LLM steps that did not run.
            seed_weight: [B, E] the reset mass seeds are picked by (default ``seeds.entity_weight``).
        """
        top = self.top_seeds(seeds.entity_weight if seed_weight is None else seed_weight)  # picked once
        plans = self.plan_seeds(seeds, top)
        if not plans:
            return None
        if llm is None or not getattr(llm, "available", False):
            skip("edge_scoring", len(plans))
            return None
        scores = self.score(plans, seeds, llm, skip)
        skip("edge_scoring", sum(s is None for s in scores))
        seeds.edge_scores = list(zip(plans, scores))
        return self.delta(plans, scores, seeds.entity_weight.device, top)

    def _adjacency(self) -> RelationAdjacency:
        if self.adjacency is None:
            raise RuntimeError("LLMEdgeScorer.bind(graph, fact_emb, ppr_graph) first "
                               "(CatRAGRetriever.index does)")
        return self.adjacency

    def _graph(self) -> KnowledgeGraph:
        self._adjacency()
        assert self.graph is not None
        return self.graph
