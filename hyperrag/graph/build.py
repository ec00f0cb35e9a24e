"""Build the entity–passage knowledge graph from OpenIE triples (HippoRAG 2 layout), as tensors."""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from hyperrag.data.openie import OpenIERecords
from hyperrag.data.types import Corpus
from hyperrag.graph.canonical import name_normaliser
from hyperrag.graph.knowledge_graph import EdgeType, KnowledgeGraph
from hyperrag.graph.utils import csr_from_lists, undirected_edges
from hyperrag.ops.knn_graph import KnnSettings, cosine_knn_graph, knn_backend
from hyperrag.utils.collector import paused_collector

if TYPE_CHECKING:
    from hyperrag.protocols import Encoder

log = logging.getLogger(__name__)
_ALNUM = re.compile(r"[^A-Za-z0-9]")


@dataclass
class GraphEmbeddings:
    entity: torch.Tensor  # [E, D]
    fact: torch.Tensor  # [F, D]
    passage: torch.Tensor  # [P, D]


def canonical_triples(triples: list[tuple[str, str, str]], text_form: str = "canonical") -> list[tuple[str, str, str]]:
    """Canonical ``(subject, relation, object)`` of one passage's triples.

    ``text_form``: ``canonical`` (:func:`~hyperrag.graph.canonical.canonical_name`; a triple whose subject or
    object normalises to nothing is dropped) or ``hipporag`` (HippoRAG 2's code: its ``text_processing``, a
    passage's identical raw triples once, and every triple kept — a name that processes to ``""`` is an entity
    named ``""`` there too).
    """
    norm = name_normaliser(text_form)
    hipporag = text_form == "hipporag"
    if hipporag:
        triples = list(dict.fromkeys(tuple(t) for t in triples))
    out = []
    for s_raw, r_raw, o_raw in triples:
        s, r, o = norm(s_raw), norm(r_raw), norm(o_raw)
        if (s and o) or hipporag:
            out.append((s, r, o))
    return out


def synonym_eligible(names: list[str], min_chars: int) -> torch.Tensor:
    """BoolTensor [E]: entities with at least ``min_chars`` alphanumerics (dates and "a" get no synonyms)."""
    return torch.tensor([len(_ALNUM.sub("", n)) >= min_chars for n in names], dtype=torch.bool)


def build_knowledge_graph(
    corpus: Corpus,
    openie: OpenIERecords,
    encoder: Encoder,
    synonym_threshold: float = 0.8,
    synonym_topk: int = 100,
    synonym_min_chars: int = 3,
    fact_template: str = "{s} {r} {o}",
    knn: KnnSettings | None = None,
    text_form: str = "canonical",
) -> tuple[KnowledgeGraph, GraphEmbeddings]:
    """Args:
        corpus: P passages.
        openie: entities and triples per passage (``openie.triples[j]`` belongs to ``corpus[j]``).
        encoder: embeds entity names, facts and passages (cached on disk).
        synonym_threshold: cosine above which two entities get a synonym edge.
        synonym_topk: neighbours considered per entity.
        synonym_min_chars: entities with fewer alphanumeric characters get no synonym edges (dates, "a").
        fact_template: how a fact is written for embedding.
        knn: how the synonym neighbours are searched (``graph.knn``: exact or approximate by size); ``None``: exact.
        text_form: how OpenIE text becomes names (:func:`canonical_triples`); recorded in ``graph.stats``.
    """
    t0 = time.perf_counter()
    entity_id: dict[str, int] = {}
    fact_id: dict[tuple[str, str, str], int] = {}
    fact_passages: list[list[int]] = []
    entity_passages: list[set[int]] = []
    rel_src: list[int] = []
    rel_dst: list[int] = []

    def entity(name: str) -> int:
        idx = entity_id.setdefault(name, len(entity_id))
        if idx == len(entity_passages):
            entity_passages.append(set())
        return idx

    with paused_collector():  # the tables are millions of acyclic containers (hyperrag/utils/collector.py)
        for pos, triples in enumerate(openie.triples):
            for s, r, o in canonical_triples(triples, text_form):
                si, oi = entity(s), entity(o)
                entity_passages[si].add(pos)
                entity_passages[oi].add(pos)
                rel_src.append(si)
                rel_dst.append(oi)
                key = (s, r, o)
                fi = fact_id.setdefault(key, len(fact_id))
                if fi == len(fact_passages):
                    fact_passages.append([])
                if not fact_passages[fi] or fact_passages[fi][-1] != pos:
                    fact_passages[fi].append(pos)

    t_parse = time.perf_counter()
    names = list(entity_id)
    facts = list(fact_id)
    num_e, num_p = len(names), len(corpus)
    num_nodes = num_e + num_p

    # Embeddings (cache hits after the first build).
    entity_emb = encoder.encode(names, desc="entities") if names else torch.empty(0, 0)
    fact_texts = [fact_template.format(s=s, r=r, o=o) for s, r, o in facts]
    fact_emb = encoder.encode(fact_texts, desc="facts") if facts else torch.empty(0, 0)
    passage_emb = encoder.encode([p.content for p in corpus.passages], desc="passages")
    t_embed = time.perf_counter()

    # Relation edges: weight = number of triples linking the pair.
    src = torch.tensor(rel_src, dtype=torch.long)
    dst = torch.tensor(rel_dst, dtype=torch.long)
    rel_index, rel_weight = undirected_edges(torch.stack([src, dst]), torch.ones(len(rel_src)), num_nodes, "sum")

    # Context edges passage — entity.
    ctx_e = torch.tensor([e for e, ps in enumerate(entity_passages) for _ in ps], dtype=torch.long)
    ctx_p = torch.tensor([p for ps in entity_passages for p in sorted(ps)], dtype=torch.long) + num_e
    ctx_index = torch.stack([ctx_e, ctx_p]) if len(ctx_e) else torch.empty(2, 0, dtype=torch.long)
    ctx_weight = torch.ones(ctx_index.shape[1])

    # Synonym edges between entities with enough alphanumerics.
    eligible = synonym_eligible(names, synonym_min_chars)
    syn_index = torch.empty(2, 0, dtype=torch.long)
    syn_weight = torch.empty(0)
    synonym_search = "none"
    if num_e > 1 and eligible.sum() > 1:
        cand = eligible.nonzero().squeeze(1)
        s_loc, d_loc, sim = cosine_knn_graph(entity_emb[cand], synonym_topk, synonym_threshold, knn)
        synonym_search = knn_backend(len(cand), knn)
        syn_index, syn_weight = undirected_edges(torch.stack([cand[s_loc], cand[d_loc]]), sim, num_nodes, "max")
    t_knn = time.perf_counter()

    edge_index = torch.cat([rel_index, syn_index, ctx_index], dim=1)
    edge_weight = torch.cat([rel_weight, syn_weight, ctx_weight]).float()
    edge_type = torch.cat([
        torch.full((rel_index.shape[1],), EdgeType.RELATION, dtype=torch.uint8),
        torch.full((syn_index.shape[1],), EdgeType.SYNONYM, dtype=torch.uint8),
        torch.full((ctx_index.shape[1],), EdgeType.CONTEXT, dtype=torch.uint8),
    ])
    fact_entities = torch.tensor([[entity_id[s], entity_id[o]] for s, _, o in facts], dtype=torch.long).reshape(-1, 2)
    fp_ptr, fp_idx = csr_from_lists(fact_passages)
    ep_ptr, ep_idx = csr_from_lists([sorted(ps) for ps in entity_passages])
    graph = KnowledgeGraph(
        entity_names=names, passage_ids=corpus.ids, edge_index=edge_index, edge_weight=edge_weight,
        edge_type=edge_type, facts=facts, fact_entities=fact_entities, fact_passage_ptr=fp_ptr,
        fact_passage_idx=fp_idx, entity_passage_ptr=ep_ptr, entity_passage_idx=ep_idx,
    )
    graph.stats = {
        "nodes": graph.num_nodes, "entities": num_e, "passages": num_p, "facts": len(facts),
        "edges": graph.num_edges, "edges_by_type": graph.count_by_type(),
        "skipped_triples": openie.skipped_triples, "synonym_search": synonym_search, "text_form": text_form,
        "seconds": {"parse": round(t_parse - t0, 3), "embed": round(t_embed - t_parse, 3),
                    "edges_and_synonyms": round(t_knn - t_embed, 3)},
    }
    log.info("graph: %s", graph.stats)
    return graph, GraphEmbeddings(entity_emb, fact_emb, passage_emb)
