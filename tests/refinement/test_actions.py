import json

import pytest

from hyperrag.refinement.actions import QueryRefiner, decompose_query, salient_keywords, simplify_query
from tests.causal.llm_double import fake_llm, task_of, user_text
from tests.llm.fake_server import FakeOpenAIServer

Q = "Who is the spouse of the director of the film that won the award?"


def test_simplify_drops_stop_and_filler_words():
    assert simplify_query(Q) == "spouse director film won award"
    assert simplify_query("Who is it?") == "Who is it?"  # nothing left -> the question


def test_decompose_splits_clauses():
    assert decompose_query("What county shares a border with the county where Black Hawk Township is located?") == [
        "What county shares a border with the county", "Black Hawk Township is located"]
    assert decompose_query("Who won?") == ["Who won"]  # nothing to split: the refiner then adds no rewrite


def test_salient_keywords_prefer_capitalised_and_frequent():
    text = "The Nile flows north. The Nile delta is fertile; farmers grow cotton, cotton and wheat in Egypt."
    assert salient_keywords(text, exclude="Which river flows through Egypt?", k=4) == ["Nile", "cotton", "north",
                                                                                        "delta"]


def test_heuristic_actions_build_query_sets():
    r = QueryRefiner(top_passage=lambda qs: ["Jane Doe directed Sunrise; her husband John Doe is an actor."] * len(qs))
    expand, simplify, decompose, none = r.refine([Q] * 4, ["expand", "simplify", "decompose", "none"])
    assert expand.queries == [f"{Q} Doe Jane Sunrise John directed husband"]  # "Doe" twice
    assert expand.source == "heuristic"
    assert simplify.queries == simplify.rewrites == ["spouse director film won award"]
    assert decompose.queries[0] == Q and decompose.rewrites == decompose.queries[1:] and len(decompose.rewrites) == 2
    assert decompose.rewrites == ["Who is the spouse of the director of the film", "won the award"]
    assert none.queries == [Q] and none.rewrites == [] and none.source == "none"
    with pytest.raises(ValueError):
        QueryRefiner().refine([Q], ["expand"])  # the expand stand-in needs a dense index
    with pytest.raises(ValueError):
        r.refine([Q], ["paraphrase"])


def test_llm_actions_and_fallback(tmp_path):
    def responder(body: dict) -> str:
        assert task_of(body) == "query_refinement"
        if "FAIL" in user_text(body):
            return "garbage"
        system = body["messages"][0]["content"]
        if "decompose a complex, multi-hop question" in system:
            return json.dumps({"queries": ["Which film won the award?", "Who directed #1?", "Who is #2's spouse?"]})
        return json.dumps({"queries": ["spouse of the award-winning film's director"]})

    with FakeOpenAIServer(responder=responder) as server, fake_llm(server, tmp_path, max_invalid_retries=0) as llm:
        r = QueryRefiner(llm, top_passage=lambda qs: ["Jane Doe directed Sunrise."] * len(qs))
        dec, simp, failed = r.refine([Q, Q, "FAIL who?"], ["decompose", "simplify", "expand"])
        assert server.stats["requests"] == 3
        off = QueryRefiner(llm, use_llm=False).refine([Q], ["simplify"])[0]
    assert dec.source == "llm" and dec.queries == [Q, "Which film won the award?", "Who directed ?", "Who is 's spouse?"]
    assert simp.queries == simp.rewrites == ["spouse of the award-winning film's director"]
    assert failed.source == "heuristic" and failed.queries[0].startswith("FAIL who?")
    assert off.source == "heuristic" and r.llm_calls == 3 and r.llm_failed == 1 and failed.llm_failed == 1


def test_actions_chain_over_the_frontier():
    """A second step refines the first step's rewrites: decompose, then simplify each sub-question (simplify
    replaces what it simplified, decompose keeps the question)."""
    r = QueryRefiner(top_passage=lambda qs: ["Jane Doe directed Sunrise."] * len(qs))
    first = r.refine([Q], ["decompose"])[0]
    second = r.step([first], ["simplify"])[0]
    assert second.actions == ["decompose", "simplify"] and second.action == "simplify"
    assert second.frontier == ["spouse director film", "won award"]
    assert second.queries == [Q, "spouse director film", "won award"]
    assert set(first.rewrites) < set(second.rewrites)
    assert r.step([second], ["none"])[0] is second


def test_a_reply_that_rewrites_nothing_leaves_the_query_and_names_its_origin(tmp_path):
    """A model that gives the query back rewrote nothing: the query stays as it is (no stand-in, not a failure);
    every call names the question its query descends from (never shown to the model)."""
    sent = []

    def responder(body: dict) -> str:
        sent.append(user_text(body))
        return json.dumps({"queries": [user_text(body).split("<data>")[1].split("</data>")[0].strip()]})

    with FakeOpenAIServer(responder=responder) as server, fake_llm(server, tmp_path, max_invalid_retries=0) as llm:
        r = QueryRefiner(llm, top_passage=lambda qs: ["Jane Doe directed Sunrise."] * len(qs))
        (same,) = r.refine([Q], ["expand"])
        assert r.with_llm(["spouse of the director"], "simplify", origins=["Secret root question?"]) == [([], False)]
        assert server.stats["requests"] == 2
    assert same.source == "llm" and same.queries == [Q] and same.rewrites == [] and r.llm_failed == 0
    assert not any("Secret root" in text for text in sent)
