"""GraphRAG's indexing pipeline on the shared operators — what its local and global search both read.

1. the knowledge graph (:func:`~hyperrag.index.kg_index.load_or_build_kg_index`, or an index directory):
   entities, relationships (facts) and text units (passages) with their embeddings;
2. hierarchical Leiden communities (:func:`~hyperrag.hierarchy.store.load_or_build_hierarchy` over the entity
   graph, split until a community's text fits one context window);
3. one community report per module (:func:`~hyperrag.hierarchy.reports.community_reports`: LLM module summaries,
   or the stand-in texts without an LLM — every stand-in report is counted as a skipped ``community_report``
   step), embedded with the run's encoder.

GraphRAG extracts its graph with its own LLM prompt; here the graph is the shared one (the dataset's OpenIE
file, or the LLM OpenIE of ``data.openie_source=llm``) so every baseline reads the same graph. Entity
descriptions, when the OpenIE file has GraphRAG-style ones, enter the entity texts and the reports.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from typing_extensions import Unpack

from hyperrag.data.types import Dataset
from hyperrag.dedup.entities import EntityInfo, read_entity_info
from hyperrag.graph.incidence import GraphIncidence
from hyperrag.graph.knowledge_graph import KnowledgeGraph
from hyperrag.hierarchy.reports import CommunityReports, community_reports
from hyperrag.hierarchy.store import HierarchyIndex, load_or_build_hierarchy
from hyperrag.index.kg_index import KGIndex, load_or_build_kg_index
from hyperrag.retrievers.base import Retriever, RetrieverArgs
from hyperrag.retrievers.settings import GraphRAGGlobalSettings, GraphRAGLocalSettings


class GraphRAGIndexed(Retriever):
    """Base of :class:`~hyperrag.retrievers.graphrag_local.GraphRAGLocalRetriever` and
    :class:`~hyperrag.retrievers.graphrag_global.GraphRAGGlobalRetriever`: builds or loads the index above.

    Args:
        settings: the search's settings (their ``hierarchy``, ``module_text``, ``summaries``, ``graph``,
            ``index_root`` describe the index).
        encoder: embeds queries and reports (entity and passage embeddings come from the KG index).
        llm: writes the community reports (and the search's own LLM steps); ``None`` / ``llm=none``: stand-ins.
        index_dir: a knowledge-graph index directory; its hierarchy and reports go to ``<index_dir>/derived``.
    """

    supports_index_dir = True
    settings: GraphRAGLocalSettings | GraphRAGGlobalSettings

    def __init__(self, settings: GraphRAGLocalSettings | GraphRAGGlobalSettings,
                 **kwargs: Unpack[RetrieverArgs]) -> None:
        super().__init__(settings, **kwargs)
        self.kg: KGIndex | None = None
        self.hier: HierarchyIndex | None = None
        self.reports: CommunityReports | None = None

    def index(self, dataset: Dataset) -> None:
        s = self.settings
        if self.index_dir:
            self.kg = self.open_index_dir(dataset)
            root: str | Path | None = Path(self.index_dir) / "derived"
            name, info = "graphrag", None
        else:
            self.kg = load_or_build_kg_index(dataset, self.encoder, s.graph, s.index_root)
            root, name, info = s.index_root, dataset.name, dataset.openie_path
        assert self.kg is not None
        graph = self.kg.graph
        self.info: EntityInfo = read_entity_info(graph, info)
        self.hier = load_or_build_hierarchy(graph, s.hierarchy, root, name=name, info=self.info)
        self.reports = community_reports(graph, self.hier, self.llm, s.summaries, s.module_text, self.info)
        self.skip("community_report", int(self.reports.stats.get("stand_in", 0)))
        self.report_emb = self.encoder.encode(self.reports.texts, desc="community reports").to(self.device)
        self.entity_emb = self.kg.embeddings.entity.to(self.device)
        self.passage_emb = self.kg.embeddings.passage.to(self.device)
        self.incidence = GraphIncidence(graph)
        self.passage_texts = [p.content for p in dataset.corpus.passages]
        self.passage_ids = list(graph.passage_ids)

    @property
    def graph(self) -> KnowledgeGraph:
        assert self.kg is not None, "call index() first"
        return self.kg.graph

    def encode(self, questions: list[str]) -> torch.Tensor:
        """Query embeddings [B, D] on the retriever's device."""
        return self.encoder.encode(questions, desc="queries").to(self.device)

    def report_title(self, module: int) -> str:
        return f"Report {module}"

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {"method": self.name}
        if self.kg is not None and self.reports is not None and self.hier is not None:
            info.update({"graph": self.graph.stats, "index_dir": str(self.kg.directory),
                         "hierarchy_dir": str(self.hier.directory), "hierarchy": self.hier.hierarchy.summary(),
                         "reports": self.reports.tree.num_modules,
                         "report_texts": "llm summaries" if self.reports.stats.get("llm_summaries") or
                         self.reports.stats.get("resumed") else "entity-list stand-in",
                         "report_stats": {k: v for k, v in self.reports.stats.items() if k != "settings"}})
        return info

