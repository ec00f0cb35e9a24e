"""HugRAG retrieval over a Leiden hierarchy (LLM-free form; the LLM stages plug in through hooks).

Index (cached): knowledge graph → recursive Leiden hierarchy H0..HL over its entity graph → module tree
(copies folded) → module texts (``module_texts`` hook: LLM summaries; default a non-LLM stand-in, the
module's best-connected entity names and a few of their facts) → module embeddings (encoder cache) →
typed expansion graph: structural (entity relation/synonym edges), hierarchical (entity – level-1 module –
parent module …) and gate edges (``gate_source`` hook: LLM-verified module pairs; none by default).

Query batch:
  1. hybrid scores ``s = α · cos + (1 − α) · lexical`` of every entity (H0) and every module (H>0) — two
     matrix products plus two sparse lexical products for the whole batch;
  2. MMR seeds: ``k0`` entities and ``kl`` modules per query;
  3. best-first expansion per query, gain ``s(q, v) · γ^t · w(type)``, until the gain threshold or the token
     budget;
  4. (``path_filter`` hook: the LLM's causal path selection keeps a subset of the reached nodes);
  5. passages behind the kept entities (entity → passage CSR) ranked by accumulated gain, ties by the dense
     query–passage score (passages no kept entity mentions follow in dense order).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import torch

from hyperrag.data.types import Dataset
from hyperrag.embedding.encoder import TextEncoder
from hyperrag.expansion.best_first import (
    EdgeKind,
    Expansion,
    TypedGraph,
    best_first_expand,
    kind_weight_vector,
)
from hyperrag.graph.knowledge_graph import KnowledgeGraph
from hyperrag.hierarchy.hierarchy import HierarchySettings
from hyperrag.hierarchy.modules import EntityListTexts, ModuleTextSource, ModuleTree
from hyperrag.hierarchy.store import HierarchyIndex, entity_graph, load_or_build_hierarchy
from hyperrag.hierarchy.tokens import count_tokens
from hyperrag.index.kg_index import GraphSettings, KGIndex, load_or_build_kg_index
from hyperrag.retrievers.base import RetrievalOutput, Retriever
from hyperrag.seeding.hybrid import HybridScorer
from hyperrag.seeding.mmr import mmr_select

log = logging.getLogger(__name__)

# (tree, graph) -> (module pairs LongTensor [2, G], weights FloatTensor [G]): causal gates between modules.
GateSource = Callable[[ModuleTree, KnowledgeGraph], tuple[torch.Tensor, torch.Tensor]]
# (question, subgraph: {"nodes", "gain", "hop", "via", "parent", "labels"}) -> kept node ids.
PathFilter = Callable[[str, dict[str, Any]], list[int]]


class HugRAGRetriever(Retriever):
    """Args:
        encoder: embedder for queries and module texts (entity/passage embeddings come from the KG index).
        alpha: weight of the cosine in the hybrid score (``1 − alpha`` on the lexical score).
        lexical: ``bm25`` (bm25s scores / per-query max) or ``overlap`` (token-set overlap coefficient).
        k0, kl: MMR seeds per query among entities (H0) and among modules (H>0).
        mmr_lambda: MMR trade-off λ (1 = pure relevance).
        mmr_pool: candidates per query the MMR chooses from.
        gamma: hop decay γ of the expansion gain.
        edge_weights: ``{gate, hierarchy, structural}`` multipliers w(type).
        min_gain: the expansion stops when the best frontier gain is below this.
        token_budget: the expansion stops before the taken nodes' texts exceed this many tokens.
        max_nodes: optional cap on nodes taken per query.
        passage_aggregate: how a passage accumulates its entities' gains, ``sum`` or ``max``.
        entity_specificity: ``log`` spreads an entity's gain to its passages divided by
            ``log(1 + #passages mentioning it)`` (hub entities such as "film" say little about any one
            passage; an IDF-like weight, cf. HippoRAG's node specificity); ``none`` gives each passage the
            full gain.
        hierarchy: :class:`HierarchySettings` fields (Leiden backend, resolution, seed, token budget, ...).
        module_text: :class:`EntityListTexts` fields (stand-in module texts).
        graph: KG index settings.
        index_root: where KG and hierarchy indexes live (default ``$HYPERRAG_CACHE/index``).
        device: ``auto`` / ``cpu`` / ``cuda`` for the batched scoring.
        module_texts: hook, module texts source (LLM summaries); None → the stand-in.
        gate_source: hook, causal gate edges between modules; None → no gate edges.
        path_filter: hook, per-query selection of the reached nodes; None → keep all.
        details_nodes: expanded nodes listed per query in the details.
        llm: the framework's LLM; not used yet (the LLM stages arrive as the hooks above), so every run is
            the LLM-free form whatever LLM is configured.
    """

    name = "hugrag"

    def __init__(self, *, encoder: TextEncoder, alpha: float = 0.7, lexical: str = "bm25", k0: int = 3,
                 kl: int = 3, mmr_lambda: float = 0.7, mmr_pool: int = 32, gamma: float = 0.8,
                 edge_weights: dict[str, float] | None = None, min_gain: float = 0.1, token_budget: int = 512,
                 max_nodes: int | None = None, passage_aggregate: str = "sum",
                 entity_specificity: str = "log",
                 hierarchy: dict[str, Any] | HierarchySettings | None = None,
                 module_text: dict[str, Any] | None = None, graph: dict[str, Any] | GraphSettings | None = None,
                 index_root: str | None = None, device: str = "auto", module_texts: ModuleTextSource | None = None,
                 gate_source: GateSource | None = None, path_filter: PathFilter | None = None,
                 details_nodes: int = 20, llm: Any = None) -> None:
        if passage_aggregate not in ("sum", "max"):
            raise ValueError(f"passage_aggregate must be 'sum' or 'max', got {passage_aggregate!r}")
        if entity_specificity not in ("log", "none"):
            raise ValueError(f"entity_specificity must be 'log' or 'none', got {entity_specificity!r}")
        self.entity_specificity = entity_specificity
        super().__init__(encoder=encoder, llm=llm, device=device)
        self.alpha, self.lexical = alpha, lexical
        self.k0, self.kl = k0, kl
        self.mmr_lambda, self.mmr_pool = mmr_lambda, mmr_pool
        self.gamma = gamma
        self.edge_weights = {k: float(v) for k, v in (edge_weights or {}).items()}
        self.kind_weight = kind_weight_vector(self.edge_weights)
        self.min_gain, self.token_budget, self.max_nodes = min_gain, token_budget, max_nodes
        self.passage_aggregate = passage_aggregate
        if isinstance(hierarchy, HierarchySettings):
            self.hierarchy_settings = hierarchy
        else:
            h = dict(hierarchy or {})
            if "edge_types" in h:
                h["edge_types"] = tuple(h["edge_types"])
            self.hierarchy_settings = HierarchySettings(**h)
        self.module_text_settings = dict(module_text or {})
        self.graph_settings = graph if isinstance(graph, GraphSettings) else GraphSettings(**(graph or {}))
        self.index_root = index_root
        self.module_texts_source = module_texts
        self.gate_source = gate_source
        self.path_filter = path_filter
        self.details_nodes = details_nodes
        self.kg: KGIndex | None = None
        self.hier: HierarchyIndex | None = None

    # ---- indexing ----------------------------------------------------------------------------------------
    def index(self, dataset: Dataset) -> None:
        self.kg = load_or_build_kg_index(dataset, self.encoder, self.graph_settings, self.index_root)
        graph = self.kg.graph
        self.hier = load_or_build_hierarchy(graph, self.hierarchy_settings, self.index_root, name=dataset.name)
        self.tree = ModuleTree.from_hierarchy(self.hier.hierarchy)
        source = self.module_texts_source or EntityListTexts(**self.module_text_settings)
        self.module_texts = source(self.tree, graph)
        num_e, num_m = graph.num_entities, self.tree.num_modules
        module_emb = self.encoder.encode(self.module_texts, desc="modules")
        emb = self.kg.embeddings
        self.entity_scorer = HybridScorer(emb.entity.to(self.device), graph.entity_names, self.alpha, self.lexical)
        self.module_scorer = HybridScorer(module_emb.to(self.device), self.module_texts, self.alpha, self.lexical)
        self.passage_emb = emb.passage.to(self.device)

        # typed expansion graph: entities 0..E-1, modules E..E+M-1
        struct_index, _ = entity_graph(graph, ("relation", "synonym"))
        has_parent = (self.tree.parent >= 0).nonzero().squeeze(1)
        hier_index = torch.cat([
            torch.stack([torch.arange(num_e), self.tree.leaf + num_e]),
            torch.stack([has_parent + num_e, self.tree.parent[has_parent] + num_e])], dim=1)
        parts = [(struct_index, EdgeKind.STRUCTURAL), (hier_index, EdgeKind.HIERARCHY)]
        self.num_gates = 0
        if self.gate_source is not None:
            gate_pairs, _ = self.gate_source(self.tree, graph)
            self.num_gates = int(gate_pairs.shape[1])
            parts.append((gate_pairs.long() + num_e, EdgeKind.GATE))
        edge_index = torch.cat([p for p, _ in parts], dim=1)
        kinds = torch.cat([torch.full((p.shape[1],), int(k), dtype=torch.int8) for p, k in parts])
        self.typed_graph = TypedGraph.from_edges(edge_index, kinds, num_e + num_m)
        module_tokens = torch.tensor(count_tokens(self.module_texts, self.hierarchy_settings.token_counter))
        self.node_tokens = torch.cat([self.hier.tokens, module_tokens]).numpy()

        # entity → passage incidence [P, E] for ranking, weighted by entity specificity
        counts = graph.entity_passage_count
        rows = graph.entity_passage_idx
        cols = torch.repeat_interleave(torch.arange(num_e), counts)
        weight = torch.ones(rows.shape[0])
        if self.entity_specificity == "log":
            weight = 1.0 / torch.log1p(counts[cols].float().clamp_min(1.0))
        self.passage_entity = torch.sparse_coo_tensor(torch.stack([rows, cols]), weight, (graph.num_passages, num_e),
                                                      check_invariants=True).coalesce().to(self.device)
        log.info("hugrag index: %d entities, %d modules, edges %s", num_e, num_m, self.typed_graph.count_by_kind())

    @property
    def graph(self) -> KnowledgeGraph:
        assert self.kg is not None, "call index() first"
        return self.kg.graph

    # ---- retrieval ---------------------------------------------------------------------------------------
    def score_nodes(self, questions: list[str], q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Hybrid scores of entities [B, E] and modules [B, M] for the batch."""
        return self.entity_scorer.scores(q, questions), self.module_scorer.scores(q, questions)

    def seed(self, s_ent: torch.Tensor, s_mod: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """MMR seeds: entity ids [B, k0] and module ids [B, kl] (module ids local to the tree)."""
        ent, _ = mmr_select(s_ent, self.entity_scorer.embeddings, self.k0, self.mmr_lambda, self.mmr_pool)
        mod, _ = mmr_select(s_mod, self.module_scorer.embeddings, self.kl, self.mmr_lambda, self.mmr_pool)
        return ent, mod

    def label(self, node: int) -> str:
        num_e = self.graph.num_entities
        if node < num_e:
            return self.graph.entity_names[node]
        m = node - num_e
        return f"M{m}(L{int(self.tree.level[m])}): {self.module_texts[m][:80]}"

    def retrieve(self, questions: list[str], top_k: int) -> RetrievalOutput:
        assert self.kg is not None, "call index() first"
        num_e = self.graph.num_entities
        q = self.encoder.encode(questions, desc="queries").to(self.device)
        s_ent, s_mod = self.score_nodes(questions, q)
        seed_ent, seed_mod = self.seed(s_ent, s_mod)
        node_score = torch.cat([s_ent, s_mod], dim=1).cpu().numpy()
        seeds = torch.cat([seed_ent, seed_mod + num_e], dim=1).tolist()
        gains = torch.zeros(len(questions), num_e)
        details = []
        for b, question in enumerate(questions):
            walk = best_first_expand(self.typed_graph, node_score[b], seeds[b], gamma=self.gamma,
                                     kind_weight=self.kind_weight, min_gain=self.min_gain,
                                     token_budget=self.token_budget, node_tokens=self.node_tokens,
                                     max_nodes=self.max_nodes)
            kept = walk.nodes
            if self.path_filter is not None:
                kept = self.path_filter(question, self.subgraph(walk))
            kept_set = set(kept) & set(walk.nodes)  # ids a filter returns must be ids it was shown
            for v, g in zip(walk.nodes, walk.gain):
                if v < num_e and v in kept_set:
                    gains[b, v] = g
            details.append(self.query_details(b, seeds[b], s_ent, s_mod, walk, len(kept_set)))
        passage_gain = self.aggregate(gains.to(self.device))
        dense = q @ self.passage_emb.T
        # order: by gain, ties (and unreached passages) by dense score — two stable sorts
        by_dense = torch.argsort(dense, dim=1, descending=True, stable=True)
        by_gain = torch.argsort(passage_gain.gather(1, by_dense), dim=1, descending=True, stable=True)
        order = by_dense.gather(1, by_gain)[:, :top_k]
        return RetrievalOutput(order.cpu(), passage_gain.gather(1, order).cpu(), details)

    def aggregate(self, gains: torch.Tensor) -> torch.Tensor:
        """Entity gains [B, E] → passage scores [B, P] (sum or max over the entities each passage mentions)."""
        if self.passage_aggregate == "sum":
            return torch.sparse.mm(self.passage_entity, gains.T).T
        idx = self.passage_entity.indices()  # [2, nnz] (passage, entity)
        out = torch.zeros(gains.shape[0], self.graph.num_passages, device=gains.device)
        src = gains[:, idx[1]] * self.passage_entity.values()
        return out.scatter_reduce(1, idx[0].unsqueeze(0).expand_as(src), src, reduce="amax", include_self=True)

    def subgraph(self, walk: Expansion) -> dict[str, Any]:
        """What a path filter sees: the reached nodes with gains, hops, edge kinds, parents and labels."""
        return {"nodes": walk.nodes, "gain": walk.gain, "hop": walk.hop, "via": walk.via, "parent": walk.parent,
                "labels": [self.label(v) for v in walk.nodes]}

    def query_details(self, b: int, seeds: list[int], s_ent: torch.Tensor, s_mod: torch.Tensor, walk: Expansion,
                      kept: int) -> dict[str, Any]:
        num_e = self.graph.num_entities
        ent_seeds = [[self.graph.entity_names[v], round(float(s_ent[b, v]), 4)] for v in seeds if v < num_e]
        mod_seeds = [[v - num_e, int(self.tree.level[v - num_e]), round(float(s_mod[b, v - num_e]), 4),
                      self.module_texts[v - num_e][:80]] for v in seeds if v >= num_e]
        kinds = {-1: "seed", **{int(k): k.name.lower() for k in EdgeKind}}
        expanded = [[self.label(v), round(g, 4), h, kinds[k]] for v, g, h, k in
                    zip(walk.nodes[: self.details_nodes], walk.gain, walk.hop, walk.via)]
        reached_e = sum(v < num_e for v in walk.nodes)
        return {"seed_entities": ent_seeds, "seed_modules": mod_seeds, "expanded": expanded,
                "reached_entities": reached_e, "reached_modules": len(walk.nodes) - reached_e, "kept": kept,
                "tokens": walk.tokens, "stop": walk.stop}

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "method": self.name, "alpha": self.alpha, "lexical": self.lexical, "k0": self.k0, "kl": self.kl,
            "mmr_lambda": self.mmr_lambda, "gamma": self.gamma, "edge_weights": kind_weight_vector(
                self.edge_weights).tolist(), "min_gain": self.min_gain, "token_budget": self.token_budget,
            "passage_aggregate": self.passage_aggregate, "entity_specificity": self.entity_specificity,
            "hierarchy_settings": asdict(self.hierarchy_settings),
            "module_texts": "hook" if self.module_texts_source else "entity-list stand-in",
            "gates": "hook" if self.gate_source else "none", "path_filter": "hook" if self.path_filter else "none"}
        if self.kg is not None and self.hier is not None:
            info["graph"] = self.graph.stats
            info["hierarchy"] = self.hier.hierarchy.summary()
            info["modules"] = self.tree.num_modules
            info["expansion_edges"] = self.typed_graph.count_by_kind()
            info["gates_found"] = self.num_gates
            info["index_dir"] = str(self.kg.directory)
            info["hierarchy_dir"] = str(self.hier.directory)
        return info
