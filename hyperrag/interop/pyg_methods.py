"""The methods' own graphs as PyTorch Geometric ``HeteroData``, and back: HyperRAG's passage graph and forest,
HugRAG's module hierarchy with its causal gates, CDF-RAG's causal graph.

Layouts (node ids are local to their node type, as PyG expects; every converter round-trips exactly):

* **passage graph** (:class:`~hyperrag.passage_graph.graph.PassageGraph`): node types ``passage`` (P, optional
  ``x``) and ``query`` (Q, ``question`` strings); each directed edge ``parent → child`` of the explicit,
  implicit, pinned and key-entity edge sets under ``(parent type, "<set>_<relation>", child type)``, e.g.
  ``(query, implicit_query, passage)`` or ``(passage, explicit_keyword, passage)``, with ``edge_weight`` and
  ``order`` (the edge's position in its set).
* **passage forest** (:class:`~hyperrag.passage_graph.fusion.Forest`, what the Poincaré ball trains on): the
  same node types; edges ``(parent type, <relation>, child type)`` with ``edge_weight`` and ``order``.
* **hierarchy** (:class:`~hyperrag.hierarchy.hierarchy.Hierarchy`): node types ``entity`` (E) and ``module``
  (every module of every level, level 1 first; ``level``, ``is_copy``, and ``x`` when module embeddings are given);
  ``(entity, member_of, module)`` to the level-1 module, ``(module, member_of, module)`` to the parent one level
  up, their reverses ``contains``, and ``(module, gate, module)`` for HugRAG's causal gates (source → target,
  ``kind`` 0 intra / 1 inter-layer) between the modules that stand for the gate's tree modules (a chain of
  copies is one tree module: the highest one stands for it).
* **causal graph** (:class:`~hyperrag.causal.graph.CausalGraph`): node type ``concept`` (``x`` = span embeddings,
  ``name``); ``(concept, causes, concept)`` cause → effect with ``edge_weight``, ``passage`` (corpus position)
  and ``info`` (provenance dicts); ``(concept, alias, concept)`` (both directions) with ``edge_weight``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from hyperrag.graph.utils import ptr_from_counts
from hyperrag.interop.hetero import check_kind, new_hetero_data

if TYPE_CHECKING:
    from torch_geometric.data import HeteroData

    from hyperrag.causal.graph import CausalGraph
    from hyperrag.hierarchy.gates import GateResult
    from hyperrag.hierarchy.hierarchy import Hierarchy
    from hyperrag.passage_graph.edges import EdgeSet
    from hyperrag.passage_graph.fusion import Forest
    from hyperrag.passage_graph.graph import PassageGraph

PASSAGE_GRAPH, PASSAGE_FOREST, HIERARCHY, CAUSAL_GRAPH = "passage_graph", "passage_forest", "hierarchy", "causal_graph"
EDGE_SETS = ("explicit", "implicit", "pinned", "entity")
GATE_KINDS = ("intra", "inter")


# ---- HyperRAG: passage graph and forest ----------------------------------------------------------------------
def _passage_nodes(data: HeteroData, num_passages: int, questions: list[str], x: torch.Tensor | None) -> None:
    data["passage"].num_nodes = num_passages
    data["query"].num_nodes = len(questions)
    data["query"].question = list(questions)
    if x is not None:
        data["passage"].x = x.float()


def _put_edges(data: HeteroData, edges: EdgeSet, num_passages: int, prefix: str) -> None:
    """``edges`` under ``(parent type, prefix + relation, child type)``, with weights and set positions."""
    from hyperrag.passage_graph.edges import RELATIONS

    order = torch.arange(len(edges))
    for r, relation in enumerate(RELATIONS):
        for src_q in (False, True):
            for dst_q in (False, True):
                mask = (edges.relation == r) & ((edges.parent >= num_passages) == src_q) \
                    & ((edges.child >= num_passages) == dst_q)
                if not bool(mask.any()):
                    continue
                key = ("query" if src_q else "passage", prefix + relation, "query" if dst_q else "passage")
                data[key].edge_index = torch.stack([edges.parent[mask] - num_passages * src_q,
                                                    edges.child[mask] - num_passages * dst_q])
                data[key].edge_weight = edges.weight[mask].float()
                data[key].order = order[mask]


def _take_edges(data: HeteroData, num_passages: int, prefix: str) -> EdgeSet:
    """The edge set stored by :func:`_put_edges` under ``prefix``, in its original order."""
    from hyperrag.passage_graph.edges import RELATIONS, EdgeSet

    parts = []
    for src, rel, dst in data.edge_types:
        if not rel.startswith(prefix) or rel[len(prefix):] not in RELATIONS:
            continue
        store = data[src, rel, dst]
        index = store.edge_index + torch.tensor([[num_passages * (src == "query")], [num_passages * (dst == "query")]])
        relation = torch.full((index.shape[1],), RELATIONS.index(rel[len(prefix):]), dtype=torch.long)
        parts.append((store.order, EdgeSet(index[0], index[1], store.edge_weight.float(), relation)))
    if not parts:
        return EdgeSet.empty()
    order = torch.cat([o for o, _ in parts])
    merged = parts[0][1]
    for _, es in parts[1:]:
        merged = merged.cat(es)
    return merged.select(torch.argsort(order))


def passage_graph_to_pyg(graph: PassageGraph, x: torch.Tensor | None = None) -> HeteroData:
    """HyperRAG's passage graph (every edge set) as ``HeteroData``; ``x``: passage features [P, D]."""
    data = new_hetero_data(PASSAGE_GRAPH)
    _passage_nodes(data, graph.num_passages, graph.questions, x)
    for name in EDGE_SETS:
        _put_edges(data, getattr(graph, name), graph.num_passages, f"{name}_")
    data.passage_graph_stats = dict(graph.stats)
    data.implicit_first = bool(graph.implicit_first)
    data.entity_merge = bool(graph.entity_merge)
    data.after_update = str(graph.after_update)
    data.graph_questions = list(graph.graph_questions)  # the paper's graph joins questions without query nodes
    return data


def passage_graph_from_pyg(data: HeteroData) -> PassageGraph:
    from hyperrag.passage_graph.graph import PassageGraph

    check_kind(data, PASSAGE_GRAPH)
    p = data["passage"].num_nodes
    sets = {name: _take_edges(data, p, f"{name}_") for name in EDGE_SETS}
    questions = list(data["query"].question)
    return PassageGraph(p, questions, sets["explicit"], sets["implicit"],
                        dict(data.passage_graph_stats), bool(data.implicit_first), sets["pinned"], sets["entity"],
                        bool(getattr(data, "entity_merge", False)), list(getattr(data, "graph_questions", questions)),
                        str(getattr(data, "after_update", "pinned_first")))


def forest_to_pyg(forest: Forest, num_passages: int, questions: list[str] | None = None,
                  x: torch.Tensor | None = None) -> HeteroData:
    """A passage forest (``forest.num_nodes`` = passages + queries) as ``HeteroData``.

    Args:
        num_passages: P; nodes ``P..`` are query nodes.
        questions: the query nodes' texts (default: empty strings).
        x: passage features [P, D].
    """
    num_queries = forest.num_nodes - num_passages
    data = new_hetero_data(PASSAGE_FOREST)
    _passage_nodes(data, num_passages, list(questions) if questions is not None else [""] * num_queries, x)
    _put_edges(data, forest.edges, num_passages, "")
    data.dropped_cycle, data.dropped_second_parent = forest.dropped_cycle, forest.dropped_second_parent
    return data


def forest_from_pyg(data: HeteroData) -> Forest:
    from hyperrag.passage_graph.fusion import Forest

    check_kind(data, PASSAGE_FOREST)
    p = data["passage"].num_nodes
    edges = _take_edges(data, p, "")
    parent = torch.full((p + data["query"].num_nodes,), -1, dtype=torch.long)
    parent[edges.child] = edges.parent
    return Forest(edges, parent, int(data.dropped_cycle), int(data.dropped_second_parent))


# ---- HugRAG: module hierarchy and gates ----------------------------------------------------------------------
def hierarchy_to_pyg(hierarchy: Hierarchy, gates: GateResult | torch.Tensor | None = None,
                     gate_kinds: list[str] | None = None, module_x: torch.Tensor | None = None,
                     entity_x: torch.Tensor | None = None) -> HeteroData:
    """HugRAG's hierarchy (and causal gates) as ``HeteroData``.

    Args:
        gates: a :class:`~hyperrag.hierarchy.gates.GateResult` or LongTensor [2, G] of module-tree ids
            (source, target), as the HugRAG retriever holds them.
        gate_kinds: ``intra`` / ``inter`` per gate (default: taken from a ``GateResult``, else ``intra``).
        module_x: FloatTensor [M_tree, D], one row per module-tree module (e.g. summary embeddings).
        entity_x: FloatTensor [E, D].
    """
    from hyperrag.hierarchy.modules import ModuleTree

    data = new_hetero_data(HIERARCHY)
    sizes = [hierarchy.num_modules(lv) for lv in range(1, hierarchy.num_levels + 1)]
    offsets = ptr_from_counts(torch.tensor(sizes, dtype=torch.long)).tolist()
    data["entity"].num_nodes = hierarchy.num_entities
    if entity_x is not None:
        data["entity"].x = entity_x.float()
    data["module"].num_nodes = offsets[-1]
    data["module"].level = torch.cat([torch.full((n,), lv, dtype=torch.long) for lv, n in enumerate(sizes, 1)])
    data["module"].is_copy = torch.cat(hierarchy.copies) if sizes else torch.empty(0, dtype=torch.bool)
    entity_up = torch.stack([torch.arange(hierarchy.num_entities), hierarchy.memberships[0]])
    module_up = torch.cat([torch.stack([torch.arange(n) + offsets[lv - 2], memb + offsets[lv - 1]])
                           for lv, (n, memb) in enumerate(zip(sizes[:-1], hierarchy.memberships[1:]), 2)]
                          or [torch.empty(2, 0, dtype=torch.long)], 1)
    for src, index in (("entity", entity_up), ("module", module_up)):
        data[src, "member_of", "module"].edge_index = index
        data["module", "contains", src].edge_index = index.flip(0)
    data.modularity = list(hierarchy.modularity)
    data.hierarchy_stats = dict(hierarchy.stats)
    tree = ModuleTree.from_hierarchy(hierarchy)
    stand_in = _tree_to_hierarchy_modules(tree, offsets)  # [M_tree] → the module node standing for it
    if module_x is not None:
        x = torch.zeros(offsets[-1], module_x.shape[1])
        for lv, ids in enumerate(tree.level_ids, 1):
            x[offsets[lv - 1]: offsets[lv]] = module_x[ids].float()
        data["module"].x = x
    if gates is not None:
        pairs = gates if isinstance(gates, torch.Tensor) else gates.pairs
        kinds = gate_kinds if gate_kinds is not None else (getattr(gates, "kinds", None) or ["intra"] * pairs.shape[1])
        data["module", "gate", "module"].edge_index = stand_in[pairs.reshape(2, -1)]
        data["module", "gate", "module"].kind = torch.tensor([GATE_KINDS.index(k) for k in kinds], dtype=torch.long)
    return data


def _tree_to_hierarchy_modules(tree: Any, offsets: list[int]) -> torch.Tensor:
    """LongTensor [M_tree]: for each module-tree module, its highest hierarchy module (as a module node id)."""
    out = torch.full((tree.num_modules,), -1, dtype=torch.long)
    for lv, ids in enumerate(tree.level_ids, 1):  # later (higher) levels overwrite: the highest copy stands
        out[ids] = torch.arange(ids.shape[0]) + offsets[lv - 1]
    return out


def hierarchy_from_pyg(data: HeteroData) -> tuple[Hierarchy, GateResult | None]:
    """``(hierarchy, gates or None)``; gate pairs in module-tree ids, as HugRAG holds them."""
    from hyperrag.hierarchy.gates import GateResult
    from hyperrag.hierarchy.hierarchy import Hierarchy
    from hyperrag.hierarchy.modules import ModuleTree

    check_kind(data, HIERARCHY)
    level, copy = data["module"].level, data["module"].is_copy
    num_levels = int(level.max()) if level.numel() else 0
    offsets = [0] + [int((level <= lv).sum()) for lv in range(1, num_levels + 1)]
    entity_up = data["entity", "member_of", "module"].edge_index
    memberships = [torch.empty(0, dtype=torch.long)] * num_levels
    first = torch.full((data["entity"].num_nodes,), -1, dtype=torch.long)
    first[entity_up[0]] = entity_up[1]
    memberships[0] = first
    module_up = data["module", "member_of", "module"].edge_index
    for lv in range(2, num_levels + 1):
        child = (module_up[0] >= offsets[lv - 2]) & (module_up[0] < offsets[lv - 1])
        memb = torch.full((offsets[lv - 1] - offsets[lv - 2],), -1, dtype=torch.long)
        memb[module_up[0, child] - offsets[lv - 2]] = module_up[1, child] - offsets[lv - 1]
        memberships[lv - 1] = memb
    copies = [copy[offsets[lv - 1]: offsets[lv]] for lv in range(1, num_levels + 1)]
    hierarchy = Hierarchy(memberships, copies, list(data.modularity), dict(data.hierarchy_stats))
    hierarchy.validate()
    if ("module", "gate", "module") not in data.edge_types:
        return hierarchy, None
    tree = ModuleTree.from_hierarchy(hierarchy)
    to_tree = torch.cat(list(tree.level_ids))  # module node id → its tree module
    store = data["module", "gate", "module"]
    return hierarchy, GateResult(to_tree[store.edge_index], [GATE_KINDS[k] for k in store.kind.tolist()])


# ---- CDF-RAG: causal graph ---------------------------------------------------------------------------------------
def causal_graph_to_pyg(graph: CausalGraph) -> HeteroData:
    data = new_hetero_data(CAUSAL_GRAPH)
    data["concept"].num_nodes = graph.num_nodes
    data["concept"].name = list(graph.node_names)
    if graph.node_emb.numel():
        data["concept"].x = graph.node_emb.float()
    causes = data["concept", "causes", "concept"]
    causes.edge_index, causes.edge_weight = graph.edge_index, graph.edge_weight.float()
    causes.passage, causes.info = graph.edge_passage, list(graph.edge_info)
    alias = data["concept", "alias", "concept"]
    alias.edge_index, alias.edge_weight = graph.alias_index, graph.alias_weight.float()
    data.passage_ids, data.causal_stats = list(graph.passage_ids), dict(graph.stats)
    return data


def causal_graph_from_pyg(data: HeteroData) -> CausalGraph:
    from hyperrag.causal.graph import CausalGraph

    check_kind(data, CAUSAL_GRAPH)
    concept = data["concept"]
    causes, alias = data["concept", "causes", "concept"], data["concept", "alias", "concept"]
    return CausalGraph(node_names=list(concept.name), node_emb=concept.x if "x" in concept else torch.empty(0, 0),
                       edge_index=causes.edge_index, edge_weight=causes.edge_weight, edge_passage=causes.passage,
                       edge_info=list(causes.info), alias_index=alias.edge_index, alias_weight=alias.edge_weight,
                       passage_ids=list(data.passage_ids), stats=dict(data.causal_stats))


#: kind → (class it converts, to_pyg, from_pyg); :func:`hyperrag.interop.pyg.to_pyg` dispatches on the class
CONVERTERS = {
    PASSAGE_GRAPH: ("hyperrag.passage_graph.graph.PassageGraph", passage_graph_to_pyg, passage_graph_from_pyg),
    PASSAGE_FOREST: ("hyperrag.passage_graph.fusion.Forest", forest_to_pyg, forest_from_pyg),
    HIERARCHY: ("hyperrag.hierarchy.hierarchy.Hierarchy", hierarchy_to_pyg, hierarchy_from_pyg),
    CAUSAL_GRAPH: ("hyperrag.causal.graph.CausalGraph", causal_graph_to_pyg, causal_graph_from_pyg),
}

__all__ = ["CONVERTERS", "causal_graph_from_pyg", "causal_graph_to_pyg", "forest_from_pyg", "forest_to_pyg",
           "hierarchy_from_pyg", "hierarchy_to_pyg", "passage_graph_from_pyg", "passage_graph_to_pyg"]
