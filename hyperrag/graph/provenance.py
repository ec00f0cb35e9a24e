"""Provenance of a knowledge graph: which passages support every node and edge.

Stored per passage: the facts its triples produced, with multiplicity (one entry per triple). From
it and the graph's own CSRs every support question has an answer:

- passage node: the passage itself;
- entity node: the passages mentioning it (``graph.entity_passage_*``);
- fact: the passages stating it (``graph.fact_passage_*``);
- relation edge: the passages with a triple linking its two entities (weight = number of such triples);
- context edge: its passage;
- synonym edge: derived from its endpoints' embeddings — it lives exactly as long as both entities do.

Deleting a set of passages removes every node and edge whose support lies inside that set.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import torch

from hyperrag.data.openie import OpenIERecords
from hyperrag.graph.build import canonical_triples
from hyperrag.graph.knowledge_graph import EdgeType, KnowledgeGraph
from hyperrag.graph.utils import csr_from_lists
from hyperrag.utils.atomic import atomic_torch_save

PROVENANCE_FILE = "provenance.pt"


def csr_rows(ptr: torch.Tensor, idx: torch.Tensor) -> list[list[int]]:
    bounds = ptr.tolist()
    values = idx.tolist()
    return [values[a:b] for a, b in pairwise(bounds)]


@dataclass
class GraphProvenance:
    """Per passage position, the fact ids of its triples (CSR, with multiplicity, triple order)."""

    passage_fact_ptr: torch.Tensor
    passage_fact_idx: torch.Tensor

    @property
    def num_passages(self) -> int:
        return self.passage_fact_ptr.numel() - 1

    def passage_facts(self, position: int) -> list[int]:
        a, b = int(self.passage_fact_ptr[position]), int(self.passage_fact_ptr[position + 1])
        return self.passage_fact_idx[a:b].tolist()

    def save(self, directory: str | Path) -> str:
        atomic_torch_save({"passage_fact_ptr": self.passage_fact_ptr, "passage_fact_idx": self.passage_fact_idx},
                          Path(directory) / PROVENANCE_FILE)
        return PROVENANCE_FILE

    @classmethod
    def load(cls, directory: str | Path) -> GraphProvenance:
        return cls(**torch.load(Path(directory) / PROVENANCE_FILE, weights_only=True))


def build_provenance(graph: KnowledgeGraph, openie: OpenIERecords) -> GraphProvenance:
    """Provenance of a graph built by :func:`~hyperrag.graph.build.build_knowledge_graph` from ``openie``."""
    fact_id = {f: i for i, f in enumerate(graph.facts)}
    form = graph.stats.get("text_form", "canonical")
    rows = [[fact_id[t] for t in canonical_triples(triples, form)] for triples in openie.triples]
    return GraphProvenance(*csr_from_lists(rows))


def passage_triples(graph: KnowledgeGraph, provenance: GraphProvenance) -> list[list[tuple[str, str, str]]]:
    """Each passage's canonical triples, reconstructed from the provenance (graph order, triple order, repeats
    kept): ``canonical_triples`` of the OpenIE triples the passage was indexed with, also after insert/delete.

    Raises:
        ValueError: the provenance does not have one row per passage of ``graph``.
    """
    if provenance.num_passages != graph.num_passages:
        raise ValueError(f"provenance has {provenance.num_passages} passages, the graph {graph.num_passages}")
    facts = [(str(s), str(r), str(o)) for s, r, o in graph.facts]
    return [[facts[f] for f in row] for row in csr_rows(provenance.passage_fact_ptr, provenance.passage_fact_idx)]


def edge_support(graph: KnowledgeGraph, provenance: GraphProvenance, edge: int) -> list[str]:
    """Passage ids supporting edge ``edge`` (for a synonym edge: those supporting both endpoints' existence)."""
    u, v = (int(x) for x in graph.edge_index[:, edge])
    etype = int(graph.edge_type[edge])
    if etype == EdgeType.CONTEXT:
        return [graph.passage_ids[v - graph.num_entities]]
    if etype == EdgeType.RELATION:
        out = []
        for pos in range(provenance.num_passages):
            for f in provenance.passage_facts(pos):
                a, b = (int(x) for x in graph.fact_entities[f])
                if {a, b} == {u, v}:
                    out.append(graph.passage_ids[pos])
                    break
        return out
    return sorted(set(node_support(graph, u)) | set(node_support(graph, v)))


def node_support(graph: KnowledgeGraph, node: int) -> list[str]:
    """Passage ids supporting node ``node`` (a passage supports itself)."""
    if node >= graph.num_entities:
        return [graph.passage_ids[node - graph.num_entities]]
    a, b = int(graph.entity_passage_ptr[node]), int(graph.entity_passage_ptr[node + 1])
    return [graph.passage_ids[p] for p in graph.entity_passage_idx[a:b].tolist()]


__all__ = [
    "PROVENANCE_FILE",
    "GraphProvenance",
    "build_provenance",
    "csr_rows",
    "edge_support",
    "node_support",
    "passage_triples",
]
