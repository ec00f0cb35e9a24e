"""LinearRAG retrieval (Zhuang et al., ICLR 2026, "LinearRAG: Linear Graph Retrieval Augmented Generation on
Large-scale Corpora"), step by step as the authors' ``src/LinearRAG.py`` does it, with no LLM anywhere in the index:

  index: spaCy NER of every passage -> the relation-free Tri-Graph (entities, the sentences naming them, their
  passages: :mod:`hyperrag.graph.trigraph`); entities, sentences and passages embedded; the PPR graph over entity
  and passage nodes (passage-entity edges weighted by mention counts, consecutive passages linked);

  retrieve, per question:
  1. its own NER entities (lower-cased), each matched to the nearest graph entity by embedding: the seeds, with
     their cosines (a question without an entity is ranked by dense passage retrieval alone);
  2. semantic bridging from the seeds through the sentences most similar to the question
     (:mod:`hyperrag.ops.semantic_bridging`, ``iterative`` or ``vectorized``);
  3. every passage's reset score ``passage_ratio × min-max(dense) + log(1 + Σ_activated score × log(1 + #mentions)
     / tier)`` (optionally the attribute-keyword boost), times ``passage_node_weight``;
  4. one batched PPR (damping 0.5) from the entity weights and passage scores; passages ranked by PPR mass.

The embedder is the run's (MiniLM here; the authors' all-mpnet-base-v2 is not installed), the NER the project's
one spaCy pipeline (``en_core_web_sm``; the authors' ``en_core_web_trf`` is not installable), by default only its
NER and sentence segmenter (``ner_components``).
docs/fidelity/linearrag.md maps each step to the authors' code.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import torch
from typing_extensions import Unpack

from hyperrag.data.types import Dataset
from hyperrag.graph.trigraph import (
    MentionStore,
    TriGraph,
    build_trigraph,
    mention_store_path,
    parse_mentions,
    question_entities,
    with_title_mentions,
)
from hyperrag.ops.ppr import PPRGraph, personalized_pagerank
from hyperrag.ops.semantic_bridging import BridgedEntities, MentionIndex, semantic_bridging
from hyperrag.retrievers.base import RetrievalOutput, Retriever, RetrieverArgs, topk_rows
from hyperrag.retrievers.seeds import min_max
from hyperrag.retrievers.settings import LinearRAGSettings

Seeds = list[tuple[int, float]]


class LinearRAGRetriever(Retriever):
    """Args:
        settings: :class:`~hyperrag.retrievers.settings.LinearRAGSettings` (bridging, passage scores, PPR).
        encoder: embedder for entities, sentences, passages and questions (every text cached on disk).
        llm: unused (LinearRAG needs no LLM to index or to retrieve).
        index_dir: retrieve over this index directory's passages (the NER records live in ``index_root``).
        device: ``auto`` / ``cpu`` / ``cuda``.
    """

    name = "linearrag"
    supports_index_dir = True
    uses_triples = False  # its own LLM-free index (spaCy NER): no OpenIE is run for it, under any extractor
    settings: LinearRAGSettings

    def __init__(self, settings: LinearRAGSettings, **kwargs: Unpack[RetrieverArgs]) -> None:
        super().__init__(settings, **kwargs)
        self.tri: TriGraph | None = None
        self.index_seconds: Counter[str] = Counter()  # wall seconds of the last index() per stage
        self.parsed = 0  # passages NER-parsed by the last index() (the others came from the store)

    @classmethod
    def own_extraction(cls) -> dict[str, Any]:
        from hyperrag.extraction.spacy_pipeline import MODEL_LABEL

        return {"source": "spacy", "model": MODEL_LABEL, "path": None, "style": "tri_graph (the method's own NER)"}

    # ---- indexing ----------------------------------------------------------------------------------------
    def index(self, dataset: Dataset) -> None:
        if self.index_dir:
            self.open_index_dir(dataset, load=False)
        texts = [p.content for p in dataset.corpus.passages]
        self.index_seconds = Counter()
        with self.timed("ner", self.index_seconds):
            titles = [p.title for p in dataset.corpus.passages] if self.settings.title_mentions else None
            self.tri = self.build_graph(texts, titles)  # NER of new passages only, then the mention matrices
        with self.timed("embed", self.index_seconds):
            self.entity_emb = self.embed(self.tri.entity_names, "entities")
            self.sentence_emb = self.embed(self.tri.sentences, "sentences")
            self.passage_emb = self.embed(texts, "passages")
        with self.timed("graph", self.index_seconds):
            self.mentions = MentionIndex.from_coo(self.tri.entity_sentence, self.device)
            edge_index, weight = self.tri.ppr_edges()
            self.ppr_graph = PPRGraph.from_edges(edge_index, self.tri.num_nodes, weight, directed=False,
                                                 device=self.device)
            self.passage_nodes = torch.arange(self.tri.num_entities, self.tri.num_nodes, device=self.device)
        self.passage_lower = [t.lower() for t in texts]
        self.entity_lower = [n.lower() for n in self.tri.entity_names]
        self.occurrence_cache: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
        self.keyword_hits: torch.Tensor | None = None

    def build_graph(self, texts: list[str], titles: list[str] | None = None) -> TriGraph:
        """The Tri-Graph of ``texts``; NER runs only for passages the store has not seen (an insert parses only
        the new passages; a deleted passage's records are simply not read). ``titles`` (``title_mentions``, a
        departure from the authors): each passage's title added as a mention of it."""
        s = self.settings
        excluded = frozenset(s.excluded_labels)
        line_breaks = s.line_break_sentences and s.ner_components == "ner"  # the parser's sentences stay as cut
        store = MentionStore(mention_store_path(s.index_root or ".", excluded, s.ner_components, line_breaks))
        missing = store.missing(texts)
        if missing:
            store.add(missing, parse_mentions(missing, excluded, s.ner_batch_size, progress=len(missing) > 500,
                                              components=s.ner_components, line_breaks=line_breaks))
        self.parsed = len(missing)
        mentions = store.get(texts)
        if titles is not None:
            mentions = with_title_mentions(mentions, titles)
        return build_trigraph(texts, mentions, s.adjacent_passage_edges)

    def embed(self, texts: list[str], desc: str) -> torch.Tensor:
        """Unit embeddings [n, d] on the device (an empty list gives [0, d])."""
        assert self.encoder is not None, "LinearRAG needs an embedder"
        if not texts:
            return torch.zeros(0, self.encoder.dim, device=self.device)
        return self.encoder.encode(texts, desc=desc).to(self.device)

    # ---- retrieval steps ---------------------------------------------------------------------------------
    def seed_entities(self, questions: list[str]) -> list[Seeds]:
        """Step 1: each question's NER entities, each matched to its nearest graph entity by cosine."""
        names = question_entities(questions, frozenset(self.settings.excluded_labels), self.settings.ner_components)
        flat = [n for row in names for n in row]
        if not flat or self.entity_emb.shape[0] == 0:
            return [[] for _ in questions]
        sim = self.embed(flat, "question entities") @ self.entity_emb.T  # [Σ entities, E]
        best, ent = sim.max(dim=1)
        pairs = list(zip(ent.tolist(), best.tolist()))
        out, start = [], 0
        for row in names:
            out.append(pairs[start:start + len(row)])
            start += len(row)
        return out

    def bridge(self, seeds: Seeds, sentence_sim: torch.Tensor) -> BridgedEntities:
        """Step 2: semantic bridging from ``seeds`` through sentences ([S] cosines to the question)."""
        s = self.settings
        return semantic_bridging(s.bridging, self.mentions, sentence_sim, seeds, s.max_iterations,
                                 s.iteration_threshold, s.top_k_sentence)

    def occurrences(self, entity: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Passages [k] whose lower-cased text contains the entity's lower-cased name, and how often [k]."""
        if entity not in self.occurrence_cache:
            name = self.entity_lower[entity]
            counts = [t.count(name) for t in self.passage_lower]
            idx = [p for p, c in enumerate(counts) if c]
            self.occurrence_cache[entity] = (torch.tensor(idx, dtype=torch.long, device=self.device),
                                             torch.tensor([counts[p] for p in idx], dtype=torch.float64,
                                                          device=self.device))
        return self.occurrence_cache[entity]

    def passage_weights(self, questions: list[str], dense: torch.Tensor,
                        bridged: list[BridgedEntities]) -> torch.Tensor:
        """Step 3: passage reset weights [B, P]: ``passage_node_weight × (passage_ratio × min-max(dense) +
        log(1 + entity bonus))``, plus the attribute boost when ``attribute_fallback`` is on."""
        s = self.settings
        bonus = torch.zeros(dense.shape, dtype=torch.float64, device=self.device)
        for b, br in enumerate(bridged):
            for e, (score, tier) in br.activated.items():
                idx, count = self.occurrences(e)
                if idx.numel():
                    bonus[b].index_add_(0, idx, score * torch.log1p(count) / max(tier, 1))
        score = s.passage_ratio * min_max(dense).double() + torch.log1p(bonus.clamp_min(0.0))
        if s.attribute_fallback:
            score = score + self.attribute_boost(questions)
        return score * s.passage_node_weight

    def attribute_boost(self, questions: list[str]) -> torch.Tensor:
        """The authors' attribute-keyword fallback [B, P]: for a question with a keyword token,
        ``attribute_keyword_boost × log(1 + #keywords in both question and passage)`` (substring tests)."""
        s = self.settings
        keywords = [k.lower() for k in s.attribute_query_keywords]
        if self.keyword_hits is None:  # [K, P] keyword in passage
            self.keyword_hits = torch.tensor([[k in t for t in self.passage_lower] for k in keywords],
                                             dtype=torch.float64, device=self.device).reshape(len(keywords), -1)
        rows = []
        for q in questions:
            low = q.lower()
            asks = bool(set(re.findall(r"\w+", low)) & set(keywords))
            in_q = torch.tensor([asks and k in low for k in keywords], dtype=torch.float64, device=self.device)
            rows.append(s.attribute_keyword_boost * torch.log1p(in_q @ self.keyword_hits))
        return torch.stack(rows)

    def propagate(self, bridged: list[BridgedEntities], passage_weight: torch.Tensor,
                  fallback: torch.Tensor) -> torch.Tensor:
        """Step 4: PPR from entity weights and passage weights; the passages' mass [B, P]. A ``fallback`` row
        (no seed) gets a uniform reset (its ranking is dense retrieval's)."""
        entity = torch.stack([br.weight for br in bridged]) if bridged else passage_weight[:, :0]
        reset = torch.cat([entity.to(passage_weight), passage_weight], dim=1).float()
        reset = torch.nan_to_num(reset, nan=0.0).clamp_min(0.0)  # the authors zero NaN and negative entries
        fallback = fallback | (reset.sum(dim=1) <= 0)
        reset[fallback] = 1.0
        return personalized_pagerank(self.ppr_graph, reset, damping=self.settings.damping, tol=self.settings.tol,
                                     max_iter=self.settings.max_iter, nodes=self.passage_nodes)

    def retrieve(self, questions: list[str], top_k: int) -> RetrievalOutput:
        assert self.tri is not None, "call index() first"
        q = self.embed(questions, "queries")
        with self.timed("seed"):
            seeds = self.seed_entities(questions)                                    # 1. question NER -> seeds
        no_seed = torch.tensor([not s for s in seeds], dtype=torch.bool, device=self.device)
        with self.timed("bridging"):
            sentence_sim = q @ self.sentence_emb.T                                   # [B, S]
            bridged = [self.bridge(s, sim) for s, sim in zip(seeds, sentence_sim)]   # 2. semantic bridging
        dense = q @ self.passage_emb.T                                               # [B, P]
        passage_weight = self.passage_weights(questions, dense, bridged)            # 3. passage reset scores
        with self.timed("ppr"):
            ppr = self.propagate(bridged, passage_weight, no_seed)                   # 4. PPR over the Tri-Graph
        scores = torch.where(no_seed.unsqueeze(1), dense.to(ppr.dtype), ppr)         # no entity: dense retrieval
        idx, val = topk_rows(scores, top_k)
        names = self.tri.entity_names
        details = [{"seed_entities": [names[e] for e, _ in s], "activated_entities": len(br.activated),
                    "dense_fallback": not s} for s, br in zip(seeds, bridged)]
        return RetrievalOutput(idx.cpu(), val.float().cpu(), details)

    def describe(self) -> dict[str, Any]:
        from dataclasses import asdict

        from hyperrag.extraction.spacy_pipeline import MODEL_LABEL

        info: dict[str, Any] = {"method": self.name, **asdict(self.settings), "ner_model": MODEL_LABEL,
                                "llm_tokens_at_index": 0}
        if self.tri is not None:
            info["graph"] = self.tri.stats
            info["index_stage_seconds"] = {k: round(v, 3) for k, v in self.index_seconds.items()}
            info["passages_parsed"] = self.parsed
        if self.index_dir:
            info["index_dir"] = str(Path(self.index_dir))
        return info
