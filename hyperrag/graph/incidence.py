"""Who-touches-what in a knowledge graph, as sparse tensors: an entity's facts (relationships), its passages
(text units), its one-hop neighbours, and per (entity, passage) how much of the entity's neighbourhood a
passage holds.

GraphRAG's local search orders an entity's text units by how many of the entity's relationships come from
each unit; LightRAG's local mode orders them by how many of the entity's one-hop neighbours the unit also
mentions. Both are rows of a sparse product computed here once per graph, for a whole set of entities at a
time, instead of loops over relationship lists.
"""

from __future__ import annotations

import torch

from hyperrag.graph.knowledge_graph import KnowledgeGraph


def _csr_rows(ptr: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """Row index of every CSR entry: LongTensor [nnz]."""
    return torch.repeat_interleave(torch.arange(ptr.shape[0] - 1), ptr[1:] - ptr[:-1])


def _sparse(rows: torch.Tensor, cols: torch.Tensor, values: torch.Tensor, shape: tuple[int, int]) -> torch.Tensor:
    """A coalesced COO matrix (duplicate entries summed)."""
    return torch.sparse_coo_tensor(torch.stack([rows, cols]), values, shape, check_invariants=True).coalesce()


def _expand(owner: torch.Tensor, keys: torch.Tensor, ptr: torch.Tensor, idx: torch.Tensor) -> tuple[torch.Tensor,
                                                                                                    torch.Tensor]:
    """For entries ``(owner[i], keys[i])``, every ``(owner[i], v)`` with ``v`` in CSR row ``keys[i]`` of
    ``(ptr, idx)``. Returns ``(rows, cols)`` LongTensors."""
    counts = ptr[keys + 1] - ptr[keys]
    total = int(counts.sum())
    offsets = torch.arange(total) - torch.repeat_interleave(torch.cumsum(counts, 0) - counts, counts)
    cols = idx[torch.repeat_interleave(ptr[keys], counts) + offsets]
    return torch.repeat_interleave(owner, counts), cols


class GraphIncidence:
    """Incidence structures of one :class:`KnowledgeGraph` (E entities, F facts, P passages).

    Attributes:
        fact_ptr / fact_idx: CSR, the facts each entity is the subject or object of (each fact once per entity).
        degree: LongTensor [E], the number of facts (relationships) of each entity — GraphRAG's entity rank.
        mentions: sparse FloatTensor [E, P], 1 where a passage mentions the entity.
        fact_mentions: sparse FloatTensor [E, P], how many of the entity's facts come from the passage.
        adjacency: sparse FloatTensor [E, E], 1 between entities that share a fact (one hop).
    """

    def __init__(self, graph: KnowledgeGraph) -> None:
        self.graph = graph
        num_e, num_p = graph.num_entities, graph.num_passages
        fe = graph.fact_entities  # [F, 2]
        num_f = int(fe.shape[0])
        fact_of = torch.arange(num_f).repeat_interleave(2)
        ends = fe.reshape(-1)
        distinct = fe[:, 0] != fe[:, 1]  # a self-loop fact counts once for its entity
        keep = torch.stack([torch.ones(num_f, dtype=torch.bool), distinct], dim=1).reshape(-1)
        ends, fact_of = ends[keep], fact_of[keep]
        order = torch.argsort(ends, stable=True)
        self.fact_idx = fact_of[order]
        self.fact_ptr = torch.zeros(num_e + 1, dtype=torch.long)
        self.fact_ptr[1:] = torch.cumsum(torch.bincount(ends, minlength=num_e), 0)
        self.degree = self.fact_ptr[1:] - self.fact_ptr[:-1]

        ent_rows = _csr_rows(graph.entity_passage_ptr, graph.entity_passage_idx)
        self.mentions = _sparse(ent_rows, graph.entity_passage_idx, torch.ones(ent_rows.shape[0]), (num_e, num_p))

        # every (entity, fact) pair expanded over the fact's passages; duplicates summed: facts per passage
        rows, cols = _expand(_csr_rows(self.fact_ptr, self.fact_idx), self.fact_idx, graph.fact_passage_ptr,
                             graph.fact_passage_idx)
        self.fact_mentions = _sparse(rows, cols, torch.ones(rows.shape[0]), (num_e, num_p))

        src, dst = fe[distinct, 0], fe[distinct, 1]
        a = _sparse(torch.cat([src, dst]), torch.cat([dst, src]), torch.ones(2 * src.shape[0]), (num_e, num_e))
        self.adjacency = torch.sparse_coo_tensor(a.indices(), torch.ones_like(a.values()), a.shape,
                                                 check_invariants=True).coalesce()

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
    def relation_counts(self, entities: torch.Tensor) -> torch.Tensor:
        """FloatTensor [k, P]: per entity, how many of its facts come from each passage (GraphRAG's
        ``count_relationships`` of an entity and a text unit)."""
        return _rows(self.fact_mentions, entities)

    def neighbour_counts(self, entities: torch.Tensor) -> torch.Tensor:
        """FloatTensor [k, P]: per entity, how many of its one-hop neighbours each passage mentions (LightRAG's
        ``relation_counts`` of an entity's text chunk)."""
        neighbours = _rows(self.adjacency, entities)  # [k, E]
        return torch.sparse.mm(self.mentions.t(), neighbours.t()).t()


def _rows(matrix: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """Dense rows ``matrix[rows]`` of a sparse [N, M] matrix: FloatTensor [k, M]."""
    return matrix.index_select(0, rows.long()).to_dense()
