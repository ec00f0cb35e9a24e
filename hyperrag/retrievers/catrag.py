"""CatRAG: HippoRAG 2 made query-adaptive (context-aware traversal, Lau et al.).

On top of :class:`HippoRAG2Retriever`, per query and inside the same batched PPR call:
  * symbolic anchoring (§3.2) — entities the query names get a weak reset mass ``ε / #passages(e)``, below the
    fact seeds. With an LLM the names come from the NER task run on the query (``openie_hipporag_ner``,
    ``source="query"``) and each mention is linked to its nearest graph entity by embedding cosine when that is
    at least ``anchor_link_threshold``; without one (or when the call fails, counted as ``anchoring_ner``)
    the LLM-free stand-in matches entity names lexically in the query (:class:`EntityMatcher`);
  * key-fact passage boost (§3.4, Eq. 3) — the context arc from an entity of a verified seed fact (``T_seed``:
    the facts HippoRAG 2's recognition memory kept) to a passage holding that fact is weighted ``× (1 + β)``
    (with ``boost_renormalise``, as in the authors' code, the entity's passage arcs are then rescaled to their
    old total); without an LLM ``T_seed`` is the unfiltered top-k facts (the labelled LLM-free form);
  * dynamic edge weighting (§3.3) — relation arcs leaving the top seed entities are re-weighted by an LLM's
    0–10 scores (see :mod:`hyperrag.retrievers.edge_scoring`); skipped and counted without an LLM.
All of it is a per-query :class:`EdgeWeightDelta` plus extra reset mass: the graph is never rebuilt.

``variant`` (``paper`` | ``authors_code``) names the group of choices where the paper and its authors' later
code (kwunhang/CatRAG) differ; ``hydra_configs/method/catrag.yaml`` sets each choice from it, and each is also
its own setting (docs/fidelity/catrag.md, variant column).
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from typing import Any

import torch
from typing_extensions import Unpack

from hyperrag.data.types import Dataset
from hyperrag.graph.knowledge_graph import EdgeType, KnowledgeGraph
from hyperrag.graph.reference_weights import PPRWeights
from hyperrag.graph.utils import expand_rows
from hyperrag.ops.ppr import EdgeWeightDelta, merge_edge_deltas
from hyperrag.retrievers.base import RetrieverArgs
from hyperrag.retrievers.edge_scoring import LLMEdgeScorer
from hyperrag.retrievers.hipporag2 import HippoRAG2Retriever
from hyperrag.retrievers.seeds import SeedBatch
from hyperrag.retrievers.settings import CatRAGSettings
from hyperrag.utils.stopwords import english_stopwords


class EntityMatcher:
    """Finds graph entities named in a text — the LLM-free stand-in for query NER.

    Greedy longest match of canonical n-grams against entity names; a span is taken only when it holds a
    capitalised word or a number of the original text (names, titles, dates), and spans never overlap, so
    "Black Hawk Township" anchors that entity and not also "black".
    """

    _WORD = re.compile(r"[^\W_]+", flags=re.UNICODE)

    def __init__(self, names: list[str], min_chars: int = 3, max_tokens: int = 8) -> None:
        self.lookup = {n: i for i, n in enumerate(names)
                       if len(n.replace(" ", "")) >= min_chars and n not in english_stopwords()}
        self.max_tokens = max_tokens

    def __call__(self, text: str) -> list[int]:
        words = self._WORD.findall(unicodedata.normalize("NFKC", text))
        tokens = [w.lower() for w in words]
        salient = [w[0].isupper() or w.isdigit() for w in words]
        found: dict[int, None] = {}
        i = 0
        while i < len(tokens):
            for n in range(min(self.max_tokens, len(tokens) - i), 0, -1):
                hit = self.lookup.get(" ".join(tokens[i : i + n]))
                if hit is not None and any(salient[i : i + n]):
                    found[hit] = None
                    i += n
                    break
            else:
                i += 1
        return list(found)


class CatRAGRetriever(HippoRAG2Retriever):
    """Args:
        settings: :class:`~hyperrag.retrievers.settings.CatRAGSettings` — HippoRAG 2's settings plus symbolic
            anchoring (``anchoring``, ``anchor_epsilon``, ``anchor_min_chars``), the key-fact passage boost
            (``passage_boost``, ``boost_beta``) and LLM dynamic edge weighting (``edge_weighting``,
            ``edge_scoring``: :class:`~hyperrag.retrievers.edge_scoring.EdgeScoringSettings`).
        Others: as for :class:`HippoRAG2Retriever`.
    """

    name = "catrag"
    settings: CatRAGSettings

    def __init__(self, settings: CatRAGSettings, **kwargs: Unpack[RetrieverArgs]) -> None:
        super().__init__(settings, **kwargs)
        self.edge_scorer = LLMEdgeScorer(settings.edge_scoring)
        self.matcher: EntityMatcher | None = None

    def index(self, dataset: Dataset) -> None:
        super().index(dataset)
        assert self.kg is not None
        self.matcher = EntityMatcher(self.graph.entity_names, self.settings.anchor_min_chars)
        self.entity_emb = self.kg.embeddings.entity.to(self.device)
        self.fact_passage_ptr = self.graph.fact_passage_ptr.to(self.device)
        self.fact_passage_idx = self.graph.fact_passage_idx.to(self.device)
        self.entity_passage_ptr = self.graph.entity_passage_ptr.to(self.device)
        self.entity_passage_idx = self.graph.entity_passage_idx.to(self.device)
        if isinstance(self.edge_scorer, LLMEdgeScorer):  # its adjacency belongs to this graph
            assert self.ppr_graph is not None
            relation = None
            if self.settings.edge_scoring.target == "relation":  # the E_rel part of each arc's static weight
                relation = self.edge_weights(self.graph, self.kg.embeddings.entity, multipliers={
                    EdgeType.RELATION: float(self.settings.edge_weights["relation"]), EdgeType.SYNONYM: 0.0,
                    EdgeType.CONTEXT: 0.0}, relation_keys=self.settings.relation_keys)
            self.edge_scorer.bind(self.graph, self.fact_emb, self.ppr_graph, relation)

    def edge_weights(self, graph: KnowledgeGraph, entity_emb: torch.Tensor,
                     multipliers: dict[EdgeType, float] | None = None, relation_keys: str | None = None,
                     synonym_per: str | None = None) -> PPRWeights:
        """HippoRAG 2's weighting with CatRAG's ``relation_keys`` (``both`` | ``subject_object``) and
        ``synonym_per`` (``key`` | ``pair``)."""
        return super().edge_weights(graph, entity_emb, multipliers, relation_keys or self.settings.relation_keys,
                                    synonym_per or self.settings.synonym_per)

    # ---- symbolic anchoring ------------------------------------------------------------------------------
    def anchors(self, questions: list[str]) -> tuple[list[list[int]], list[str]]:
        """Anchor entities per question and how they were found (``llm_ner`` or ``lexical``): LLM NER plus
        embedding linking, else — no LLM, or a failed call — the lexical matcher."""
        assert self.matcher is not None
        mentions: list[list[str] | None] = [None] * len(questions)
        if self.llm_available:
            from hyperrag.llm.tasks.openie_hipporag import NamedEntityExtraction

            results = self.llm.complete_structured_batch(NamedEntityExtraction(source="query"),
                                                         [{"query": q} for q in questions])
            mentions = [list(r.value) if r.ok else None for r in results]
        self.skip("anchoring_ner", sum(m is None for m in mentions))
        found = [self.matcher(q) if m is None else self.link_mentions(m) for q, m in zip(questions, mentions)]
        return found, ["lexical" if m is None else "llm_ner" for m in mentions]

    def link_mentions(self, mentions: list[str]) -> list[int]:
        """Each mention's nearest graph entity by cosine, when at least ``anchor_link_threshold``; names the
        lexical matcher would never anchor (stop words, shorter than ``anchor_min_chars``) are skipped."""
        assert self.matcher is not None
        mentions = [m for m in mentions if m.strip()]
        if not mentions:
            return []
        emb = self.encoder.encode(mentions, desc="query entities").to(self.device)
        sim, ent = (emb @ self.entity_emb.T).max(dim=1)
        found: dict[int, None] = {}
        for s, e in zip(sim.tolist(), ent.tolist()):
            if s >= self.settings.anchor_link_threshold and self.graph.entity_names[e] in self.matcher.lookup:
                found[e] = None
        return list(found)

    def reset_vectors(self, seeds: SeedBatch) -> torch.Tensor:
        reset = super().reset_vectors(seeds)
        if not self.settings.anchoring:
            return reset
        if seeds.anchors is None:
            with self.timed("seed"):  # symbolic anchoring is part of the initial seeds (Table 6)
                seeds.anchors, seeds.anchor_source = self.anchors(seeds.questions)
        rows = torch.tensor([b for b, ents in enumerate(seeds.anchors) for _ in ents], dtype=torch.long)
        cols = torch.tensor([e for ents in seeds.anchors for e in ents], dtype=torch.long)
        if rows.numel():
            rows, cols = rows.to(self.device), cols.to(self.device)
            mass = self.settings.anchor_epsilon / self.entity_passage_count[cols].clamp_min(1.0)
            # subordinate to fact seeds (anchor_rule): ``unseeded`` — only an entity no fact seeded gets anchor
            # mass (the authors' code's rule; its anchor weight is divided by the anchor's own passage count here,
            # not another entity's); ``max`` — a fact-seeded entity keeps the larger of its two weights
            current = reset[rows, cols]
            if self.settings.anchor_rule == "max":  # a fact-seeded entity keeps the larger of the two
                reset[rows, cols] = torch.maximum(current, mass.to(reset.dtype))
            else:
                reset[rows, cols] = torch.where(current > 0, current, mass.to(reset.dtype))
        return reset

    # ---- per-query edge deltas ---------------------------------------------------------------------------
    def passage_boost_delta(self, seeds: SeedBatch) -> EdgeWeightDelta | None:
        """Arcs seed entity → passage holding that seed fact, stored weight ``× (1 + β)``; with
        ``boost_renormalise`` every passage arc of a boosted entity is then rescaled so that the entity's
        passage arcs keep their total weight (the authors' code)."""
        b, k = seeds.fact_ids.shape
        facts = seeds.fact_ids[seeds.keep]  # [M]
        query = torch.arange(b, device=self.device).unsqueeze(1).expand(b, k)[seeds.keep]
        rep, pos = expand_rows(self.fact_passage_ptr, facts)  # every passage of every seed fact
        if rep.numel() == 0:
            return None
        passage = self.fact_passage_idx[pos] + self.graph.num_entities
        ents = self.fact_entities[facts[rep]]  # [R, 2]
        q = query[rep].repeat_interleave(2)
        src = ents.reshape(-1)
        dst = passage.repeat_interleave(2)
        key = torch.unique(torch.stack([q, src, dst]), dim=1)  # an arc is boosted once per query
        assert self.ppr_graph is not None
        factor = 1.0 + self.settings.boost_beta
        weight = self.ppr_graph.arc_weight(key[1], key[2]).float() * factor
        if not self.settings.boost_renormalise:
            return EdgeWeightDelta(key[0], key[1], key[2], weight)
        return self.renormalised_boost(key, weight, factor)

    def renormalised_boost(self, key: torch.Tensor, boosted: torch.Tensor, factor: float) -> EdgeWeightDelta:
        """Every passage arc of each (query, boosted entity): its weight ``× s`` (boosted ones ``× factor × s``)
        with ``s`` keeping the entity's passage-arc total.

        Args:
            key: [3, M] (query, entity, passage node) of the boosted arcs; boosted: [M] their boosted weights.
        """
        qe = torch.unique(key[:2], dim=1)  # (query, entity) pairs with a boost
        rep, pos = expand_rows(self.entity_passage_ptr, qe[1])  # all passages of each such entity
        q, src = qe[0][rep], qe[1][rep]
        dst = self.entity_passage_idx[pos] + self.graph.num_entities
        assert self.ppr_graph is not None
        old = self.ppr_graph.arc_weight(src, dst).float()
        n = self.graph.num_nodes
        pair = q * n + src  # group id of (query, entity)
        arc = (q * n + src) * n + dst
        boosted_arc = (key[0] * n + key[1]) * n + key[2]
        is_boosted = torch.isin(arc, boosted_arc)
        raw = torch.where(is_boosted, old * factor, old)
        uniq, group = torch.unique(pair, return_inverse=True)
        total_old = torch.zeros(uniq.numel(), device=old.device).scatter_add_(0, group, old)
        total_raw = torch.zeros(uniq.numel(), device=old.device).scatter_add_(0, group, raw)
        new = raw * (total_old / total_raw.clamp_min(1e-12))[group]
        return EdgeWeightDelta(q, src, dst, new)

    def edge_delta(self, seeds: SeedBatch) -> EdgeWeightDelta | None:
        """The query's key-fact boosts and LLM edge weights as one delta naming each arc once.

        Both are multipliers of the stored arc weight (boost on context arcs, the LLM's score multiplier on
        entity arcs), so an arc named by both gets the product of the two
        (:func:`~hyperrag.ops.ppr.merge_edge_deltas` with ``combine="multiply"``); a repeat inside one of them
        keeps its last weight.
        """
        parts = []
        if self.settings.passage_boost:
            parts.append(self.passage_boost_delta(seeds))
        if self.settings.edge_weighting:  # the scorer counts the seeds it could not score (no LLM, failed call)
            pool = None
            if self.settings.edge_scoring.seed_pool == "facts_and_anchors" and self.settings.anchoring:
                pool = self.reset_vectors(seeds)[:, : self.graph.num_entities]
            with self.timed("edge_weighting"):  # Table 6's dynamic edge weighting latency
                parts.append(self.edge_scorer(seeds, self.llm, self.skip, pool))
        assert self.ppr_graph is not None
        return merge_edge_deltas(self.ppr_graph, parts, combine="multiply")

    def details(self, seeds: SeedBatch) -> list[dict[str, Any]]:
        """HippoRAG 2's row plus the anchors (and how they were found) and the LLM's edge scores per seed
        (``{seed: {neighbour: score}}``; a seed without a verdict is absent)."""
        rows = super().details(seeds)
        names = self.graph.entity_names
        for row, filtered in zip(rows, seeds.filtered.tolist()):
            # the boost's key facts: T_seed when the filter ruled on this query, else its unfiltered top-k
            row["key_facts"] = "verified" if filtered else "unfiltered top-k (no filter verdict)"
        if seeds.anchors is not None:
            for row, ents, source in zip(rows, seeds.anchors, seeds.anchor_source or [None] * len(rows)):
                row["anchors"] = [names[e] for e in ents]
                if source:
                    row["anchor_source"] = source
        for plan, verdict in seeds.edge_scores:
            if verdict is not None:
                rows[plan.query].setdefault("edge_scores", {})[names[plan.seed]] = {
                    names[n]: v for n, v in verdict.items()}
        return rows

    def describe(self) -> dict[str, Any]:
        s = self.settings
        llm = self.llm_available
        return {**super().describe(), "variant": s.variant, "relation_keys": s.relation_keys,
                "synonym_per": s.synonym_per,
                "anchor_rule": s.anchor_rule,
                "anchoring": s.anchoring and ("llm_ner" if llm else "lexical"),
                "anchor_epsilon": s.anchor_epsilon, "anchor_link_threshold": s.anchor_link_threshold,
                "passage_boost": s.passage_boost, "boost_beta": s.boost_beta,
                "boost_renormalise": s.boost_renormalise,
                "key_facts": "verified (recognition memory; per query in details)" if llm and s.fact_filter
                else "top-k facts, unfiltered",
                "edge_weighting": s.edge_weighting and llm, "edge_scoring": dataclasses.asdict(s.edge_scoring),
                "edge_scoring_llm_calls": getattr(self.edge_scorer, "calls", 0),
                # arcs a verdict re-weighted, and of them (target: relation) those with no relation part to scale
                "edge_scoring_scored_arcs": getattr(self.edge_scorer, "scored_arcs", 0),
                "edge_scoring_zero_relation_arcs": getattr(self.edge_scorer, "zero_relation_arcs", 0)}


__all__ = ["CatRAGRetriever", "EntityMatcher"]
