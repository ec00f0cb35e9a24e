"""Merge duplicate entities of a knowledge graph: union-find over merge pairs, then one rewrite of the tensors.

Every accepted pair that joins two different groups is one *merge* and is recorded (stage, both names, score)
so the result can be audited. The rewritten graph keeps, per group, the member mentioned by most passages as
the canonical entity (ties: the lower id); it pools

* passages: the union of the members' passages (``entity_passage`` CSR);
* evidence edges: relation edges of all members (parallel edges add their weights, edges inside a group
  vanish), synonym edges (max weight), passage context edges;
* facts: every fact keeps its text and points at the groups of its subject and object;
* descriptions and types (:class:`~hyperrag.dedup.entities.EntityInfo`): distinct descriptions of all
  members, majority type.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import torch

from hyperrag.dedup.entities import EntityInfo
from hyperrag.graph.knowledge_graph import EdgeType, KnowledgeGraph
from hyperrag.graph.utils import csr_from_lists, undirected_edges


@dataclass
class MergeResult:
    """Attributes:
        graph: the deduplicated knowledge graph.
        info: pooled types and descriptions, aligned with ``graph.entity_names``.
        group: LongTensor [E_old], new entity id of every old entity.
        canonical: LongTensor [E_new], the old id whose name a new entity carries.
        records: the audit trail, one dict per merge.
        stats: counts per stage, entities before/after, edges pooled.
    """

    graph: KnowledgeGraph
    info: EntityInfo
    group: torch.Tensor
    canonical: torch.Tensor
    records: list[dict[str, Any]]
    stats: dict[str, Any] = field(default_factory=dict)


def merge_entities(graph: KnowledgeGraph, info: EntityInfo, group: torch.Tensor,
                   records: list[dict[str, Any]] | None = None) -> MergeResult:
    """Rewrite ``graph`` with the entities of each group of ``group`` (LongTensor [E], ids 0..G-1) merged."""
    num_e, num_p = graph.num_entities, graph.num_passages
    num_g = int(group.max()) + 1 if num_e else 0
    counts = graph.entity_passage_count
    # canonical member per group: most passages, then lowest id
    order = sorted(range(num_e), key=lambda e: (int(group[e]), -int(counts[e]), e))
    canonical = torch.full((num_g,), -1, dtype=torch.long)
    for e in order:
        g = int(group[e])
        if canonical[g] < 0:
            canonical[g] = e
    names = [graph.entity_names[int(c)] for c in canonical]

    # node remap: entity e → group[e]; passage node E + j → G + j
    node_map = torch.cat([group, torch.arange(num_p) + num_g])
    new_nodes = num_g + num_p
    parts_index, parts_weight, parts_type = [], [], []
    pooled: dict[str, int] = {}
    for etype, reduce in ((EdgeType.RELATION, "sum"), (EdgeType.SYNONYM, "amax"), (EdgeType.CONTEXT, "amax")):
        mask = graph.edge_type == int(etype)
        if not bool(mask.any()):
            continue
        idx, w = undirected_edges(node_map[graph.edge_index[:, mask]], graph.edge_weight[mask].float(), new_nodes,
                                  reduce)
        pooled[etype.name.lower()] = int(mask.sum()) - int(idx.shape[1])
        parts_index.append(idx)
        parts_weight.append(w)
        parts_type.append(torch.full((idx.shape[1],), int(etype), dtype=torch.uint8))
    other = ~torch.isin(graph.edge_type.long(), torch.tensor([int(EdgeType.RELATION), int(EdgeType.SYNONYM),
                                                              int(EdgeType.CONTEXT)]))
    if bool(other.any()):  # any further edge type is carried over, remapped
        parts_index.append(node_map[graph.edge_index[:, other]])
        parts_weight.append(graph.edge_weight[other].float())
        parts_type.append(graph.edge_type[other].to(torch.uint8))
    edge_index = torch.cat(parts_index, 1) if parts_index else torch.empty(2, 0, dtype=torch.long)
    edge_weight = torch.cat(parts_weight) if parts_weight else torch.empty(0)
    edge_type = torch.cat(parts_type) if parts_type else torch.empty(0, dtype=torch.uint8)

    passages: list[set[int]] = [set() for _ in range(num_g)]
    ptr, idx = graph.entity_passage_ptr.tolist(), graph.entity_passage_idx.tolist()
    for e in range(num_e):
        passages[int(group[e])].update(idx[ptr[e]: ptr[e + 1]])
    ep_ptr, ep_idx = csr_from_lists([sorted(s) for s in passages])

    types: list[Counter] = [Counter() for _ in range(num_g)]
    descriptions: list[list[str]] = [[] for _ in range(num_g)]
    for e in order:
        g = int(group[e])
        if info.types[e]:
            types[g][info.types[e]] += 1
        for d in info.descriptions[e]:
            if d not in descriptions[g]:
                descriptions[g].append(d)
    new_info = EntityInfo([max(c, key=lambda k: (c[k], k)) if c else "" for c in types], descriptions,
                          info.source, dict(info.stats))

    merged = KnowledgeGraph(
        entity_names=names, passage_ids=list(graph.passage_ids), edge_index=edge_index, edge_weight=edge_weight,
        edge_type=edge_type, facts=list(graph.facts), fact_entities=group[graph.fact_entities],
        fact_passage_ptr=graph.fact_passage_ptr, fact_passage_idx=graph.fact_passage_idx,
        entity_passage_ptr=ep_ptr, entity_passage_idx=ep_idx)
    merged.stats = {**graph.stats, "nodes": merged.num_nodes, "entities": num_g, "edges": merged.num_edges,
                    "edges_by_type": merged.count_by_type()}
    stats = {"entities_before": num_e, "entities_after": num_g, "merged_entities": num_e - num_g,
             "groups_with_duplicates": int((torch.bincount(group, minlength=num_g) > 1).sum()) if num_e else 0,
             "edges_pooled": pooled}
    return MergeResult(merged, new_info, group, canonical, list(records or []), stats)
