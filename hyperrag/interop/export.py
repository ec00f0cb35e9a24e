"""A knowledge-graph index written for other tools: GraphML (Gephi, networkx, yEd), PyG (``HeteroData``) or Parquet.

``python -m hyperrag.index export --index DIR --format graphml|pyg|parquet --out PATH``.

* ``graphml``: one file; nodes ``entity:<name>`` and ``passage:<id>`` with ``kind``, ``label`` (entity name, or
  passage title) and, for passages, ``passage_id`` and ``text``; one undirected edge per stored edge with
  ``type`` (relation / synonym / context) and ``weight`` — a pair joined by two types gets two parallel edges
  (networkx reads it back as a ``MultiGraph``).
* ``pyg``: :func:`hyperrag.interop.pyg.knowledge_graph_to_pyg` with the index's embeddings as node features,
  written by :func:`~hyperrag.interop.pyg.save_pyg` (read it back with :func:`~hyperrag.interop.pyg.load_pyg`).
* ``parquet``: a folder of ``nodes.parquet`` (``node``, ``kind``, ``name``, ``passage_id``, ``title``),
  ``edges.parquet`` (``source``, ``target``, ``type``, ``weight``, node numbers as in ``nodes``) and
  ``facts.parquet`` (``subject``, ``relation``, ``object``, their node numbers, ``passage_ids``) — needs
  ``pyarrow`` (the ``export`` extra).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from hyperrag.errors import InputError
from hyperrag.graph.knowledge_graph import EdgeType

if TYPE_CHECKING:
    from hyperrag.data.types import Passage
    from hyperrag.graph.build import GraphEmbeddings
    from hyperrag.graph.knowledge_graph import KnowledgeGraph

FORMATS = ("graphml", "pyg", "parquet")


def _node_names(graph: KnowledgeGraph) -> list[str]:
    return [f"entity:{n}" for n in graph.entity_names] + [f"passage:{p}" for p in graph.passage_ids]


def to_networkx(graph: KnowledgeGraph, passages: list[Passage] | None = None) -> Any:
    """The knowledge graph as a networkx ``MultiGraph`` (node and edge attributes as written to GraphML)."""
    import networkx as nx

    texts = {p.id: p for p in passages or []}
    g = nx.MultiGraph()
    names = _node_names(graph)
    for name, entity in zip(names, graph.entity_names):
        g.add_node(name, kind="entity", label=entity)
    for name, pid in zip(names[graph.num_entities:], graph.passage_ids):
        passage = texts.get(pid)
        g.add_node(name, kind="passage", label=(passage.title if passage and passage.title else pid),
                   passage_id=pid, text=passage.text if passage else "")
    u, v = graph.edge_index.tolist()
    for a, b, t, w in zip(u, v, graph.edge_type.tolist(), graph.edge_weight.tolist()):
        g.add_edge(names[a], names[b], type=EdgeType(t).name.lower(), weight=float(w))
    return g


def write_graphml(path: str | Path, graph: KnowledgeGraph, passages: list[Passage] | None = None) -> Path:
    import networkx as nx

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    nx.write_graphml(to_networkx(graph, passages), path)
    return path


def write_pyg(path: str | Path, graph: KnowledgeGraph, embeddings: GraphEmbeddings | None) -> Path:
    from hyperrag.interop.pyg import knowledge_graph_to_pyg, save_pyg

    return save_pyg(knowledge_graph_to_pyg(graph, embeddings), path)


def write_parquet(folder: str | Path, graph: KnowledgeGraph, passages: list[Passage] | None = None) -> Path:
    """``nodes.parquet``, ``edges.parquet`` and ``facts.parquet`` in ``folder``."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError("Parquet export needs pyarrow (pip install pyarrow, or the 'export' extra)",
                         field="--format") from None
    from hyperrag.graph.utils import csr_owner

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    titles = {p.id: p.title for p in passages or []}
    num_e, num_p = graph.num_entities, graph.num_passages
    pq.write_table(pa.table({
        "node": list(range(num_e + num_p)),
        "kind": ["entity"] * num_e + ["passage"] * num_p,
        "name": list(graph.entity_names) + [None] * num_p,
        "passage_id": [None] * num_e + list(graph.passage_ids),
        "title": [None] * num_e + [titles.get(p) for p in graph.passage_ids],
    }), folder / "nodes.parquet")
    pq.write_table(pa.table({
        "source": graph.edge_index[0].tolist(), "target": graph.edge_index[1].tolist(),
        "type": [EdgeType(t).name.lower() for t in graph.edge_type.tolist()],
        "weight": pa.array(graph.edge_weight.tolist(), type=pa.float32()),
    }), folder / "edges.parquet")
    supports: list[list[str]] = [[] for _ in graph.facts]
    for f, p in zip(csr_owner(graph.fact_passage_ptr).tolist(), graph.fact_passage_idx.tolist()):
        supports[f].append(graph.passage_ids[p])
    fe = graph.fact_entities.reshape(-1, 2).tolist()
    pq.write_table(pa.table({
        "subject": [s for s, _, _ in graph.facts], "relation": [r for _, r, _ in graph.facts],
        "object": [o for _, _, o in graph.facts], "subject_node": [a for a, _ in fe],
        "object_node": [b for _, b in fe], "passage_ids": supports,
    }), folder / "facts.parquet")
    return folder


def export_index(index: str | Path, fmt: str, out: str | Path) -> dict[str, Any]:
    """Write the knowledge-graph index at ``index`` (verified first) as ``fmt`` to ``out``; return a summary."""
    from hyperrag.index.kg_index import load_kg_directory
    from hyperrag.index.passages import read_passages
    from hyperrag.index.store import IndexDirectory

    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}; expected one of {FORMATS}", field="--format")
    kg = load_kg_directory(index)
    directory = IndexDirectory(index, stage="graph")
    passages = read_passages(directory, directory.manifest() or {})
    if fmt == "graphml":
        path = write_graphml(out, kg.graph, passages)
    elif fmt == "pyg":
        path = write_pyg(out, kg.graph, kg.embeddings)
    else:
        path = write_parquet(out, kg.graph, passages)
    return {"format": fmt, "out": str(path), "nodes": kg.graph.num_nodes, "edges": kg.graph.num_edges,
            "facts": len(kg.graph.facts)}


__all__ = ["FORMATS", "export_index", "to_networkx", "write_graphml", "write_parquet", "write_pyg"]
