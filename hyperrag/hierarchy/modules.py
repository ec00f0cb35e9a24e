"""The module tree a retriever walks: distinct modules of a :class:`Hierarchy`, parent links, members, texts.

A hierarchy keeps its levels layered by carrying modules that stopped splitting down as copies; here each
chain of copies is one module, so the tree has no duplicate modules and every hierarchical edge joins two
different entity sets.

Module texts are pluggable (:data:`ModuleTextSource`): until LLM summaries exist, :class:`EntityListTexts`
writes a module as its best-connected entity names followed by a few of their facts — a documented non-LLM
stand-in with the same role (what the module is about, in a few hundred tokens at most).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from hyperrag.config.validation import NonNegativeInt, PositiveInt, settings
from hyperrag.graph.knowledge_graph import KnowledgeGraph
from hyperrag.graph.utils import csr_by_row, csr_owner
from hyperrag.hierarchy.hierarchy import Hierarchy


@dataclass
class ModuleTree:
    """M distinct modules over E entities.

    Attributes:
        level: LongTensor [M], the highest hierarchy level at which the module is itself (copies folded).
        parent: LongTensor [M], parent module, ``-1`` at the roots (modules of the top level).
        entity_ptr / entity_idx: CSR, the entities of each module (sorted by entity id).
        leaf: LongTensor [E], the level-1 module of every entity.
        level_ids: per level l, LongTensor [n_l] mapping the hierarchy's level-l modules to tree modules.
    """

    level: torch.Tensor
    parent: torch.Tensor
    entity_ptr: torch.Tensor
    entity_idx: torch.Tensor
    leaf: torch.Tensor
    level_ids: list[torch.Tensor]

    @property
    def num_modules(self) -> int:
        return int(self.level.shape[0])

    @property
    def sizes(self) -> torch.Tensor:
        return self.entity_ptr[1:] - self.entity_ptr[:-1]

    def entities(self, module: int) -> torch.Tensor:
        return self.entity_idx[self.entity_ptr[module]: self.entity_ptr[module + 1]]

    @classmethod
    def from_hierarchy(cls, hierarchy: Hierarchy) -> ModuleTree:
        n1 = hierarchy.num_modules(1)
        capacity = sum(hierarchy.num_modules(lv) for lv in range(1, hierarchy.num_levels + 1))
        level = torch.ones(capacity, dtype=torch.long)
        parent = torch.full((capacity,), -1, dtype=torch.long)
        level_ids = [torch.arange(n1)]
        total = n1
        for lv in range(2, hierarchy.num_levels + 1):
            memb, copy = hierarchy.memberships[lv - 1], hierarchy.copies[lv - 1]
            child_ids = level_ids[-1]
            n = hierarchy.num_modules(lv)
            only_child = torch.zeros(n, dtype=torch.long)
            only_child[memb] = torch.arange(memb.shape[0])  # exact for copies (one child each)
            ids = torch.empty(n, dtype=torch.long)
            ids[copy] = child_ids[only_child[copy]]
            fresh = (~copy).nonzero().squeeze(1)
            ids[fresh] = torch.arange(total, total + fresh.shape[0])
            total += fresh.shape[0]
            level[ids] = lv  # a copy lifts its module's level
            real = ~copy[memb]  # children whose level-lv parent is a new module
            parent[child_ids[real]] = ids[memb[real]]
            level_ids.append(ids)
        level, parent = level[:total], parent[:total]
        rows, cols = [], []
        for lv in range(1, hierarchy.num_levels + 1):
            ids = level_ids[lv - 1]
            keep = torch.ones(ids.shape[0], dtype=torch.bool) if lv == 1 else ~hierarchy.copies[lv - 1]
            memb = hierarchy.entity_membership(lv)
            ent = keep[memb].nonzero().squeeze(1)
            rows.append(ids[memb[ent]])
            cols.append(ent)
        ptr, idx = csr_by_row(torch.cat(rows), total, torch.cat(cols))  # entity ids ascend within a module
        return cls(level, parent, ptr, idx, level_ids[0][hierarchy.memberships[0]], level_ids)


# (tree, graph) -> one text per module; LLM module summaries implement the same signature.
ModuleTextSource = Callable[[ModuleTree, KnowledgeGraph], list[str]]


def entity_degree(graph: KnowledgeGraph, edge_types: tuple[int, ...] = (0, 1)) -> torch.Tensor:
    """FloatTensor [E]: weighted degree of each entity over entity–entity edges (relation, synonym)."""
    keep = torch.isin(graph.edge_type.long(), torch.tensor(edge_types)) & (graph.edge_index < graph.num_entities).all(0)
    ei, w = graph.edge_index[:, keep], graph.edge_weight[keep].float()
    return torch.zeros(graph.num_entities).index_add_(0, ei[0], w).index_add_(0, ei[1], w)


@settings
class ModuleTextSettings:
    """The stand-in module text (HugRAG's ``module_text``).

    Attributes:
        top_entities: names listed per module (its best-connected entities).
        top_facts: facts listed per module (subject among the listed entities, object inside the module).
    """

    top_entities: PositiveInt
    top_facts: NonNegativeInt


class EntityListTexts:
    """Non-LLM module text: ``top_entities`` entity names by degree, then up to ``top_facts`` of their facts.

    The documented stand-in for LLM module summaries (``llm=none``). When the entities carry descriptions
    (GraphRAG-style extraction), the first ``described`` names are followed by their description in brackets;
    the text is cut at ``max_tokens``.

    Args:
        settings: how many entity names and facts a module lists (:class:`ModuleTextSettings`).
        info: optional :class:`hyperrag.dedup.entities.EntityInfo` (descriptions).
        described: how many listed entities show their description.
        max_tokens: cut the text at about this many tokens (``None`` = no cut).
    """

    def __init__(self, settings: ModuleTextSettings, info: Any = None, described: int = 4,
                 max_tokens: int | None = None) -> None:
        self.top_entities = settings.top_entities
        self.top_facts = settings.top_facts
        self.info = info
        self.described = described
        self.max_tokens = max_tokens

    def __call__(self, tree: ModuleTree, graph: KnowledgeGraph) -> list[str]:
        degree = entity_degree(graph)
        # per module: members sorted by (degree desc, id asc)
        rows = csr_owner(tree.entity_ptr)
        members = tree.entity_idx
        order = torch.argsort(-degree[members], stable=True)
        order = order[torch.argsort(rows[order], stable=True)]
        ranked = members[order].tolist()
        ptr = tree.entity_ptr.tolist()
        facts_of: dict[int, list[int]] = {}
        for f, (s, o) in enumerate(graph.fact_entities.tolist()):
            facts_of.setdefault(s, []).append(f)
        names, facts = graph.entity_names, graph.facts
        texts = []
        for m in range(tree.num_modules):
            top = ranked[ptr[m]: ptr[m] + self.top_entities]
            inside = set(ranked[ptr[m]: ptr[m + 1]]) if self.top_facts else set()
            chosen: list[str] = []
            for e in top:
                for f in facts_of.get(e, ()):
                    if int(graph.fact_entities[f, 1]) in inside:
                        chosen.append(" ".join(facts[f]))
                        break
                if len(chosen) >= self.top_facts:
                    break
            shown = []
            for rank, e in enumerate(top):
                desc = self.info.text(e, 1) if self.info is not None and rank < self.described else ""
                shown.append(f"{names[e]} [{desc}]" if desc else names[e])
            text = "; ".join(shown)
            if chosen:
                text += ". " + "; ".join(chosen)
            if self.max_tokens is not None:
                words = text.split()
                limit = int(self.max_tokens / 1.3)
                text = " ".join(words[:limit]) if len(words) > limit else text
            texts.append(text)
        return texts
