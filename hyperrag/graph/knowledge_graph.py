"""The knowledge graph as tensors: typed nodes (entity, passage) and typed undirected edges."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path

import torch

from hyperrag.utils.atomic import atomic_torch_save, atomic_write_text


class NodeType(IntEnum):
    ENTITY = 0
    PASSAGE = 1
    MODULE = 2


class EdgeType(IntEnum):
    RELATION = 0  # entity – entity, from a triple (weight = number of triples linking them)
    SYNONYM = 1  # entity – entity, embedding cosine >= threshold (weight = cosine)
    CONTEXT = 2  # passage – entity the passage mentions (weight = 1)
    KEYWORD = 3
    HIERARCHY = 4
    GATE = 5
    CAUSAL = 6


@dataclass
class KnowledgeGraph:
    """Entity nodes ``0..E-1`` then passage nodes ``E..E+P-1``; edges stored once per unordered pair and type.

    Attributes:
        entity_names: canonical entity names, [E].
        passage_ids: corpus passage ids, [P] (node ``E + j`` is passage ``j``).
        edge_index: LongTensor [2, M], ``edge_index[0] < edge_index[1]``.
        edge_weight: FloatTensor [M].
        edge_type: ByteTensor [M] of :class:`EdgeType`.
        facts: unique canonical triples ``(subject, relation, object)``, [F].
        fact_entities: LongTensor [F, 2], entity node ids of subject and object.
        fact_passage_ptr / fact_passage_idx: CSR, passages (positions) each fact comes from.
        entity_passage_ptr / entity_passage_idx: CSR, passages (positions) mentioning each entity.
    """

    entity_names: list[str]
    passage_ids: list[str]
    edge_index: torch.Tensor
    edge_weight: torch.Tensor
    edge_type: torch.Tensor
    facts: list[tuple[str, str, str]]
    fact_entities: torch.Tensor
    fact_passage_ptr: torch.Tensor
    fact_passage_idx: torch.Tensor
    entity_passage_ptr: torch.Tensor
    entity_passage_idx: torch.Tensor
    stats: dict = field(default_factory=dict)

    @property
    def num_entities(self) -> int:
        return len(self.entity_names)

    @property
    def num_passages(self) -> int:
        return len(self.passage_ids)

    @property
    def num_nodes(self) -> int:
        return self.num_entities + self.num_passages

    @property
    def num_edges(self) -> int:
        return int(self.edge_index.shape[1])

    def passage_node(self, position: torch.Tensor | int) -> torch.Tensor | int:
        return position + self.num_entities

    @property
    def entity_passage_count(self) -> torch.Tensor:
        """LongTensor [E]: number of passages mentioning each entity."""
        return self.entity_passage_ptr[1:] - self.entity_passage_ptr[:-1]

    def weighted_edges(self, type_weight: dict[EdgeType, float] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Edges with per-type multipliers applied; types with multiplier 0 are dropped.

        Returns:
            ``(edge_index [2, M'], edge_weight [M'])``.
        """
        weight = self.edge_weight.clone()
        if type_weight:
            for etype, mult in type_weight.items():
                weight[self.edge_type == int(etype)] *= float(mult)
        keep = weight > 0
        return self.edge_index[:, keep], weight[keep]

    def count_by_type(self) -> dict[str, int]:
        counts = torch.bincount(self.edge_type.long(), minlength=len(EdgeType))
        return {t.name.lower(): int(counts[t]) for t in EdgeType if counts[t] > 0}

    # ---- persistence -------------------------------------------------------------------------------------
    TENSORS = ("edge_index", "edge_weight", "edge_type", "fact_entities", "fact_passage_ptr", "fact_passage_idx",
               "entity_passage_ptr", "entity_passage_idx")

    def save(self, directory: str | Path) -> list[str]:
        """Write ``graph.pt`` (tensors) and ``graph.json`` (names, facts, stats); return the file names."""
        directory = Path(directory)
        atomic_torch_save({k: getattr(self, k) for k in self.TENSORS}, directory / "graph.pt")
        meta = {"entity_names": self.entity_names, "passage_ids": self.passage_ids,
                "facts": [list(f) for f in self.facts], "stats": self.stats}
        atomic_write_text(directory / "graph.json", json.dumps(meta, ensure_ascii=False))
        return ["graph.pt", "graph.json"]

    @classmethod
    def load(cls, directory: str | Path) -> KnowledgeGraph:
        directory = Path(directory)
        tensors = torch.load(directory / "graph.pt", weights_only=True)
        meta = json.loads((directory / "graph.json").read_text(encoding="utf-8"))
        return cls(entity_names=meta["entity_names"], passage_ids=meta["passage_ids"],
                   facts=[tuple(f) for f in meta["facts"]], stats=meta.get("stats", {}), **tensors)
