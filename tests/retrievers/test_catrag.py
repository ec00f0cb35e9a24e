import torch

from hyperrag.config import method_settings
from hyperrag.data import sample_dataset
from hyperrag.ops.ppr import personalized_pagerank
from hyperrag.retrievers.catrag import CatRAGRetriever, EntityMatcher
from hyperrag.retrievers.hipporag2 import HippoRAG2Retriever


def test_entity_matcher_longest_salient_spans():
    names = ["black hawk township", "black", "state", "united states", "1903", "hawk"]
    m = EntityMatcher(names)
    assert m("What county borders Black Hawk Township?") == [0]
    assert m("the state where it lies") == []  # lower-case common noun: not a named entity
    assert sorted(m("When did the United States join in 1903?")) == [3, 4]


def test_anchors_add_weak_reset_mass(tmp_path, encoder):
    ds = sample_dataset()
    kwargs = {"encoder": encoder, "device": "cpu"}
    plain = CatRAGRetriever(method_settings("catrag", index_root=str(tmp_path), anchoring=False, passage_boost=False),
                            **kwargs)
    anchored = CatRAGRetriever(method_settings("catrag", index_root=str(tmp_path), passage_boost=False), **kwargs)
    plain.index(ds)
    anchored.index(ds)
    question = ["Where was Henri Becquerel born?"]
    seeds = anchored.seed(question)
    r0, r1 = plain.reset_vectors(plain.seed(question)), anchored.reset_vectors(seeds)
    e = anchored.graph.entity_names.index("henri becquerel")
    assert seeds.anchors == [[e]]
    count = float(anchored.graph.entity_passage_count[e])
    # subordinate to the fact seeds: a fact-seeded entity keeps its weight, else it gets ε / #passages
    assert float(r1[0, e]) == (float(r0[0, e]) if float(r0[0, e]) > 0 else 0.2 / count)
    changed = (r1 != r0).nonzero()[:, 1].tolist()
    assert set(changed) <= {e}


def test_passage_boost_is_a_per_query_delta_equal_to_a_rebuilt_graph(tmp_path, encoder):
    ds = sample_dataset()
    r = CatRAGRetriever(method_settings("catrag", index_root=str(tmp_path), anchoring=False), encoder=encoder,
                        device="cpu")
    r.index(ds)
    seeds = r.seed(["Who was the husband of Marie Curie's elder daughter?", "Where is Le Havre?"])
    delta = r.passage_boost_delta(seeds)
    assert delta is not None and set(delta.query.tolist()) == {0, 1}
    assert torch.allclose(delta.weight, torch.full_like(delta.weight, 3.5))
    # every boosted arc goes from a seed fact's entity to a passage node holding that fact
    num_e = r.graph.num_entities
    assert bool((delta.src < num_e).all()) and bool((delta.dst >= num_e).all())
    reset = r.reset_vectors(seeds)
    batched = personalized_pagerank(r.ppr_graph, reset, damping=0.5, edge_delta=delta)
    # reference: query 0 on a directed graph rebuilt with its arcs re-weighted
    from hyperrag.ops.ppr import PPRGraph

    ei, w = r.ppr_weights.edge_index, r.ppr_weights.weight
    src = torch.cat([ei[0], ei[1]])
    dst = torch.cat([ei[1], ei[0]])
    ww = torch.cat([w, w]).clone()
    mine = delta.query == 0
    for s, t, nw in zip(delta.src[mine].tolist(), delta.dst[mine].tolist(), delta.weight[mine].tolist()):
        ww[(src == s) & (dst == t)] = nw
    rebuilt = PPRGraph.from_edges(torch.stack([src, dst]), r.graph.num_nodes, ww, directed=True)
    ref = personalized_pagerank(rebuilt, reset[0], damping=0.5)
    assert torch.allclose(batched[0], ref, atol=1e-6)


def test_catrag_without_extras_equals_hipporag2(tmp_path, encoder):
    ds = sample_dataset()
    kwargs = {"encoder": encoder, "device": "cpu"}
    a = HippoRAG2Retriever(method_settings("hipporag2", index_root=str(tmp_path)), **kwargs)
    b = CatRAGRetriever(method_settings("catrag", index_root=str(tmp_path), anchoring=False, passage_boost=False,
                                        edge_weighting=False, edge_weights=a.settings.edge_weights), **kwargs)
    a.index(ds)
    b.index(ds)
    qs = [q.question for q in ds.queries]
    oa, ob = a.retrieve(qs, 5), b.retrieve(qs, 5)
    assert torch.equal(oa.indices, ob.indices) and torch.allclose(oa.scores, ob.scores)


def test_edge_delta_names_each_arc_once_and_multiplies_overlapping_parts(tmp_path, encoder, monkeypatch):
    """Boost and LLM weights are multipliers of the stored weight: an arc named by both gets the product,
    a repeat inside one part keeps its last weight, and the batched PPR accepts the merged delta."""
    from hyperrag.ops.ppr import EdgeWeightDelta

    ds = sample_dataset()
    r = CatRAGRetriever(method_settings("catrag", index_root=str(tmp_path), anchoring=False), encoder=encoder,
                        device="cpu")
    r.index(ds)
    seeds = r.seed(["Who was the husband of Marie Curie's elder daughter?", "Where is Le Havre?"])
    boost = r.passage_boost_delta(seeds)
    assert boost is not None
    q0, s0, t0 = int(boost.query[0]), int(boost.src[0]), int(boost.dst[0])
    stored = float(r.ppr_graph.arc_weight(torch.tensor([s0]), torch.tensor([t0])))
    # a fake LLM part: the boosted arc × 2 (named twice, last wins), plus one arc of its own
    other = int(r.ppr_graph.out_idx[r.ppr_graph.out_ptr[s0]])
    other_w = float(r.ppr_graph.arc_weight(torch.tensor([s0]), torch.tensor([other])))
    llm_part = EdgeWeightDelta(torch.tensor([q0, q0, q0]), torch.tensor([s0, s0, s0]),
                               torch.tensor([t0, t0, other]), torch.tensor([9.0 * stored, 2.0 * stored, 0.0]))
    monkeypatch.setattr(type(r), "llm_available", property(lambda self: True))
    monkeypatch.setattr(r, "edge_scorer", lambda seeds, llm, skip, pool=None: llm_part)
    delta = r.edge_delta(seeds)
    keys = list(zip(delta.query.tolist(), delta.src.tolist(), delta.dst.tolist()))
    assert len(keys) == len(set(keys))
    w = dict(zip(keys, delta.weight.tolist()))
    assert abs(w[(q0, s0, t0)] - stored * 3.5 * 2.0) < 1e-5
    if other != t0:
        assert w[(q0, s0, other)] == 0.0 and other_w >= 0
    ppr = personalized_pagerank(r.ppr_graph, r.reset_vectors(seeds), damping=0.5, edge_delta=delta)
    assert torch.allclose(ppr.sum(1), torch.ones(2), atol=1e-5)
