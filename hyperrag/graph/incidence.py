"""Who-touches-what in a knowledge graph, as CSR index tensors: an entity's facts (relationships), its passages
(text units), its one-hop neighbours, and per (entity, passage) how much of the entity's neighbourhood a
passage holds.

GraphRAG's local search orders an entity's text units by how many of the entity's relationships come from
each unit; LightRAG's local mode orders them by how many of the entity's one-hop neighbours the unit also
mentions. Both are counted here for a whole set of entities at once, by expanding CSR rows and one
``bincount`` — no Python loops over relationship lists, and nothing in-place (safe under inference mode).
"""

from __future__ import annotations

import torch

from hyperrag.graph.knowledge_graph import KnowledgeGraph


def _csr(rows: torch.Tensor, cols: torch.Tensor, num_rows: int) -> tuple[torch.Tensor, torch.Tensor]:
    """CSR ``(ptr [num_rows + 1], idx)`` of the pairs ``(rows[i], cols[i])``, columns in pair order per row."""
    order = torch.argsort(rows, stable=True)
    ptr = torch.zeros(num_rows + 1, dtype=torch.long)
    ptr[1:] = torch.cumsum(torch.bincount(rows, minlength=num_rows), 0)
    return ptr, cols[order]


def _expand(owner: torch.Tensor, keys: torch.Tensor, ptr: torch.Tensor, idx: torch.Tensor) -> tuple[torch.Tensor,
                                                                                                    torch.Tensor]:
    """For pairs ``(owner[i], keys[i])``, every ``(owner[i], v)`` with ``v`` in CSR row ``keys[i]`` of
    ``(ptr, idx)``. Returns ``(owners, values)`` LongTensors."""
    counts = ptr[keys + 1] - ptr[keys]
    total = int(counts.sum())
    offsets = torch.arange(total) - torch.repeat_interleave(torch.cumsum(counts, 0) - counts, counts)
    values = idx[torch.repeat_interleave(ptr[keys], counts) + offsets]
    return torch.repeat_interleave(owner, counts), values


class GraphIncidence:
    """Incidence structures of one :class:`KnowledgeGraph` (E entities, F facts, P passages).

    Attributes:
        fact_ptr / fact_idx: CSR, the facts each entity is the subject or object of (each fact once per entity).
        neighbour_ptr / neighbour_idx: CSR, each entity's distinct one-hop neighbours (entities sharing a fact).
        degree: LongTensor [E], the number of facts (relationships) of each entity — GraphRAG's entity rank.
    """

    def __init__(self, graph: KnowledgeGraph) -> None:
        self.graph = graph
        num_e = graph.num_entities
        fe = graph.fact_entities  # [F, 2]
        num_f = int(fe.shape[0])
        distinct = fe[:, 0] != fe[:, 1]  # a self-loop fact counts once for its entity
        ends = torch.cat([fe[:, 0], fe[distinct, 1]])
        facts = torch.cat([torch.arange(num_f), torch.arange(num_f)[distinct]])
        order = torch.argsort(facts, stable=True)  # facts ascending within each entity
        self.fact_ptr, self.fact_idx = _csr(ends[order], facts[order], num_e)
        self.degree = self.fact_ptr[1:] - self.fact_ptr[:-1]
        pairs = torch.unique(torch.stack([torch.cat([fe[distinct, 0], fe[distinct, 1]]),
                                          torch.cat([fe[distinct, 1], fe[distinct, 0]])]), dim=1)
        self.neighbour_ptr, self.neighbour_idx = _csr(pairs[0], pairs[1], num_e)

    # ---- per entity -----------------------------------------------------------------------------------------
    def facts(self, entity: int) -> torch.Tensor:
        """LongTensor: the facts of ``entity`` (ascending)."""
        return self.fact_idx[self.fact_ptr[entity]: self.fact_ptr[entity + 1]]

    def passages(self, entity: int) -> torch.Tensor:
        """LongTensor: the passages (positions) mentioning ``entity`` (ascending)."""
        g = self.graph
        return g.entity_passage_idx[g.entity_passage_ptr[entity]: g.entity_passage_ptr[entity + 1]]

    def fact_passages(self, fact: int) -> torch.Tensor:
        """LongTensor: the passages (positions) a fact comes from."""
        g = self.graph
        return g.fact_passage_idx[g.fact_passage_ptr[fact]: g.fact_passage_ptr[fact + 1]]

    # ---- for a set of entities at once ----------------------------------------------------------------------
    def _count(self, rows: torch.Tensor, passages: torch.Tensor, k: int) -> torch.Tensor:
        num_p = self.graph.num_passages
        return torch.bincount(rows * num_p + passages, minlength=k * num_p).reshape(k, num_p).float()

    def relation_counts(self, entities: torch.Tensor) -> torch.Tensor:
        """FloatTensor [k, P]: per entity, how many of its facts come from each passage (GraphRAG's
        ``count_relationships`` of an entity and a text unit)."""
        g, k = self.graph, int(entities.shape[0])
        rows, facts = _expand(torch.arange(k), entities.long(), self.fact_ptr, self.fact_idx)
        rows, passages = _expand(rows, facts, g.fact_passage_ptr, g.fact_passage_idx)
        return self._count(rows, passages, k)

    def neighbour_counts(self, entities: torch.Tensor) -> torch.Tensor:
        """FloatTensor [k, P]: per entity, how many of its one-hop neighbours each passage mentions (LightRAG's
        ``relation_counts`` of an entity's text chunk)."""
        g, k = self.graph, int(entities.shape[0])
        rows, neighbours = _expand(torch.arange(k), entities.long(), self.neighbour_ptr, self.neighbour_idx)
        rows, passages = _expand(rows, neighbours, g.entity_passage_ptr, g.entity_passage_idx)
        return self._count(rows, passages, k)
