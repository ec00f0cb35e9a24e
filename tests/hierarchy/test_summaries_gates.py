"""Module summaries and causal gates against the scripted fake LLM server (a test double, real HTTP on loopback):
bottom-up order, caching, resumption after failures, Algorithm 2's pruning, the prefilter and call accounting."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest
import torch

from hyperrag.config import method_settings
from hyperrag.graph.knowledge_graph import KnowledgeGraph
from hyperrag.hierarchy.checkpoint import JsonlCheckpoint
from hyperrag.hierarchy.gates import GateBuilder, prefilter_neighbors
from hyperrag.hierarchy.modules import EntityListTexts, ModuleTree
from hyperrag.hierarchy.summaries import ModuleSummaries, descendants
from tests.hierarchy.fake_llm import fake_llm, gate_pair, paper_figure, prompt_of, schema_text
from tests.llm.fake_server import Reply

HUGRAG = method_settings("hugrag")
STAND_IN = EntityListTexts(HUGRAG.module_text)


def toy_tree() -> ModuleTree:
    """Entities 0..5; level-1 modules 0 {0,1}, 1 {2,3}, 2 {4,5}; level-2 modules 3 {0..3} (children 0, 1),
    4 {4,5} (child 2)."""
    level = torch.tensor([1, 1, 1, 2, 2])
    parent = torch.tensor([3, 3, 4, -1, -1])
    members = [[0, 1], [2, 3], [4, 5], [0, 1, 2, 3], [4, 5]]
    ptr = torch.tensor([0, *torch.cumsum(torch.tensor([len(m) for m in members]), 0).tolist()])
    idx = torch.tensor([e for m in members for e in m])
    return ModuleTree(level, parent, ptr, idx, torch.tensor([0, 0, 1, 1, 2, 2]), [torch.arange(3), torch.tensor([3, 4])])


def toy_graph() -> KnowledgeGraph:
    names = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
    facts = [("alpha", "causes", "beta"), ("gamma", "feeds", "delta"), ("epsilon", "near", "zeta")]
    fe = torch.tensor([[0, 1], [2, 3], [4, 5]])
    ei = torch.tensor([[0, 2, 4, 1], [1, 3, 5, 2]])
    return KnowledgeGraph(names, ["p0"], ei, torch.ones(4), torch.zeros(4, dtype=torch.uint8), facts, fe,
                          torch.tensor([0, 1, 2, 3]), torch.zeros(3, dtype=torch.long),
                          torch.tensor([0, 1, 2, 3, 4, 5, 6]), torch.zeros(6, dtype=torch.long))


def summary_responder(fail: set[str] | None = None):
    """Summaries titled after the first entity shown; entities named in ``fail`` get an HTTP 500."""
    def respond(body):
        prompt = prompt_of(body)
        first = re.search(r'id="E1">\n([^\n:]+)', prompt).group(1)
        if fail and first in fail:
            return Reply(status=500, body="boom")
        return json.dumps({"title": f"About {first}", "summary": f"Summary of {first}.", "keywords": [first]})
    return respond


def test_summaries_bottom_up_cached_and_resumable(tmp_path):
    tree, graph = toy_tree(), toy_graph()
    with fake_llm(summary_responder(fail={"epsilon", "zeta"}), tmp_path) as (llm, server):
        src = ModuleSummaries(llm, HUGRAG.summaries, STAND_IN, tmp_path / "hier", progress=False)
        texts = src(tree, graph)
        assert src.stats["llm_summaries"] == 3 and src.stats["failed"] == 2  # module 2 and its parent 4
        prompts = [prompt_of(b) for b in server.requests]
        parent = next(p for p in prompts if "Sub-module summaries" in p and "About beta" in p)
        assert "About gamma" in parent  # the parent read both children's summaries (bottom-up)
        assert texts[0].startswith("About beta") and "epsilon" in texts[2]  # stand-in for the failed one
        assert len(JsonlCheckpoint(tmp_path / "hier" / "summaries.jsonl").load()) == 3
    with fake_llm(summary_responder(), tmp_path) as (llm, server):  # rerun: only the two missing modules
        src = ModuleSummaries(llm, HUGRAG.summaries, STAND_IN, tmp_path / "hier", progress=False)
        texts = src(tree, graph)
        assert src.stats["resumed"] == 3 and server.stats["requests"] == 2 and src.stats["stand_in"] == 0
        assert texts[2].startswith("About epsilon") or texts[2].startswith("About zeta")
    with (tmp_path / "hier" / "summaries.jsonl").open("a") as fh:
        fh.write('{"key": "0", "digest": "torn')  # a killed writer's torn line is ignored
    with fake_llm(summary_responder(), tmp_path) as (llm, server):
        src = ModuleSummaries(llm, HUGRAG.summaries, STAND_IN, tmp_path / "hier", progress=False)
        src(tree, graph)
        assert server.stats["requests"] == 0 and src.stats["resumed"] == 5


def test_summaries_cap_and_no_llm(tmp_path):
    tree, graph = toy_tree(), toy_graph()
    standin = ModuleSummaries(None, HUGRAG.summaries, STAND_IN)(tree, graph)
    assert standin[0].startswith("beta") and "alpha causes beta" in standin[0]
    with fake_llm(summary_responder(), tmp_path) as (llm, server):
        src = ModuleSummaries(llm, replace(HUGRAG.summaries, max_llm_modules=2), STAND_IN, None, progress=False)
        src(tree, graph)
        assert server.stats["requests"] == 2 and src.stats["stand_in"] == 3  # the two largest modules only


def test_descendants_and_prefilter():
    tree = toy_tree()
    assert descendants(tree) == [set(), set(), set(), {0, 1}, {2}]
    emb = torch.nn.functional.normalize(torch.tensor([[1.0, 0], [1, 0.1], [0, 1], [1, 0.05], [0.1, 1]]), dim=1)
    nbrs, sims = prefilter_neighbors(emb, 1, 0.5)
    assert all(len(n) >= 1 for n in nbrs) and all(s >= 0.5 for s in sims.values())


def gate_responder(causes: set[tuple[str, str]]):
    """An asymmetric scripted verifier: ``(cause, effect)`` pairs; says yes (with the direction) when A and B are
    such a pair in either order, no otherwise."""
    def respond(body):
        a, b = gate_pair(body)
        if paper_figure(body) == "9":  # Fig 9 as printed (prompts: paper): the bare token, no direction
            return "yes" if (a, b) in causes or (b, a) in causes else "no"
        if "direction" not in schema_text(body):  # Fig 9 in our frame (paper_json): the one token as JSON
            return json.dumps({"answer": "yes" if (a, b) in causes or (b, a) in causes else "no"})
        if (a, b) in causes:
            return json.dumps({"answer": "yes", "direction": "A->B"})
        if (b, a) in causes:
            return json.dumps({"answer": "yes", "direction": "B->A"})
        return json.dumps({"answer": "no", "direction": "none"})
    return respond


def asked_pairs(server) -> set[tuple[str, str]]:
    return {tuple(t.split()[0] for t in gate_pair(b)) for b in server.requests}


def test_gates_algorithm2_pruning_resume_and_budget(tmp_path):
    tree = toy_tree()
    texts = ["m0", "m1", "m2", "m3", "m4"]
    # every module similar to every other: the prefilter keeps all pairs
    emb = torch.nn.functional.normalize(torch.ones(5, 4) + 0.01 * torch.arange(20.0).view(5, 4), dim=1)
    settings = replace(HUGRAG.gates, prefilter=True, top_m=4, threshold=0.0)
    with fake_llm(gate_responder({("m4", "m3")}), tmp_path) as (llm, server):
        # prompts=extended: the verdict names its direction (the paper's Fig 9 asks none)
        result = GateBuilder(llm, settings, tmp_path / "hier", progress=False, prompts="extended").build(tree, texts, emb)
        s = result.stats
        # level 2: intra (3,4) → gate. inter: 0, 1 are 3's children and 2 is the child of 4, which 3 is now gated
        # to; symmetrically for 4 → all six pruned. level 1: intra pairs (0,1), (0,2), (1,2).
        assert s["candidates_intra"] == 4 and s["candidates_inter"] == 0 and s["pruned_hierarchy"] == 6
        assert s["llm_calls"] == 4 == server.stats["requests"] and s["gates_found"] == 1
        assert s["levels"]["2"]["llm_calls"] == 1 and s["levels"]["1"]["llm_calls"] == 3
        assert result.pairs.tolist() == [[3], [4]] and result.kinds == ["intra"]
        # m4 causes m3 but m3 was shown first: the verdict looks both ways and records the direction
        assert result.directions == ["B->A"] and s["directions"]["B->A"] == 1
        asked = asked_pairs(server)
        assert ("m3", "m0") not in asked and ("m3", "m2") not in asked and ("m3", "m4") in asked
    with fake_llm(gate_responder({("m4", "m3")}), tmp_path / "other") as (llm, server):  # fresh LLM cache
        again = GateBuilder(llm, settings, tmp_path / "hier", progress=False, prompts="extended").build(tree, texts, emb)
        assert server.stats["requests"] == 0 and again.stats["resumed"] == 4 and again.pairs.tolist() == [[3], [4]]
        assert again.directions == ["B->A"]
    with fake_llm(gate_responder(set()), tmp_path / "nogate") as (llm, server):  # no level-2 gate: less pruning
        open_ = GateBuilder(llm, settings, None, progress=False).build(tree, texts, emb).stats
        assert open_["candidates_inter"] == 3 and open_["pruned_hierarchy"] == 3 and open_["gates_found"] == 0
    with fake_llm(gate_responder(set()), tmp_path / "budget") as (llm, server):
        capped = GateBuilder(llm, replace(settings, max_calls=2), None, progress=False).build(tree, texts, emb)
        assert server.stats["requests"] == 2 and capped.stats["skipped_budget"] > 0
    free = GateBuilder(None, replace(settings, verifier="none"), None).build(tree, texts, emb)
    assert free.stats["llm_calls"] == 0 and free.stats["gates_found"] >= 1


def test_asymmetric_links_are_found_in_both_orders(tmp_path):
    """Every cause sits in the module shown second (higher id): a one-way question ("does A cause B?") would find
    none of these links."""
    tree = toy_tree()
    texts = ["m0", "m1", "m2", "m3", "m4"]
    emb = torch.eye(5)
    settings = replace(HUGRAG.gates, prefilter=False, min_distance=1, inter_layer=False)
    with fake_llm(gate_responder({("m2", "m0"), ("m4", "m3")}), tmp_path) as (llm, _server):
        result = GateBuilder(llm, settings, None, progress=False, prompts="extended").build(tree, texts, emb)
        paper = GateBuilder(llm, settings, None, progress=False).build(tree, texts, emb)  # Fig 9: "either direction"
    assert sorted(map(tuple, result.pairs.T.tolist())) == [(0, 2), (3, 4)]
    assert result.directions == ["B->A", "B->A"]
    assert paper.pairs.tolist() == result.pairs.tolist() and paper.directions == ["both", "both"]
    assert all(a < b for a, b in result.pairs.T.tolist())  # each unordered pair asked once, lower id as A


def test_candidates_are_topologically_distant_without_a_prefilter(tmp_path):
    """min_distance 2: adjacent modules (an entity edge between them) are not candidates; no prefilter."""
    tree, graph = toy_tree(), toy_graph()
    edges = graph.edge_index
    texts = ["m0", "m1", "m2", "m3", "m4"]
    emb = torch.eye(5)  # orthogonal summaries: a cosine prefilter would propose nothing
    settings = replace(HUGRAG.gates, prefilter=False, min_distance=2)
    with fake_llm(gate_responder(set()), tmp_path) as (llm, server):
        stats = GateBuilder(llm, settings, None, progress=False).build(tree, texts, emb, entity_edges=edges).stats
        asked = asked_pairs(server)
    # level 1: modules 0 {0,1} and 1 {2,3} touch through the edge 1–2 → pruned; (0,2), (1,2) asked.
    assert stats["levels"]["1"]["pruned_near"] == 1 and ("m0", "m1") not in asked
    assert {("m0", "m2"), ("m1", "m2"), ("m3", "m4")} <= asked
    # level 2 inter: 3 → 2 (2's level-2 module is 4, not adjacent to 3); 4 → 0, 1 (inside 3, not adjacent)
    assert stats["levels"]["2"]["candidates_inter"] == 3 and stats["pruned_prefilter"] == 0
    counted = GateBuilder(None, replace(settings, verifier="none"), None).count(tree, texts, emb, edges, verdict=False)
    assert counted["verified"] == stats["verified"] == server.stats["requests"]
    fewest = GateBuilder(None, replace(settings, verifier="none"), None).count(tree, texts, emb, edges, verdict=True)
    assert fewest["verified"] < counted["verified"] and fewest["gates_found"] == fewest["verified"]


def flat_tree(n: int = 6) -> ModuleTree:
    """n level-1 modules, one entity each, no parents."""
    return ModuleTree(torch.ones(n, dtype=torch.long), torch.full((n,), -1), torch.arange(n + 1), torch.arange(n),
                      torch.arange(n), [torch.arange(n)])


def angles(*deg: float) -> torch.Tensor:
    rad = torch.tensor(deg) * torch.pi / 180
    return torch.stack([rad.cos(), rad.sin()], dim=1)


def test_relatedness_test_keeps_each_modules_most_similar_candidates():
    """prefilter_scope=candidates: each module keeps its top_m most similar candidates with cos >= threshold (a pair
    stays when either end keeps it); the checks grow with top_m x modules, not with the pairs."""
    tree, texts = flat_tree(), [f"m{i}" for i in range(6)]
    emb = angles(0, 20, 50, 80, 120, 170)  # neighbours 20-50 degrees apart
    rule = replace(HUGRAG.gates, prefilter=True, prefilter_scope="candidates", top_m=1, threshold=0.5,
                   min_distance=1, verifier="none", max_calls=None)
    asked = GateBuilder(None, rule, None).count(tree, texts, emb, verdict=False)["asked"]
    assert sorted((a, b) for a, b, _ in asked) == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]
    strict = GateBuilder(None, replace(rule, threshold=0.8), None).count(tree, texts, emb, verdict=False)
    assert sorted((a, b) for a, b, _ in strict["asked"]) == [(0, 1), (1, 2), (2, 3)]  # cos 40°, 50° < 0.8
    assert strict["pruned_prefilter"] == 15 - 3
    everything = GateBuilder(None, replace(rule, prefilter=False), None).count(tree, texts, emb, verdict=False)
    assert everything["verified"] == 15


def test_budget_split_by_level_reaches_the_fine_levels(tmp_path):
    """max_calls=2 on a two-level tree: top_down spends both calls on level 2; budget_split=levels gives each level
    its share (level 2: 2/5 of 2 -> 1, level 1: 3/5 of 2 -> 1)."""
    tree, texts, emb = toy_tree(), ["m0", "m1", "m2", "m3", "m4"], torch.eye(5)
    rule = replace(HUGRAG.gates, prefilter=False, min_distance=1, max_calls=2)
    calls = {}
    for split in ("top_down", "levels"):
        with fake_llm(gate_responder(set()), tmp_path / split) as (llm, server):
            stats = GateBuilder(llm, replace(rule, budget_split=split), None, progress=False).build(tree, texts, emb).stats
            assert server.stats["requests"] == 2
        calls[split] = {lv: r["llm_calls"] for lv, r in stats["levels"].items()}
    assert calls == {"top_down": {"2": 2, "1": 0}, "levels": {"2": 1, "1": 1}}


def test_gold_hop_recall_of_a_candidate_rule():
    """Gold-hop pairs join modules holding the entities of consecutive gold hops; adjacent ones need no gate."""
    from hyperrag.eval.gate_recall import gold_hop_pairs, gold_hop_recall

    tree = flat_tree()
    edges = torch.tensor([[1], [2]])  # entities 1 and 2 touch: modules 1 and 2 are adjacent
    hops = [[[0], [3]], [[1], [2]], [[4], [5], [0]]]  # q0: 0 -> 3; q1: adjacent; q2: 4 -> 5 -> 0
    pairs = gold_hop_pairs(tree, edges, hops, min_distance=2)
    assert pairs == [[{(0, 3)}], [set()], [{(4, 5)}, {(0, 5)}]]
    asked = [(0, 1, "intra"), (4, 5, "intra"), (3, 0, "intra")]
    r = gold_hop_recall(pairs, asked)
    assert r["pairs"] == 2 / 3 and r["transitions"] == 2 / 3 and r["questions"] == 1 / 2
    assert r["gold_hop_pairs"] == 3 and r["transitions_with_pairs"] == 3 and r["questions_with_pairs"] == 2


def test_gold_passage_pairs_stand_in_for_hops_where_a_question_has_none():
    """HolisQA-like gold (gold passages, no hops): every two gold passages of a question are a transition, in any
    order; with ``only_without_hops`` a question with a decomposition is left to its hops."""
    from types import SimpleNamespace

    from hyperrag.data.types import Query, SubQuestion
    from hyperrag.eval.gate_recall import gold_hop_pairs, gold_passage_entities_of

    # passages p0..p3 mention entities: p0 {0}, p1 {3}, p2 {5}, p3 {} (no entity: dropped)
    graph = SimpleNamespace(num_entities=6, num_passages=4, passage_ids=["p0", "p1", "p2", "p3"],
                            entity_passage_ptr=torch.tensor([0, 1, 1, 1, 2, 2, 3]),
                            entity_passage_idx=torch.tensor([0, 1, 2]))
    hop = SubQuestion(question="q?", answer="a", gold_id="p0")
    dataset = SimpleNamespace(queries=[Query(id="a", question="?", gold_ids=("p2", "p0", "p1", "p3", "p0")),
                                       Query(id="b", question="?", gold_ids=("p0", "p1"), decomposition=(hop, hop))])
    assert gold_passage_entities_of(dataset, graph) == [[[5], [0], [3]], [[0], [3]]]
    golds = gold_passage_entities_of(dataset, graph, only_without_hops=True)
    assert golds == [[[5], [0], [3]], []]
    pairs = gold_hop_pairs(flat_tree(), torch.empty(2, 0, dtype=torch.long), golds, min_distance=1, all_pairs=True)
    assert pairs == [[{(0, 5)}, {(3, 5)}, {(0, 3)}], []]  # all three pairs, not only 5 -> 0 -> 3
    consecutive = gold_hop_pairs(flat_tree(), torch.empty(2, 0, dtype=torch.long), golds, min_distance=1)
    assert consecutive == [[{(0, 5)}, {(0, 3)}], []]


def test_gate_oracle_accepts_a_gold_hop_pair_and_refuses_a_random_one():
    """verifier=oracle: a candidate is a gate iff consecutive gold hops of some question lie in its two modules;
    nothing is persisted (no collision with an LLM's verdicts in gates.jsonl) and no LLM is asked."""
    from hyperrag.eval.gate_recall import gold_hop_pairs

    tree, texts, emb = flat_tree(), [f"m{i}" for i in range(6)], torch.eye(6)
    hops = [[[0], [3]], [[4], [5]]]  # q0: module 0 -> 3; q1: 4 -> 5
    accepted = set().union(*(p for q in gold_hop_pairs(tree, torch.empty(2, 0, dtype=torch.long), hops, 1)
                             for p in q))
    rule = replace(HUGRAG.gates, prefilter=False, min_distance=1, verifier="oracle", max_calls=None)
    result = GateBuilder(None, rule, None, accepted=accepted).build(tree, texts, emb)
    gates = set(map(tuple, result.pairs.T.tolist()))
    assert (0, 3) in gates and (4, 5) in gates  # the gold-hop pairs
    assert (1, 2) not in gates and gates == {(0, 3), (4, 5)}  # a random pair is refused
    assert result.stats["verified"] == 15 and result.stats["llm_calls"] == 0 and result.stats["oracle_pairs"] == 2
    with pytest.raises(ValueError, match="accepted"):  # verifier=oracle without the gold-hop pairs refuses
        GateBuilder(None, rule, None)


def test_gate_oracle_is_not_written_beside_llm_verdicts(tmp_path):
    tree, texts, emb = flat_tree(), [f"m{i}" for i in range(6)], torch.eye(6)
    rule = replace(HUGRAG.gates, prefilter=False, min_distance=1, verifier="oracle")
    GateBuilder(None, rule, tmp_path, accepted={(0, 1)}).build(tree, texts, emb)
    assert not (tmp_path / "gates.jsonl").exists()


def three_level_tree() -> ModuleTree:
    """Entities 0..3; level 1: modules 0..3 {e}; level 2: 4 {0,1} (children 0, 1), 5 {2,3} (children 2, 3);
    level 3: 6 {0,1} (child 4), 7 {2,3} (child 5)."""
    level = torch.tensor([1, 1, 1, 1, 2, 2, 3, 3])
    parent = torch.tensor([4, 4, 5, 5, 6, 7, -1, -1])
    members = [[0], [1], [2], [3], [0, 1], [2, 3], [0, 1], [2, 3]]
    ptr = torch.tensor([0, *torch.cumsum(torch.tensor([len(m) for m in members]), 0).tolist()])
    idx = torch.tensor([e for m in members for e in m])
    return ModuleTree(level, parent, ptr, idx, torch.tensor([0, 1, 2, 3]),
                      [torch.arange(4), torch.tensor([4, 5]), torch.tensor([6, 7])])


def test_look_ahead_set_is_per_level():
    """Algorithm 2's ConnectedPeers hold only the current level's intra-layer gates: the level-3 inter gate 7 -> 4
    must not prune module 4's level-2 look-ahead (modules 2, 3 below 7), so the gate 4 -> 2 is still found."""
    tree, texts, emb = three_level_tree(), [f"m{i}" for i in range(8)], torch.eye(8)
    rule = replace(HUGRAG.gates, prefilter=False, min_distance=1, verifier="oracle", inter_layer=True)
    result = GateBuilder(None, rule, None, accepted={(7, 4), (4, 2)}).build(tree, texts, emb)
    gates = sorted(zip(result.pairs[0].tolist(), result.pairs[1].tolist(), result.kinds))
    assert gates == [(4, 2, "inter"), (7, 4, "inter")]
    # level 2: 4 -> {2, 3} and 5 -> {0, 1} are asked (only own children pruned)
    assert result.stats["levels"]["2"]["candidates_inter"] == 4
    assert result.stats["levels"]["2"]["pruned_hierarchy"] == 4
    # an intra-layer gate of the same level still prunes: 4 ~ 5 gated at level 2 -> no look-ahead below either
    peers = GateBuilder(None, rule, None, accepted={(4, 5)}).build(tree, texts, emb)
    assert peers.stats["levels"]["2"]["candidates_inter"] == 0
