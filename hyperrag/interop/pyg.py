"""The knowledge graph as PyTorch Geometric ``HeteroData``, and back; one entry point for every graph kind.

:func:`to_pyg` converts any graph the framework builds; :func:`from_pyg` restores it from the ``HeteroData``
(``data.hyperrag_kind`` says which kind it holds). The knowledge graph (:class:`KnowledgeGraph` plus its
:class:`GraphEmbeddings`) becomes:

=============================================  ==========================================================
node / edge type                               content
=============================================  ==========================================================
``entity``                                     ``x`` [E, D] name embeddings, ``name`` (list of E strings)
``passage``                                    ``x`` [P, D] passage embeddings, ``passage_id`` (P strings)
``fact``                                       ``x`` [F, D] fact embeddings, ``triple`` (F (s, r, o) tuples)
``(entity, relation, entity)``                 both directions; ``edge_weight``: triples linking the pair
``(entity, synonym, entity)``                  both directions; ``edge_weight``: cosine of the two names
``(entity, context, passage)``                 an entity the passage mentions; ``edge_weight`` 1
``(passage, rev_context, entity)``             the same edges reversed (what ``T.ToUndirected`` would add)
``(fact, has_subject | has_object, entity)``   a fact's subject and object
``(fact, stated_in, passage)``                 the passages stating the fact
``(entity | passage, rev_<relation>, fact)``   the fact edges reversed
=============================================  ==========================================================

Every node type receives messages, so ``to_hetero`` models update all of them.

Undirected edges between nodes of one type are stored in both directions (``data.is_undirected()`` holds), as
PyG's message-passing layers expect; :func:`knowledge_graph_from_pyg` keeps one copy (``u < v``) and returns the
edges in a full build's order (by type, then ``(u, v)``), so a built graph round-trips exactly. The entity →
passage mentions (``entity_passage_*``) are the context edges by construction and are restored from them.
The other kinds live in :mod:`hyperrag.interop.pyg_methods`. ``torch_geometric`` is imported on first use.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from hyperrag.graph.knowledge_graph import EdgeType, KnowledgeGraph
from hyperrag.graph.utils import csr_from_pairs, csr_owner, sort_typed_edges
from hyperrag.interop.hetero import KIND_ATTR, check_kind, new_hetero_data
from hyperrag.interop.pyg_methods import CONVERTERS

if TYPE_CHECKING:
    from torch_geometric.data import HeteroData

    from hyperrag.graph.build import GraphEmbeddings

KNOWLEDGE_GRAPH = "knowledge_graph"


def _empty_index() -> torch.Tensor:
    return torch.empty(2, 0, dtype=torch.long)


def knowledge_graph_to_pyg(graph: KnowledgeGraph, embeddings: GraphEmbeddings | None = None) -> HeteroData:
    """The knowledge graph (and its embeddings, as node features ``x``) as ``HeteroData`` (see the module
    docstring for the layout).

    Raises:
        ValueError: the graph's entity → passage mentions differ from its context edges (no builder of the
            framework makes such a graph; the export would not round-trip).
    """
    from hyperrag.graph.utils import both_directions

    num_e, num_p = graph.num_entities, graph.num_passages
    data = new_hetero_data(KNOWLEDGE_GRAPH)
    data["entity"].num_nodes = num_e
    data["entity"].name = list(graph.entity_names)
    data["passage"].num_nodes = num_p
    data["passage"].passage_id = list(graph.passage_ids)
    data["fact"].num_nodes = len(graph.facts)
    data["fact"].triple = [tuple(f) for f in graph.facts]
    if embeddings is not None:
        for node_type, x in (("entity", embeddings.entity), ("passage", embeddings.passage),
                             ("fact", embeddings.fact)):
            if x.numel():
                data[node_type].x = x.float()
    u, v = graph.edge_index
    is_passage = graph.edge_index >= num_e
    for etype in EdgeType:
        mask = graph.edge_type == int(etype)
        if not bool(mask.any()):
            continue
        name = etype.name.lower()
        src_p, dst_p = is_passage[0, mask], is_passage[1, mask]
        if bool((src_p != dst_p).any()) and bool((src_p == dst_p).any()):
            raise ValueError(f"{name} edges join both same-type and entity–passage node pairs")
        weight = graph.edge_weight[mask].float()
        if bool((src_p != dst_p).all()):  # entity – passage (entities come first: u is the entity)
            index = torch.stack([u[mask], v[mask] - num_e])
            data["entity", name, "passage"].edge_index = index
            data["entity", name, "passage"].edge_weight = weight
            data["passage", f"rev_{name}", "entity"].edge_index = index.flip(0)
            data["passage", f"rev_{name}", "entity"].edge_weight = weight
        else:
            node_type = "passage" if bool(src_p.all()) else "entity"
            offset = num_e if node_type == "passage" else 0
            index, w = both_directions(torch.stack([u[mask], v[mask]]) - offset, weight,
                                       num_p if offset else num_e, "max")
            data[node_type, name, node_type].edge_index = index
            data[node_type, name, node_type].edge_weight = w
    _check_mentions(graph)
    facts = torch.arange(len(graph.facts))
    fe = graph.fact_entities.reshape(-1, 2)
    for rel, dst, index in (("has_subject", "entity", torch.stack([facts, fe[:, 0]])),
                            ("has_object", "entity", torch.stack([facts, fe[:, 1]])),
                            ("stated_in", "passage", torch.stack([csr_owner(graph.fact_passage_ptr),
                                                                  graph.fact_passage_idx]))):
        data["fact", rel, dst].edge_index = index
        data[dst, f"rev_{rel}", "fact"].edge_index = index.flip(0)  # so that fact nodes are updated too
    data.kg_stats = dict(graph.stats)
    return data


def _check_mentions(graph: KnowledgeGraph) -> None:
    ctx = graph.edge_type == int(EdgeType.CONTEXT)
    pairs = graph.edge_index[:, ctx] - torch.tensor([[0], [graph.num_entities]])
    ptr, idx = csr_from_pairs(pairs[0], pairs[1], graph.num_entities, graph.num_passages)
    if not (torch.equal(ptr, graph.entity_passage_ptr) and torch.equal(idx, graph.entity_passage_idx)):
        raise ValueError("the graph's entity → passage mentions differ from its context edges")


def knowledge_graph_from_pyg(data: HeteroData) -> tuple[KnowledgeGraph, GraphEmbeddings | None]:
    """The knowledge graph (and its embeddings when every node type has ``x``) from :func:`knowledge_graph_to_pyg`'s
    layout. Edges come back in a full build's order (type, then ``(u, v)``).

    Raises:
        ValueError: ``data`` is not an exported knowledge graph.
    """
    from hyperrag.graph.build import GraphEmbeddings

    check_kind(data, KNOWLEDGE_GRAPH)
    num_e, num_p = data["entity"].num_nodes, data["passage"].num_nodes
    offset = {"entity": 0, "passage": num_e}
    parts_index, parts_weight, parts_type = [], [], []
    for src, rel, dst in data.edge_types:
        if "fact" in (src, dst) or rel.startswith("rev_"):
            continue
        etype = EdgeType[rel.upper()]
        store = data[src, rel, dst]
        index = store.edge_index + torch.tensor([[offset[src]], [offset[dst]]])
        weight = store.edge_weight.float()
        if src == dst:  # both directions stored: keep u < v
            keep = index[0] < index[1]
            index, weight = index[:, keep], weight[keep]
        parts_index.append(index)
        parts_weight.append(weight)
        parts_type.append(torch.full((index.shape[1],), int(etype), dtype=torch.uint8))
    edge_index = torch.cat(parts_index, 1) if parts_index else _empty_index()
    edge_weight = torch.cat(parts_weight) if parts_weight else torch.empty(0)
    edge_type = torch.cat(parts_type) if parts_type else torch.empty(0, dtype=torch.uint8)
    edge_index, edge_weight, edge_type = sort_typed_edges(edge_index, edge_weight, edge_type, num_e + num_p)
    num_f = data["fact"].num_nodes
    subj = _fact_targets(data, "has_subject", num_f)
    obj = _fact_targets(data, "has_object", num_f)
    stated = _edges(data, ("fact", "stated_in", "passage"))
    fp_ptr, fp_idx = csr_from_pairs(stated[0], stated[1], num_f, num_p)
    ctx = edge_index[:, edge_type == int(EdgeType.CONTEXT)]
    ep_ptr, ep_idx = csr_from_pairs(ctx[0], ctx[1] - num_e, num_e, num_p)
    graph = KnowledgeGraph(
        entity_names=list(data["entity"].name), passage_ids=list(data["passage"].passage_id),
        edge_index=edge_index, edge_weight=edge_weight, edge_type=edge_type,
        facts=[tuple(f) for f in data["fact"].triple], fact_entities=torch.stack([subj, obj], 1).reshape(-1, 2),
        fact_passage_ptr=fp_ptr, fact_passage_idx=fp_idx, entity_passage_ptr=ep_ptr, entity_passage_idx=ep_idx,
        stats=dict(getattr(data, "kg_stats", {}) or {}))
    stores = [data[t] for t in ("entity", "fact", "passage")]
    if all("x" in s or s.num_nodes == 0 for s in stores):
        xs = [s.x if "x" in s else torch.empty(0, 0) for s in stores]
        return graph, GraphEmbeddings(*xs)
    return graph, None


def _edges(data: HeteroData, edge_type: tuple[str, str, str]) -> torch.Tensor:
    return data[edge_type].edge_index if edge_type in data.edge_types else _empty_index()


def _fact_targets(data: HeteroData, rel: str, num_facts: int) -> torch.Tensor:
    """LongTensor [F]: the entity each fact points at through ``rel``."""
    index = _edges(data, ("fact", rel, "entity"))
    out = torch.full((num_facts,), -1, dtype=torch.long)
    out[index[0]] = index[1]
    if bool((out < 0).any()):
        raise ValueError(f"{int((out < 0).sum())} fact(s) without a {rel} edge")
    return out


def save_pyg(data: HeteroData, path: str | Path) -> Path:
    """Write ``data`` as plain tensors and containers (``HeteroData.to_dict``), so :func:`load_pyg` reads it with
    ``torch.load(weights_only=True)``: loading runs no pickled code."""
    from hyperrag.utils.atomic import atomic_torch_save

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_torch_save(data.to_dict(), path)
    return path


def load_pyg(path: str | Path) -> HeteroData:
    """A ``HeteroData`` written by :func:`save_pyg` (``python -m hyperrag.index export --format pyg``)."""
    import torch
    from torch_geometric.data import HeteroData

    return HeteroData.from_dict(torch.load(path, weights_only=True))


def to_pyg(graph: Any, **kwargs: Any) -> HeteroData:
    """Any graph of the framework as ``HeteroData``: a :class:`KnowledgeGraph` (``embeddings=``), HyperRAG's
    :class:`~hyperrag.passage_graph.graph.PassageGraph` or :class:`~hyperrag.passage_graph.fusion.Forest`
    (``num_passages=``, ``questions=``), HugRAG's :class:`~hyperrag.hierarchy.hierarchy.Hierarchy` (``gates=``,
    ...), CDF-RAG's :class:`~hyperrag.causal.graph.CausalGraph`. Keyword arguments go to the kind's converter."""
    if isinstance(graph, KnowledgeGraph):
        return knowledge_graph_to_pyg(graph, **kwargs)
    for cls_path, to_fn, _ in CONVERTERS.values():
        if _is_instance(graph, cls_path):
            return to_fn(graph, **kwargs)
    raise TypeError(f"no PyG conversion for {type(graph).__name__}")


def from_pyg(data: HeteroData) -> Any:
    """The framework's graph ``data`` was exported from (see :func:`to_pyg`); the kind's converter decides
    what comes back (the knowledge graph: ``(graph, embeddings or None)``)."""
    kind = getattr(data, KIND_ATTR, None)
    if kind == KNOWLEDGE_GRAPH:
        return knowledge_graph_from_pyg(data)
    if kind not in CONVERTERS:
        raise ValueError(f"not a graph exported by hyperrag (hyperrag_kind={kind!r})")
    return CONVERTERS[kind][2](data)


def _is_instance(obj: Any, cls_path: str) -> bool:
    """``isinstance`` by the class's dotted path (the class's module need not be imported to ask)."""
    return any(f"{c.__module__}.{c.__qualname__}" == cls_path for c in type(obj).__mro__)


__all__ = ["KIND_ATTR", "check_kind", "from_pyg", "knowledge_graph_from_pyg", "knowledge_graph_to_pyg", "load_pyg",
           "new_hetero_data", "save_pyg", "to_pyg"]
