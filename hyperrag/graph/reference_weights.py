"""HippoRAG 2's PPR edge weights, as its released code (``hipporag`` 2.0.0a4) builds its graph.

The stored :class:`~hyperrag.graph.knowledge_graph.KnowledgeGraph` keeps one edge per entity pair and type
(relation: the triple count; synonym: the cosine). HippoRAG 2's code instead fills a table keyed by *ordered*
node pairs and adds every key as an edge of an undirected igraph graph, so PPR sees the sum over both keys:

* a triple ``(a, r, b)`` adds 1 to the keys ``(a, b)`` and ``(b, a)``: a related pair weighs ``2 ×`` its triple
  count;
* each entity with at least ``min_chars`` alphanumerics lists its nearest entities (cosine ``>= threshold``,
  itself excluded, at most ``max_neighbours``) and sets the key ``(entity, neighbour)`` to the cosine — a
  pair found from both ends weighs ``2 × cosine``, from one end ``1 ×`` (the neighbour itself need not be
  eligible), and a synonym key *replaces* the triple count of the same ordered pair;
* a passage and each entity of its triples: one key, weight 1.

:func:`reference_edge_weights` rebuilds that table from our graph and the entity embeddings, with the
per-type multipliers applied per key (so CatRAG's authors' ``3 × cosine`` synonym keys are ``synonym: 3``).

``relation_keys="subject_object"`` is CatRAG's authors' code (kwunhang/CatRAG ``add_fact_edges``): a triple
``(a, r, b)`` adds 2 to the key ``(a, b)`` only, so a synonym key ``(a, b)`` from ``a``'s list replaces all of
that direction's relation weight while the key ``(b, a)`` (triples written ``(b, r, a)``) keeps its own; with
no synonym on the pair both forms weigh ``2 ×`` the triple count.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from hyperrag.graph.build import synonym_eligible
from hyperrag.graph.knowledge_graph import EdgeType, KnowledgeGraph
from hyperrag.graph.utils import undirected_edges


@dataclass
class PPRWeights:
    """Undirected PPR edges.

    Attributes:
        edge_index: LongTensor [2, M], each pair once or (``single``) once per edge type.
        weight: FloatTensor [M], the edge weight PPR uses.
    """

    edge_index: torch.Tensor
    weight: torch.Tensor


def synonym_arcs(entity_emb: torch.Tensor, eligible: torch.Tensor, threshold: float, max_neighbours: int,
                 block: int = 2048) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Each eligible entity's synonym list: its nearest entities (any, itself excluded) with cosine
    ``>= threshold``, at most ``max_neighbours``, exact search.

    Args:
        entity_emb: FloatTensor [E, D], L2-normalised rows.
        eligible: BoolTensor [E], the entities that list synonyms.
        threshold / max_neighbours: as above.
        block: rows per similarity block (memory ``block × E``).

    Returns:
        ``(src [A], dst [A], cosine [A])`` directed arcs.
    """
    num_e = entity_emb.shape[0]
    rows = eligible.nonzero().squeeze(1)
    k = min(max_neighbours + 1, num_e)
    x = entity_emb.float()
    src, dst, sim = [], [], []
    for lo in range(0, rows.numel(), block):
        r = rows[lo : lo + block]
        s, idx = torch.topk(x[r] @ x.T, k, dim=1)
        keep = (idx != r.unsqueeze(1)) & (s >= threshold)
        # at most max_neighbours others per row, best first (the row itself is dropped, not counted)
        keep &= torch.cumsum(keep, dim=1) <= max_neighbours
        src.append(r.unsqueeze(1).expand_as(idx)[keep])
        dst.append(idx[keep])
        sim.append(s[keep])
    if not src:
        empty = torch.empty(0, dtype=torch.long)
        return empty, empty, torch.empty(0)
    return torch.cat(src), torch.cat(dst), torch.cat(sim)


def directed_relation_counts(graph: KnowledgeGraph) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Each relation edge's triple count split by direction, subject → object.

    The stored weight of a relation edge ``(u, v)`` (``u < v``) counts the triples naming the pair; the split
    follows the passages of each fact written ``(u, r, v)`` versus ``(v, r, u)`` (exact unless a passage holds
    two raw triples that normalise to one fact), and the two parts sum to the stored weight.

    Returns:
        ``(u [R], v [R], forward [R])``: the relation edges and the part of each weight written ``u → v``
        (the rest is ``v → u``).
    """
    rel = graph.edge_type == EdgeType.RELATION
    u, v = graph.edge_index[:, rel]
    total = graph.edge_weight[rel].float()
    n = graph.num_nodes
    s, o = graph.fact_entities[:, 0], graph.fact_entities[:, 1]
    passages = (graph.fact_passage_ptr[1:] - graph.fact_passage_ptr[:-1]).float()
    keep = s != o
    s, o, passages = s[keep], o[keep], passages[keep]
    forward_key = torch.minimum(s, o) * n + torch.maximum(s, o)
    edge_key = u * n + v
    order = torch.argsort(edge_key)
    pos = order[torch.searchsorted(edge_key[order], forward_key).clamp_max(edge_key.numel() - 1)]
    found = edge_key[pos] == forward_key
    fwd = torch.zeros_like(total).index_add_(0, pos[found], (passages * (s < o).float())[found])
    both = torch.zeros_like(total).index_add_(0, pos[found], passages[found])
    share = torch.where(both > 0, fwd / both.clamp_min(1e-12), torch.full_like(total, 0.5))
    return u, v, total * share


def reference_edge_weights(graph: KnowledgeGraph, entity_emb: torch.Tensor, *, threshold: float,
                           max_neighbours: int, min_chars: int, multipliers: dict[EdgeType, float],
                           relation_keys: str = "both", synonym_per: str = "key") -> PPRWeights:
    """HippoRAG 2's undirected edge weights on ``graph``'s nodes (see the module docstring).

    Args:
        graph: the knowledge graph (relation edges weighted by triple count, context edges).
        entity_emb: FloatTensor [E, D], L2-normalised entity-name embeddings.
        threshold: synonym cosine threshold (HippoRAG 2: 0.8).
        max_neighbours: synonyms listed per entity at most (HippoRAG 2's loop keeps 101).
        min_chars: entities with fewer alphanumerics list no synonyms (HippoRAG 2: 3).
        multipliers: per edge type, the factor of each key's weight (relation, synonym, context).
        relation_keys: ``both`` (HippoRAG 2: a triple adds 1 to ``(a, b)`` and to ``(b, a)``) or
            ``subject_object`` (CatRAG's authors' code: 2 to ``(a, b)`` only).
        synonym_per: what the synonym multiplier weighs: ``key`` (each ordered key ``multiplier × cosine``, so a
            pair listed from both ends weighs twice that: HippoRAG 2's code) or ``pair`` (the pair's synonym
            keys share ``multiplier × cosine``: CatRAG's Table 7 "2.0 × similarity" read per edge).
    """
    if relation_keys not in ("both", "subject_object"):
        raise ValueError(f"relation_keys must be 'both' or 'subject_object', not {relation_keys!r}")
    if synonym_per not in ("key", "pair"):
        raise ValueError(f"synonym_per must be 'key' or 'pair', not {synonym_per!r}")
    n = graph.num_nodes
    mult = {t: float(multipliers.get(t, 1.0)) for t in (EdgeType.RELATION, EdgeType.SYNONYM, EdgeType.CONTEXT)}
    ss, sd, sw = synonym_arcs(entity_emb, synonym_eligible(graph.entity_names, min_chars), threshold, max_neighbours)
    if relation_keys == "both":
        rel = graph.edge_type == EdgeType.RELATION
        ru, rv = graph.edge_index[:, rel]
        rw = graph.edge_weight[rel].float() * mult[EdgeType.RELATION]
        key_uv, key_vu = rw, rw  # 1 per triple on each ordered key
    else:
        ru, rv, fwd = directed_relation_counts(graph)
        total = graph.edge_weight[graph.edge_type == EdgeType.RELATION].float()
        key_uv = 2.0 * fwd * mult[EdgeType.RELATION]  # 2 per triple on (subject, object)
        key_vu = 2.0 * (total - fwd) * mult[EdgeType.RELATION]
    # ordered keys: relations, then synonyms, which replace a relation key of the same ordered pair
    src = torch.cat([ru, rv, ss])
    dst = torch.cat([rv, ru, sd])
    val = torch.cat([key_uv, key_vu, sw.float() * mult[EdgeType.SYNONYM]])
    is_syn = torch.cat([torch.zeros(2 * ru.numel(), dtype=torch.bool), torch.ones(ss.numel(), dtype=torch.bool)])
    key = src * n + dst
    order = torch.argsort(key, stable=True)
    key, val, is_syn = key[order], val[order], is_syn[order]
    last = torch.ones_like(key, dtype=torch.bool)
    last[:-1] = key[1:] != key[:-1]  # the last entry of each key wins (a synonym over a relation)
    key, val, is_syn = key[last], val[last], is_syn[last]
    if synonym_per == "pair" and bool(is_syn.any()):  # a pair's synonym keys share multiplier x cosine
        a, b = key // n, key % n
        pair = torch.minimum(a, b) * n + torch.maximum(a, b)
        _, inverse, counts = torch.unique(pair[is_syn], return_inverse=True, return_counts=True)
        val = val.clone()
        val[is_syn] = val[is_syn] / counts[inverse].to(val.dtype)
    ent_index, ent_weight = undirected_edges(torch.stack([key // n, key % n]), val, n, "sum")
    ctx = graph.edge_type == EdgeType.CONTEXT
    ctx_index = graph.edge_index[:, ctx]
    ctx_weight = graph.edge_weight[ctx].float() * mult[EdgeType.CONTEXT]
    keep = ctx_weight > 0
    edge_index = torch.cat([ent_index, ctx_index[:, keep]], dim=1)
    weight = torch.cat([ent_weight.float(), ctx_weight[keep]])
    nz = weight > 0
    return PPRWeights(edge_index[:, nz], weight[nz])


def stored_edge_weights(graph: KnowledgeGraph, multipliers: dict[EdgeType, float]) -> PPRWeights:
    """One edge per pair and type with its stored weight times the type's multiplier (types at 0 dropped):
    the ``single`` weighting. Relation and synonym edges of one pair stay two parallel edges."""
    weight = graph.edge_weight.clone().float()
    for etype, m in multipliers.items():
        weight[graph.edge_type == int(etype)] *= float(m)
    keep = weight > 0
    return PPRWeights(graph.edge_index[:, keep], weight[keep])


__all__ = ["PPRWeights", "directed_relation_counts", "reference_edge_weights", "stored_edge_weights", "synonym_arcs"]
