"""Incremental updates of the knowledge graph: insert and delete passages without a full rebuild.

Insert: new passages are appended; their triples add entities, facts, relation and context edges;
only new entity names, new facts and new passages are embedded; synonym edges are searched only
from new entities (against all entities) and from the old entities a new one comes close to.
Delete: every node and edge supported only by the deleted passages goes (see
:mod:`hyperrag.graph.provenance`); relation weights lose the deleted passages' triples; nothing is
embedded. Both keep node order (old nodes keep their relative order) and the canonical edge order
of a full build, and return the touched nodes — the hook for local Leiden, summary, gate and
Poincaré updates.

For the same final corpus, insert-then-delete and a full build give equal graphs
(:func:`hyperrag.graph.canonical.graph_differences`), as long as no entity has more than
``synonym_topk`` neighbours above ``synonym_threshold`` (then the top-k cut of a full build may drop
a pair the incremental path keeps).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from hyperrag.data.types import Passage
from hyperrag.graph.build import GraphEmbeddings, canonical_triples, synonym_eligible
from hyperrag.graph.knowledge_graph import EdgeType, KnowledgeGraph
from hyperrag.graph.provenance import GraphProvenance
from hyperrag.graph.utils import (
    csr_from_pairs,
    csr_owner,
    ptr_from_counts,
    ptr_from_sorted_rows,
    sort_typed_edges,
    undirected_edges,
)

if TYPE_CHECKING:
    from hyperrag.protocols import Encoder

log = logging.getLogger(__name__)
Triple = tuple[str, str, str]


@dataclass
class UpdateResult:
    """The updated graph plus what changed.

    Attributes:
        touched_nodes: node ids (in the new graph) whose edges or support changed, new nodes included —
            what local Leiden / summary / gate / Poincaré updates should revisit.
        encoded: texts sent to the encoder (new entities, facts, passages).
    """

    graph: KnowledgeGraph
    embeddings: GraphEmbeddings
    provenance: GraphProvenance
    added_passages: list[str] = field(default_factory=list)
    removed_passages: list[str] = field(default_factory=list)
    added_entities: list[str] = field(default_factory=list)
    removed_entities: list[str] = field(default_factory=list)
    touched_nodes: torch.Tensor = field(default_factory=lambda: torch.empty(0, dtype=torch.long))
    encoded: int = 0

    def summary(self) -> dict[str, Any]:
        return {"added_passages": len(self.added_passages), "removed_passages": len(self.removed_passages),
                "added_entities": len(self.added_entities), "removed_entities": len(self.removed_entities),
                "touched_nodes": int(self.touched_nodes.numel()), "encoded": self.encoded,
                "nodes": self.graph.num_nodes, "edges": self.graph.num_edges}


# ---- shared helpers ----------------------------------------------------------------------------------------
def _top_pairs(query: torch.Tensor, query_nodes: torch.Tensor, keys: torch.Tensor, key_nodes: torch.Tensor,
               k: int, threshold: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per query row, its ``k`` most similar key rows (itself excluded) with cosine >= ``threshold``."""
    if query.shape[0] == 0 or keys.shape[0] < 2:
        empty = torch.empty(0, dtype=torch.long)
        return empty, empty, torch.empty(0)
    sims = query @ keys.T  # [Q, K]
    sims[query_nodes.unsqueeze(1) == key_nodes.unsqueeze(0)] = float("-inf")
    kk = min(k, keys.shape[0] - 1)
    val, nbr = torch.topk(sims, kk, dim=1)
    keep = val >= threshold
    rows = query_nodes.unsqueeze(1).expand_as(nbr)
    return rows[keep], key_nodes[nbr[keep]], val[keep]


def _parse(triples: Sequence[Sequence[Triple]], text_form: str = "canonical") -> list[list[Triple]]:
    return [canonical_triples(list(t), text_form) for t in triples]


# ---- delete ------------------------------------------------------------------------------------------------
def delete_passages(graph: KnowledgeGraph, emb: GraphEmbeddings, prov: GraphProvenance,
                    passage_ids: Sequence[str]) -> UpdateResult:
    """Remove passages and everything supported only by them.

    Raises:
        KeyError: an id is not in the graph.
    """
    position = {pid: i for i, pid in enumerate(graph.passage_ids)}
    unknown = [pid for pid in passage_ids if pid not in position]
    if unknown:
        raise KeyError(f"passage id(s) not in the index: {unknown[:5]}")
    E, P, N, F = graph.num_entities, graph.num_passages, graph.num_nodes, len(graph.facts)
    keep_p = torch.ones(P, dtype=torch.bool)
    keep_p[torch.tensor([position[p] for p in passage_ids], dtype=torch.long)] = False

    fp_owner = csr_owner(graph.fact_passage_ptr)
    fp_keep = keep_p[graph.fact_passage_idx]
    fact_alive = torch.bincount(fp_owner[fp_keep], minlength=F) > 0
    ep_owner = csr_owner(graph.entity_passage_ptr)
    ep_keep = keep_p[graph.entity_passage_idx]
    ent_alive = torch.bincount(ep_owner[ep_keep], minlength=E) > 0
    # entities of facts stay alive with their facts (a fact's passages mention both its entities)
    new_e = torch.cumsum(ent_alive.long(), 0) - 1
    new_p = torch.cumsum(keep_p.long(), 0) - 1
    E2 = int(ent_alive.sum())
    node_alive = torch.cat([ent_alive, keep_p])
    node_map = torch.cat([torch.where(ent_alive, new_e, -1), torch.where(keep_p, E2 + new_p, -1)])

    # relation weights lose the deleted passages' triples
    weight = graph.edge_weight.clone()
    u, v = graph.edge_index
    etype = graph.edge_type
    pf_owner = csr_owner(prov.passage_fact_ptr)
    gone_occ = prov.passage_fact_idx[~keep_p[pf_owner]]
    rel = (etype == EdgeType.RELATION).nonzero().squeeze(1)
    if gone_occ.numel() and rel.numel():
        gone, gone_counts = undirected_edges(graph.fact_entities[gone_occ].T, torch.ones(gone_occ.numel()), N)
        gone_keys = gone[0] * N + gone[1]  # lookup keys of the relation edges that lose triples
        rel_keys = u[rel] * N + v[rel]
        order = torch.argsort(rel_keys)
        at = torch.searchsorted(rel_keys[order], gone_keys).clamp(max=rel.numel() - 1)
        found = rel_keys[order][at] == gone_keys
        weight[rel[order][at[found]]] -= gone_counts[found].to(weight.dtype)
    keep_edge = node_alive[u] & node_alive[v]
    keep_edge &= ~((etype == EdgeType.RELATION) & (weight < 0.5))
    removed_edges = ~keep_edge

    # touched: surviving endpoints of removed edges and surviving entities that lost a passage
    touched_old = torch.cat([u[removed_edges], v[removed_edges], ep_owner[~ep_keep]])
    touched_old = torch.unique(touched_old[node_alive[touched_old]])

    index = node_map[graph.edge_index[:, keep_edge]]
    index, weight, etype = sort_typed_edges(index, weight[keep_edge], etype[keep_edge], E2 + int(keep_p.sum()))

    fact_map = torch.cumsum(fact_alive.long(), 0) - 1
    F2 = int(fact_alive.sum())
    fp_ptr, fp_idx = csr_from_pairs(fact_map[fp_owner[fp_keep]], new_p[graph.fact_passage_idx[fp_keep]], F2, P)
    ep_ptr, ep_idx = csr_from_pairs(new_e[ep_owner[ep_keep]], new_p[graph.entity_passage_idx[ep_keep]], E2, P)
    pf_keep = keep_p[pf_owner]
    pf_ptr = ptr_from_sorted_rows(new_p[pf_owner[pf_keep]], int(keep_p.sum()))

    facts = [f for f, alive in zip(graph.facts, fact_alive.tolist()) if alive]
    new_graph = KnowledgeGraph(
        entity_names=[n for n, a in zip(graph.entity_names, ent_alive.tolist()) if a],
        passage_ids=[p for p, k in zip(graph.passage_ids, keep_p.tolist()) if k],
        edge_index=index, edge_weight=weight, edge_type=etype, facts=facts,
        fact_entities=new_e[graph.fact_entities[fact_alive]].reshape(-1, 2),
        fact_passage_ptr=fp_ptr, fact_passage_idx=fp_idx, entity_passage_ptr=ep_ptr, entity_passage_idx=ep_idx,
        stats=dict(graph.stats))
    new_emb = GraphEmbeddings(emb.entity[ent_alive] if emb.entity.numel() else emb.entity,
                              emb.fact[fact_alive] if emb.fact.numel() else emb.fact, emb.passage[keep_p])
    new_prov = GraphProvenance(pf_ptr, fact_map[prov.passage_fact_idx[pf_keep]])
    _refresh_stats(new_graph)
    return UpdateResult(new_graph, new_emb, new_prov, removed_passages=list(passage_ids),
                        removed_entities=[n for n, a in zip(graph.entity_names, ent_alive.tolist()) if not a],
                        touched_nodes=node_map[touched_old])


# ---- insert ------------------------------------------------------------------------------------------------
def insert_passages(graph: KnowledgeGraph, emb: GraphEmbeddings, prov: GraphProvenance, passages: Sequence[Passage],
                    triples: Sequence[Sequence[Triple]], encoder: Encoder, *, synonym_threshold: float = 0.8,
                    synonym_topk: int = 100, synonym_min_chars: int = 3,
                    fact_template: str = "{s} {r} {o}", knn: object = None,
                    text_form: str = "canonical") -> UpdateResult:
    """Append ``passages`` (with their raw OpenIE ``triples``, one list per passage) to the graph.

    ``knn`` (the index's ``graph.knn`` settings, as its manifest records them) is accepted and not used: an insert
    searches only the new entities and the old ones near them against all (Q × N, not N × N), always exactly — so
    after inserts into an index built with the approximate search, its new synonym edges are exact ones.

    Raises:
        KeyError: a passage id is already in the graph or repeated.
    """
    if len(passages) != len(triples):
        raise ValueError(f"{len(passages)} passages but {len(triples)} triple lists")
    taken = set(graph.passage_ids)
    new_ids = [p.id for p in passages]
    clash = [pid for pid in new_ids if pid in taken]
    if clash or len(set(new_ids)) != len(new_ids):
        raise KeyError(f"passage id(s) already in the index or repeated: {(clash or new_ids)[:5]}")
    E, P, F = graph.num_entities, graph.num_passages, len(graph.facts)
    entity_id = {n: i for i, n in enumerate(graph.entity_names)}
    fact_id = {f: i for i, f in enumerate(graph.facts)}
    new_names: list[str] = []
    new_facts: list[Triple] = []
    fp_pairs: list[tuple[int, int]] = []  # (fact, passage position), new rows
    ep_pairs: set[tuple[int, int]] = set()  # (entity, passage position)
    rel_pairs: list[tuple[int, int]] = []
    occurrences: list[list[int]] = []

    def entity(name: str) -> int:
        if name not in entity_id:
            entity_id[name] = E + len(new_names)
            new_names.append(name)
        return entity_id[name]

    for j, raw in enumerate(_parse(triples, text_form)):
        pos = P + j
        occ = []
        for s, r, o in raw:
            si, oi = entity(s), entity(o)
            ep_pairs.update(((si, pos), (oi, pos)))
            rel_pairs.append((si, oi))
            if (s, r, o) not in fact_id:
                fact_id[(s, r, o)] = F + len(new_facts)
                new_facts.append((s, r, o))
            fi = fact_id[(s, r, o)]
            fp_pairs.append((fi, pos))
            occ.append(fi)
        occurrences.append(occ)

    E_new = len(new_names)
    E2, P2, F2 = E + E_new, P + len(passages), F + len(new_facts)
    N2 = E2 + P2

    def shift(nodes: torch.Tensor) -> torch.Tensor:  # old node id → new (passage nodes move up by E_new)
        return torch.where(nodes >= E, nodes + E_new, nodes)

    # embeddings of new items only
    encoded = 0
    parts_e, parts_f = [emb.entity], [emb.fact]
    if new_names:
        parts_e.append(encoder.encode(new_names, desc="new entities"))
        encoded += len(new_names)
    if new_facts:
        parts_f.append(encoder.encode([fact_template.format(s=s, r=r, o=o) for s, r, o in new_facts],
                                      desc="new facts"))
        encoded += len(new_facts)
    new_passage_emb = encoder.encode([p.content for p in passages], desc="new passages")
    encoded += len(passages)
    entity_emb = torch.cat([x for x in parts_e if x.numel()]) if any(x.numel() for x in parts_e) else emb.entity
    fact_emb = torch.cat([x for x in parts_f if x.numel()]) if any(x.numel() for x in parts_f) else emb.fact
    passage_emb = torch.cat([emb.passage, new_passage_emb])

    old_index = shift(graph.edge_index)
    etype = graph.edge_type
    by_type = {t: etype == t for t in (EdgeType.RELATION, EdgeType.SYNONYM, EdgeType.CONTEXT)}
    others = ~(by_type[EdgeType.RELATION] | by_type[EdgeType.SYNONYM] | by_type[EdgeType.CONTEXT])

    # relation edges: old weights plus the new triples
    rel_new = torch.tensor(rel_pairs, dtype=torch.long).reshape(-1, 2).T
    rel_index, rel_weight = undirected_edges(torch.cat([old_index[:, by_type[EdgeType.RELATION]], rel_new], 1),
                                             torch.cat([graph.edge_weight[by_type[EdgeType.RELATION]],
                                                        torch.ones(rel_new.shape[1])]), N2, "sum")

    # context edges: entity — new passage
    ctx_new = torch.tensor(sorted(ep_pairs), dtype=torch.long).reshape(-1, 2).T
    ctx_new = torch.stack([ctx_new[0], ctx_new[1] + E2]) if ctx_new.numel() else ctx_new.reshape(2, 0)
    ctx_index = torch.cat([old_index[:, by_type[EdgeType.CONTEXT]], ctx_new], 1)

    # synonym edges: from new entities, and from old entities a new one comes close to
    syn_index, syn_weight = old_index[:, by_type[EdgeType.SYNONYM]], graph.edge_weight[by_type[EdgeType.SYNONYM]]
    touched_syn = torch.empty(0, dtype=torch.long)
    if new_names:
        eligible = synonym_eligible(graph.entity_names + new_names, synonym_min_chars).nonzero().squeeze(1)
        keys = entity_emb[eligible]
        is_new = eligible >= E
        s1, d1, w1 = _top_pairs(keys[is_new], eligible[is_new], keys, eligible, synonym_topk, synonym_threshold)
        near_old = torch.unique(d1[d1 < E])  # old entities within the threshold of a new one
        if is_new.any() and (~is_new).any():  # old rows whose top-k may now hold a new entity
            close = (keys[~is_new] @ keys[is_new].T >= synonym_threshold).any(1)
            near_old = torch.unique(torch.cat([near_old, eligible[~is_new][close]]))
        pos = torch.searchsorted(eligible, near_old)
        s2, d2, w2 = _top_pairs(keys[pos], near_old, keys, eligible, synonym_topk, synonym_threshold)
        to_new = d2 >= E
        src, dst = torch.cat([s1, s2[to_new]]), torch.cat([d1, d2[to_new]])
        pair = torch.stack([src, dst])
        syn_index, syn_weight = undirected_edges(torch.cat([syn_index, pair], 1),
                                                 torch.cat([syn_weight, torch.cat([w1, w2[to_new]])]), N2, "max")
        touched_syn = torch.unique(pair)

    index = torch.cat([rel_index, syn_index, ctx_index, old_index[:, others]], 1)
    weight = torch.cat([rel_weight, syn_weight, torch.ones(ctx_index.shape[1]), graph.edge_weight[others]]).float()
    types = torch.cat([torch.full((rel_index.shape[1],), EdgeType.RELATION, dtype=torch.uint8),
                       torch.full((syn_index.shape[1],), EdgeType.SYNONYM, dtype=torch.uint8),
                       torch.full((ctx_index.shape[1],), EdgeType.CONTEXT, dtype=torch.uint8), etype[others]])
    index, weight, types = sort_typed_edges(index, weight, types, N2)

    fp_new = torch.tensor(fp_pairs, dtype=torch.long).reshape(-1, 2)
    fp_new = torch.unique(fp_new, dim=0) if fp_new.numel() else fp_new
    fp_ptr, fp_idx = csr_from_pairs(torch.cat([csr_owner(graph.fact_passage_ptr), fp_new[:, 0]]),
                                     torch.cat([graph.fact_passage_idx, fp_new[:, 1]]), F2, P2)
    ep_new = torch.tensor(sorted(ep_pairs), dtype=torch.long).reshape(-1, 2)
    ep_ptr, ep_idx = csr_from_pairs(torch.cat([csr_owner(graph.entity_passage_ptr), ep_new[:, 0]]),
                                     torch.cat([graph.entity_passage_idx, ep_new[:, 1]]), E2, P2)
    lengths = torch.tensor([len(o) for o in occurrences], dtype=torch.long)
    pf_ptr = torch.cat([prov.passage_fact_ptr, prov.passage_fact_ptr[-1] + ptr_from_counts(lengths)[1:]])
    pf_idx = torch.cat([prov.passage_fact_idx, torch.tensor([f for o in occurrences for f in o], dtype=torch.long)])

    facts = graph.facts + new_facts
    fe_new = torch.tensor([[entity_id[s], entity_id[o]] for s, _, o in new_facts], dtype=torch.long).reshape(-1, 2)
    new_graph = KnowledgeGraph(
        entity_names=graph.entity_names + new_names, passage_ids=graph.passage_ids + new_ids,
        edge_index=index, edge_weight=weight, edge_type=types, facts=facts,
        fact_entities=torch.cat([graph.fact_entities.reshape(-1, 2), fe_new]), fact_passage_ptr=fp_ptr,
        fact_passage_idx=fp_idx, entity_passage_ptr=ep_ptr, entity_passage_idx=ep_idx, stats=dict(graph.stats))
    _refresh_stats(new_graph)
    touched = torch.unique(torch.cat([
        torch.arange(E, E2), torch.arange(E2 + P, N2), ep_new[:, 0] if ep_new.numel() else ep_new.reshape(-1),
        touched_syn]))
    return UpdateResult(new_graph, GraphEmbeddings(entity_emb, fact_emb, passage_emb),
                        GraphProvenance(pf_ptr, pf_idx), added_passages=new_ids, added_entities=new_names,
                        touched_nodes=touched, encoded=encoded)


def _refresh_stats(graph: KnowledgeGraph) -> None:
    graph.stats.update({"nodes": graph.num_nodes, "entities": graph.num_entities, "passages": graph.num_passages,
                        "facts": len(graph.facts), "edges": graph.num_edges, "edges_by_type": graph.count_by_type()})


__all__ = ["UpdateResult", "delete_passages", "insert_passages"]
