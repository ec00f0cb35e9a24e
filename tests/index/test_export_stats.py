"""``python -m hyperrag.index export`` (GraphML / PyG / Parquet) and ``stats`` on a built sample index."""

from __future__ import annotations

import json

import pytest
import torch

from hyperrag.data import sample_dataset
from hyperrag.index.__main__ import main as cli_main
from hyperrag.index.kg_index import load_kg_directory


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory, encoder):
    ds = sample_dataset()
    folder = tmp_path_factory.mktemp("export") / "idx"
    cli_main(["build", "--index", str(folder), "--corpus", str(ds.corpus.source), "--openie", str(ds.openie_path)])
    return folder


def test_graphml_opens_in_networkx(index_dir, tmp_path, capsys):
    import networkx as nx

    out = cli_main(["export", "--index", str(index_dir), "--format", "graphml", "--out", str(tmp_path / "kg.graphml")])
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == out
    kg = load_kg_directory(index_dir).graph
    g = nx.read_graphml(tmp_path / "kg.graphml")
    assert g.number_of_nodes() == kg.num_nodes and g.number_of_edges() == kg.num_edges
    curie = g.nodes["passage:p01"]
    assert curie["kind"] == "passage" and curie["label"] == "Marie Curie" and "Warsaw" in curie["text"]
    assert g.nodes["entity:marie curie"]["kind"] == "entity"
    types = {d["type"] for _, _, d in g.edges(data=True)}
    assert types == set(kg.count_by_type())
    ctx = [d for u, v, d in g.edges(["passage:p01"], data=True)]
    assert ctx and all(d["type"] == "context" and d["weight"] == 1.0 for d in ctx)


def test_pyg_export_round_trips(index_dir, tmp_path):
    from hyperrag.interop import from_pyg, load_pyg

    cli_main(["export", "--index", str(index_dir), "--format", "pyg", "--out", str(tmp_path / "kg.pt")])
    kg = load_kg_directory(index_dir)
    graph, emb = from_pyg(load_pyg(tmp_path / "kg.pt"))
    assert torch.equal(graph.edge_index, kg.graph.edge_index) and torch.equal(graph.edge_weight, kg.graph.edge_weight)
    assert torch.equal(emb.passage, kg.embeddings.passage) and graph.facts == kg.graph.facts


def test_parquet_tables(index_dir, tmp_path):
    import pyarrow.parquet as pq

    cli_main(["export", "--index", str(index_dir), "--format", "parquet", "--out", str(tmp_path / "pq")])
    kg = load_kg_directory(index_dir).graph
    nodes = pq.read_table(tmp_path / "pq" / "nodes.parquet").to_pylist()
    edges = pq.read_table(tmp_path / "pq" / "edges.parquet").to_pylist()
    facts = pq.read_table(tmp_path / "pq" / "facts.parquet").to_pylist()
    assert len(nodes) == kg.num_nodes and len(edges) == kg.num_edges and len(facts) == len(kg.facts)
    first = facts[0]
    assert nodes[first["subject_node"]]["name"] == first["subject"] and first["passage_ids"]
    assert {nodes[e["target"]]["kind"] for e in edges if e["type"] == "context"} == {"passage"}


def test_stats_counts_and_hubs(index_dir, capsys):
    stats = cli_main(["stats", "--index", str(index_dir), "--top", "3", "--json"])
    assert json.loads(capsys.readouterr().out.strip()) == stats
    kg = load_kg_directory(index_dir).graph
    assert stats["nodes"] == {"entity": kg.num_entities, "passage": kg.num_passages}
    assert stats["edges"] == kg.count_by_type()
    ent, pas = stats["degree"]["entity"], stats["degree"]["passage"]
    # every edge has two ends: mean degrees × node counts add up to twice the edges
    assert round(ent["mean"] * ent["nodes"] + pas["mean"] * pas["nodes"]) == 2 * kg.num_edges
    assert sum(ent["histogram"].values()) == kg.num_entities
    hubs = stats["hubs"]
    assert len(hubs) == 3 and [h["degree"] for h in hubs] == sorted((h["degree"] for h in hubs), reverse=True)
    assert hubs[0]["degree"] == ent["max"] and sum(hubs[0]["by_type"].values()) == hubs[0]["degree"]
    text = cli_main(["stats", "--index", str(index_dir), "--top", "3"])
    assert text == stats and "largest hubs:" in capsys.readouterr().out
