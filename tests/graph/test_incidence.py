"""GraphIncidence against brute force on the sample knowledge graph: degrees, facts per (entity, passage) and
one-hop neighbours per (entity, passage)."""

import pytest
import torch

from hyperrag.data import sample_dataset
from hyperrag.graph.incidence import GraphIncidence
from hyperrag.index.kg_index import graph_settings, load_or_build_kg_index


@pytest.fixture(scope="module")
def graph(encoder, tmp_path_factory):
    return load_or_build_kg_index(sample_dataset(), encoder, graph_settings(),
                                  tmp_path_factory.mktemp("index")).graph


def test_counts_match_brute_force(graph):
    inc = GraphIncidence(graph)
    ends = graph.fact_entities.tolist()
    fact_passages = [set(inc.fact_passages(f).tolist()) for f in range(len(ends))]
    entity_passages = [set(inc.passages(e).tolist()) for e in range(graph.num_entities)]
    facts_of = [[f for f, (s, o) in enumerate(ends) if e in (s, o)] for e in range(graph.num_entities)]
    neighbours = [{o if s == e else s for s, o in (ends[f] for f in facts_of[e])} - {e}
                  for e in range(graph.num_entities)]
    assert inc.degree.tolist() == [len(f) for f in facts_of]
    assert all(inc.facts(e).tolist() == facts_of[e] for e in range(graph.num_entities))
    entities = torch.arange(graph.num_entities)
    relation = inc.relation_counts(entities)
    neighbour = inc.neighbour_counts(entities)
    assert relation.shape == neighbour.shape == (graph.num_entities, graph.num_passages)
    for e in range(graph.num_entities):
        for p in range(graph.num_passages):
            assert relation[e, p] == sum(p in fact_passages[f] for f in facts_of[e])
            assert neighbour[e, p] == sum(p in entity_passages[n] for n in neighbours[e])
    assert relation.sum() > 0 and neighbour.sum() > 0  # the sample graph is connected enough to test anything


def test_counts_under_inference_mode(graph):
    """Lightning's predict loop retrieves under ``torch.inference_mode``: nothing may update a tensor in place."""
    inc = GraphIncidence(graph)
    ents = torch.tensor([0, 1, 2])
    expected = inc.relation_counts(ents), inc.neighbour_counts(ents)
    with torch.inference_mode():
        assert torch.equal(inc.relation_counts(ents), expected[0])
        assert torch.equal(inc.neighbour_counts(ents), expected[1])
