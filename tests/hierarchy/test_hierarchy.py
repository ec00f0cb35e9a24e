"""Recursive Leiden hierarchy: validity, stop rule, determinism, cache, module tree, module texts."""

from dataclasses import replace

import pytest
import torch

from hyperrag.config import method_settings
from hyperrag.data import sample_dataset
from hyperrag.graph.knowledge_graph import KnowledgeGraph
from hyperrag.hierarchy import (
    EntityListTexts,
    Hierarchy,
    ModuleTree,
    approx_tokens,
    build_hierarchy,
    entity_texts,
    leiden,
    load_or_build_hierarchy,
    make_token_counter,
)
from hyperrag.hierarchy.leiden import canonical_labels
from hyperrag.index.kg_index import graph_settings, load_or_build_kg_index
from tests.hierarchy.graphs import planted_partition

HUGRAG = method_settings("hugrag")
HIERARCHY = HUGRAG.hierarchy
SETTINGS = replace(HIERARCHY, backend="cpu", context_window=120, min_module_size=4, max_levels=4, seed=0)


def purity(found: torch.Tensor, truth: torch.Tensor) -> float:
    """Share of nodes whose found module's majority planted block is their own."""
    hits = 0
    for m in found.unique().tolist():
        hits += int(torch.bincount(truth[found == m]).max())
    return hits / found.shape[0]


@pytest.fixture(scope="module")
def nested():
    """16 blocks of 10 nodes in 4 groups of 4 blocks: Leiden sees the groups first, then the blocks."""
    edge_index, weight, block = planted_partition([10] * 16, p_in=0.8, p_out=0.002, seed=0, groups=[4] * 4,
                                                  p_group=0.15)
    tokens = torch.full((block.shape[0],), 10)  # a block's text = 100 tokens ≤ 120 < a group's 400
    return edge_index, weight, block, tokens


@pytest.fixture(scope="module")
def hierarchy(nested):
    edge_index, weight, block, tokens = nested
    return build_hierarchy(edge_index, weight, block.shape[0], tokens, SETTINGS)


def test_every_level_is_a_partition_with_consistent_parents(hierarchy, nested):
    _, _, block, _ = nested
    h = hierarchy
    h.validate()
    assert h.num_levels == 2 and h.num_entities == 160
    for lv in range(1, h.num_levels + 1):
        memb = h.entity_membership(lv)
        assert memb.shape == (160,)  # every entity in exactly one module of the level
        assert set(memb.tolist()) == set(range(h.num_modules(lv)))
        assert int(h.sizes(lv).sum()) == 160
        ptr, idx = h.children(lv)
        assert ptr[-1] == h.num_modules(lv - 1) and sorted(idx.tolist()) == list(range(h.num_modules(lv - 1)))
        for m in range(h.num_modules(lv)):
            assert (h.memberships[lv - 1][idx[ptr[m]: ptr[m + 1]]] == m).all()
        if lv < h.num_levels:  # parent of my module = module of my entities one level up
            assert torch.equal(h.parent(lv)[memb], h.entity_membership(lv + 1))
    assert h.parent(h.num_levels) is None
    # the planted structure: groups at the top, blocks (up to a stray node) at level 1
    assert torch.equal(canonical_labels(h.entity_membership(2)), canonical_labels(block // 4))
    assert h.num_modules(1) == 16 and purity(h.entity_membership(1), block) >= 0.95
    assert all(q > 0.3 for q in h.modularity)


def test_top_level_is_plain_leiden_and_stop_rule_holds(hierarchy, nested):
    edge_index, weight, _, tokens = nested
    top = leiden(edge_index, weight, 160, seed=0, backend="cpu")
    assert torch.equal(hierarchy.entity_membership(hierarchy.num_levels), top.membership)
    assert hierarchy.modularity[-1] == pytest.approx(top.modularity)
    finest = hierarchy.entity_membership(1)
    module_tokens = torch.zeros(hierarchy.num_modules(1), dtype=torch.long).index_add_(0, finest, tokens)
    small = hierarchy.sizes(1) < SETTINGS.min_module_size
    assert bool(((module_tokens <= SETTINGS.context_window) | small).all())


def test_budget_controls_depth(nested):
    edge_index, weight, _block, tokens = nested
    flat = build_hierarchy(edge_index, weight, 160, tokens,
                           replace(HIERARCHY, backend="cpu", context_window=10_000))
    assert flat.num_levels == 1  # everything fits: Leiden once, no recursion
    capped = build_hierarchy(edge_index, weight, 160, tokens,
                             replace(HIERARCHY, backend="cpu", context_window=1, min_module_size=2, max_levels=3))
    assert capped.num_levels == 3
    capped.validate()
    tiny = build_hierarchy(edge_index, weight, 160, tokens,
                           replace(HIERARCHY, backend="cpu", context_window=1, min_module_size=50))
    assert tiny.num_levels == 1  # modules of < 50 entities are never split


def test_same_seed_same_hierarchy(nested):
    _edge_index, _, _, _tokens = nested
    noisy = planted_partition([12] * 12, p_in=0.35, p_out=0.03, seed=5, groups=[3] * 4, p_group=0.1)
    settings = replace(HIERARCHY, backend="cpu", context_window=60, min_module_size=3, seed=11)
    toks = torch.full((144,), 10)
    a = build_hierarchy(noisy[0], noisy[1], 144, toks, settings)
    b = build_hierarchy(noisy[0], noisy[1], 144, toks, settings)
    assert a.num_levels == b.num_levels
    assert all(torch.equal(x, y) for x, y in zip(a.memberships, b.memberships))
    assert a.modularity == b.modularity


def test_copies_and_module_tree():
    # a graph whose groups differ in size: small groups stop early and are carried down as copies
    edge_index, weight, block = planted_partition([10] * 8 + [3], p_in=0.9, p_out=0.001, seed=4,
                                                  groups=[4, 4, 1], p_group=0.2)
    n = block.shape[0]
    h = build_hierarchy(edge_index, weight, n, torch.full((n,), 10), SETTINGS)
    h.validate()
    assert h.num_levels == 2 and bool(h.copies[1].any())
    tree = ModuleTree.from_hierarchy(h)
    sets = [frozenset(tree.entities(m).tolist()) for m in range(tree.num_modules)]
    assert len(set(sets)) == tree.num_modules  # copies folded: no two modules with the same entities
    assert tree.num_modules == sum(h.num_modules(lv) - int(h.copies[lv - 1].sum())
                                   for lv in range(1, h.num_levels + 1))
    for m in range(tree.num_modules):
        p = int(tree.parent[m])
        if p >= 0:
            assert sets[m] < sets[p] and tree.level[p] > tree.level[m]
    assert torch.equal(tree.leaf, tree.level_ids[0][h.memberships[0]])
    for e in range(n):
        assert e in sets[int(tree.leaf[e])]
    roots = (tree.parent < 0).nonzero().squeeze(1)
    assert sorted(x for r in roots.tolist() for x in sets[r]) == list(range(n))  # roots partition entities


def test_save_load_and_cache(tmp_path, encoder):
    ds = sample_dataset()
    kg = load_or_build_kg_index(ds, encoder, graph_settings(), root=tmp_path)
    settings = replace(HIERARCHY, backend="cpu", context_window=40, min_module_size=3)
    first = load_or_build_hierarchy(kg.graph, settings, root=tmp_path, name="sample")
    assert first.built and (first.directory / "manifest.json").is_file()
    again = load_or_build_hierarchy(kg.graph, settings, root=tmp_path, name="sample")
    assert not again.built and again.directory == first.directory
    assert all(torch.equal(x, y) for x, y in zip(first.hierarchy.memberships, again.hierarchy.memberships))
    assert again.hierarchy.modularity == first.hierarchy.modularity
    other = load_or_build_hierarchy(kg.graph, replace(HIERARCHY, backend="cpu", context_window=40, seed=1),
                                    root=tmp_path, name="sample")
    assert other.directory != first.directory
    loaded = Hierarchy.load(first.directory)
    loaded.validate()
    assert loaded.num_entities == kg.graph.num_entities
    # module texts (non-LLM stand-in)
    tree = ModuleTree.from_hierarchy(loaded)
    texts = EntityListTexts(replace(HUGRAG.module_text, top_entities=5, top_facts=2))(tree, kg.graph)
    assert len(texts) == tree.num_modules and all(t.strip() for t in texts)
    for m, text in enumerate(texts):
        assert any(kg.graph.entity_names[e] in text for e in tree.entities(m).tolist())


def test_entity_texts_and_tokens(encoder, tmp_path):
    graph: KnowledgeGraph = load_or_build_kg_index(sample_dataset(), encoder, graph_settings(), root=tmp_path).graph
    names = entity_texts(graph, "name")
    full = entity_texts(graph, "name+facts")
    assert names == graph.entity_names
    assert all(f.startswith(n) for n, f in zip(names, full))
    # every fact lands in exactly one entity's text (its subject's)
    assert sum(t.count(";") + (":" in t) for t in full) == len(graph.facts)
    assert approx_tokens("one two three") == 4 and approx_tokens("") == 0
    assert make_token_counter("words:1.0")("a b c d") == 4
    with pytest.raises(ValueError):
        entity_texts(graph, "bogus")
