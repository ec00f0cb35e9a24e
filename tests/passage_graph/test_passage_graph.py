"""Explicit keyword edges, the LLM-free implicit stand-in, and tree fusion (property-tested forests)."""

from dataclasses import replace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hyperrag.config import method_settings
from hyperrag.passage_graph import (
    RELATIONS,
    EdgeSet,
    PassageGraph,
    QueryGraphBuilder,
    build_forest,
    extract_keywords,
    fuse_trees,
    keyword_edges,
    keyword_similarity,
)

HYPERRAG = method_settings("hyperrag")
EXPLICIT, KEYWORDS = HYPERRAG.explicit, HYPERRAG.keywords  # θ 0.15, ≤ 3 neighbours, df ≤ 50; YAKE top 10
IMPLICIT = replace(HYPERRAG.implicit, max_selected=4)


def test_keyword_similarity_is_overlap_coefficient():
    a, b = frozenset({"x", "y", "z", "w"}), frozenset({"x", "q"})
    assert keyword_similarity(a, b) == 0.5
    assert keyword_similarity(a, frozenset()) == 0.0


def test_keyword_edges_threshold_and_degree_cap():
    sets = [frozenset({"k", f"a{i}", f"b{i}", f"c{i}"}) for i in range(6)]  # all share "k": sim 0.25
    sets.append(frozenset({"u1", "u2", "u3", "u4", "u5", "u6", "u7"}))  # shares nothing
    e = keyword_edges(sets, replace(EXPLICIT, threshold=0.15, max_neighbors=3))
    deg = torch.bincount(torch.cat([e.parent, e.child]), minlength=7)
    assert int(deg.max()) <= 3 and int(deg[6]) == 0 and len(e) > 0
    assert torch.allclose(e.weight, torch.full_like(e.weight, 0.25))
    assert len(keyword_edges(sets, replace(EXPLICIT, threshold=0.3))) == 0  # 0.25 < θ
    assert len(keyword_edges(sets, replace(EXPLICIT, max_keyword_df=5))) == 0  # "k" is in 6 passages: skipped


def test_extract_keywords_with_yake_and_cache(tmp_path):
    texts = ["The Eiffel Tower is a wrought-iron lattice tower in Paris, France.",
             "Gustave Eiffel's company designed and built the Eiffel Tower in Paris."]
    ks = extract_keywords(texts, KEYWORDS, cache_dir=tmp_path, show_progress=False)
    assert any("eiffel tower" in k or "eiffel" in k for k in ks[0]) and "paris" in ks[1]
    assert list(tmp_path.glob("keywords-*.json"))
    assert extract_keywords(texts, KEYWORDS, cache_dir=tmp_path, show_progress=False) == ks  # from the cache
    assert len(keyword_edges(ks, replace(EXPLICIT, threshold=0.15))) == 1


def test_implicit_stand_in_builds_query_trees():
    torch.manual_seed(0)
    p = torch.nn.functional.normalize(torch.randn(20, 8), dim=1)
    q = torch.nn.functional.normalize(p[:2] + 0.05 * torch.randn(2, 8), dim=1)
    builder = QueryGraphBuilder(p, [f"p{i}" for i in range(20)], IMPLICIT, llm=None)
    edges, graphs = builder.build(["q0", "q1"], q)
    assert builder.llm_calls == 0 and not any(g.llm for g in graphs)
    assert dict(builder.skipped) == {"passage_selection": 2}  # no LLM, counted; one kept passage, no encoder
    assert graphs[0].selected[0][0] == 0 and graphs[1].selected[0][0] == 1  # the nearest passage is kept first
    query_edges = edges.select(edges.relation == 1)
    assert set(query_edges.parent.tolist()) == {20, 21}  # query nodes P + i are the roots
    assert build_forest(edges, 22).is_valid()


def test_the_papers_query_graph_has_passages_and_passage_edges_only():
    """§2: V_i ⊆ C, E_i ⊆ V_i × V_i — no question node, no query edge; the labelled variant keeps them."""
    torch.manual_seed(0)
    p = torch.nn.functional.normalize(torch.randn(20, 8), dim=1)
    q = torch.nn.functional.normalize(p[:2] + 0.05 * torch.randn(2, 8), dim=1)
    paper = QueryGraphBuilder(p, [f"p{i}" for i in range(20)], replace(IMPLICIT, margin=1.0), query_nodes=False)
    edges, graphs = paper.build(["q0", "q1"], q)
    assert len(edges) and int(torch.cat([edges.parent, edges.child]).max()) < 20  # every endpoint a passage
    assert RELATIONS.index("query") not in edges.relation.tolist()
    assert all(len(g.selected[0]) > 1 for g in graphs)  # several passages selected, linked to one another
    g = PassageGraph(20)
    g.add_queries(["q0", "q1"], edges, nodes=False)
    assert g.num_queries == 0 and g.num_nodes == 20 and g.graph_questions == ["q0", "q1"]
    assert g.relations("implicit").max() < 20
    rooted, _ = QueryGraphBuilder(p, [f"p{i}" for i in range(20)], replace(IMPLICIT, margin=1.0)).build(["q0"], q[:1])
    assert RELATIONS.index("query") in rooted.relation.tolist()  # the question-root variant


def test_key_entity_merge_unifies_passages_into_one_node():
    """§3.1.3: passages sharing a key entity become one node — the tree rules hold between merged nodes, and the
    members are tied together in the training relations."""
    from hyperrag.passage_graph.fusion import merge_groups

    entity = EdgeSet.from_lists([0, 4], [1, 5], [1.0, 1.0], ["entity", "entity"])
    trees = EdgeSet.from_lists([0, 2], [2, 3], [0.9, 0.8], ["support", "expand"])
    group, ties = merge_groups(entity, 6, torch.tensor([True, False, True, True, False, False]))
    assert group.tolist() == [0, 0, 2, 3, 4, 4] and set(zip(ties.parent.tolist(), ties.child.tolist())) == {(1, 0), (5, 4)}
    g = PassageGraph(6, entity=EdgeSet.from_lists([0, 3], [1, 5], [1.0, 1.0], ["entity"] * 2), entity_merge=True,
                     explicit=EdgeSet.from_lists([1, 3, 0], [2, 4, 1], [0.5, 0.5, 0.4], ["keyword"] * 3))
    g.add_queries(["q"], trees, nodes=False)
    fused = g.forest("fused")
    kept = set(zip(fused.edges.parent.tolist(), fused.edges.child.tolist()))
    # 1 → 2 would give 2 a second parent (0 → 2, from the merged node {0, 1}, came first); 0 → 1 lies inside {0, 1}
    assert (1, 2) not in kept and (0, 1) not in kept and fused.merged_inside == 1 and fused.is_valid()
    assert {(0, 2), (2, 3), (3, 4)} <= kept
    ties = set(zip(fused.merged.parent.tolist(), fused.merged.child.tolist()))
    assert ties == {(1, 0), (5, 3)}  # 3 is in a query tree: the representative
    rel = set(zip(*g.relations("fused").tolist()))
    assert {(1, 0), (0, 1), (5, 3), (3, 5)} <= rel
    linked = PassageGraph(6, entity=g.entity, explicit=g.explicit)
    linked.add_queries(["q"], trees, nodes=False)
    assert len(linked.forest("fused").merged) == 0  # fusion: link offers the entity links as tree edges


def _inserted(after_update: str) -> PassageGraph:
    """Passages 0..3 with the keyword edge 3 → 2, pinned; passage 4 inserted (it names passage 2's key entity);
    then a streamed query tree 0 → 4 (support) merges {2, 4} into one node."""
    g = PassageGraph(4, explicit=EdgeSet.from_lists([3], [2], [0.5], ["keyword"]), entity_merge=True,
                     after_update=after_update)
    g.pin("fused")  # no query tree yet: no merge, 3 → 2 is pinned
    g.add_passages(1, EdgeSet.from_lists([4], [1], [0.4], ["keyword"]),
                   EdgeSet.from_lists([2], [4], [1.0], ["entity"]))
    g.add_queries(["q"], EdgeSet.from_lists([0], [4], [0.9], ["support"]), nodes=False)
    return g


def _pairs(edges: EdgeSet) -> set[tuple[int, int]]:
    return set(zip(edges.parent.tolist(), edges.child.tolist()))


@pytest.mark.parametrize("after_update", ["query_first", "pinned_first"])
def test_fusion_after_an_insert_keeps_one_parent_per_merged_node(after_update):
    """After an insert the pinned and new forests fuse with today's merged nodes: the merged node {2, 4} has one
    parent under both orders; ``query_first`` offers the streamed query edge 0 → 4 before the pinned keyword edge
    3 → 2 (the query edge wins), ``pinned_first`` keeps the pinned forest whole (the keyword edge wins)."""
    fused = _inserted(after_update).forest("fused")
    kept = _pairs(fused.edges)
    assert fused.is_valid()
    assert len([c for c in fused.edges.child.tolist() if c in (2, 4)]) == 1  # one parent for the merged node {2, 4}
    assert _pairs(fused.merged) == {(2, 4)}  # 4 is in the query tree: the representative
    assert (4, 1) in kept and fused.dropped_second_parent == 1  # the loser is counted, never a second parent
    if after_update == "query_first":
        assert (0, 4) in kept and (3, 2) not in kept
    else:
        assert (3, 2) in kept and (0, 4) not in kept


def test_fusion_after_update_rejects_an_unknown_order():
    with pytest.raises(ValueError, match="after_update"):
        PassageGraph(3, after_update="newest_first")


@settings(max_examples=20, deadline=None)
@given(st.integers(4, 10), st.data())
def test_fusion_after_update_keeps_each_orders_guarantee(n, data):
    """Random keyword and query-guided edges, pinned, then new ones of both kinds (with merged nodes): a valid
    forest with one parent per merged node under both orders; ``pinned_first`` keeps every pinned edge;
    ``query_first`` keeps every pinned query-guided edge and its query-guided part is exactly the fusion of the
    query-guided edges alone (no pinned keyword edge crowds out a new query edge)."""
    pair = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda t: t[0] != t[1])
    draw = lambda rel, k: EdgeSet.from_lists(*zip(*ps), [0.5] * len(ps), [rel] * len(ps)) \
        if (ps := data.draw(st.lists(pair, max_size=k))) else EdgeSet.empty()
    after_update = data.draw(st.sampled_from(["query_first", "pinned_first"]))
    g = PassageGraph(n, explicit=draw("keyword", 2 * n), entity=draw("entity", 3), entity_merge=True,
                     after_update=after_update)
    g.add_queries(["a"], draw("support", n), nodes=False)
    pinned = g.pin("fused").edges
    g.explicit = g.explicit.cat(draw("keyword", n))
    g.add_queries(["b"], draw("expand", n), nodes=False)
    f = g.forest("fused")
    assert f.is_valid()
    rep = torch.arange(n)
    rep[f.merged.parent] = f.merged.child
    assert int(torch.bincount(rep[f.edges.child], minlength=n).max()) <= 1  # one parent per merged node
    kept, kw = _pairs(f.edges), RELATIONS.index("keyword")
    group = rep if len(f.merged) else None
    if after_update == "pinned_first":  # the pinned forest whole (where today's merged nodes leave it a forest)
        assert _pairs(fuse_trees(pinned, num_nodes=n, group=group).edges) <= kept
        if group is None:
            assert _pairs(pinned) <= kept
    else:
        free = PassageGraph(n, explicit=g.explicit, implicit=g.implicit, entity=g.entity, entity_merge=True
                            ).forest("fused")
        alone = fuse_trees(pinned.select(pinned.relation != kw), free.edges.select(free.edges.relation != kw),
                           num_nodes=n, priority=True, group=group)
        assert {e for e, r in zip(zip(f.edges.parent.tolist(), f.edges.child.tolist()), f.edges.relation.tolist())
                if r != kw} == _pairs(alone.edges)


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
    # with priority the first forest is kept whole (weight order alone may trade two edges for one: a heavy
    # edge of b can take the parent slot of a's child and make a's other edge close a cycle)
    first = fuse_trees(fa.edges, fb.edges, num_nodes=15, priority=True)
    assert first.is_valid()
    kept = set(zip(first.edges.parent.tolist(), first.edges.child.tolist()))
    assert set(zip(fa.edges.parent.tolist(), fa.edges.child.tolist())) <= kept
    assert len(first.edges) >= len(fa.edges)


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


class _BagEncoder:
    """Deterministic bag-of-words encoder over a fixed vocabulary (unit rows)."""

    def __init__(self, vocab):
        self.vocab = {w: i for i, w in enumerate(vocab)}

    def encode(self, texts, desc=""):
        out = torch.zeros(len(texts), len(self.vocab))
        for r, t in enumerate(texts):
            for w in t.lower().split():
                if w in self.vocab:
                    out[r, self.vocab[w]] += 1.0
        return torch.nn.functional.normalize(out + 1e-6, dim=1)


def test_stand_in_feedback_round_reaches_the_bridge_passage():
    """LLM-free missing-concept round: the best passage's new keywords find the second-hop passage."""
    texts = ["alice born in wonderland", "wonderland capital is hearts", "alice drinks tea tea", "bob likes cheese"]
    enc = _BagEncoder(["alice", "born", "wonderland", "capital", "hearts", "tea", "bob", "cheese", "where"])
    kws = [frozenset({"alice", "wonderland"}), frozenset({"wonderland", "hearts"}), frozenset({"tea"}),
           frozenset({"cheese"})]
    feedback = replace(IMPLICIT, top_k=2, max_selected=1, round_top_k=1, max_rounds=2, margin=0.0)
    builder = QueryGraphBuilder(enc.encode(texts), texts, feedback, encoder=enc, llm=None, keyword_sets=kws)
    assert builder.feedback_query("where was alice born", 0) == ("where was alice born wonderland", ["wonderland"])
    edges, graphs = builder.build(["where was alice born"], enc.encode(["where was alice born"]))
    assert graphs[0].selected == [[0], [1]] and graphs[0].queries == [["where was alice born wonderland"]]
    assert dict(builder.skipped) == {"passage_selection": 2, "passage_relations": 1, "missing_concepts": 1}
    expand = edges.select(edges.relation == RELATIONS.index("expand"))
    assert list(zip(expand.parent.tolist(), expand.child.tolist())) == [(0, 1)]  # best passage → bridge
    off = QueryGraphBuilder(enc.encode(texts), texts, replace(IMPLICIT, top_k=2, max_selected=1, feedback="none"),
                            encoder=enc, llm=None, keyword_sets=kws)
    assert len(off.build(["where was alice born"], enc.encode(["where was alice born"]))[1][0].selected) == 1


def test_query_closure_relates_queries_to_second_hop_passages():
    g = PassageGraph(4, explicit=EdgeSet.from_lists([1], [3], [0.9], ["keyword"]))
    g.add_queries(["q"], EdgeSet.from_lists([4, 0, 0], [0, 1, 2], [1.9, 0.6, 0.5], ["query", "expand", "expand"]))
    pairs = lambda rel: set(zip(rel[0].tolist(), rel[1].tolist()))
    base = pairs(g.relations("fused"))
    closed = pairs(g.relations("fused", query_closure_depth=3))
    assert closed - base == {(4, 1), (1, 4), (4, 2), (2, 4)}  # keyword child 3 is not the query's evidence
    assert pairs(g.relations("explicit", query_closure_depth=3)) == {(1, 3), (3, 1)}
    rel = g.relations("implicit", query_edge_repeat=3)
    assert rel.shape[1] == 2 * (3 + 2) and int(((rel[0] == 4) & (rel[1] == 0)).sum()) == 3


def test_fusion_priority_keeps_query_trees_whole():
    explicit = EdgeSet.from_lists([2], [1], [0.95], ["keyword"])
    implicit = EdgeSet.from_lists([3, 0], [0, 1], [1.9, 0.6], ["query", "expand"])
    by_weight = fuse_trees(explicit, implicit, num_nodes=4)
    first = fuse_trees(implicit, explicit, num_nodes=4, priority=True)
    assert by_weight.parent.tolist()[1] == 2 and first.parent.tolist()[1] == 0
    assert first.is_valid() and len(first.edges) == 2  # 2 → 1 would give node 1 a second parent
    g = PassageGraph(3, explicit=explicit)
    g.add_queries(["q"], implicit)
    assert g.forest("fused").parent.tolist()[1] == 0
    g.implicit_first = False
    assert g.forest("fused").parent.tolist()[1] == 2


def test_implicit_forest_keeps_relation_chains():
    """q → a (query), q → b (query), a → b (expand): the chain wins b's one parent, so b hangs under a."""
    g = PassageGraph(3)
    g.add_queries(["q"], EdgeSet.from_lists([3, 3, 0], [0, 1, 1], [1.9, 1.8, 0.4], ["query", "query", "expand"]))
    f = g.forest("implicit")
    assert f.parent.tolist() == [3, 0, -1, -1] and f.is_valid()
    pairs = set(zip(*g.relations("fused", query_closure_depth=2).tolist()))
    assert {(0, 1), (1, 0), (3, 1), (1, 3)} <= pairs  # the relation edge trains, and q reaches b through it


def test_key_entity_links_and_their_place_in_the_fusion():
    from hyperrag.passage_graph import key_entity_edges

    s = HYPERRAG.key_entity
    titles = ["Black Hawk Township", "Jefferson County", "Jefferson County", "Lake Ohrid", ""]
    texts = ["Black Hawk Township is located in Jefferson County, Iowa.", "Jefferson County borders Dodge County.",
             "Jefferson County was named after Thomas Jefferson.", "Lake Ohrid lies on the border of Albania.",
             "Lake Ohrid and Jefferson County are far apart."]
    e = key_entity_edges(titles, texts, s)
    pairs = set(zip(e.parent.tolist(), e.child.tolist()))
    assert {(0, 1), (0, 2), (1, 2), (4, 3), (4, 1), (4, 2)} <= pairs and (2, 1) not in pairs
    assert set(e.relation.tolist()) == {RELATIONS.index("entity")}
    assert not len(key_entity_edges(titles, texts, replace(s, source="none")))
    assert len(key_entity_edges(titles, texts, replace(s, max_passages=1))) < len(e)  # "Jefferson County" named 2x
    narrow = key_entity_edges(titles, texts, replace(s, match="same_title"))  # equal titles only, no mentions
    assert set(zip(narrow.parent.tolist(), narrow.child.tolist())) == {(1, 2)}
    only_new = key_entity_edges(titles, texts, s, first=4)
    assert all(a >= 4 or b >= 4 for a, b in zip(only_new.parent.tolist(), only_new.child.tolist()))
    # the fused forest offers only the entity links that touch a query tree
    g = PassageGraph(5, entity=e)
    g.add_queries(["q"], EdgeSet.from_lists([5], [0], [1.9], ["query"]))
    fused = g.forest("fused")
    kept = set(zip(fused.edges.parent.tolist(), fused.edges.child.tolist()))
    assert (0, 1) in kept and (4, 3) not in kept and fused.is_valid()


def test_every_query_graph_call_failing_stops_the_index_stage(tmp_path):
    """With a dead endpoint (HTTP 500 on every call) the stand-in builds every query graph, and the index stage
    stops with one line instead of training the ball on them; one working step is enough to go on."""
    import json

    import pytest

    from hyperrag.llm.errors import StageFailedError
    from tests.hierarchy.fake_llm import fake_llm, schema_text
    from tests.llm.fake_server import Reply

    torch.manual_seed(0)
    p = torch.nn.functional.normalize(torch.randn(20, 8), dim=1)
    q = torch.nn.functional.normalize(p[:2] + 0.05 * torch.randn(2, 8), dim=1)
    texts = [f"p{i}" for i in range(20)]
    one_round = replace(IMPLICIT, max_rounds=1)

    def down(body):
        return Reply(status=500, body="down")

    def selects_only(body):  # passage_selection answers (two passages), passage_relations fails
        return json.dumps({"selected_ids": ["P1", "P2"]}) if "selected_ids" in schema_text(body) else down(body)

    with fake_llm(down, tmp_path) as (llm, _):
        builder = QueryGraphBuilder(p, texts, one_round, llm=llm)
        _, graphs = builder.build(["q0", "q1"], q)
        assert builder.llm_failed == builder.llm_calls > 0 and not any(g.llm for g in graphs)
        with pytest.raises(StageFailedError, match=r"HyperRAG query graphs \(implicit edges\): every LLM call failed"):
            builder.stop_if_nothing_succeeded()
        # the HyperRAG index build runs that check after its query graphs (nothing to train on)
        from hyperrag.data.types import Passage
        from hyperrag.hyperbolic.ball_index import BallIndex
        from tests.reliability.doubles import HashEncoder

        passages = [Passage(f"p{i}", f"Town {i}", f"Town {i} lies on the river Avon near town {i + 1}.")
                    for i in range(8)]
        settings = replace(HYPERRAG, graph="fused", index_root=str(tmp_path / "index"), implicit=one_round)
        with pytest.raises(StageFailedError, match="every LLM call failed"):
            BallIndex.build(passages, ["Which river runs through town 3?"], settings, HashEncoder(), llm)
    (tmp_path / "second").mkdir()
    with fake_llm(selects_only, tmp_path / "second") as (llm, _):
        builder = QueryGraphBuilder(p, texts, one_round, llm=llm)
        builder.build(["q0", "q1"], q)
        assert 0 < builder.llm_failed < builder.llm_calls
        builder.stop_if_nothing_succeeded()  # some steps came from the LLM: the run goes on
