"""Explicit keyword edges, the LLM-free implicit stand-in, and tree fusion (property-tested forests)."""

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hyperrag.passage_graph import (
    EdgeSet,
    PassageGraph,
    QueryGraphBuilder,
    build_forest,
    extract_keywords,
    fuse_trees,
    keyword_edges,
    keyword_similarity,
)


def test_keyword_similarity_is_overlap_coefficient():
    a, b = frozenset({"x", "y", "z", "w"}), frozenset({"x", "q"})
    assert keyword_similarity(a, b) == 0.5
    assert keyword_similarity(a, frozenset()) == 0.0


def test_keyword_edges_threshold_and_degree_cap():
    sets = [frozenset({"k", f"a{i}", f"b{i}", f"c{i}"}) for i in range(6)]  # all share "k": sim 0.25
    sets.append(frozenset({"u1", "u2", "u3", "u4", "u5", "u6", "u7"}))  # shares nothing
    e = keyword_edges(sets, threshold=0.15, max_neighbors=3)
    deg = torch.bincount(torch.cat([e.parent, e.child]), minlength=7)
    assert int(deg.max()) <= 3 and int(deg[6]) == 0 and len(e) > 0
    assert torch.allclose(e.weight, torch.full_like(e.weight, 0.25))
    assert len(keyword_edges(sets, threshold=0.3)) == 0  # 0.25 < θ
    assert len(keyword_edges(sets, max_keyword_df=5)) == 0  # "k" is in 6 passages: skipped


def test_extract_keywords_with_yake_and_cache(tmp_path):
    texts = ["The Eiffel Tower is a wrought-iron lattice tower in Paris, France.",
             "Gustave Eiffel's company designed and built the Eiffel Tower in Paris."]
    ks = extract_keywords(texts, cache_dir=tmp_path, show_progress=False)
    assert any("eiffel tower" in k or "eiffel" in k for k in ks[0]) and "paris" in ks[1]
    assert list(tmp_path.glob("keywords-*.json"))
    assert extract_keywords(texts, cache_dir=tmp_path, show_progress=False) == ks  # from the cache
    assert len(keyword_edges(ks, threshold=0.15)) == 1


def test_implicit_stand_in_builds_query_trees():
    torch.manual_seed(0)
    p = torch.nn.functional.normalize(torch.randn(20, 8), dim=1)
    q = torch.nn.functional.normalize(p[:2] + 0.05 * torch.randn(2, 8), dim=1)
    builder = QueryGraphBuilder(p, [f"p{i}" for i in range(20)], llm=None)
    edges, graphs = builder.build(["q0", "q1"], q)
    assert builder.llm_calls == 0 and not any(g.llm for g in graphs)
    assert graphs[0].selected[0][0] == 0 and graphs[1].selected[0][0] == 1  # the nearest passage is kept first
    query_edges = edges.select(edges.relation == 1)
    assert set(query_edges.parent.tolist()) == {20, 21}  # query nodes P + i are the roots
    assert build_forest(edges, 22).is_valid()


def _edges(draw_pairs, weights):
    if not draw_pairs:
        return EdgeSet.empty()
    return EdgeSet.from_lists([a for a, _ in draw_pairs], [b for _, b in draw_pairs], weights,
                              ["keyword"] * len(draw_pairs))


pairs = st.lists(st.tuples(st.integers(0, 14), st.integers(0, 14)), max_size=40)


@settings(max_examples=150, deadline=None)
@given(pairs, pairs, st.randoms(use_true_random=False))
def test_fusion_is_a_valid_forest_keeping_directions(a, b, rnd):
    ea = _edges(a, [rnd.random() for _ in a])
    eb = _edges(b, [rnd.random() for _ in b])
    fa, fb = build_forest(ea, 15), build_forest(eb, 15)
    fused = fuse_trees(fa.edges, fb.edges, num_nodes=15)
    for f in (fa, fb, fused):
        assert f.is_valid()
        assert len(f.edges) == int((f.parent >= 0).sum())  # one parent per non-root
        # every accepted edge is an offered parent → child edge, never flipped
        offered = set(a) | set(b)
        assert all((p, c) in offered for p, c in zip(f.edges.parent.tolist(), f.edges.child.tolist()))
        # forest: edges = nodes - trees (undirected acyclic)
        assert len(f.edges) <= 14
    # fusion never drops an edge of a forest for nothing: it holds at least as many edges as the larger input
    assert len(fused.edges) >= max(len(fa.edges), len(fb.edges))


def test_fusion_drops_cycle_closing_edge():
    e = EdgeSet.from_lists([0, 1, 2], [1, 2, 0], [0.9, 0.8, 0.7], ["keyword"] * 3)
    f = build_forest(e, 3)
    assert f.dropped_cycle == 1 and f.is_valid() and f.parent.tolist() == [-1, 0, 1]


def test_passage_graph_variants_and_query_pruning():
    g = PassageGraph(4, explicit=EdgeSet.from_lists([0, 1], [1, 2], [0.5, 0.4], ["keyword"] * 2))
    g.add_queries(["a", "b"], EdgeSet.from_lists([4, 5, 5], [3, 3, 0], [1.5, 1.6, 1.2], ["query"] * 3))
    assert len(g.forest("explicit").edges) == 2 and len(g.forest("implicit").edges) == 2
    fused = g.forest("fused")
    assert fused.is_valid() and len(fused.edges) == 4  # 4 → 3 lost to 5 → 3 (one parent); 5 → 0 joins the trees
    source = g.drop_queries(torch.tensor([False, True]))
    assert source.tolist() == [0, 1, 2, 3, 5] and g.questions == ["b"]
    assert set(zip(g.implicit.parent.tolist(), g.implicit.child.tolist())) == {(4, 3), (4, 0)}
