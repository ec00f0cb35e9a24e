"""Typed, directed passage-graph edges: the common currency of the explicit, implicit and fused graphs.

Node ids: passages ``0..P-1``; query nodes (query-guided graphs) ``P..P+Q-1``. An edge is ``parent → child``
with a weight and a relation type (:data:`RELATIONS`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

# keyword: explicit keyword overlap; query: query node → a passage it needed; support / complement / expand:
# passage pairs as the LLM (or its stand-in) relates them for one query; entity: two passages that share a key
# entity (the fusion's merge, hyperrag.passage_graph.entities). Append only: saved graphs store the indices.
RELATIONS = ("keyword", "query", "support", "complement", "expand", "entity")


@dataclass
class EdgeSet:
    """Directed edges ``parent → child``.

    Attributes:
        parent: LongTensor [E].
        child: LongTensor [E].
        weight: FloatTensor [E] (higher = stronger; fusion keeps strong edges first).
        relation: LongTensor [E] of indices into :data:`RELATIONS`.
    """

    parent: torch.Tensor
    child: torch.Tensor
    weight: torch.Tensor
    relation: torch.Tensor

    @classmethod
    def empty(cls) -> EdgeSet:
        z = torch.empty(0, dtype=torch.long)
        return cls(z, z.clone(), torch.empty(0), z.clone())

    @classmethod
    def from_lists(cls, parent: list[int], child: list[int], weight: list[float], relation: list[str]) -> EdgeSet:
        if not parent:
            return cls.empty()
        return cls(torch.tensor(parent, dtype=torch.long), torch.tensor(child, dtype=torch.long),
                   torch.tensor(weight, dtype=torch.float32),
                   torch.tensor([RELATIONS.index(r) for r in relation], dtype=torch.long))

    def __len__(self) -> int:
        return int(self.parent.numel())

    def cat(self, other: EdgeSet) -> EdgeSet:
        return EdgeSet(torch.cat([self.parent, other.parent]), torch.cat([self.child, other.child]),
                       torch.cat([self.weight, other.weight]), torch.cat([self.relation, other.relation]))

    def select(self, mask_or_index: torch.Tensor) -> EdgeSet:
        return EdgeSet(self.parent[mask_or_index], self.child[mask_or_index], self.weight[mask_or_index],
                       self.relation[mask_or_index])

    @property
    def index(self) -> torch.Tensor:
        """LongTensor [2, E]: rows (parent, child)."""
        return torch.stack([self.parent, self.child])

    def count_by_relation(self) -> dict[str, int]:
        counts = torch.bincount(self.relation, minlength=len(RELATIONS)).tolist()
        return {r: int(c) for r, c in zip(RELATIONS, counts) if c}

    def to_dict(self) -> dict[str, list]:
        return {"parent": self.parent.tolist(), "child": self.child.tolist(), "weight": self.weight.tolist(),
                "relation": self.relation.tolist()}

    @classmethod
    def from_dict(cls, d: dict[str, list]) -> EdgeSet:
        if not d["parent"]:
            return cls.empty()
        return cls(torch.tensor(d["parent"], dtype=torch.long), torch.tensor(d["child"], dtype=torch.long),
                   torch.tensor(d["weight"], dtype=torch.float32), torch.tensor(d["relation"], dtype=torch.long))
