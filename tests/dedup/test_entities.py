"""GraphRAG relationship strengths: both directions of an entity pair merged into one mean, which weights the
relation edge joining them."""

from __future__ import annotations

import json

import pytest
import torch

from hyperrag.data import sample_dataset
from hyperrag.data.openie import read_openie
from hyperrag.dedup.entities import relation_strengths, strength_weighted
from hyperrag.graph.build import build_knowledge_graph
from hyperrag.graph.knowledge_graph import EdgeType
from tests.reliability.doubles import HashEncoder


@pytest.fixture(scope="module")
def graph():
    ds = sample_dataset()
    return build_knowledge_graph(ds.corpus, read_openie(ds.openie_path, ds.corpus), HashEncoder())[0]


def test_strengths_of_both_directions_average_into_the_relation_weight(graph, tmp_path):
    rel = (graph.edge_type.long() == int(EdgeType.RELATION)).nonzero().squeeze(1)
    j = int(rel[0])
    a, b = (int(x) for x in graph.edge_index[:, j])
    names = graph.entity_names
    relations = [{"source": names[a], "target": names[b], "strength": 4},
                 {"source": names[b].upper(), "target": names[a], "strength": 8},  # the other way, other case
                 {"source": names[a], "target": names[a], "strength": 10},        # a self relation: ignored
                 {"source": "nobody", "target": names[b], "strength": 1}]         # unknown entity: ignored
    path = tmp_path / "openie.json"
    path.write_text(json.dumps({"docs": [{"graphrag": {"relations": relations[:2]}},
                                         {"graphrag": {"relations": relations[2:]}}]}))
    strengths = relation_strengths(graph, path)
    assert len(strengths) == 1 and strengths.pairs.tolist() == [[min(a, b)], [max(a, b)]]
    assert strengths.mean.tolist() == [6.0]
    weighted = strength_weighted(graph, strengths).edge_weight
    assert float(weighted[j]) == pytest.approx(0.6)
    others = torch.ones_like(weighted, dtype=torch.bool)
    others[j] = False  # a relation edge joins a pair once (undirected): every other edge keeps its weight
    assert torch.equal(weighted[others], graph.edge_weight[others])
    assert len(relation_strengths(graph, None)) == 0 and strength_weighted(graph, relation_strengths(graph, None)) is graph
