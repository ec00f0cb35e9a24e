"""Every graph the framework builds round-trips through PyG's ``HeteroData``, and a PyG heterogeneous GNN trains on
an exported knowledge graph (the interop is used, not only claimed)."""

from __future__ import annotations

from dataclasses import fields, replace

import pytest
import torch

from hyperrag.config import method_settings
from hyperrag.interop import from_pyg, to_pyg


@pytest.fixture(scope="module")
def sample_kg(encoder):
    """The bundled sample's knowledge graph (hand-written OpenIE, real MiniLM embeddings)."""
    from hyperrag.data import sample_dataset
    from hyperrag.data.openie import read_openie
    from hyperrag.graph.build import build_knowledge_graph
    from hyperrag.index.kg_index import graph_settings

    ds = sample_dataset()
    settings = graph_settings()  # shallow: its knn node stays a KnnSettings (asdict would make it a dict)
    return build_knowledge_graph(ds.corpus, read_openie(ds.openie_path, ds.corpus), encoder,
                                 **{f.name: getattr(settings, f.name) for f in fields(settings)})


def _equal_tensors(a: object, b: object, names: tuple[str, ...]) -> None:
    for name in names:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and torch.equal(x, y), name


def test_knowledge_graph_round_trips_with_its_embeddings(sample_kg):
    graph, emb = sample_kg
    data = to_pyg(graph, embeddings=emb)
    data.validate()
    assert set(data.node_types) == {"entity", "passage", "fact"}
    assert ("entity", "relation", "entity") in data.edge_types and ("passage", "rev_context", "entity") in data.edge_types
    assert data["entity"].x.shape == (graph.num_entities, 384) and data["passage"].num_nodes == graph.num_passages
    assert data["entity", "synonym", "entity"].edge_index.shape[1] == 2 * graph.count_by_type().get("synonym", 0)
    homogeneous = data.edge_type_subgraph([("entity", "relation", "entity"), ("entity", "synonym", "entity")])
    assert homogeneous.is_undirected()  # both directions of every undirected edge, as PyG's layers expect
    back, back_emb = from_pyg(data)
    _equal_tensors(graph, back, KnowledgeGraphTensors)
    assert back.entity_names == graph.entity_names and back.passage_ids == graph.passage_ids
    assert back.facts == graph.facts and back.stats == graph.stats
    _equal_tensors(emb, back_emb, ("entity", "fact", "passage"))
    graph_only, none = from_pyg(to_pyg(graph))
    assert none is None and torch.equal(graph_only.edge_index, graph.edge_index)


KnowledgeGraphTensors = ("edge_index", "edge_weight", "edge_type", "fact_entities", "fact_passage_ptr",
                         "fact_passage_idx", "entity_passage_ptr", "entity_passage_idx")


def test_an_updated_graph_round_trips(sample_kg):
    """After a delete (new numbering, fewer facts and edges) the export still round-trips exactly."""
    from hyperrag.data import sample_dataset
    from hyperrag.data.openie import read_openie
    from hyperrag.graph.incremental import delete_passages
    from hyperrag.graph.provenance import build_provenance

    graph, emb = sample_kg
    ds = sample_dataset()
    updated = delete_passages(graph, emb, build_provenance(graph, read_openie(ds.openie_path, ds.corpus)),
                              ["p02", "p07"])
    assert updated.graph.num_passages == graph.num_passages - 2
    back, back_emb = from_pyg(to_pyg(updated.graph, embeddings=updated.embeddings))
    _equal_tensors(updated.graph, back, KnowledgeGraphTensors)
    _equal_tensors(updated.embeddings, back_emb, ("entity", "fact", "passage"))


def test_saved_hetero_data_loads_back_without_pickled_code(sample_kg, tmp_path):
    from hyperrag.interop import load_pyg, save_pyg

    graph, emb = sample_kg
    save_pyg(to_pyg(graph, embeddings=emb), tmp_path / "kg.pt")
    plain = torch.load(tmp_path / "kg.pt", weights_only=True)  # tensors and containers only
    assert isinstance(plain, dict) and "_global_store" in plain
    back, back_emb = from_pyg(load_pyg(tmp_path / "kg.pt"))
    _equal_tensors(graph, back, KnowledgeGraphTensors)
    _equal_tensors(emb, back_emb, ("entity", "fact", "passage"))


def test_a_pyg_heterogeneous_gnn_trains_on_the_exported_graph(sample_kg):
    """to_hetero(GraphSAGE) learns link prediction on the entity–passage context edges: the loss drops."""
    from torch_geometric.nn import SAGEConv, to_hetero

    graph, emb = sample_kg
    data = to_pyg(graph, embeddings=emb)
    torch.manual_seed(0)

    class SAGE(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = SAGEConv((-1, -1), 32)
            self.conv2 = SAGEConv((-1, -1), 32)

        def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
            return self.conv2(self.conv1(x, edge_index).relu(), edge_index)

    model = to_hetero(SAGE(), data.metadata(), aggr="sum")
    pos = data["entity", "context", "passage"].edge_index
    gen = torch.Generator().manual_seed(0)

    def loss_fn() -> torch.Tensor:
        h = model(data.x_dict, data.edge_index_dict)
        neg = torch.stack([torch.randint(0, graph.num_entities, (pos.shape[1],), generator=gen),
                           torch.randint(0, graph.num_passages, (pos.shape[1],), generator=gen)])
        score = lambda e: (h["entity"][e[0]] * h["passage"][e[1]]).sum(-1)
        logits = torch.cat([score(pos), score(neg)])
        labels = torch.cat([torch.ones(pos.shape[1]), torch.zeros(pos.shape[1])])
        return torch.nn.functional.binary_cross_entropy_with_logits(logits, labels)

    with torch.no_grad():
        model(data.x_dict, data.edge_index_dict)  # materialise the lazy layers
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(30):
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert sum(losses[-5:]) / 5 < 0.6 * sum(losses[:5]) / 5, losses


def test_passage_graph_and_forest_round_trip(encoder):
    """HyperRAG's passage graph from YAKE keyword edges and LLM-free query graphs, pinned and fused."""
    from hyperrag.data import sample_dataset
    from hyperrag.passage_graph.entities import key_entity_edges
    from hyperrag.passage_graph.explicit import keyword_edges
    from hyperrag.passage_graph.graph import PassageGraph
    from hyperrag.passage_graph.implicit import QueryGraphBuilder
    from hyperrag.passage_graph.keywords import extract_keywords

    settings = method_settings("hyperrag")
    ds = sample_dataset()
    texts = [p.content for p in ds.corpus.passages]
    keywords = extract_keywords(texts, settings.keywords, show_progress=False)
    titles = [p.title for p in ds.corpus.passages]
    graph = PassageGraph(len(texts), explicit=keyword_edges(keywords, settings.explicit),
                         entity=key_entity_edges(titles, [p.text for p in ds.corpus.passages], settings.key_entity))
    builder = QueryGraphBuilder(encoder.encode(texts), texts, settings.implicit, keyword_sets=keywords)
    questions = [q.question for q in ds.queries]
    edges, _ = builder.build(questions, encoder.encode(questions))
    graph.add_queries(questions, edges)
    graph.pin("fused")
    graph.stats = {"llm_calls": 0}
    assert len(graph.explicit) and len(graph.implicit) and len(graph.pinned) and len(graph.entity)

    data = to_pyg(graph, x=encoder.encode(texts))
    data.validate()
    assert data["query"].num_nodes == len(questions) and data["passage"].x.shape[0] == len(texts)
    assert any(rel.startswith("pinned_") for _, rel, _ in data.edge_types)
    assert any(rel.startswith("entity_") for _, rel, _ in data.edge_types)  # the key-entity links travel too
    back = from_pyg(data)
    assert back.to_dict() == graph.to_dict()

    forest = graph.forest("fused")
    fdata = to_pyg(forest, num_passages=len(texts), questions=questions)
    assert ("query", "query", "passage") in fdata.edge_types
    fback = from_pyg(fdata)
    assert fback.edges.to_dict() == forest.edges.to_dict() and torch.equal(fback.parent, forest.parent)
    assert fback.is_valid() and fback.stats() == forest.stats()


def test_hierarchy_with_gates_round_trips(tmp_path):
    """A three-level Leiden hierarchy (with copies) and its causal gates (the unverified prefilter: no LLM)."""
    from hyperrag.hierarchy.gates import GateBuilder
    from hyperrag.hierarchy.hierarchy import build_hierarchy
    from hyperrag.hierarchy.modules import ModuleTree
    from tests.hierarchy.graphs import planted_partition

    edge_index, weight, _ = planted_partition([12] * 8, 0.6, 0.004, seed=3, groups=[2, 2, 2, 2], p_group=0.08)
    hs = replace(method_settings("hugrag").hierarchy, backend="cpu", context_window=20, min_module_size=2)
    hierarchy = build_hierarchy(edge_index, weight, 96, torch.full((96,), 2), hs)
    assert hierarchy.num_levels == 3 and int(torch.cat(hierarchy.copies).sum()) > 0  # copies carried down
    tree = ModuleTree.from_hierarchy(hierarchy)
    module_emb = torch.nn.functional.normalize(torch.randn(tree.num_modules, 16, generator=torch.Generator()
                                                           .manual_seed(0)), dim=1)
    gate_settings = replace(method_settings("hugrag").gates, verifier="none", threshold=-1.0, top_m=3)
    gates = GateBuilder(None, gate_settings, progress=False).build(tree, [""] * tree.num_modules, module_emb)
    assert set(gates.kinds) == {"intra", "inter"}

    data = to_pyg(hierarchy, gates=gates, module_x=module_emb)
    data.validate()
    total = sum(hierarchy.num_modules(lv) for lv in range(1, hierarchy.num_levels + 1))
    assert data["module"].num_nodes == total and data["entity"].num_nodes == 96
    assert data["entity", "member_of", "module"].edge_index.shape[1] == 96
    gate_index = data["module", "gate", "module"].edge_index
    assert torch.allclose(data["module"].x[gate_index[0]], module_emb[gates.pairs[0]])  # the same modules
    back, back_gates = from_pyg(data)
    assert back.modularity == hierarchy.modularity and back.stats == hierarchy.stats
    for a, b in zip(back.memberships + back.copies, hierarchy.memberships + hierarchy.copies):
        assert torch.equal(a, b)
    assert torch.equal(back_gates.pairs, gates.pairs) and back_gates.kinds == gates.kinds


def test_causal_graph_round_trips(tmp_path, encoder):
    from hyperrag.causal.graph import build_causal_graph
    from tests.causal.corpus import causal_dataset

    causal = replace(method_settings("cdfrag").causal, use_openie=False, alias_threshold=0.6)
    graph = build_causal_graph(causal_dataset(tmp_path), encoder, causal)
    assert graph.num_edges and graph.alias_index.shape[1]
    data = to_pyg(graph)
    data.validate()
    assert data["concept", "causes", "concept"].edge_index.shape[1] == graph.num_edges
    back = from_pyg(data)
    _equal_tensors(graph, back, graph.TENSORS)
    assert (back.node_names, back.edge_info, back.passage_ids, back.stats) == \
        (graph.node_names, graph.edge_info, graph.passage_ids, graph.stats)


def test_foreign_data_is_refused(sample_kg):
    from torch_geometric.data import HeteroData

    with pytest.raises(ValueError, match="not a graph exported by hyperrag"):
        from_pyg(HeteroData())
    with pytest.raises(TypeError, match="no PyG conversion"):
        to_pyg(object())
