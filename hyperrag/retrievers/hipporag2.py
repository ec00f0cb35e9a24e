"""HippoRAG 2 retrieval (Gutiérrez et al., "From RAG to Memory"), step by step as its released code does it.

  1. dense query-to-fact scores, min-max normalised over all facts; the top ``fact_top_k`` facts are the
     candidates;
  2. recognition memory: an LLM keeps the relevant candidates (at most ``fact_filter_max``); without an LLM
     every candidate is kept (the labelled LLM-free form); a query that keeps none — or whose filter call
     failed (``failed_filter: dense_fallback``, as the reference's ``rerank_facts``) — is ranked by dense
     passage retrieval alone;
  3. each kept fact gives its subject and object ``score / #passages whose triples name the entity`` (averaged
     over the facts that name it); the ``link_top_k`` entities with the largest such weight are the seeds
     (equal weights: ``seed_ties``);
  4. every passage node gets ``passage_node_weight ×`` its min-max normalised dense score;
  5. one batched PPR (damping 0.5) over the graph weighted as HippoRAG 2's code weights it
     (:mod:`hyperrag.graph.reference_weights`); passages are ranked by their PPR mass.

Passages with the same ``title\ntext`` are one node (``merge_duplicate_passages``), as the reference's
content-hash ids merge them; a merged passage is returned under its first corpus position.

docs/fidelity/hipporag2.md maps each step to the paper and to the ``hipporag`` package.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
from typing_extensions import Unpack

from hyperrag.data.openie import CHUNK_PREFIX
from hyperrag.data.types import Corpus, Dataset
from hyperrag.graph.knowledge_graph import EdgeType, KnowledgeGraph
from hyperrag.graph.reference_weights import PPRWeights, reference_edge_weights, stored_edge_weights
from hyperrag.index.kg_index import KGIndex, load_or_build_kg_index
from hyperrag.ops.ppr import EdgeWeightDelta, PPRGraph, personalized_pagerank
from hyperrag.reporting.run_info import python_hash_seed
from hyperrag.retrievers.base import RetrievalOutput, Retriever, RetrieverArgs, topk_rows
from hyperrag.retrievers.seeds import SeedBatch, min_max
from hyperrag.retrievers.settings import HippoRAG2Settings

log = logging.getLogger(__name__)
from hyperrag.utils.hashing import text_digest


def merged_passages(dataset: Dataset, work_dir: str | Path) -> tuple[Dataset, torch.Tensor] | None:
    """``dataset`` with every repeated ``title\ntext`` passage dropped (HippoRAG 2 ids a passage by the hash of
    that string, so a repeat is one node there), and the kept passages' corpus positions [P'] — or ``None`` when
    no passage repeats. A position-aligned OpenIE file is cut to the kept passages (written once under
    ``work_dir``); a file in HippoRAG 2's layout (``chunk-<md5>`` ids) is matched by id and read as it is."""
    first: dict[str, int] = {}
    for pos, p in enumerate(dataset.corpus.passages):
        first.setdefault(p.content, pos)
    if len(first) == len(dataset.corpus):
        return None
    keep = sorted(first.values())
    corpus = Corpus([dataset.corpus.passages[i] for i in keep], source=dataset.corpus.source)
    openie = dataset.openie_path
    if openie is not None:
        data = json.loads(Path(openie).read_text(encoding="utf-8"))
        docs = data.get("docs") if isinstance(data, dict) else data
        chunked = bool(docs) and str(docs[0].get("idx", "")).startswith(CHUNK_PREFIX)
        if not chunked:
            out = Path(work_dir) / "merged_openie" / f"{dataset.name}-{text_digest(str(openie) + str(keep))}.json"
            if not out.exists():
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(json.dumps({"docs": [{**docs[i], "idx": j} for j, i in enumerate(keep)]}),
                               encoding="utf-8")
            openie = out
    merged = replace(dataset, name=f"{dataset.name}-merged", corpus=corpus, openie_path=openie)
    return merged, torch.tensor(keep, dtype=torch.long)


class HippoRAG2Retriever(Retriever):
    """Args:
        settings: :class:`~hyperrag.retrievers.settings.HippoRAG2Settings` (damping, seed counts, passage node
            weight, edge-type weights, the KG index settings, PPR convergence, the fact filter).
        encoder: embedder for queries (index embeddings come from the cached KG index).
        llm: the LLM for the fact filter (HippoRAG 2's recognition memory; skipped without one).
        index_dir: retrieve over this built (and possibly updated) index directory instead of the index
            keyed on the dataset; its own graph settings apply, and it must have been embedded with
            ``encoder``. The dataset's corpus must be its passages in index order.
        device: ``auto`` / ``cpu`` / ``cuda``.
    """

    name = "hipporag2"
    supports_index_dir = True
    settings: HippoRAG2Settings

    def __init__(self, settings: HippoRAG2Settings, **kwargs: Unpack[RetrieverArgs]) -> None:
        super().__init__(settings, **kwargs)
        self.kg: KGIndex | None = None
        self.ppr_graph: PPRGraph | None = None
        self.passage_position: torch.Tensor | None = None  # [P'] corpus positions when repeats were merged
        self.dtype = torch.float64 if settings.ppr_dtype == "float64" else torch.float32

    # ---- indexing ----------------------------------------------------------------------------------------
    def index(self, dataset: Dataset) -> None:
        if self.settings.seed_ties == "reference" and python_hash_seed() == "random":
            log.warning("hipporag2: seed_ties=reference follows a Python set's order, which changes with "
                        "PYTHONHASHSEED; it is unset (random) in this run, so tied seeds may differ from run to "
                        "run — start Python with PYTHONHASHSEED=0 (run_info.json records it)")
        if self.index_dir:
            self.kg = self.open_index_dir(dataset)
        else:
            s = self.settings
            merged = merged_passages(dataset, s.index_root or ".") if s.merge_duplicate_passages else None
            self.passage_position = merged[1] if merged else None
            self.kg = load_or_build_kg_index(merged[0] if merged else dataset, self.encoder, s.graph, s.index_root)
        assert self.kg is not None
        graph = self.kg.graph
        emb = self.kg.embeddings
        self.ppr_weights = self.edge_weights(graph, emb.entity)
        w = self.ppr_weights
        self.ppr_graph = PPRGraph.from_edges(w.edge_index, graph.num_nodes, w.weight, directed=False,
                                             device=self.device, dtype=self.dtype)
        self.fact_emb = emb.fact.to(self.device)
        self.passage_emb = emb.passage.to(self.device)
        self.fact_entities = graph.fact_entities.to(self.device)
        self.entity_passage_count = graph.entity_passage_count.to(self.device).float()
        # the reference's vertex id of each entity (its entity nodes are the sorted unique names), for seed_ties
        order = sorted(range(graph.num_entities), key=graph.entity_names.__getitem__)
        self.reference_vertex = [0] * graph.num_entities
        for vid, e in enumerate(order):
            self.reference_vertex[e] = vid

    def edge_weights(self, graph: KnowledgeGraph, entity_emb: torch.Tensor,
                     multipliers: dict[EdgeType, float] | None = None, relation_keys: str = "both",
                     synonym_per: str = "key") -> PPRWeights:
        """The PPR graph's edges: HippoRAG 2's code's weighting (``graph_weights: reference``) or the stored
        one-edge-per-pair weights (``single``), each edge type times its ``edge_weights`` multiplier.

        Args:
            multipliers: per edge type, replaces ``edge_weights`` (``None``: the settings').
            relation_keys: with ``reference``, how a triple fills the ordered keys (``both``: HippoRAG 2;
                CatRAG's authors' code: ``subject_object``; :func:`reference_edge_weights`).
            synonym_per: with ``reference``, ``key`` (HippoRAG 2: the multiplier on each ordered synonym key) or
                ``pair`` (the pair's keys share it; :func:`reference_edge_weights`).
        """
        s = self.settings
        mult = multipliers or {EdgeType[k.upper()]: float(v) for k, v in s.edge_weights.items()}
        if s.graph_weights == "single":
            return stored_edge_weights(graph, mult)
        return reference_edge_weights(graph, entity_emb, threshold=s.graph.synonym_threshold,
                                      max_neighbours=s.synonym_max_neighbours,
                                      min_chars=s.graph.synonym_min_chars, multipliers=mult,
                                      relation_keys=relation_keys, synonym_per=synonym_per)

    @property
    def seed_rank(self) -> str:
        """What picks the ``link_top_k`` seed entities (the ``seed_rank`` setting): ``after_division``
        (HippoRAG 2's code: the weight ``score / #passages``) or ``before_division`` (the mean fact score)."""
        return self.settings.seed_rank

    @property
    def graph(self) -> KnowledgeGraph:
        assert self.kg is not None, "call index() first"
        return self.kg.graph

    # ---- seeding -----------------------------------------------------------------------------------------
    def seed_facts(self, questions: list[str], q: torch.Tensor
                   ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Top facts per query. Returns (fact ids [B, k], normalised scores [B, k], kept mask [B, k],
        filtered [B]: whether the LLM filter gave the query a verdict)."""
        fact_scores = min_max(q @ self.fact_emb.T)
        ids, scores = topk_rows(fact_scores, self.settings.fact_top_k)
        keep = torch.ones_like(scores, dtype=torch.bool)
        filtered = torch.zeros(len(questions), dtype=torch.bool)
        if self.settings.fact_filter and self.llm_available:
            keep, filtered = self.recognition_memory(questions, ids)
        elif self.settings.fact_filter:
            self.skip("fact_filter", len(questions))
        return ids, scores, keep, filtered

    def recognition_memory(self, questions: list[str], fact_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """LLM fact filter: kept mask [B, k] and filtered [B]. A query without a verdict (failed call) keeps no
        fact, so dense passage retrieval ranks it, as the reference's ``rerank_facts`` does (``failed_filter:
        dense_fallback``), or keeps all its facts (``keep_all``, this code's earlier form)."""
        from hyperrag.llm.recognition import filter_facts

        candidates = [[(f, self.graph.facts[f]) for f in row] for row in fact_ids.tolist()]
        verdicts = filter_facts(self.llm, questions, candidates, max_facts=self.settings.fact_filter_max,
                                asked=self.settings.fact_filter_asked)
        keep = torch.ones_like(fact_ids, dtype=torch.bool)
        for b, (row, kept) in enumerate(zip(fact_ids.tolist(), verdicts)):
            if kept is not None:
                keep[b] = torch.tensor([f in kept for f in row], dtype=torch.bool)
            elif self.settings.failed_filter == "dense_fallback":
                keep[b] = False
        self.skip("fact_filter", sum(v is None for v in verdicts))
        return keep, torch.tensor([v is not None for v in verdicts], dtype=torch.bool)

    def entity_reset(self, fact_ids: torch.Tensor, fact_scores: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """Entity seed weights [B, E] from the kept facts (HippoRAG 2's phrase weights): each kept fact gives
        its subject and object ``score / #passages(entity)``, averaged over the kept facts naming the entity
        (summed and divided in float64, as the reference's arrays); only the ``link_top_k`` entities with the
        largest weight stay seeds (:meth:`top_seeds`). Returned in the PPR's dtype (``ppr_dtype``)."""
        b = fact_ids.shape[0]
        num_e = self.graph.num_entities
        ents = self.fact_entities[fact_ids]  # [B, k, 2]
        score = fact_scores.unsqueeze(-1).expand_as(ents)  # [B, k, 2]
        count = self.entity_passage_count[ents].clamp_min(1.0)  # an entity in no passage: its score undivided
        kept = keep.unsqueeze(-1).expand_as(ents).reshape(b, -1).double()
        flat = ents.reshape(b, -1)
        part = (score / count).double().reshape(b, -1) * kept  # float32 division, float64 sums (reference)
        weight = torch.zeros(b, num_e, device=self.device, dtype=torch.float64).scatter_add_(1, flat, part)
        occurs = torch.zeros(b, num_e, device=self.device, dtype=torch.float64).scatter_add_(1, flat, kept)
        weight = weight / occurs.clamp_min(1.0)
        k = self.settings.link_top_k
        if k and k < num_e:
            # the link_top_k entities by their weight after the division (ties: ``seed_ties``);
            # ``seed_rank: before_division`` ranks them by the mean fact score instead
            rank = weight
            if self.seed_rank == "before_division":
                undivided = torch.zeros_like(weight).scatter_add_(1, flat, score.reshape(b, -1).double() * kept)
                rank = undivided / occurs.clamp_min(1.0)
            mask = torch.zeros_like(weight, dtype=torch.bool)
            for row, top in enumerate(self.top_seeds(ents, keep, rank, k)):
                mask[row, top] = True
            weight = weight * mask
        return weight.to(self.dtype)

    def top_seeds(self, ents: torch.Tensor, keep: torch.Tensor, weight: torch.Tensor, k: int) -> list[list[int]]:
        """The ``k`` seed entities per query among those its kept facts name (``ents`` [B, k_f, 2], ``keep``
        [B, k_f], ``weight`` [B, E] float64), by weight; equal weights (``seed_ties``): ``ordered`` — the entity
        named earlier (facts best first, subject before object) first; ``reference`` — HippoRAG 2's order: its
        phrases go through a Python ``set`` of ``(name, vertex id)`` pairs and a stable sort, so the order is
        that set's iteration order (fixed only under a fixed ``PYTHONHASHSEED``, as in the reference)."""
        names = self.graph.entity_names
        out = []
        for row_ents, row_keep, row_w in zip(ents.tolist(), keep.tolist(), weight.tolist()):
            named = [e for pair, kp in zip(row_ents, row_keep) if kp for e in pair]
            if self.settings.seed_ties == "reference":
                entity_of = {self.reference_vertex[e]: e for e in named}
                phrases = set()
                for e in named:
                    phrases.add((names[e], self.reference_vertex[e]))
                named = [entity_of[vid] for _, vid in phrases]
            first = list(dict.fromkeys(named))
            out.append(sorted(first, key=lambda e: row_w[e], reverse=True)[:k])
        return out

    def seed(self, questions: list[str]) -> SeedBatch:
        """Query embeddings, seed facts, entity and passage reset weights for a batch."""
        q = self.encoder.encode(questions, desc="queries").to(self.device)
        fact_ids, fact_scores, keep, filtered = self.seed_facts(questions, q)
        dense = q @ self.passage_emb.T
        return SeedBatch(questions, q, fact_ids, fact_scores, keep, self.entity_reset(fact_ids, fact_scores, keep),
                         dense, filtered)

    def reset_vectors(self, seeds: SeedBatch) -> torch.Tensor:
        """Reset [B, N]: entity seeds, then ``passage_node_weight ×`` normalised dense passage scores."""
        passage_weight = self.settings.passage_node_weight
        dense = (min_max(seeds.dense) * passage_weight).to(self.dtype)  # float32 scores, as the reference's
        return torch.cat([seeds.entity_weight.to(self.dtype), dense], dim=1)

    def edge_delta(self, seeds: SeedBatch) -> EdgeWeightDelta | None:
        """Per-query arc re-weighting inside the batched PPR (none in HippoRAG 2; CatRAG overrides)."""
        return None

    def details(self, seeds: SeedBatch) -> list[dict[str, Any]]:
        return [{"seed_facts": [list(self.graph.facts[int(f)]) for f, k in zip(ids, kp) if k]}
                for ids, kp in zip(seeds.fact_ids.tolist(), seeds.keep.tolist())]

    # ---- retrieval ---------------------------------------------------------------------------------------
    def propagate(self, seeds: SeedBatch, nodes: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Returns (PPR [B, N] over all nodes, or [B, M] over ``nodes`` [M], reset [B, N])."""
        reset = self.reset_vectors(seeds)
        assert self.ppr_graph is not None
        s = self.settings
        ppr = personalized_pagerank(self.ppr_graph, reset, damping=s.damping, tol=s.tol, max_iter=s.max_iter,
                                    edge_delta=self.edge_delta(seeds), nodes=nodes)
        return ppr, reset

    @property
    def passage_nodes(self) -> torch.Tensor:
        """Node ids [P] of the passages (they follow the entities)."""
        graph = self.graph
        return torch.arange(graph.num_entities, graph.num_nodes, device=self.device)

    def passage_scores(self, seeds: SeedBatch, passage_ppr: torch.Tensor, reset: torch.Tensor) -> torch.Tensor:
        """Passage ranking scores [B, P] from the passages' PPR mass ``passage_ppr`` [B, P]; a query that kept
        no fact (the filter dropped every candidate) is ranked by its dense passage scores, as HippoRAG 2
        does."""
        fallback = ~seeds.kept_any.to(passage_ppr.device)
        if fallback.any():
            return torch.where(fallback.unsqueeze(1), seeds.dense.to(passage_ppr.dtype), passage_ppr)
        return passage_ppr

    def retrieve(self, questions: list[str], top_k: int) -> RetrievalOutput:
        with self.timed("seed"):  # fact retrieval and the recognition filter (per-stage latency, CatRAG Table 6)
            seeds = self.seed(questions)
        with self.timed("ppr"):  # reset vectors, per-query edge deltas (CatRAG: anchors, edge weighting), PPR
            ppr, reset = self.propagate(seeds, nodes=self.passage_nodes)  # only passages are ranked
        idx, val = topk_rows(self.passage_scores(seeds, ppr, reset), top_k)
        if self.passage_position is not None:  # merged repeats: back to corpus positions
            idx = self.passage_position.to(idx.device)[idx]
        return RetrievalOutput(idx.cpu(), val.float().cpu(), self.details(seeds))

    def describe(self) -> dict[str, Any]:
        s = self.settings
        info: dict[str, Any] = {"method": self.name, "damping": s.damping, "fact_top_k": s.fact_top_k,
                                "fact_filter": bool(s.fact_filter and self.llm_available),
                                "fact_filter_max": s.fact_filter_max, "fact_filter_asked": s.fact_filter_asked,
                                "link_top_k": s.link_top_k, "seed_ties": s.seed_ties, "seed_rank": s.seed_rank,
                                "python_hash_seed": python_hash_seed(),
                                "failed_filter": s.failed_filter, "ppr_dtype": s.ppr_dtype,
                                "merge_duplicate_passages": s.merge_duplicate_passages,
                                "passage_node_weight": s.passage_node_weight, "graph_weights": s.graph_weights,
                                "edge_weights": s.edge_weights}
        if self.kg is not None:
            info["graph"] = self.graph.stats
            info["index_dir"] = str(self.kg.directory)
        return info
