import torch

from hyperrag.data import read_openie, sample_dataset
from hyperrag.graph.build import build_knowledge_graph
from hyperrag.graph.knowledge_graph import EdgeType, KnowledgeGraph


def test_sample_graph_structure(tmp_path, encoder):
    ds = sample_dataset()
    graph, emb = build_knowledge_graph(ds.corpus, read_openie(ds.openie_path, ds.corpus), encoder)
    assert graph.num_passages == 12 and graph.num_nodes == graph.num_entities + 12
    u, v = graph.edge_index
    assert bool((u < v).all()), "edges stored once per unordered pair"
    ctx = graph.edge_type == EdgeType.CONTEXT
    assert bool((v[ctx] >= graph.num_entities).all()) and bool((u[ctx] < graph.num_entities).all())
    rel = graph.edge_type == EdgeType.RELATION
    assert bool((v[rel] < graph.num_entities).all())
    # "port city" appears in three triples of three passages: Le Havre (x2) and Gdansk
    name = graph.entity_names.index("port city")
    assert int(graph.entity_passage_count[name]) == 3
    # a relation edge counts repeated triples between the same pair
    a, b = graph.entity_names.index("le havre"), graph.entity_names.index("port city")
    pair = (u == min(a, b)) & (v == max(a, b)) & rel
    assert float(graph.edge_weight[pair].sum()) == 2.0
    assert emb.entity.shape == (graph.num_entities, 384) and emb.fact.shape[0] == len(graph.facts)
    graph.save(tmp_path)
    again = KnowledgeGraph.load(tmp_path)
    assert again.entity_names == graph.entity_names and torch.equal(again.edge_index, graph.edge_index)


def test_synonym_edges_respect_threshold(encoder):
    ds = sample_dataset()
    graph, emb = build_knowledge_graph(ds.corpus, read_openie(ds.openie_path, ds.corpus), encoder,
                                       synonym_threshold=0.7)
    syn = graph.edge_type == EdgeType.SYNONYM
    u, v = graph.edge_index[:, syn]
    sims = (emb.entity[u] * emb.entity[v]).sum(1)
    assert syn.any() and torch.allclose(sims, graph.edge_weight[syn], atol=1e-5)
    assert bool((graph.edge_weight[syn] >= 0.7 - 1e-6).all())
