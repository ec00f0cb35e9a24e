"""GraphRAG's community reports over the module hierarchy: one report per module, read at a community level.

GraphRAG summarises every community of its hierarchical Leiden clustering into a report and searches them at a
chosen *community level*, counted from the root (level 0 = the coarsest partition). Here a community is a
module of :class:`~hyperrag.hierarchy.modules.ModuleTree` and its report is the module's text — the LLM module
summary (:class:`~hyperrag.hierarchy.summaries.ModuleSummaries`) or, without an LLM, its documented stand-in
(top entity names and facts). The hierarchy's levels are numbered bottom up (H1 finest ... HL coarsest), so
GraphRAG's level ``g`` is our level ``max(1, L - g)``: level 0 is always the whole-graph partition and a level
deeper than the hierarchy reads the finest one.

A report's *rank* orders reports of equal relevance. GraphRAG asks the LLM for an importance rating per report;
the module summary task writes no rating, so the rank here is the module's size in entities.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from hyperrag.graph.knowledge_graph import KnowledgeGraph
from hyperrag.hierarchy.hierarchy import Hierarchy
from hyperrag.hierarchy.modules import EntityListTexts, ModuleTextSettings, ModuleTree
from hyperrag.hierarchy.store import HierarchyIndex
from hyperrag.hierarchy.summaries import ModuleSummaries, SummarySettings

if TYPE_CHECKING:
    from hyperrag.protocols import LanguageModel


@dataclass
class CommunityReports:
    """One report per module of a hierarchy.

    Attributes:
        hierarchy: the Leiden hierarchy (levels H1..HL).
        tree: its module tree (copies folded).
        texts: M report texts, one per tree module.
        rank: FloatTensor [M], the report rank (module size in entities).
        stats: how the texts were made (LLM summaries, resumed, stand-ins).
    """

    hierarchy: Hierarchy
    tree: ModuleTree
    texts: list[str]
    rank: torch.Tensor
    stats: dict[str, Any]

    @property
    def num_levels(self) -> int:
        return self.hierarchy.num_levels

    def hierarchy_level(self, community_level: int) -> int:
        """GraphRAG's community level (0 = root) as our bottom-up level ``1..L``."""
        return max(1, self.num_levels - int(community_level))

    def entity_community(self, community_level: int) -> torch.Tensor:
        """LongTensor [E]: the tree module (community) of every entity at ``community_level``."""
        level = self.hierarchy_level(community_level)
        return self.tree.level_ids[level - 1][self.hierarchy.entity_membership(level)]

    def at_level(self, community_level: int) -> torch.Tensor:
        """LongTensor [n]: the tree modules that partition the entities at ``community_level``, by rank (desc),
        ties by module id."""
        level = self.hierarchy_level(community_level)
        modules = torch.unique(self.tree.level_ids[level - 1])
        order = torch.argsort(-self.rank[modules], stable=True)
        return modules[order]

    def entities(self, module: int) -> torch.Tensor:
        return self.tree.entities(module)


def community_reports(graph: KnowledgeGraph, hier: HierarchyIndex, llm: LanguageModel | None,
                      summaries: SummarySettings, module_text: ModuleTextSettings, info: Any = None) -> CommunityReports:
    """The reports of every module of ``hier``: LLM module summaries (bottom-up, checkpointed in the hierarchy's
    directory and shared with any method that summarises the same hierarchy) or the stand-in texts.

    Args:
        llm: ``None`` or an unavailable LLM → stand-ins only (``stats["stand_in"]`` counts them).
        info: optional entity descriptions (:class:`hyperrag.dedup.entities.EntityInfo`).
    """
    tree = ModuleTree.from_hierarchy(hier.hierarchy)
    stand_in = EntityListTexts(module_text, info=info)
    usable = llm if getattr(llm, "available", False) else None
    source = ModuleSummaries(usable, summaries, stand_in, hier.directory, info)  # type: ignore[arg-type]
    texts = source(tree, graph)
    stats = dict(source.stats)
    stats.setdefault("stand_in", tree.num_modules)
    return CommunityReports(hier.hierarchy, tree, texts, tree.sizes.float(), stats)
