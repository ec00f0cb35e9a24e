"""GraphRAG local search (Edge et al., 2024), on the shared knowledge graph and module hierarchy.

Per query, as GraphRAG's mixed local context builder does it:
  1. *entities*: the ``top_k_entities × oversample`` entities most similar to the query embedding;
  2. *community reports* (``community_prop`` of the budget): the communities, at ``community_level``, of those
     entities, by how many matched entities each holds, then by rank (size);
  3. *entity and relationship tables* (what ``community_prop`` and ``text_unit_prop`` leave): the entities, then
     relationships added entity by entity while they fit — first those between matched entities (in-network)
     by rank (the sum of both ends' degrees), then those leaving the matched set (out-network) by how many
     matched entities their outside end links to, then rank, at most ``top_k_relationships`` per entity;
  4. *text units* (``text_unit_prop``): the passages of the matched entities, by the entity's order, then by
     how many of the entity's relationships each passage holds;
  5. *answer* (with an LLM): the ``grounded_answer`` task over that context (reports, entities, relationships,
     sources) — ``details["answer"]``.

The passage ranking is the text units in that order (the ones the budget cut included), then the passages no
matched entity reaches, by dense similarity; its scores are reciprocal ranks. Without an LLM the reports are the stand-in texts and no answer is
written (both counted as skipped steps).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import torch

from hyperrag.generation.context import ContextItem, answer_from_context, take_within
from hyperrag.hierarchy.tokens import approx_tokens
from hyperrag.retrievers.base import RetrievalOutput, complete_ranking, rank_scores
from hyperrag.retrievers.graphrag_index import GraphRAGIndexed
from hyperrag.retrievers.settings import GraphRAGLocalSettings


class GraphRAGLocalRetriever(GraphRAGIndexed):
    """Args: see :class:`~hyperrag.retrievers.graphrag_index.GraphRAGIndexed`; ``settings``:
    :class:`~hyperrag.retrievers.settings.GraphRAGLocalSettings`."""

    name = "graphrag_local"
    settings: GraphRAGLocalSettings

    # ---- the four parts of the context -------------------------------------------------------------------
    def community_rows(self, entities: list[int], budget: int) -> list[ContextItem]:
        """Reports of the matched entities' communities, by matches then rank, within ``budget`` tokens."""
        assert self.reports is not None
        community = self.reports.entity_community(self.settings.community_level)
        matches = Counter(int(community[e]) for e in entities)
        rank = self.reports.rank
        order = sorted(matches, key=lambda m: (-matches[m], -float(rank[m]), m))
        rows = [ContextItem(f"report:{m}", f"Report {m}: {self.reports.texts[m]}") for m in order]
        return rows[: take_within([r.text for r in rows], budget)]

    def entity_row(self, e: int) -> ContextItem:
        desc = self.info.text(e)
        degree = int(self.incidence.degree[e])
        text = f"Entity: {self.graph.entity_names[e]}" + (f" — {desc}" if desc else "") + f" ({degree} relationships)"
        return ContextItem(f"entity:{e}", text)

    def relationships(self, selected: list[int]) -> list[int]:
        """GraphRAG's relationship filter for ``selected`` entities: in-network facts by rank, then out-network
        facts by (links, rank), at most ``top_k_relationships × len(selected)`` of those."""
        inc = self.incidence
        chosen = set(selected)
        ends = self.graph.fact_entities
        facts = list(dict.fromkeys(f for e in selected for f in inc.facts(e).tolist()))
        rank = {f: int(inc.degree[ends[f, 0]] + inc.degree[ends[f, 1]]) for f in facts}
        inside = [f for f in facts if int(ends[f, 0]) in chosen and int(ends[f, 1]) in chosen]
        inside_set = set(inside)
        outside = [f for f in facts if f not in inside_set]
        inside.sort(key=lambda f: (-rank[f], f))
        if len(outside) <= 1:
            return inside + outside
        linked: dict[int, set[int]] = {}
        for f in outside:
            s, o = int(ends[f, 0]), int(ends[f, 1])
            other, mine = (o, s) if s in chosen else (s, o)
            linked.setdefault(other, set()).add(mine)
        links = {f: len(linked[int(ends[f, 1]) if int(ends[f, 0]) in chosen else int(ends[f, 0])]) for f in outside}
        outside.sort(key=lambda f: (-links[f], -rank[f], f))
        return inside + outside[: self.settings.top_k_relationships * len(selected)]

    def local_rows(self, entities: list[int], budget: int) -> list[ContextItem]:
        """Entity rows, then relationship rows grown entity by entity while entity + relationship rows fit."""
        ent_rows = [self.entity_row(e) for e in entities]
        ent_rows = ent_rows[: take_within([r.text for r in ent_rows], budget)]
        used = sum(approx_tokens(r.text) for r in ent_rows)
        facts_text = self.graph.facts
        kept: list[ContextItem] = []
        for i in range(1, len(entities) + 1):
            rels = [ContextItem(f"relationship:{f}", f"Relationship: {' '.join(facts_text[f])}")
                    for f in self.relationships(entities[:i])]
            if used + sum(approx_tokens(r.text) for r in rels) > budget:
                break
            kept = rels
        return ent_rows + kept

    def text_units(self, entities: list[int], counts: torch.Tensor) -> list[int]:
        """Passages of the matched entities, by entity order, then by the entity's relationships in each.

        Args:
            counts: FloatTensor [k, P], per matched entity, its facts per passage.
        """
        units: list[tuple[int, float, int]] = []
        seen: set[int] = set()
        for i, e in enumerate(entities):
            for p in self.incidence.passages(e).tolist():
                if p not in seen:
                    seen.add(p)
                    units.append((i, -float(counts[i, p]), p))
        units.sort()
        return [p for _, _, p in units]

    # ---- retrieval -----------------------------------------------------------------------------------------
    def retrieve(self, questions: list[str], top_k: int) -> RetrievalOutput:
        s = self.settings
        q = self.encode(questions)
        n_ent = min(s.top_k_entities * s.oversample, self.graph.num_entities)
        matched = torch.topk(q @ self.entity_emb.T, n_ent, dim=1).indices.cpu()
        dense = (q @ self.passage_emb.T).cpu()
        budget = s.max_context_tokens
        local_budget = int(budget * (1 - s.community_prop - s.text_unit_prop))
        rankings, contexts, details = [], [], []
        for b in range(len(questions)):
            ents = matched[b].tolist()
            reports = self.community_rows(ents, int(budget * s.community_prop))
            local = self.local_rows(ents, local_budget)
            units = self.text_units(ents, self.incidence.relation_counts(matched[b]))
            unit_rows = [ContextItem(f"passage:{self.passage_ids[p]}", f"Source: {self.passage_texts[p]}",
                                     self.passage_ids[p]) for p in units]
            unit_rows = unit_rows[: take_within([r.text for r in unit_rows], int(budget * s.text_unit_prop))]
            rankings.append(complete_ranking(units, dense[b], top_k))
            contexts.append(reports + local + unit_rows)
            details.append({"matched_entities": [self.graph.entity_names[e] for e in ents[: s.top_k_entities]],
                            "reports": [r.key for r in reports],
                            "context_rows": {"reports": len(reports), "entities_relationships": len(local),
                                             "sources": len(unit_rows)},
                            "text_units": len(units),
                            "context_passages": [r.passage_id for r in unit_rows]})
        if s.answer and self.llm_available:
            for d, ans in zip(details, answer_from_context(self.llm, questions, contexts)):
                d.update(ans)
        idx = torch.tensor(rankings, dtype=torch.long).reshape(len(questions), -1)
        return RetrievalOutput(idx, rank_scores(idx), details)

    def describe(self) -> dict[str, Any]:
        s = self.settings
        return {**super().describe(), "top_k_entities": s.top_k_entities, "oversample": s.oversample,
                "top_k_relationships": s.top_k_relationships, "max_context_tokens": s.max_context_tokens,
                "community_prop": s.community_prop, "text_unit_prop": s.text_unit_prop,
                "community_level": s.community_level, "answer": bool(s.answer and self.llm_available)}
