"""LightRAG (Guo et al., 2024): dual-level retrieval over the knowledge graph's entity and relation vectors.

Per query, as LightRAG's ``kg_query`` does it:
  1. *keywords*: the LLM writes low-level keywords (entities, details) and high-level keywords (themes)
     (``lightrag_keywords`` task); without an LLM or after a failed call, YAKE's keywords of the question split by
     :func:`~hyperrag.seeding.query_keywords.dual_level_keywords` (counted as skipped ``keywords`` steps). With
     neither level, the question itself is the low-level keyword (LightRAG's fallback for short queries);
  2. *local* (low-level keywords only): the ``top_k`` entities nearest to the joined keywords' embedding; their
     relations (every fact of theirs) by edge rank — both ends' degrees — then weight (passages stating it);
  3. *global* (high-level keywords only): the ``top_k`` relations (facts) nearest to the joined keywords'
     embedding; their entities (both ends, in relation order);
  4. *modes*: ``local`` = step 2, ``global`` = step 3, ``hybrid`` = both, merged round-robin (local first),
     ``mix`` = hybrid plus ``chunk_top_k`` chunks by vector search, ``naive`` = that vector search alone (no
     keywords, no graph);
  5. *chunks*: each entity's text chunks, ordered by how many of the entity's one-hop neighbours a chunk also
     mentions (the one-hop expansion of LightRAG's paper code), and each relation's chunks, picked by LightRAG's
     linear-gradient weighted polling (``related_chunks`` for the first entity or relation down to 1 for the
     last); merged round-robin (vector, entity, relation chunks), duplicates dropped;
  6. *context*: entity rows within ``max_entity_tokens``, relation rows within ``max_relation_tokens``, chunks
     within what ``max_total_tokens`` leaves; with an LLM the ``grounded_answer`` task answers from it
     (``details["answer"]``).

The passage ranking is the merged chunks, then the rest of the corpus by dense similarity (reciprocal-rank
scores). Entities and relations are the shared knowledge graph's (names and OpenIE triples: no LLM-written
descriptions unless the OpenIE file has them), chunks are the corpus passages.
"""

from __future__ import annotations

from itertools import zip_longest
from typing import Any

import torch
from typing_extensions import Unpack

from hyperrag.data.types import Dataset
from hyperrag.dedup.entities import EntityInfo, read_entity_info
from hyperrag.generation.context import ContextItem, answer_from_context, take_within
from hyperrag.graph.incidence import GraphIncidence
from hyperrag.graph.knowledge_graph import KnowledgeGraph
from hyperrag.hierarchy.tokens import approx_tokens
from hyperrag.index.kg_index import KGIndex, load_or_build_kg_index
from hyperrag.retrievers.base import RetrievalOutput, Retriever, RetrieverArgs, complete_ranking, rank_scores
from hyperrag.retrievers.settings import LightRAGSettings
from hyperrag.seeding.query_keywords import dual_level_keywords


def weighted_polling(lists: list[list[int]], most: int, least: int = 1) -> list[int]:
    """LightRAG's linear-gradient chunk selection: the i-th of n ranked items (entities or relations) gets
    ``round(most − i/(n−1) · (most − least))`` of its chunks (its own order; chunks an earlier item took are not
    counted again); quota an item cannot use goes, one chunk at a time, to the items that still have chunks, in
    rank order. Returns the chunks item by item."""
    seen: set[int] = set()
    own = []
    for chunks in lists:  # a chunk belongs to the first item that has it
        own.append([c for c in chunks if c not in seen])
        seen.update(own[-1])
    n = len(own)
    quota = [round(most - (i / (n - 1) if n > 1 else 0) * (most - least)) for i in range(n)]
    taken = [min(q, len(c)) for q, c in zip(quota, own)]
    spare = sum(q - t for q, t in zip(quota, taken))
    while spare > 0 and any(t < len(c) for t, c in zip(taken, own)):
        for i, c in enumerate(own):
            if spare and taken[i] < len(c):
                taken[i] += 1
                spare -= 1
    return [x for t, c in zip(taken, own) for x in c[:t]]


def round_robin(*lists: list[int]) -> list[int]:
    """Items of ``lists`` interleaved (first of each, then second of each ...), first occurrence kept."""
    merged = [x for group in zip_longest(*lists) for x in group if x is not None]
    return list(dict.fromkeys(merged))


class LightRAGRetriever(Retriever):
    """Args:
        settings: :class:`~hyperrag.retrievers.settings.LightRAGSettings` (mode, keyword source, ``top_k``,
            ``chunk_top_k``, token budgets, answer).
        encoder: embeds queries and keywords (entity, fact and passage embeddings come from the KG index).
        llm: keyword extraction and the answer; ``None`` / ``llm=none``: YAKE keywords, no answer.
        index_dir: retrieve over a knowledge-graph index directory.
    """

    name = "lightrag"
    supports_index_dir = True
    settings: LightRAGSettings

    def __init__(self, settings: LightRAGSettings, **kwargs: Unpack[RetrieverArgs]) -> None:
        super().__init__(settings, **kwargs)
        self.name = f"lightrag-{settings.mode}"  # the mode names the run (and keys its resumable predictions)
        self.kg: KGIndex | None = None

    def index(self, dataset: Dataset) -> None:
        s = self.settings
        if self.index_dir:
            self.kg = self.open_index_dir(dataset)
            openie = None
        else:
            self.kg = load_or_build_kg_index(dataset, self.encoder, s.graph, s.index_root)
            openie = dataset.openie_path
        assert self.kg is not None
        emb = self.kg.embeddings
        self.entity_emb = emb.entity.to(self.device)
        self.fact_emb = emb.fact.to(self.device)
        self.passage_emb = emb.passage.to(self.device)
        self.incidence = GraphIncidence(self.graph)
        self.info: EntityInfo = read_entity_info(self.graph, openie)
        self.fact_weight = (self.graph.fact_passage_ptr[1:] - self.graph.fact_passage_ptr[:-1]).tolist()
        self.passage_texts = [p.content for p in dataset.corpus.passages]
        self.passage_ids = list(self.graph.passage_ids)

    @property
    def graph(self) -> KnowledgeGraph:
        assert self.kg is not None, "call index() first"
        return self.kg.graph

    # ---- keywords ------------------------------------------------------------------------------------------
    def keywords(self, questions: list[str]) -> list[dict[str, Any]]:
        """Per query ``{"low_level": [...], "high_level": [...], "source": "llm" | "yake" | "question"}``."""
        s = self.settings
        out: list[dict[str, Any] | None] = [None] * len(questions)
        if s.keywords == "llm" and self.llm_available:
            results = self.llm.complete_structured_batch("lightrag_keywords", [{"question": q} for q in questions])
            for b, res in enumerate(results):
                if res.ok:
                    out[b] = {**res.value, "source": "llm"}
        if s.keywords == "llm":
            self.skip("keywords", sum(x is None for x in out))
        for b, q in enumerate(questions):
            if out[b] is None:
                low, high = dual_level_keywords(q, s.yake)
                out[b] = {"low_level": low, "high_level": high, "source": "yake"}
        for b, q in enumerate(questions):
            kw = out[b]
            assert kw is not None
            if not kw["low_level"] and not kw["high_level"]:
                out[b] = {"low_level": [q], "high_level": [], "source": "question"}
        return out  # type: ignore[return-value]

    def embed_keywords(self, keyword_lists: list[list[str]]) -> torch.Tensor:
        """Embeddings [B, D] of each query's keywords joined by ", " (zero rows for empty lists)."""
        texts = [", ".join(k) for k in keyword_lists]
        emb = torch.zeros(len(texts), self.entity_emb.shape[1], device=self.device)
        filled = [i for i, t in enumerate(texts) if t]
        if filled:
            emb[filled] = self.encoder.encode([texts[i] for i in filled], desc="keywords").to(self.device)
        return emb

    # ---- the two levels ------------------------------------------------------------------------------------
    def local_level(self, key_emb: torch.Tensor) -> tuple[list[int], list[int]]:
        """Entities nearest to the low-level keywords [D]; their facts by (edge rank, weight), descending."""
        k = min(self.settings.top_k, self.graph.num_entities)
        entities = torch.topk(self.entity_emb @ key_emb, k).indices.tolist()
        ends, degree = self.graph.fact_entities, self.incidence.degree
        facts = list(dict.fromkeys(f for e in entities for f in self.incidence.facts(e).tolist()))
        facts.sort(key=lambda f: (-int(degree[ends[f, 0]] + degree[ends[f, 1]]), -self.fact_weight[f], f))
        return entities, facts

    def global_level(self, key_emb: torch.Tensor) -> tuple[list[int], list[int]]:
        """Facts nearest to the high-level keywords [D]; their entities in fact order."""
        k = min(self.settings.top_k, int(self.fact_emb.shape[0]))
        facts = torch.topk(self.fact_emb @ key_emb, k).indices.tolist()
        ends = self.graph.fact_entities
        entities = list(dict.fromkeys(int(e) for f in facts for e in ends[f].tolist()))
        return entities, facts

    def entity_chunks(self, entities: list[int]) -> list[int]:
        """Chunks of ``entities``, each entity's chunks ordered by how many of its one-hop neighbours they also
        mention, picked by :func:`weighted_polling` (``related_chunks`` for the first entity down to 1)."""
        if not entities:
            return []
        counts = self.incidence.neighbour_counts(torch.tensor(entities))
        lists = []
        for i, e in enumerate(entities):
            chunks = self.incidence.passages(e)
            lists.append(chunks[torch.argsort(-counts[i, chunks], stable=True)].tolist())
        return weighted_polling(lists, self.settings.related_chunks)

    def relation_chunks(self, facts: list[int]) -> list[int]:
        """Chunks stating ``facts``, picked by :func:`weighted_polling` in relation order."""
        lists = [self.incidence.fact_passages(f).tolist() for f in facts]
        return weighted_polling(lists, self.settings.related_chunks)

    # ---- retrieval -----------------------------------------------------------------------------------------
    def retrieve(self, questions: list[str], top_k: int) -> RetrievalOutput:
        s = self.settings
        q = self.encoder.encode(questions, desc="queries").to(self.device)
        dense = (q @ self.passage_emb.T).cpu()
        mode = s.mode
        keywords = self.keywords(questions) if mode != "naive" else [{} for _ in questions]
        uses_low, uses_high = mode in ("local", "hybrid", "mix"), mode in ("global", "hybrid", "mix")
        low_emb = self.embed_keywords([kw["low_level"] for kw in keywords]) if uses_low else None
        high_emb = self.embed_keywords([kw["high_level"] for kw in keywords]) if uses_high else None
        rankings, contexts, details = [], [], []
        for b in range(len(questions)):
            kw = keywords[b]
            local_e: list[int] = []
            local_f: list[int] = []
            global_e: list[int] = []
            global_f: list[int] = []
            if low_emb is not None and kw["low_level"]:
                local_e, local_f = self.local_level(low_emb[b])
            if high_emb is not None and kw["high_level"]:
                global_e, global_f = self.global_level(high_emb[b])
            vector = torch.topk(dense[b], min(s.chunk_top_k, dense.shape[1])).indices.tolist() \
                if mode in ("naive", "mix") else []
            entities, facts = round_robin(local_e, global_e), round_robin(local_f, global_f)
            ent_rows = [self.entity_row(e) for e in entities]
            ent_rows = ent_rows[: take_within([r.text for r in ent_rows], s.max_entity_tokens)]
            rel_rows = [ContextItem(f"relationship:{f}", f"Relationship: {' '.join(self.graph.facts[f])}")
                        for f in facts]
            rel_rows = rel_rows[: take_within([r.text for r in rel_rows], s.max_relation_tokens)]
            kept_e = [int(r.key.split(":")[1]) for r in ent_rows]
            kept_f = [int(r.key.split(":")[1]) for r in rel_rows]
            chunks = round_robin(vector, self.entity_chunks(kept_e), self.relation_chunks(kept_f))
            used = sum(approx_tokens(r.text) for r in ent_rows + rel_rows)
            chunk_rows = [ContextItem(f"passage:{self.passage_ids[p]}", f"Chunk: {self.passage_texts[p]}",
                                      self.passage_ids[p]) for p in chunks]
            chunk_rows = chunk_rows[: take_within([r.text for r in chunk_rows], max(0, s.max_total_tokens - used))]
            rankings.append(complete_ranking(chunks, dense[b], top_k))
            contexts.append(ent_rows + rel_rows + chunk_rows)
            details.append({"mode": mode, "keywords": kw,
                            "context_rows": {"entities": len(ent_rows), "relationships": len(rel_rows),
                                             "chunks": len(chunk_rows)},
                            "chunks": len(chunks),
                            "context_passages": [r.passage_id for r in chunk_rows]})
        if s.answer and self.llm_available:
            for d, ans in zip(details, answer_from_context(self.llm, questions, contexts)):
                d.update(ans)
        idx = torch.tensor(rankings, dtype=torch.long).reshape(len(questions), -1)
        return RetrievalOutput(idx, rank_scores(idx), details)

    def entity_row(self, e: int) -> ContextItem:
        desc = self.info.text(e)
        return ContextItem(f"entity:{e}", f"Entity: {self.graph.entity_names[e]}" + (f" — {desc}" if desc else ""))

    def describe(self) -> dict[str, Any]:
        s = self.settings
        info: dict[str, Any] = {"method": self.name, "mode": s.mode, "top_k": s.top_k,
                                "chunk_top_k": s.chunk_top_k, "keywords": s.keywords if self.llm_available
                                else "yake", "answer": bool(s.answer and self.llm_available),
                                "budgets": [s.max_entity_tokens, s.max_relation_tokens, s.max_total_tokens]}
        if self.kg is not None:
            info.update({"graph": self.graph.stats, "index_dir": str(self.kg.directory)})
        return info
