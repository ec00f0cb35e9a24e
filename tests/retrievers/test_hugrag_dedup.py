"""Two-stage entity dedup: fuzzy guards, embedding stage, pooled graph, audit file and cache."""

from __future__ import annotations

import json
from dataclasses import replace

import torch

from hyperrag.config import method_settings
from hyperrag.dedup.entities import EntityInfo
from hyperrag.dedup.fuzzy import fuzzy_pairs
from hyperrag.dedup.semantic import semantic_pairs
from hyperrag.dedup.store import load_or_build_dedup
from hyperrag.graph.build import GraphEmbeddings
from hyperrag.graph.knowledge_graph import EdgeType, KnowledgeGraph

DEDUP = method_settings("hugrag").dedup  # the configured dedup settings (enabled: true)


def test_fuzzy_guards():
    names = ["flavored vodkas", "flavored vodka", "east coast highway", "west coast highway",
             "1 january 2010", "1 january 2011", "barack obama", "barrack obama", "xxiii games", "xxiv games"]
    pairs = {(names[a], names[b]) for a, b, _ in fuzzy_pairs(names, threshold=92)}
    assert ("flavored vodkas", "flavored vodka") in pairs and ("barack obama", "barrack obama") in pairs
    assert len(pairs) == 2  # directions, digits and roman numerals never merge
    typed = fuzzy_pairs(["paris hilton", "paris hiltons"], types=["person", "location"])
    assert typed == []


def toy_graph() -> tuple[KnowledgeGraph, GraphEmbeddings]:
    names = ["barack obama", "barrack obama", "united states congress", "us congress", "hawaii"]
    facts = [("barack obama", "born in", "hawaii"), ("barrack obama", "member of", "us congress")]
    ei = torch.tensor([[0, 1, 1, 0, 0, 1, 2, 3, 4], [4, 3, 0, 5, 7, 6, 5, 6, 5]])
    et = torch.tensor([EdgeType.RELATION, EdgeType.RELATION, EdgeType.SYNONYM] + [EdgeType.CONTEXT] * 6,
                      dtype=torch.uint8)
    g = KnowledgeGraph(names, ["p0", "p1", "p2"], ei, torch.ones(9), et, facts, torch.tensor([[0, 4], [1, 3]]),
                       torch.tensor([0, 1, 2]), torch.tensor([0, 1]), torch.tensor([0, 2, 3, 4, 5, 6]),
                       torch.tensor([0, 2, 1, 0, 1, 0]))
    emb = torch.eye(5)
    emb[3] = emb[2] * 0.99 + 0.01 * emb[3]  # "us congress" ≈ "united states congress" by embedding only
    emb = torch.nn.functional.normalize(emb, dim=1)
    return g, GraphEmbeddings(emb, torch.zeros(2, 5), torch.zeros(3, 5))


def test_merge_pools_and_audits(tmp_path):
    g, emb = toy_graph()
    info = EntityInfo(["person", "person", "", "", ""], [["44th president"], ["politician"], [], [], []])
    idx = load_or_build_dedup(g, emb, info, replace(DEDUP, fuzzy_threshold=90, embedding_threshold=0.95), tmp_path,
                              name="toy")
    assert idx.built and idx.stats["fuzzy_merges"] == 1 and idx.stats["embedding_merges"] == 1
    merged = idx.graph
    assert merged.num_entities == 3 and "barack obama" in merged.entity_names
    obama = merged.entity_names.index("barack obama")
    assert idx.info.descriptions[obama] == ["44th president", "politician"]
    ptr = merged.entity_passage_ptr
    assert merged.entity_passage_idx[ptr[obama]: ptr[obama + 1]].tolist() == [0, 1, 2]  # passages pooled
    assert int((merged.edge_type == EdgeType.SYNONYM).sum()) == 0  # the synonym edge is now inside one entity
    assert merged.fact_entities.max() < 3 and (merged.edge_index[:, merged.edge_type == EdgeType.CONTEXT] >= 3).any()
    audit = [json.loads(line) for line in idx.audit_path.read_text().splitlines()]
    assert {a["stage"] for a in audit} == {"fuzzy", "embedding"}
    assert {(a["kept"], a["merged"]) for a in audit} >= {("barack obama", "barrack obama")}
    again = load_or_build_dedup(g, emb, info, replace(DEDUP, fuzzy_threshold=90, embedding_threshold=0.95), tmp_path,
                                name="toy")
    assert not again.built and again.graph.entity_names == merged.entity_names
    off = load_or_build_dedup(g, emb, info, replace(DEDUP, enabled=False))
    assert off.graph is g and off.directory is None


def test_token_guard_keeps_distinct_entities_one_word_apart():
    names = ["andrew johnston", "andrew jonhston", "south korea", "south korean", "indirect civil disobedience",
             "direct civil disobedience", "republic of the congo", "democratic republic of the congo",
             "olympic winter games", "the winter olympic games", "us congress", "united states congress"]
    fuzzy = {(names[a], names[b]) for a, b, _ in fuzzy_pairs(names, threshold=85, token_guard=True)}
    assert ("andrew johnston", "andrew jonhston") in fuzzy  # a spelling variant of one word still merges
    assert not {("south korea", "south korean"), ("indirect civil disobedience", "direct civil disobedience"),
                ("republic of the congo", "democratic republic of the congo")} & fuzzy
    unguarded = {(names[a], names[b]) for a, b, _ in fuzzy_pairs(names, threshold=85)}
    assert ("south korea", "south korean") in unguarded
    emb = torch.nn.functional.normalize(torch.ones(len(names), 4) + 0.001 * torch.randn(len(names), 4), dim=1)
    sem = {(names[a], names[b]) for a, b, _ in semantic_pairs(emb, names, 0.9, k=len(names) - 1, token_guard=True)}
    assert ("olympic winter games", "the winter olympic games") in sem and ("us congress", "united states congress") in sem
    assert ("andrew johnston", "andrew jonhston") not in sem  # substitutions only in the fuzzy stage
    assert ("republic of the congo", "democratic republic of the congo") not in sem
