"""HugRAG retrieval over a Leiden hierarchy with module summaries, causal gates and a causal path filter.

Index (every stage cached, the LLM stages resumable; ``docs/fidelity/hugrag.md`` maps each to the paper):
  0. ``extraction: graphrag`` with an LLM, any dataset: GraphRAG-style OpenIE (Fig 8: typed entities with
     descriptions, relations with descriptions and strength); a passage the LLM cannot extract keeps the dataset's
     OpenIE record (counted); relationship strength weights the relation edges; otherwise the dataset's OpenIE file;
  1. knowledge graph → two-stage entity deduplication (:mod:`hyperrag.dedup`: rapidfuzz, then embeddings;
     audit file ``merges.jsonl`` in its index directory) = H0;
  2. recursive Leiden hierarchy H1..HL over the entity graph, splitting a module until its summary input fits
     the summariser's context window (``hierarchy.context_window``, by default the summary prompt's input budget
     ``summaries.input_tokens``) → module tree (copies folded);
  3. module texts: LLM summaries bottom-up (:mod:`hyperrag.hierarchy.summaries`) or, with ``llm=none``, the
     documented stand-in (top entity names + descriptions/facts); the ``module_texts`` hook overrides both;
  4. causal gates (:mod:`hyperrag.hierarchy.gates`: Algorithm 2 over topologically distant module pairs, verdicts in
     either direction, the cosine prefilter an option; the ``gate_source`` hook overrides) → typed expansion graph:
     structural (entity relation/synonym edges), hierarchical (entity – level-1 module – parent module …) and gates.

Query batch — ``retrieve()`` follows Algorithm 1's online phase, one named step per line:
  12. U: hybrid scores ``s = α · cos + (1 − α) · Lex`` (Eq. 5; Lex = the normalised token overlap with an entity's
      title and description, or a module's summary) of every entity (H0) and module (H>0) — matrix products for
      the whole batch — and MMR seeds per level: ``k0`` entities and ``kl`` modules of every module level
      (:meth:`HugRAGRetriever.seed`);
  13. S_raw: best-first expansion per query within the hop limit ``max_hops`` (h), gain ``s(q, v) · γ^t ·
      w(type)``, until the gain threshold or the token budget (a node's text is cut to ``node_tokens``; a node that
      does not fit is skipped); the gate edges each walk crossed are counted (:meth:`gated_traversal`);
  14. S*: S_raw linearised with short IDs for nodes and relation edges (B.3), each row carrying its provenance
      (passages); causal path identification (Fig 5 spurious-aware by default, Fig 6 ``standard``, ``off`` = no
      filter) returns the causal items, the spurious items and a draft answer, every ID validated; S* = the kept
      rows and the passages behind them (``path_filter`` hook: any callable choosing the kept nodes)
      (:meth:`causal_filter`);
  15. y: the answer from S* only (Fig 7, ``subgraph_answer``, in the run's ``answer_style``) —
      ``details["answer"]`` (+ ``short_answer``), with the evidence it read in ``details["evidence"]``
      (:meth:`generate`);
  then the passage ranking: S*'s passages first (:meth:`rank_by_selection`); the rest, and every query without an
  LLM selection, in the **LLM-free fallback** order (not in the paper; :meth:`llm_free_ranking`): passages by
  ``(1 − dense_mix) · gain / max + dense_mix · cos(q, p)`` of S_raw's entities' gains. A failed or empty
  selection is a failure: no passage (index -1), no answer, counted (``skip("path_selection")``), scored 0.

Index directories (``retrieve.py method=hugrag index_dir=DIR``, ``python -m hyperrag.index refresh --index DIR``):
the knowledge graph is the one ``python -m hyperrag.index build|insert|delete`` maintains in DIR (no extraction
step; the dataset must be its passages in index order). The derived stages live in ``DIR/derived/`` (dedup,
hierarchy with its ``summaries.jsonl`` / ``gates.jsonl``, and a state record): the dedup is keyed on the index's
manifest key, and after an insert or delete the hierarchy is updated locally
(:func:`hyperrag.hierarchy.incremental.follow_index`: untouched Leiden modules kept, checkpoints carried over,
so only changed modules' summaries and gates go to the LLM). An index directory holds no entity types or
descriptions (its OpenIE is HippoRAG-style triples), so entity info is empty (``read_entity_info(graph, None)``):
entity texts are names + facts, ``dedup: auto`` leaves the graph as it is, ``use_types`` has nothing to compare.
``describe()["hierarchy_status"]`` says ``loaded`` / ``updated`` / ``built`` with modules kept / recomputed.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import torch
from typing_extensions import Unpack

from hyperrag.data.types import Dataset
from hyperrag.dedup.entities import EntityInfo, read_entity_info, relation_strengths, strength_weighted
from hyperrag.dedup.store import DedupIndex, load_or_build_dedup
from hyperrag.embedding.encoder import default_cache_dir
from hyperrag.eval.gate_recall import gold_hop_pairs, gold_passage_entities_of, hop_entities_of
from hyperrag.expansion.best_first import (
    EdgeKind,
    Expansion,
    TypedGraph,
    best_first_expand,
    kind_weight_vector,
)
from hyperrag.expansion.linearize import Table, linearize
from hyperrag.expansion.path_selection import CausalPathSelector, Selection, llm_free_selection
from hyperrag.graph.knowledge_graph import KnowledgeGraph
from hyperrag.graph.utils import csr_owner
from hyperrag.hierarchy.gates import GateBuilder
from hyperrag.hierarchy.modules import EntityListTexts, ModuleTextSource, ModuleTree
from hyperrag.hierarchy.store import HierarchyIndex, entity_graph, load_or_build_hierarchy
from hyperrag.hierarchy.summaries import ModuleSummaries
from hyperrag.hierarchy.tokens import count_tokens
from hyperrag.index.kg_index import KGIndex, load_or_build_kg_index
from hyperrag.retrievers.base import RetrievalOutput, Retriever, RetrieverArgs
from hyperrag.retrievers.settings import HugRAGSettings
from hyperrag.seeding.hybrid import HybridScorer
from hyperrag.seeding.mmr import mmr_select

log = logging.getLogger(__name__)

# (tree, graph) -> (module pairs LongTensor [2, G], weights FloatTensor [G]): causal gates between modules.
GateSource = Callable[[ModuleTree, KnowledgeGraph], tuple[torch.Tensor, torch.Tensor]]
# (question, subgraph: {"nodes", "gain", "hop", "via", "parent", "labels"}) -> kept node ids.
PathFilter = Callable[[str, dict[str, Any]], list[int]]


@dataclass
class Filtered:
    """One query's S* (Algorithm 1 line 14).

    Attributes:
        nodes: S_raw's nodes the filter kept (all of them without a filter; the hook's choice with one).
        walk_table: S_raw linearised whole (B.3), when the LLM selected (the run's record reads what the cap cut).
        table: its rows the LLM was shown (the first ``path_selection.max_rows``).
        selection: the LLM's causal / spurious rows and draft answer (``None``: no LLM selection).
        passages / passage_scores: passage positions behind the kept rows, best first, and their scores.
    """

    nodes: list[int]
    walk_table: Table | None = None
    table: Table | None = None
    selection: Selection | None = None
    passages: list[int] = field(default_factory=list)
    passage_scores: list[float] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.selection is not None and self.selection.ok


class HugRAGRetriever(Retriever):
    """Args:
        settings: :class:`~hyperrag.retrievers.settings.HugRAGSettings` — hybrid scoring (``alpha``,
            ``lexical``, ``lexical_text``), MMR seeds (``seeding``, ``k0``, ``kl``, ``mmr_lambda``, ``mmr_pool``),
            the expansion (``max_hops``, ``gamma``, ``edge_weights``, ``min_gain``, ``token_budget``,
            ``max_nodes``), the answer (``answer_style``), the fallback passage ranking (``dense_mix``,
            ``passage_aggregate``, ``entity_specificity``: ``log`` spreads an entity's gain to its passages
            divided by ``log(1 + #passages mentioning it)`` — hub entities such as "film" say little about any
            one passage, an IDF-like weight, cf. HippoRAG's node specificity), the stages (``extraction``,
            ``dedup`` — ``enabled: auto`` deduplicates entity graphs the LLM extracted and leaves an imported
            OpenIE file's graph as it is, measured on MuSiQue's GPT-3.5 OpenIE: merging costs full-chain
            recall while synonym edges already join its near-duplicate names —, ``hierarchy``,
            ``module_text``, ``summaries``, ``gates``, ``path_selection``), the KG index (``graph``,
            ``index_root``).
        encoder: embedder for queries and module texts (entity/passage embeddings come from the KG index).
        llm: the framework's LLM; ``None`` / ``llm=none`` runs the LLM-free form (stand-in module texts, no
            gates, no filter, no answer).
        device: ``auto`` / ``cpu`` / ``cuda`` for the batched scoring.
        index_dir: retrieve over this knowledge-graph index directory (built and updated with ``python -m
            hyperrag.index``); the dataset must be its passages in index order (``retrieve.py index_dir=DIR``
            does that); derived stages go to ``<index_dir>/derived`` and follow its inserts / deletes locally
            (see the module docstring). ``index_root`` and ``graph`` are not used then.
        module_texts: hook, module texts source (LLM summaries); None → summaries / the stand-in.
        gate_source: hook, causal gate edges between modules; None → Algorithm 2 (with an LLM).
        path_filter: hook, per-query selection of the reached nodes; None → the LLM path selection.
    """

    name = "hugrag"
    supports_index_dir = True
    settings: HugRAGSettings

    def __init__(self, settings: HugRAGSettings, *, module_texts: ModuleTextSource | None = None,
                 gate_source: GateSource | None = None, path_filter: PathFilter | None = None,
                 **kwargs: Unpack[RetrieverArgs]) -> None:
        super().__init__(settings, **kwargs)
        self.kind_weight = kind_weight_vector(settings.edge_weights)
        self.module_texts_source = module_texts
        self.gate_source = gate_source
        self.path_filter = path_filter
        self.dedup_settings = settings.dedup  # ``enabled: auto`` resolved per graph in :meth:`deduplicate`
        p = settings.path_selection
        self.selector = (CausalPathSelector(self.llm, p, prompts=settings.prompts)
                         if p.enabled and self.llm_available else None)
        self.kg: KGIndex | None = None
        self.dedup: DedupIndex | None = None
        self.hier: HierarchyIndex | None = None
        self.gate_stats: dict[str, Any] = {}
        self.query_stats: dict[str, int] = {"queries": 0, "gate_crossings": 0}
        self.extraction_stats: dict[str, Any] = {}
        self.summary_stats: dict[str, Any] = {}
        self.hierarchy_status: dict[str, Any] = {}

    # ---- indexing ----------------------------------------------------------------------------------------
    def index(self, dataset: Dataset) -> None:
        s = self.settings
        if self.index_dir:
            self.index_from_directory(dataset)
        else:
            if s.extraction == "graphrag":
                self.extract(dataset)
            self.kg = load_or_build_kg_index(dataset, self.encoder, s.graph, s.index_root)
            strengths = relation_strengths(self.kg.graph, dataset.openie_path)
            if strengths:  # GraphRAG relationship strengths weight the relation edges (Leiden's weights)
                self.kg = replace(self.kg, graph=strength_weighted(self.kg.graph, strengths))
            self.extraction_stats["weighted_relations"] = len(strengths)
            self.dedup = self.deduplicate(read_entity_info(self.kg.graph, dataset.openie_path), s.index_root,
                                          dataset.name, self.kg.directory.name)
            self.info: EntityInfo = self.dedup.info
            self.hier = load_or_build_hierarchy(self.dedup.graph, s.hierarchy, s.index_root,
                                                name=dataset.name, info=self.info)
            tree = ModuleTree.from_hierarchy(self.hier.hierarchy)
            self.hierarchy_status = {"hierarchy": "built" if self.hier.built else "loaded",
                                     "modules_kept": 0 if self.hier.built else tree.num_modules,
                                     "modules_recomputed": tree.num_modules if self.hier.built else 0}
        self.finish_index(dataset)

    def extract(self, dataset: Dataset) -> None:
        """GraphRAG-style extraction (Fig 8: typed entities with descriptions, relations with descriptions and
        strength) of every passage, for any dataset, resumable (:func:`hyperrag.llm.openie.index_corpus`). A
        passage the LLM could not extract (no LLM, a failed call, the oracle's ``no_gold``) keeps the dataset's own
        OpenIE record, and is counted (``skip("openie_graphrag")``)."""
        n = len(dataset.corpus)
        if not self.llm_available:
            self.skip("openie_graphrag", n)
            self.extraction_stats = {"style": "file (no LLM)", "passages": n, "fallback": n}
            return
        from hyperrag.llm.openie import graphrag_openie

        s = self.settings
        root = Path(s.index_root) if s.index_root else default_cache_dir() / "index"
        path, report = graphrag_openie(dataset, self.llm, root.parent / "openie")
        log.info("hugrag: GraphRAG-style extraction %s (%d failed)", path, len(report.failed))
        self.skip("openie_graphrag", len(report.failed))
        self.extraction_stats = {"style": "graphrag", "passages": n, "fallback": len(report.failed),
                                 "path": str(path)}

    def deduplicate(self, info: EntityInfo, root: str | Path | None, name: str, graph_key: str) -> DedupIndex:
        """H0: the KG index deduplicated (``dedup.enabled: auto`` → only LLM-extracted, described entity graphs)."""
        assert self.kg is not None
        # auto: deduplicate LLM-extracted (GraphRAG) entity graphs; an imported OpenIE file is used as it is
        wanted = self.settings.dedup.enabled
        enabled = info.source == "graphrag" if wanted == "auto" else bool(wanted)
        self.dedup_settings = replace(self.settings.dedup, enabled=enabled)
        return load_or_build_dedup(self.kg.graph, self.kg.embeddings, info, self.dedup_settings, root, name=name,
                                   graph_key=graph_key)

    def index_from_directory(self, dataset: Dataset) -> None:
        """KG from ``index_dir``; dedup keyed on its manifest key; hierarchy loaded, updated locally or built."""
        from hyperrag.hierarchy.incremental import follow_index

        assert self.index_dir is not None
        self.kg = self.open_index_dir(dataset)
        assert self.kg is not None
        derived = Path(self.index_dir) / "derived"
        # no types / descriptions in an index directory (HippoRAG-style OpenIE triples): empty entity info
        self.dedup = self.deduplicate(read_entity_info(self.kg.graph, None), derived, "hugrag", self.kg.key)
        self.info = self.dedup.info
        self.hier, self.hierarchy_status = follow_index(
            self.dedup.graph, self.kg.key, self.settings.hierarchy, derived, name="hugrag", info=self.info,
            dedup_dir=self.dedup.directory, state_extra={"dedup": asdict(self.dedup_settings)})
        log.info("hugrag over %s: %s", self.index_dir, self.hierarchy_status)

    def finish_index(self, dataset: Dataset) -> None:
        """Module texts, gates, scorers and the expansion graph over the deduplicated graph and its hierarchy."""
        assert self.kg is not None and self.dedup is not None and self.hier is not None
        graph = self.dedup.graph
        self.tree = ModuleTree.from_hierarchy(self.hier.hierarchy)
        stand_in = EntityListTexts(self.settings.module_text, info=self.info)
        if self.module_texts_source is not None:
            source: ModuleTextSource = self.module_texts_source
        else:
            llm = self.llm if self.llm_available else None
            source = ModuleSummaries(llm, self.settings.summaries, stand_in, self.hier.directory, self.info)
        self.module_texts = source(self.tree, graph)
        self.summary_stats = dict(getattr(source, "stats", {}))
        if self.module_texts_source is None:  # modules left with the stand-in text (no LLM, failed call or cap)
            self.skip("module_summary", int(self.summary_stats.get("stand_in", 0)))
        num_e, num_m = graph.num_entities, self.tree.num_modules
        module_emb = self.encoder.encode(self.module_texts, desc="modules")
        emb = self.dedup.embeddings
        alpha, lexical = self.settings.alpha, self.settings.lexical
        self.entity_scorer = HybridScorer(emb.entity.to(self.device), self.entity_lexical_texts(), alpha, lexical)
        self.module_scorer = HybridScorer(module_emb.to(self.device), self.module_texts, alpha, lexical)
        level = self.tree.level
        self.level_modules = [(level == lv).nonzero().squeeze(1).to(self.device)
                              for lv in sorted(set(level.tolist()))]  # H1..HL: module ids per level
        self.passage_emb = emb.passage.to(self.device)
        self._passage_texts = [p.content for p in dataset.corpus.passages]

        self.module_emb = module_emb
        gate_pairs = self.build_gates(graph, module_emb, dataset)
        self.gate_pairs = gate_pairs  # [2, G] module pairs (tree ids)
        self.num_gates = int(gate_pairs.shape[1])
        self.typed_graph = self.expansion_graph(gate_pairs)
        module_tokens = torch.tensor(count_tokens(self.module_texts, self.settings.hierarchy.token_counter))
        # a node costs its text, cut to ``node_tokens`` (the table shows it cut the same way)
        self.node_tokens = torch.cat([self.hier.tokens, module_tokens]).clamp_max(self.settings.node_tokens).numpy()
        self.fact_ends = graph.fact_entities.tolist()
        self.entity_facts: list[list[int]] = [[] for _ in range(num_e)]
        for f, (a, b) in enumerate(self.fact_ends):
            self.entity_facts[a].append(f)
            if b != a:
                self.entity_facts[b].append(f)

        # entity → passage incidence [P, E] for ranking, weighted by entity specificity
        counts = graph.entity_passage_count
        rows = graph.entity_passage_idx
        cols = csr_owner(graph.entity_passage_ptr)
        weight = torch.ones(rows.shape[0])
        if self.settings.entity_specificity == "log":
            weight = 1.0 / torch.log1p(counts[cols].float().clamp_min(1.0))
        self.passage_entity = torch.sparse_coo_tensor(torch.stack([rows, cols]), weight, (graph.num_passages, num_e),
                                                      check_invariants=True).coalesce().to(self.device)
        log.info("hugrag index: %d entities, %d modules, edges %s", num_e, num_m, self.typed_graph.count_by_kind())

    def entity_lexical_texts(self) -> list[str]:
        """What Lex (Eq. 5) reads of each entity: ``title+description`` — its name and description (GraphRAG
        extraction), or, for a graph without descriptions, its facts (the stand-in every stage uses), cut to
        ``node_tokens`` as the node is shown; ``title`` — its name only (a labelled option)."""
        if self.settings.lexical_text == "title":
            return list(self.graph.entity_names)
        assert self.hier is not None
        words = max(1, int(self.settings.node_tokens / 1.3))
        return [" ".join(t.split()[:words]) for t in self.hier.texts]

    def expansion_graph(self, gate_pairs: torch.Tensor) -> TypedGraph:
        """Typed expansion graph (entities 0..E-1, modules E..E+M-1): structural, hierarchical and the given
        gate edges (module pairs [2, G], tree ids)."""
        graph = self.graph
        num_e, num_m = graph.num_entities, self.tree.num_modules
        struct_index, _ = entity_graph(graph, ("relation", "synonym"))
        has_parent = (self.tree.parent >= 0).nonzero().squeeze(1)
        hier_index = torch.cat([
            torch.stack([torch.arange(num_e), self.tree.leaf + num_e]),
            torch.stack([has_parent + num_e, self.tree.parent[has_parent] + num_e])], dim=1)
        parts = [(struct_index, EdgeKind.STRUCTURAL), (hier_index, EdgeKind.HIERARCHY)]
        if gate_pairs.shape[1]:
            parts.append((gate_pairs.long() + num_e, EdgeKind.GATE))
        edge_index = torch.cat([p for p, _ in parts], dim=1)
        kinds = torch.cat([torch.full((p.shape[1],), int(k), dtype=torch.int8) for p, k in parts])
        return TypedGraph.from_edges(edge_index, kinds, num_e + num_m)

    def build_gates(self, graph: KnowledgeGraph, module_emb: torch.Tensor, dataset: Dataset | None = None
                    ) -> torch.Tensor:
        """Gate module pairs [2, G]: the hook, else Algorithm 2 (LLM-verified; unverified with verifier=none; judged
        by the gold hops of ``dataset``'s questions with verifier=oracle — an upper bound, transductive)."""
        if self.gate_source is not None:
            pairs, _ = self.gate_source(self.tree, graph)
            self.gate_stats = {"source": "hook", "gates_found": int(pairs.shape[1])}
            return pairs
        verifier = self.settings.gates.verifier
        unverified = verifier in ("none", "oracle")  # no LLM asked
        if not self.settings.gates.enabled or not (self.llm_available or unverified):
            if self.settings.gates.enabled:
                self.skip("causal_gate")  # the whole stage: no LLM to verify with
            self.gate_stats = {"source": "none", "gates_found": 0}
            return torch.empty(2, 0, dtype=torch.long)
        assert self.hier is not None
        edges, _ = entity_graph(graph, self.settings.hierarchy.edge_types)
        accepted = self.oracle_gate_pairs(graph, edges, dataset) if verifier == "oracle" else None
        builder = GateBuilder(None if unverified else self.llm, self.settings.gates, self.hier.directory,
                              accepted=accepted, prompts=self.settings.prompts)
        result = builder.build(self.tree, self.module_texts, module_emb, entity_edges=edges)
        # failed verifications (an outage; the oracle's no_gold) and capped ones are no gate: the fallback, counted
        self.skip("causal_gate", result.stats["failed"] + result.stats["skipped_budget"])
        source = {"none": "unverified", "oracle": f"oracle (gold {self.settings.gates.oracle_gold}: upper bound, "
                                                  "transductive)"}.get(verifier, "llm")
        self.gate_stats = {"source": source, **result.stats}
        self.gate_directions = result.directions
        return result.pairs

    def oracle_gate_pairs(self, graph: KnowledgeGraph, edges: torch.Tensor, dataset: Dataset | None
                          ) -> set[tuple[int, int]]:
        """``gates.verifier: oracle``: the module pairs a perfect verifier accepts — some question of ``dataset``
        has consecutive gold hops (``oracle_gold: hops``), or two gold passages (``passages``; ``auto``: where it
        has no decomposition), whose entities lie in the two modules (the gold-hop pairs of
        :mod:`hyperrag.eval.gate_recall`, any distance: the candidate rule applies its own). The questions inform
        the index: the run is marked transductive."""
        if dataset is None:
            raise ValueError("causal gates with verifier=oracle need the dataset's questions")
        gold = self.settings.gates.oracle_gold
        per_q: list[list[set[tuple[int, int]]]] = [[] for _ in dataset.queries]  # per question, its gold pairs
        found: list[list[list[set[tuple[int, int]]]]] = []
        if gold in ("hops", "auto"):
            found.append(gold_hop_pairs(self.tree, edges, hop_entities_of(dataset, graph), 1))
        if gold in ("passages", "auto"):
            passages = gold_passage_entities_of(dataset, graph, only_without_hops=gold == "auto")
            found.append(gold_hop_pairs(self.tree, edges, passages, 1, all_pairs=True))
        for source in found:
            for mine, pairs in zip(per_q, source):
                mine.extend(pairs)
        self.saw_questions = True
        self.oracle_steps = ("causal_gate",)
        self.oracle_questions = sum(1 for q in per_q if any(q))
        if not self.oracle_questions:
            log.warning("hugrag: gates.verifier=oracle (oracle_gold=%s) but no question of %s has two gold %s in "
                        "the graph: no gate is accepted", gold, dataset.name,
                        "hops" if gold == "hops" else "hops or passages")
        return set().union(*(p for q in per_q for p in q)) if per_q else set()

    @property
    def graph(self) -> KnowledgeGraph:
        assert self.dedup is not None, "call index() first"
        return self.dedup.graph

    # ---- retrieval ---------------------------------------------------------------------------------------
    def label(self, node: int) -> str:
        num_e = self.graph.num_entities
        if node < num_e:
            return self.graph.entity_names[node]
        m = node - num_e
        return f"M{m}(L{int(self.tree.level[m])}): {self.module_texts[m][:80]}"

    def node_kind(self, node: int) -> str:
        num_e = self.graph.num_entities
        return "entity" if node < num_e else f"module L{int(self.tree.level[node - num_e])}"

    def node_text(self, node: int) -> str:
        """What the path selection reads about a node: entity text (name, description, facts) or module text."""
        num_e = self.graph.num_entities
        if node < num_e:
            assert self.hier is not None
            return self.hier.texts[node]
        return self.module_texts[node - num_e]

    def walk_table(self, walk: Expansion) -> Table:
        """S_raw as a table, whole: its nodes and the relation edges between them, each with its provenance (the
        walk linearised once: :meth:`table` shows its first rows, :meth:`walk_evidence` reads what they leave out)."""
        nodes = walk.nodes
        return linearize(walk, [self.node_kind(v) for v in nodes], [self.node_text(v) for v in nodes],
                         [self.node_passages(v, walk) for v in nodes], edges_of=self.edges_between,
                         edge_provenance=self.fact_passages, max_rows=None,
                         max_words=max(1, int(self.settings.node_tokens / 1.3)))

    def table(self, walk: Expansion, whole: Table | None = None) -> Table:
        """S_raw as the path selection sees it: the first ``path_selection.max_rows`` rows of its table (``whole``:
        :meth:`walk_table` of ``walk``, when already made)."""
        return (whole if whole is not None else self.walk_table(walk)).head(self.settings.path_selection.max_rows)

    def walk_evidence(self, walk: Expansion, whole: Table | None = None) -> dict[str, Any]:
        """What one walk reached and what the table cap cut, for the run's record (no LLM needed).

        Returns ``gate_only_passages`` (passage ids mentioned only by reached entities whose parent chain crosses a
        causal gate: reached only through one, in this walk), ``reached_passages`` (every passage a reached entity
        mentions), ``rows`` (rows of S_raw's table without a cap), ``cut_rows`` (rows past ``max_rows``) and
        ``cut_passages`` (passage ids only the cut rows come from). ``whole``: :meth:`walk_table` of ``walk``, when
        already made."""
        num_e = self.graph.num_entities
        ptr, idx = self.graph.entity_passage_ptr, self.graph.entity_passage_idx
        direct: set[int] = set()
        via_gate: set[int] = set()
        for v, gated in zip(walk.nodes, walk.gated()):
            if v < num_e:
                (via_gate if gated else direct).update(idx[ptr[v]: ptr[v + 1]].tolist())
        full = whole if whole is not None else self.walk_table(walk)
        cap = self.settings.path_selection.max_rows
        cap = len(full) if cap is None else min(cap, len(full))
        shown = {p for ps in full.passages[:cap] for p in ps}
        cut = {p for ps in full.passages[cap:] for p in ps} - shown
        pid = self.graph.passage_ids
        return {"gate_only_passages": sorted(pid[p] for p in via_gate - direct),
                "reached_passages": sorted(pid[p] for p in direct | via_gate),
                "rows": len(full), "cut_rows": len(full) - cap, "cut_passages": sorted(pid[p] for p in cut)}

    def row_summary(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """The walks of a run against the gold (``metrics.json``'s ``walk``): per query why the walk stopped, the
        nodes the hop limit held, the gold passages reached only through a causal gate and those only behind
        rows the ``max_rows`` cap cut; and their totals."""
        per_query = []
        for r in rows:
            d = r.get("details") or {}
            if "stop" not in d:
                continue
            gold = set(r.get("gold_ids", []))
            per_query.append({
                "id": r["id"], "stop": d["stop"], "hop_limited": d.get("hop_limited", 0),
                "hop_blocked": d.get("hop_blocked", 0), "gate_crossings": d.get("gate_crossings", 0),
                "gold_reached": len(gold & set(d.get("reached_passages", []))),
                "gold_gate_only": sorted(gold & set(d.get("gate_only_passages", []))),
                "rows": d.get("rows", 0), "cut_rows": d.get("cut_rows", 0),
                "gold_cut": sorted(gold & set(d.get("cut_passages", [])))})
        if not per_query:
            return {}
        stops: dict[str, int] = {}
        for q in per_query:
            stops[q["stop"]] = stops.get(q["stop"], 0) + 1
        return {"walk": {
            "queries": len(per_query), "stop": stops,
            "queries_with_gold_gate_only": sum(1 for q in per_query if q["gold_gate_only"]),
            "gold_gate_only": sum(len(q["gold_gate_only"]) for q in per_query),
            "queries_with_gold_cut": sum(1 for q in per_query if q["gold_cut"]),
            "gold_cut": sum(len(q["gold_cut"]) for q in per_query),
            "cut_rows_per_query": round(sum(q["cut_rows"] for q in per_query) / len(per_query), 2),
            "per_query": per_query}}

    def node_passages(self, node: int, walk: Expansion) -> list[int]:
        """Passage positions a node comes from: an entity's mentions; a module's reached members' mentions."""
        g, num_e = self.graph, self.graph.num_entities
        ptr, idx = g.entity_passage_ptr, g.entity_passage_idx
        if node < num_e:
            return idx[ptr[node]: ptr[node + 1]].tolist()
        members = set(self.tree.entities(node - num_e).tolist()) & set(walk.nodes)
        return sorted({p for e in members for p in idx[ptr[e]: ptr[e + 1]].tolist()})

    def fact_passages(self, fact: int) -> list[int]:
        g = self.graph
        return g.fact_passage_idx[g.fact_passage_ptr[fact]: g.fact_passage_ptr[fact + 1]].tolist()

    def edges_between(self, node: int, listed: set[int]) -> list[tuple[int, int, str]]:
        """Relation edges (facts) joining entity ``node`` to an already listed entity: (fact, other, text)."""
        if node >= self.graph.num_entities:
            return []
        out = []
        for f in self.entity_facts[node]:
            a, b = self.fact_ends[f]
            other = b if a == node else a
            if other in listed and other != node:
                out.append((f, other, " ".join(self.graph.facts[f])))
        return out

    def kept_entities(self, walk: Expansion, kept: list[int]) -> set[int]:
        """Entities whose gains rank passages: kept entities, plus the reached members of kept modules."""
        num_e = self.graph.num_entities
        reached = {v for v in walk.nodes if v < num_e}
        out = {v for v in kept if v < num_e}
        for v in kept:
            if v >= num_e:
                out |= set(self.tree.entities(v - num_e).tolist()) & reached
        return out & reached

    def retrieve(self, questions: list[str], top_k: int) -> RetrievalOutput:
        """Algorithm 1's online phase (lines 12–15) for a batch of questions, then the passage ranking.

        1. line 12, U: hybrid scores s_α(q, v) (Eq. 5) and MMR seeds per level — :meth:`score_nodes`, :meth:`seed`;
        2. line 13, S_raw: gated best-first traversal from U within h hops and the token budget —
           :meth:`gated_traversal`;
        3. line 14, S*: causal path identification over S_raw's table (or the ``path_filter`` hook) —
           :meth:`causal_filter`;
        4. line 15, y: the answer from S* only — :meth:`generate`;
        5. ranking: the passages behind S* first (:meth:`rank_by_selection`); the rest, and every query without an
           LLM selection, in the **LLM-free fallback** order of S_raw (:meth:`llm_free_ranking`, labelled: not in
           the paper). A failed or empty selection returns no passage (index -1) and no answer, counted
           (``skip("path_selection")``).
        """
        assert self.kg is not None, "call index() first"
        q = self.encoder.encode(questions, desc="queries").to(self.device)
        s_ent, s_mod = self.score_nodes(questions, q)
        seed_ent, seed_mod = self.seed(s_ent, s_mod)                                # line 12: U
        seeds = torch.cat([seed_ent, seed_mod + self.graph.num_entities], dim=1).tolist()
        s_raw = self.gated_traversal(s_ent, s_mod, seeds)                           # line 13: S_raw
        s_star = self.causal_filter(questions, s_raw, q)                            # line 14: S*
        details = [self.query_details(b, seeds[b], s_ent, s_mod, walk, f) for b, (walk, f) in
                   enumerate(zip(s_raw, s_star))]
        self.generate(questions, s_star, details)                                   # line 15: y
        full, scores = self.llm_free_ranking(q, s_raw, s_star)                      # fallback order (not in paper)
        full, scores = self.rank_by_selection(full, scores, s_star, details)        # S*'s passages first
        return RetrievalOutput(full[:, :top_k].cpu(), scores[:, :top_k].cpu(), details)

    # ---- line 12: multi-level seeds -------------------------------------------------------------------------
    def score_nodes(self, questions: list[str], q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """s_α(q, v) = α · cos + (1 − α) · Lex (Eq. 5) of every entity [B, E] (its title and description) and every
        module [B, M] (its summary), for the batch."""
        return self.entity_scorer.scores(q, questions), self.module_scorer.scores(q, questions)

    def seed(self, s_ent: torch.Tensor, s_mod: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """U = ∪_ℓ TopK(s(q, u), K_ℓ, H_ℓ) (Algorithm 1 line 12), each TopK an MMR selection (B.2): ``k0`` entities
        of H0 and ``kl`` modules of every module level H1..HL (``seeding: pooled``, a labelled option off the paper:
        ``kl`` modules of all levels together).

        Returns:
            ``(entity ids [B, k0], module ids [B, K])``, module ids local to the tree, level by level (K = kl · L).
        """
        s = self.settings
        ent, _ = mmr_select(s_ent, self.entity_scorer.embeddings, s.k0, s.mmr_lambda, s.mmr_pool)
        emb = self.module_scorer.embeddings
        if s.seeding == "pooled":
            mod, _ = mmr_select(s_mod, emb, s.kl, s.mmr_lambda, s.mmr_pool)
            return ent, mod
        picks = [ids[mmr_select(s_mod[:, ids], emb[ids], s.kl, s.mmr_lambda, s.mmr_pool)[0]]
                 for ids in self.level_modules]
        mod = torch.cat(picks, dim=1) if picks else s_mod.new_empty(s_mod.shape[0], 0, dtype=torch.long)
        return ent, mod

    # ---- line 13: gated traversal -----------------------------------------------------------------------------
    def gated_traversal(self, s_ent: torch.Tensor, s_mod: torch.Tensor, seeds: list[list[int]],
                        graph: TypedGraph | None = None) -> list[Expansion]:
        """S_raw = GATED_TRAVERSAL(U, H, G_c, h) (line 13): per query, best-first over E_uni = structural ∪
        hierarchical ∪ gate edges with Gain(v) = s(q, v) · γ^t · w(type) (Eq. 3), within ``max_hops`` = h of a seed,
        until the gain falls below ``min_gain`` or the ``token_budget`` is spent.

        Args:
            s_ent, s_mod: FloatTensor [B, E] and [B, M], the node scores.
            seeds: per query, node ids (entities 0..E-1, modules E..E+M-1).
            graph: the typed graph to walk (default: the expansion graph with its gates).
        """
        node_score = torch.cat([s_ent, s_mod], dim=1).cpu().numpy()
        s = self.settings
        walk_graph = graph if graph is not None else self.typed_graph
        return [best_first_expand(walk_graph, node_score[b], seeds[b], gamma=s.gamma, kind_weight=self.kind_weight,
                                  min_gain=s.min_gain, token_budget=s.token_budget, node_tokens=self.node_tokens,
                                  max_nodes=s.max_nodes, max_hops=s.max_hops) for b in range(len(seeds))]

    def expand(self, questions: list[str], q: torch.Tensor, graph: TypedGraph | None = None
               ) -> tuple[torch.Tensor, torch.Tensor, list[list[int]], list[Expansion]]:
        """Lines 12–13 for a batch (scores, seeds, S_raw): ``(entity scores [B, E], module scores [B, M], seed node
        ids per question, walks)``. ``q``: FloatTensor [B, D], the questions' embeddings."""
        s_ent, s_mod = self.score_nodes(questions, q)
        seed_ent, seed_mod = self.seed(s_ent, s_mod)
        seeds = torch.cat([seed_ent, seed_mod + self.graph.num_entities], dim=1).tolist()
        return s_ent, s_mod, seeds, self.gated_traversal(s_ent, s_mod, seeds, graph)

    # ---- line 14: causal path identification ------------------------------------------------------------------
    def causal_filter(self, questions: list[str], s_raw: list[Expansion], q: torch.Tensor | None = None
                      ) -> list[Filtered]:
        """S* = CAUSAL_FILTER(q, S_raw) (line 14, Eq. 4): S_raw linearised with short IDs (B.3) and the LLM's
        causal path identification (Fig 5 spurious-aware, Fig 6 ``standard``, ``off`` = the first rows); S* is
        the kept rows and the passages behind them (:meth:`support_passages`). The ``path_filter`` hook chooses
        nodes instead. Without an LLM (counted) there is no S* (``Filtered.selection`` is None), or, with
        ``path_selection.llm_free`` set, the **LLM-free stand-in's** S* (labelled; not in the paper; needs ``q``,
        FloatTensor [B, D], the questions' embeddings)."""
        out = [Filtered(nodes=list(w.nodes)) for w in s_raw]
        if self.path_filter is not None:
            for f, question, walk in zip(out, questions, s_raw):
                shown = set(walk.nodes)
                f.nodes = [v for v in self.path_filter(question, self.subgraph(walk)) if v in shown]
            return out
        p = self.settings.path_selection
        if self.selector is None:
            if p.enabled:
                self.skip("path_selection", len(questions))  # no LLM: no S*, the fallback ranks S_raw ...
            if not p.enabled or p.llm_free == "none" or q is None:
                return out
        wholes = [self.walk_table(w) for w in s_raw]  # each walk linearised once (the record reads it too)
        tables = [self.table(w, whole) for w, whole in zip(s_raw, wholes)]
        selections = self.select_rows(questions, tables, q)
        for f, whole, table, sel in zip(out, wholes, tables, selections):
            f.walk_table, f.table, f.selection = whole, table, sel
            if not sel.ok:
                self.skip("path_selection")
                continue
            f.passages, f.passage_scores = self.support_passages(table, sel.kept)
        return out

    def select_rows(self, questions: list[str], tables: list[Table], q: torch.Tensor | None) -> list[Selection]:
        """The rows S* keeps of each table: the LLM's causal path identification, or without an LLM the labelled
        **LLM-free stand-in** (``path_selection.llm_free``; ``q``: FloatTensor [B, D], the questions' embeddings)."""
        if self.selector is not None:
            return self.selector.select(questions, tables, self.graph.passage_ids)
        assert q is not None
        p = self.settings.path_selection
        return llm_free_selection(p.llm_free, q, tables, self.encoder, p.max_selected)

    def support_passages(self, table: Table, kept: list[int]) -> tuple[list[int], list[float]]:
        """The passages behind S*'s kept rows, best first: score ``Σ_r d(r) · spec(row)`` over the kept rows (rank
        r in the model's order) a passage is behind, ``d(r) = 1 / log2(2 + r)``, ``spec = log 2 / log(1 +
        #passages)`` — a relation edge extracted from one passage points at it fully, a hub entity weakly; ties by
        the first kept row behind them."""
        scores: dict[int, float] = {}
        first: dict[int, int] = {}
        for r, row in enumerate(kept):
            behind = table.passages[row]
            if not behind:
                continue
            weight = (1.0 / math.log2(2 + r)) * (math.log(2) / math.log1p(len(behind)))
            for p in behind:
                scores[p] = scores.get(p, 0.0) + weight
                first.setdefault(p, r)
        order = sorted(scores, key=lambda p: (-scores[p], first[p], p))
        return order, [scores[p] for p in order]

    # ---- line 15: the answer from S* ---------------------------------------------------------------------------
    def generate(self, questions: list[str], s_star: list[Filtered], details: list[dict[str, Any]]) -> None:
        """y = LLM_GENERATE(q, S*) (line 15, Fig 7): the kept rows and the first ``answer_passages`` passages
        behind them, with the draft answer, in the run's ``answer_style``; written into ``details`` (``answer``,
        ``short_answer`` when explanatory, ``evidence``: what the answer read). An empty S* is answered too
        (``empty_selection: answer``; ``skip``: no answer); a failed selection call is not."""
        if self.selector is None or self.path_filter is not None or not self.settings.path_selection.answer:
            return
        n_pass = int(self.settings.path_selection.answer_passages)
        evidence: list[list[dict[str, Any]]] = []
        for f in s_star:
            ev: list[dict[str, Any]] = []
            if f.ok:
                assert f.table is not None and f.selection is not None
                # a row carries its provenance (never shown to a model; the oracle judges S* by it)
                ev = [{"id": f"row:{r}", "text": f"{f.table.ids[r]}: {f.table.rows[r]}",
                       "sources": [self.graph.passage_ids[p] for p in f.table.passages[r]]}
                      for r in f.selection.kept]
                ev += [{"id": f"passage:{p}", "text": self._passage_texts[p],
                        "passage_ids": [self.graph.passage_ids[p]]} for p in f.passages[:n_pass]]
            evidence.append(ev)
        drafts = [f.selection.draft if f.selection is not None else "" for f in s_star]
        # an empty S* (nothing kept, or nothing reached) is still answered (empty_selection: answer); a failed call not
        empty = [self.settings.path_selection.empty_selection == "answer" and f.selection is not None
                 and f.selection.error in ("empty", "empty subgraph") for f in s_star]
        answers = self.selector.answer(questions, evidence, drafts, style=self.settings.answer_style,
                                       answer_empty=empty)
        for d, ans, ev in zip(details, answers, evidence):
            d["answer"] = ans["answer"]
            if "short_answer" in ans:
                d["short_answer"] = ans["short_answer"]
            d["answer_ok"] = ans["answer_ok"]
            d["answer_evidence"] = len(ev)
            d["evidence"] = [e["text"] for e in ev]  # what the answer read: the kept subgraph (context recall)
            d["evidence_kinds"] = ["passage" if "passage_ids" in e else "row" for e in ev]  # the evaluator's caps
            d["supporting_ids"] = [e["passage_ids"][0] for e in ev if "passage_ids" in e]

    # ---- ranking ---------------------------------------------------------------------------------------------
    def llm_free_ranking(self, q: torch.Tensor, s_raw: list[Expansion], s_star: list[Filtered]
                         ) -> tuple[torch.Tensor, torch.Tensor]:
        """**Fallback, not in the paper** (which scores S*'s text, not a passage ranking): every passage by the
        accumulated gains of S_raw's entities (or of the entities the ``path_filter`` hook kept, with the members
        of kept modules) through :meth:`aggregate`, mixed with the dense score when ``dense_mix`` > 0 (``(1 − mix) ·
        gain / max + mix · cos(q, p)``); ties and unreached passages by the dense score.

        Returns:
            ``(passage positions [B, P], scores [B, P])``, best first.
        """
        num_e = self.graph.num_entities
        gains = torch.zeros(len(s_raw), num_e)
        for b, (walk, f) in enumerate(zip(s_raw, s_star)):
            kept = self.kept_entities(walk, f.nodes) or {v for v in walk.nodes if v < num_e}
            for v, g in zip(walk.nodes, walk.gain):
                if v in kept:
                    gains[b, v] = g
        passage_gain = self.aggregate(gains.to(self.device))
        dense = q @ self.passage_emb.T
        mix = self.settings.dense_mix
        if mix > 0:
            top = passage_gain.amax(dim=1, keepdim=True).clamp_min(1e-12)
            passage_gain = (1 - mix) * passage_gain / top + mix * dense
        by_dense = torch.argsort(dense, dim=1, descending=True, stable=True)  # two stable sorts: gain, then dense
        by_gain = torch.argsort(passage_gain.gather(1, by_dense), dim=1, descending=True, stable=True)
        full = by_dense.gather(1, by_gain)
        return full, passage_gain.gather(1, full)

    def rank_by_selection(self, full: torch.Tensor, scores: torch.Tensor, s_star: list[Filtered],
                          details: list[dict[str, Any]]) -> tuple[torch.Tensor, torch.Tensor]:
        """S*'s passages first (:meth:`support_passages`), then the rest in the fallback order; a failed / empty
        selection: every index -1 (no context), score 0. Queries without an LLM selection keep the fallback."""
        full, scores = full.clone(), scores.clone()
        for b, f in enumerate(s_star):
            if f.selection is None:
                continue
            if not f.ok:
                full[b] = -1
                scores[b] = 0.0
                details[b]["kept_passages"] = 0
                continue
            head = torch.tensor(f.passages, dtype=full.dtype, device=full.device)
            rest = full[b][~torch.isin(full[b], head)]
            full[b] = torch.cat([head, rest])
            scores[b] = torch.cat([torch.tensor(f.passage_scores, dtype=scores.dtype, device=scores.device),
                                   torch.zeros(rest.shape[0], dtype=scores.dtype, device=scores.device)])
            details[b]["kept_passages"] = len(f.passages)
        return full, scores

    def aggregate(self, gains: torch.Tensor) -> torch.Tensor:
        """Entity gains [B, E] → passage scores [B, P] (sum or max over the entities each passage mentions)."""
        if self.settings.passage_aggregate == "sum":
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
                      f: Filtered) -> dict[str, Any]:
        """One query's record: its seeds per level, S_raw (first ``details_nodes`` nodes) and S* (table, kept and
        spurious items, draft); counts the gate crossings."""
        num_e = self.graph.num_entities
        ent_seeds = [[self.graph.entity_names[v], round(float(s_ent[b, v]), 4)] for v in seeds if v < num_e]
        mod_seeds = [[v - num_e, int(self.tree.level[v - num_e]), round(float(s_mod[b, v - num_e]), 4),
                      self.module_texts[v - num_e][:80]] for v in seeds if v >= num_e]
        kinds = {-1: "seed", **{int(k): k.name.lower() for k in EdgeKind}}
        expanded = [[self.label(v), round(g, 4), h, kinds[k]] for v, g, h, k in
                    zip(walk.nodes[: self.settings.details_nodes], walk.gain, walk.hop, walk.via)]
        reached_e = sum(v < num_e for v in walk.nodes)
        self.query_stats["queries"] += 1
        self.query_stats["gate_crossings"] += walk.gate_crossings
        d: dict[str, Any] = {
            "seed_entities": ent_seeds, "seed_modules": mod_seeds, "expanded": expanded,
            "reached_entities": reached_e, "reached_modules": len(walk.nodes) - reached_e, "kept": len(f.nodes),
            "tokens": walk.tokens, "stop": walk.stop, "skipped_budget": walk.skipped_budget,
            "max_hop": max(walk.hop, default=0), "hop_limited": walk.hop_limited, "hop_blocked": walk.hop_blocked,
            "gate_crossings": walk.gate_crossings, **self.walk_evidence(walk, f.walk_table)}
        sel, table = f.selection, f.table
        if sel is not None and table is not None:
            d.update({"table": table.render(), "filter_ok": sel.ok, "filter_error": sel.error,
                      "invalid_ids": sel.invalid_ids, "variant": self.filter_label(),
                      "draft_answer": sel.draft, "kept": len(sel.kept),
                      "kept_items": [[table.ids[r], table.rows[r][:120]] for r in sel.kept],
                      "spurious_items": [[table.ids[r], table.rows[r][:120]] for r in sel.spurious]})
        return d

    def filter_label(self) -> str:
        """The run's causal path filter: the LLM's variant, or without an LLM ``none`` or the stand-in named as
        one."""
        p = self.settings.path_selection
        if self.selector is not None:
            return p.variant
        return "none" if not p.enabled or p.llm_free == "none" else f"{p.llm_free} (LLM-free stand-in)"

    def describe(self) -> dict[str, Any]:
        s = self.settings
        info: dict[str, Any] = {
            "method": self.name, "alpha": s.alpha, "lexical": s.lexical, "lexical_text": s.lexical_text,
            "seeding": s.seeding, "k0": s.k0, "kl": s.kl, "max_hops": s.max_hops, "dense_mix": s.dense_mix,
            "answer_style": s.answer_style, "prompts": s.prompts,
            "mmr_lambda": s.mmr_lambda, "gamma": s.gamma, "edge_weights": self.kind_weight.tolist(),
            "min_gain": s.min_gain, "token_budget": s.token_budget, "passage_aggregate": s.passage_aggregate,
            "entity_specificity": s.entity_specificity, "hierarchy_settings": asdict(s.hierarchy),
            "module_texts": "hook" if self.module_texts_source else ("llm summaries" if self.llm_available
                                                                      else "entity-list stand-in"),
            "gates": "hook" if self.gate_source else ("none" if not s.gates.enabled else
                     {"none": "unverified", "oracle": "oracle (upper bound)"}.get(
                         s.gates.verifier, "llm" if self.llm_available else "none")),
            "gates_found": getattr(self, "num_gates", 0),
            "path_filter": "hook" if self.path_filter else self.filter_label(),
            "extraction": s.extraction, "extraction_stats": self.extraction_stats, "dedup_settings": asdict(self.dedup_settings),
            "gate_settings": asdict(s.gates), "summary_settings": asdict(s.summaries)}
        if self.kg is not None and self.hier is not None:
            info["graph"] = self.graph.stats
            info["hierarchy"] = self.hier.hierarchy.summary()
            info["modules"] = self.tree.num_modules
            info["expansion_edges"] = self.typed_graph.count_by_kind()
            info["gates_found"] = self.num_gates
            info["gate_stats"] = self.gate_stats
            if hasattr(self, "oracle_questions"):
                info["gate_stats"]["oracle_questions"] = self.oracle_questions
            n = max(self.query_stats["queries"], 1)
            info["query_stats"] = {**self.query_stats,
                                   "gate_crossings_per_query": round(self.query_stats["gate_crossings"] / n, 3)}
            info["summary_stats"] = self.summary_stats
            assert self.dedup is not None
            info["dedup"] = self.dedup.stats
            info["dedup_audit"] = str(self.dedup.audit_path) if self.dedup.audit_path else None
            info["entity_source"] = self.info.source
            info["index_dir"] = str(self.kg.directory)
            info["hierarchy_dir"] = str(self.hier.directory)
            info["hierarchy_status"] = self.hierarchy_status
        return info
