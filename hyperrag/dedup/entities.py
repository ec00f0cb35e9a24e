"""Per-entity types and descriptions of a knowledge graph, from a GraphRAG-style OpenIE file when it has them.

The GraphRAG extraction (task ``openie_graphrag``, :class:`hyperrag.llm.openie.OpenIEIndexer` with
``style="graphrag"``) stores each passage's typed entities with one-sentence descriptions under the
``graphrag`` field of its OpenIE record. Imported OpenIE files (e.g. MuSiQue's GPT-3.5 triples) have no such
field: every entity then has type ``""`` and no description, and downstream stages use its facts instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import torch

from hyperrag.graph.canonical import canonical_name
from hyperrag.graph.knowledge_graph import KnowledgeGraph
from hyperrag.graph.utils import undirected_edges


@dataclass
class EntityInfo:
    """Aligned with ``graph.entity_names``.

    Attributes:
        types: one type per entity (``""`` when unknown; the most frequent one when passages disagree).
        descriptions: per entity, its distinct descriptions in passage order (possibly empty).
    """

    types: list[str]
    descriptions: list[list[str]]
    source: str = "none"
    stats: dict = field(default_factory=dict)

    @classmethod
    def empty(cls, num_entities: int) -> EntityInfo:
        return cls([""] * num_entities, [[] for _ in range(num_entities)])

    @property
    def has_descriptions(self) -> bool:
        return any(self.descriptions)

    def text(self, entity: int, max_descriptions: int = 3) -> str:
        """``"(type) description; description"`` for one entity (``""`` when nothing is known)."""
        desc = "; ".join(self.descriptions[entity][:max_descriptions])
        kind = f"({self.types[entity]}) " if self.types[entity] else ""
        return (kind + desc).strip()

    def to_json(self) -> dict:
        return {"types": self.types, "descriptions": self.descriptions, "source": self.source, "stats": self.stats}

    @classmethod
    def from_json(cls, data: dict) -> EntityInfo:
        return cls(data["types"], data["descriptions"], data.get("source", "none"), data.get("stats", {}))


def read_entity_info(graph: KnowledgeGraph, openie_path: str | Path | None) -> EntityInfo:
    """Types and descriptions of ``graph``'s entities from the ``graphrag`` records of an OpenIE file.

    Names are matched through :func:`hyperrag.graph.canonical.canonical_name`, the same canonicalisation the
    graph builder applies, so every described entity that made it into a triple is found.
    """
    info = EntityInfo.empty(graph.num_entities)
    if openie_path is None or not Path(openie_path).exists():
        return info
    data = json.loads(Path(openie_path).read_text(encoding="utf-8"))
    docs = data.get("docs", []) if isinstance(data, dict) else data
    index = {name: i for i, name in enumerate(graph.entity_names)}
    type_votes: list[dict[str, int]] = [{} for _ in range(graph.num_entities)]
    described = 0
    for doc in docs:
        elements = doc.get("graphrag") if isinstance(doc, dict) else None
        if not elements:
            continue
        for ent in elements.get("entities", []):
            i = index.get(canonical_name(str(ent.get("name", ""))))
            if i is None:
                continue
            kind = str(ent.get("type", "") or "")
            if kind:
                type_votes[i][kind] = type_votes[i].get(kind, 0) + 1
            desc = " ".join(str(ent.get("description", "") or "").split())
            if desc and desc not in info.descriptions[i]:
                info.descriptions[i].append(desc)
                described += 1
    info.types = [max(v, key=lambda k: (v[k], k)) if v else "" for v in type_votes]
    info.source = "graphrag" if described else "none"
    info.stats = {"described_entities": sum(bool(d) for d in info.descriptions), "descriptions": described}
    return info


@dataclass
class RelationStrengths:
    """Mean GraphRAG relationship strength of each rated entity pair.

    Attributes:
        pairs: LongTensor [2, K], entity pairs stored ``u < v``, sorted by ``(u, v)``.
        mean: FloatTensor [K] (float64), the mean strength (1–10) of the relations joining each pair.
        num_nodes: N, the graph's node count (pair keys are ``u·N + v``).
    """

    pairs: torch.Tensor
    mean: torch.Tensor
    num_nodes: int

    def __len__(self) -> int:
        return int(self.mean.numel())

    def keys(self) -> torch.Tensor:
        """LongTensor [K], ``u·N + v`` ascending."""
        return self.pairs[0] * self.num_nodes + self.pairs[1]


def relation_strengths(graph: KnowledgeGraph, openie_path: str | Path | None) -> RelationStrengths:
    """Mean GraphRAG relationship strength (1–10) per entity pair (either direction) from the ``graphrag``
    records of an OpenIE file; empty for imported OpenIE files (no strengths)."""
    src: list[int] = []
    dst: list[int] = []
    strength: list[float] = []
    if openie_path is not None and Path(openie_path).exists():
        data = json.loads(Path(openie_path).read_text(encoding="utf-8"))
        docs = data.get("docs", []) if isinstance(data, dict) else data
        index = {name: i for i, name in enumerate(graph.entity_names)}
        for doc in docs:
            elements = doc.get("graphrag") if isinstance(doc, dict) else None
            for rel in (elements or {}).get("relations", []):
                a = index.get(canonical_name(str(rel.get("source", ""))))
                b = index.get(canonical_name(str(rel.get("target", ""))))
                if a is None or b is None or a == b:
                    continue
                src.append(a)
                dst.append(b)
                strength.append(float(rel.get("strength", 5) or 5))
    n = graph.num_nodes
    pairs = torch.tensor([src, dst], dtype=torch.long).reshape(2, -1)
    s = torch.tensor(strength, dtype=torch.float64)
    # both directions of a pair merged: the summed strengths and the number of relations rating it
    pairs_u, total = undirected_edges(pairs, s, n, reduce="sum")
    _, count = undirected_edges(pairs, torch.ones_like(s), n, reduce="sum")
    return RelationStrengths(pairs_u, total / count, n)


def strength_weighted(graph: KnowledgeGraph, strengths: RelationStrengths) -> KnowledgeGraph:
    """``graph`` with each relation edge weighted by its pair's GraphRAG strength / 10 (the entity graph's Leiden
    weights: strong, defining relations hold modules together); other edges and unrated pairs keep their weight."""
    if not len(strengths):
        return graph
    from dataclasses import replace

    from hyperrag.graph.knowledge_graph import EdgeType

    weight = graph.edge_weight.clone().float()
    rel = (graph.edge_type.long() == int(EdgeType.RELATION)).nonzero().squeeze(1)
    ei = graph.edge_index[:, rel].long()
    key = ei.min(0).values * strengths.num_nodes + ei.max(0).values
    rated = strengths.keys()
    pos = torch.searchsorted(rated, key).clamp_max(rated.numel() - 1)
    hit = rated[pos] == key
    weight[rel[hit]] = (strengths.mean[pos[hit]] / 10.0).to(weight.dtype)
    return replace(graph, edge_weight=weight.to(graph.edge_weight.dtype))
