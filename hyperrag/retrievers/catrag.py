"""CatRAG: HippoRAG 2 made query-adaptive (context-aware traversal).

On top of :class:`HippoRAG2Retriever`, per query and inside the same batched PPR call:
  * symbolic anchoring — entities named in the query get a weak reset mass ``ε / #passages(e)``, below the
    fact seeds (LLM NER when an LLM is configured; lexical n-gram match against graph entities otherwise);
  * key-fact passage boost — the context arc from a seed entity to a passage holding one of its seed facts
    is weighted ``× (1 + β)``;
  * dynamic edge weighting — relation arcs leaving the top seed entities are re-weighted by an LLM's 0–10
    relevance score (see :mod:`hyperrag.retrievers.edge_scoring`); skipped without an LLM.
All of it is a per-query :class:`EdgeWeightDelta` plus extra reset mass: the graph is never rebuilt.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import torch
from typing_extensions import Unpack

from hyperrag.data.types import Dataset
from hyperrag.ops.ppr import EdgeWeightDelta, merge_edge_deltas
from hyperrag.retrievers.base import RetrieverArgs
from hyperrag.retrievers.edge_scoring import LLMEdgeScorer
from hyperrag.retrievers.hipporag2 import HippoRAG2Retriever, SeedBatch
from hyperrag.retrievers.settings import CatRAGSettings
from hyperrag.utils.stopwords import english_stopwords


class EntityMatcher:
    """Finds graph entities named in a text — the LLM-free stand-in for NER.

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
        self.matcher = EntityMatcher(self.graph.entity_names, self.settings.anchor_min_chars)
        self.fact_passage_ptr = self.graph.fact_passage_ptr.to(self.device)
        self.fact_passage_idx = self.graph.fact_passage_idx.to(self.device)
        self.context_weight = float(self.settings.edge_weights.get("context", 1.0))

    # ---- symbolic anchoring ------------------------------------------------------------------------------
    def anchors(self, questions: list[str]) -> list[list[int]]:
        assert self.matcher is not None
        return [self.matcher(q) for q in questions]

    def reset_vectors(self, seeds: SeedBatch) -> torch.Tensor:
        reset = super().reset_vectors(seeds)
        if not self.settings.anchoring:
            return reset
        seeds.anchors = self.anchors(seeds.questions)  # type: ignore[attr-defined]
        rows = torch.tensor([b for b, ents in enumerate(seeds.anchors) for _ in ents], dtype=torch.long)
        cols = torch.tensor([e for ents in seeds.anchors for e in ents], dtype=torch.long)
        if rows.numel():
            rows, cols = rows.to(self.device), cols.to(self.device)
            mass = self.settings.anchor_epsilon / self.entity_passage_count[cols].clamp_min(1.0)
            # subordinate to fact seeds: an entity already seeded by a fact keeps the larger of the two
            reset[rows, cols] = torch.maximum(reset[rows, cols], mass.to(reset.dtype))
        return reset

    # ---- per-query edge deltas ---------------------------------------------------------------------------
    def passage_boost_delta(self, seeds: SeedBatch) -> EdgeWeightDelta | None:
        """Arcs seed entity → passage holding that seed fact, stored weight (the context weight) ``× (1 + β)``."""
        b, k = seeds.fact_ids.shape
        facts = seeds.fact_ids[seeds.keep]  # [M]
        query = torch.arange(b, device=self.device).unsqueeze(1).expand(b, k)[seeds.keep]
        start, stop = self.fact_passage_ptr[facts], self.fact_passage_ptr[facts + 1]
        count = stop - start
        if int(count.sum()) == 0:
            return None
        rep = torch.repeat_interleave(torch.arange(facts.numel(), device=self.device), count)
        offset = torch.arange(rep.numel(), device=self.device) - (torch.cumsum(count, 0) - count)[rep]
        passage = self.fact_passage_idx[start[rep] + offset] + self.graph.num_entities
        ents = self.fact_entities[facts[rep]]  # [R, 2]
        q = query[rep].repeat_interleave(2)
        src = ents.reshape(-1)
        dst = passage.repeat_interleave(2)
        key = torch.unique(torch.stack([q, src, dst]), dim=1)  # an arc is boosted once per query
        assert self.ppr_graph is not None
        weight = self.ppr_graph.arc_weight(key[1], key[2]).float() * (1.0 + self.settings.boost_beta)
        return EdgeWeightDelta(key[0], key[1], key[2], weight)

    def edge_delta(self, seeds: SeedBatch) -> EdgeWeightDelta | None:
        """The query's key-fact boosts and LLM edge weights as one delta naming each arc once.

        Both are multipliers of the stored arc weight (boost ``× (1 + β)`` on context arcs, the LLM's score
        multiplier on the relation part of relation arcs), so an arc named by both gets the product of the
        two (:func:`~hyperrag.ops.ppr.merge_edge_deltas` with ``combine="multiply"``); a repeat inside one
        of them keeps its last weight.
        """
        parts = []
        if self.settings.passage_boost:
            parts.append(self.passage_boost_delta(seeds))
        if self.settings.edge_weighting and self.llm_available:
            failed_before = getattr(self.edge_scorer, "failed_calls", 0)  # a custom scorer may not count
            parts.append(self.edge_scorer(seeds, self))
            self.skip("edge_scoring", getattr(self.edge_scorer, "failed_calls", 0) - failed_before)
        elif self.settings.edge_weighting:
            self.skip("edge_scoring", len(seeds.questions))
        assert self.ppr_graph is not None
        return merge_edge_deltas(self.ppr_graph, parts, combine="multiply")

    def details(self, seeds: SeedBatch) -> list[dict[str, Any]]:
        rows = super().details(seeds)
        for row, ents in zip(rows, getattr(seeds, "anchors", [[]] * len(rows))):
            row["anchors"] = [self.graph.entity_names[e] for e in ents]
        return rows

    def describe(self) -> dict[str, Any]:
        s = self.settings
        return {**super().describe(), "anchoring": s.anchoring, "anchor_epsilon": s.anchor_epsilon,
                "passage_boost": s.passage_boost, "boost_beta": s.boost_beta,
                "edge_weighting": s.edge_weighting and self.llm_available,
                "edge_scoring_llm_calls": self.edge_scorer.calls}


__all__ = ["CatRAGRetriever", "EntityMatcher"]
