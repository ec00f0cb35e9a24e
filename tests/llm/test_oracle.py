"""The gold-informed oracle backend: replies through the real task interface, from shown items only."""

from __future__ import annotations

import json

import pytest

from hyperrag.data import Corpus, Dataset, Passage, Query, SubQuestion
from hyperrag.llm import build_llm
from hyperrag.llm.errors import LLMUnavailableError
from hyperrag.llm.oracle import ORACLE_LABEL, OracleLLM
from hyperrag.llm.tasks import get_task

P = [
    Passage("a", "Black Hawk Township", "Black Hawk Township is located in Jefferson County, Iowa."),
    Passage("b", "Jefferson County", "Jefferson County shares a border with Dodge County."),
    Passage("c", "Lake Ohrid", "Lake Ohrid lies on the border of Albania and North Macedonia."),
    Passage("d", "Dodge County", "Dodge County is named after Henry Dodge, a governor."),
]
QUESTION = "What county borders the county where Black Hawk Township is?"
HOPS = (SubQuestion("Black Hawk Township >> located in", "Jefferson County", "a"),
        SubQuestion("#1 >> shares border with", "Dodge County", "b"))


@pytest.fixture
def dataset(tmp_path):
    openie = {"docs": [{"idx": i, "passage": p.content, "extracted_entities": [],
                        "extracted_triples": t} for i, (p, t) in enumerate(zip(P, [
                            [["Black Hawk Township", "located in", "Jefferson County"]],
                            [["Jefferson County", "shares border with", "Dodge County"]],
                            [["Lake Ohrid", "borders", "Albania"]],
                            [["Dodge County", "named after", "Henry Dodge"]]]))]}
    path = tmp_path / "openie.json"
    path.write_text(json.dumps(openie))
    queries = [Query("q1", QUESTION, ("Dodge County",), ("a", "b"), HOPS),
               Query("q2", "Which lake lies on the Albanian border?", ("Lake Ohrid",), ("c",))]
    return Dataset("toy", Corpus(P), queries, path)


@pytest.fixture
def oracle(dataset):
    llm = build_llm({"_target_": "hyperrag.llm.oracle.OracleLLM", "refinement": "gold_answers", "cache_path": None, "show_usage": False}, dataset)
    with llm:
        yield llm


def passages(*ids):
    by_id = {p.id: p for p in P}
    return [(i, by_id[i].content) for i in ids]


def test_needs_gold_and_is_labelled(dataset):
    llm = OracleLLM(refinement="gold_answers", cache_path=None)
    with pytest.raises(LLMUnavailableError):
        llm.start()
    llm.bind_gold(dataset)
    assert llm.available and llm.kind == "oracle" and llm.label == ORACLE_LABEL
    assert llm.gold.digest in llm.model  # cached under its own key, one per gold


def test_fact_filter_keeps_gold_triples_only(oracle):
    facts = [(10, ("lake ohrid", "borders", "albania")), (11, ("black hawk township", "located in",
                                                               "jefferson county")),
             (12, ("jefferson county", "shares border with", "dodge county"))]
    res = oracle.complete_structured("fact_filter", {"query": QUESTION, "facts": facts})
    assert res.ok and res.value == [11, 12] and res.dropped_ids == 0


def test_neighbour_scoring_follows_the_tiers(oracle):
    neighbors = [{"id": 1, "name": "Dodge County", "text": "a county in Wisconsin"},
                 {"id": 2, "name": "Albania", "text": "Albania"}, (3, "Jefferson County (via: ...)"),
                 {"id": 4, "name": "Iowa", "text": "a state"},
                 {"id": 5, "name": "Lake Ohrid", "text": "a lake", "passage_ids": ["b"]}]
    res = oracle.complete_structured("neighbor_scoring", {"query": QUESTION, "entity": "Black Hawk Township",
                                                          "facts": [], "neighbors": neighbors})
    # the answer 10, the bridge (hop-1 answer, a supporting passage's title) 8, else named in a supporting
    # passage 5, unrelated 0; provenance from a supporting passage 8
    assert res.ok and res.value == {1: 10, 2: 0, 3: 8, 4: 5, 5: 8}


def test_passage_selection_and_relations(oracle):
    shown = passages("c", "b", "a")
    sel = oracle.complete_structured("passage_selection", {"query": QUESTION, "passages": shown})
    assert sel.value == ["b", "a"]  # the shown gold passages, in the order shown; never an unshown one
    rel = oracle.complete_structured("passage_relations", {"query": QUESTION, "passages": shown})
    assert [(s, t) for s, t, *_ in rel.value] == [("a", "b")]  # hop 1 -> hop 2; the distractor links nothing
    with pytest.raises(ValueError, match="query"):  # the task shows the question it is about, always
        oracle.complete_structured("passage_relations", {"passages": shown})
    kinds = {k for *_, k, _ in rel.value}
    assert kinds == {"complement"}  # a type from the task's schema (support / complement / expand)


def test_missing_concepts_names_the_next_hop(oracle):
    res = oracle.complete_structured("missing_concepts", {"query": QUESTION, "passages": passages("a")})
    assert res.ok and not res.output.sufficient
    assert res.output.missing_concepts == ["Jefferson County"]
    assert res.output.follow_up_questions == ["Jefferson County shares border with"]
    done = oracle.complete_structured("missing_concepts", {"query": QUESTION, "passages": passages("a", "b")})
    assert done.output.sufficient


def refine(llm, mode):
    return llm.complete_structured(get_task("query_refinement", mode=mode), {"query": QUESTION})


def test_refinement_gold_answers_reading_gives_every_action_the_answers(oracle):
    """``gold_answers``: decompose resolves the bridge, expand adds it, simplify is the last hop resolved."""
    assert oracle.refinement == "gold_answers"
    assert refine(oracle, "decompose").value == ["Black Hawk Township located in", "Jefferson County shares border with"]
    assert refine(oracle, "expand").value == [f"{QUESTION} Jefferson County"]
    assert refine(oracle, "simplify").value == ["Jefferson County shares border with"]


def test_refinement_no_answers_reading_names_no_gold_answer(dataset):
    """``no_answers``: no action's rewrite holds a hop's answer (Jefferson County, Dodge County); the question's own
    entity comes from the *unresolved* subject (the resolved one of hop 2 would be the bridge answer)."""
    llm = build_llm({"_target_": "hyperrag.llm.oracle.OracleLLM", "refinement": "no_answers", "cache_path": None,
                     "show_usage": False}, dataset)
    with llm:
        dec, exp, simp = (refine(llm, m) for m in ("decompose", "expand", "simplify"))
    assert dec.value == ["Black Hawk Township located in", "shares border with"]
    assert exp.value == [f"{QUESTION} located shares border"]  # content words only
    assert simp.value == ["Black Hawk Township shares border with"]
    for res in (dec, exp, simp):
        assert res.ok and not any("jefferson" in q.lower() or "dodge" in q.lower() for q in res.value)
    assert llm.model.endswith("-no_answers")  # the reading is part of the cache key


def test_refinement_reading_is_checked():
    with pytest.raises(ValueError, match="refinement"):
        OracleLLM(refinement="some_answers", cache_path=None)


def test_answer_only_when_every_gold_passage_is_shown(oracle):
    full = oracle.complete_structured("grounded_answer", {"question": QUESTION, "passages": passages("a", "b", "c")})
    assert full.value == {"answer": "Dodge County", "supporting": ["a", "b"]}
    part = oracle.complete_structured("grounded_answer", {"question": QUESTION, "passages": passages("a", "c")})
    assert part.value["answer"] == "unknown"
    hop = oracle.complete_structured("grounded_answer", {"question": "Jefferson County shares border with",
                                                         "passages": passages("b")})
    assert hop.value["answer"] == "Dodge County"  # a resolved gold sub-question is answered from its passage


def test_claims_and_path_selection(oracle):
    claims = oracle.complete_structured("claim_extraction", {"text": "Dodge County", "question": QUESTION})
    assert claims.value == ["Dodge County"]
    sup = oracle.complete_structured("claim_support", {"claim": "Dodge County", "passages": passages("b", "c")})
    assert sup.value == {"verdict": "supported", "evidence": ["b"]}
    cands = [{"id": 7, "text": "entity | seed | Lake Ohrid", "kind": "node", "passage_ids": ["c"]},
             {"id": 8, "text": "entity | hop 1 | Jefferson County", "kind": "node", "passage_ids": ["b", "d"]},
             {"id": 9, "text": "Black Hawk Township located in Jefferson County", "kind": "edge",
              "passage_ids": ["a"]},
             {"id": 10, "text": "Lake Ohrid borders Albania", "kind": "edge", "passage_ids": ["c"]}]
    sel = oracle.complete_structured("causal_path_selection", {"query": QUESTION, "candidates": cands})
    # by provenance, not by text: the edge from "a" is kept although its text names no gold title
    assert sel.value == {"kept": [8, 9], "spurious": [10, 7], "draft": "Dodge County"}
    std = oracle.complete_structured(get_task("causal_path_selection", variant="standard"),
                                     {"query": QUESTION, "candidates": cands[:1] + cands[3:]})
    assert std.value == {"kept": [], "spurious": [], "draft": "unknown"}  # no gold passage behind them
    # the provenance is never shown: the prompt is the same without it
    plain = [{k: v for k, v in c.items() if k != "passage_ids"} for c in cands]
    task = get_task("causal_path_selection")
    assert task.messages({"query": QUESTION, "candidates": cands}) == task.messages(
        {"query": QUESTION, "candidates": plain})


@pytest.mark.parametrize("variant", ["spurious", "standard"])
def test_path_selection_and_answer_in_both_prompt_forms(oracle, variant):
    """HugRAG's ``prompts`` setting changes the prompt text and (for the selection) the reply's keys: the oracle
    answers either form, with the same value."""
    cands = [{"id": 8, "text": "entity | hop 1 | Jefferson County", "kind": "node", "passage_ids": ["b", "d"]},
             {"id": 9, "text": "Black Hawk Township located in Jefferson County", "kind": "edge",
              "passage_ids": ["a"]},
             {"id": 10, "text": "Lake Ohrid borders Albania", "kind": "edge", "passage_ids": ["c"]}]
    values = []
    for prompts in ("paper", "paper_json", "extended"):
        task = get_task("causal_path_selection", variant=variant, prompts=prompts)
        res = oracle.complete_structured(task, {"query": QUESTION, "candidates": cands})
        assert res.ok, res.error
        assert (task.fields[0] in res.raw) and ("precise" in res.raw) == (prompts != "extended")
        values.append(res.value)
        ans = oracle.complete_structured(get_task("subgraph_answer", style="explanatory", prompts=prompts),
                                         {"question": QUESTION, "evidence": passages("a", "b")})
        if prompts == "paper":  # Fig 7 as printed: free text, no bare answer apart (short_answer = the answer)
            assert ans.ok and ans.raw == ans.value["answer"] == ans.value["short_answer"]
            assert "Dodge County" in ans.value["answer"]
        else:
            assert ans.ok and ans.value["short_answer"] == "Dodge County"
    assert values[0] == values[1] == values[2] and values[0]["kept"] == [8, 9]
    assert values[0]["spurious"] == ([10] if variant == "spurious" else [])


def test_subgraph_answer_needs_the_gold_passages_text(oracle):
    rows = ["Black Hawk Township located in Jefferson County"]  # an item's text is not a passage
    part = oracle.complete_structured("subgraph_answer", {"question": QUESTION, "evidence": rows + passages("a"),
                                                          "draft_answer": "Dodge County"})
    assert part.value == {"answer": "unknown"}  # the draft is not trusted without the evidence
    full = oracle.complete_structured("subgraph_answer", {"question": QUESTION, "evidence": passages("a", "b")})
    assert full.value == {"answer": "Dodge County"}


@pytest.mark.parametrize("task, inputs", [
    ("causal_gate", {"a_text": "x", "b_text": "y"}),
    ("entity_summary", {"entity": "x", "facts": [["x", "is", "y"]]}),
    ("module_summary", {"entities": ["x"]}),
    ("causal_pair_verification", {"cause": "x", "effect": "y"}),
    # whether an answer keeps a causal relation is a property of the answer, not of the query's gold
    ("causal_entailment", {"question": QUESTION, "answer": "Dodge County", "pairs": [("rain", "floods")]}),
    ("openie_hipporag_ner", {"passage": "x"}),
    (("openie_hipporag_ner", {"source": "query"}), {"query": QUESTION}),
    ("lightrag_keywords", {"question": QUESTION}),  # keywords, map points, reduced answers and cluster summaries
    ("graphrag_map", {"question": QUESTION, "reports": ["r"]}),  # have no gold: the method's stand-in runs
    ("graphrag_reduce", {"question": QUESTION, "points": ["p"], "response_type": "a short answer"}),
    ("raptor_summary", {"texts": ["a", "b"]}),
])
def test_tasks_without_gold_fail_like_a_failed_call(oracle, task, inputs):
    task = get_task(task[0], **task[1]) if isinstance(task, tuple) else task
    res = oracle.complete_structured(task, inputs)
    assert not res.ok and res.error_kind == "no_gold"
    assert oracle.accounting.tasks[get_task(task).label].failures["no_gold"] == 1


def test_unknown_question_fails(oracle):
    res = oracle.complete_structured("fact_filter", {"query": "Who painted the Mona Lisa?", "facts": [("a", "b", "c")]})
    assert not res.ok and res.error_kind == "no_gold"


def test_replies_are_cached_under_the_oracle_key(dataset, tmp_path):
    cache = tmp_path / "responses.sqlite"
    inputs = {"query": QUESTION, "passages": passages("a", "b")}
    for expected_cached in (False, True):
        llm = build_llm({"_target_": "hyperrag.llm.oracle.OracleLLM", "refinement": "gold_answers", "cache_path": str(cache),
                         "show_usage": False}, dataset)
        with llm:
            res = llm.complete_structured("passage_selection", inputs)
        assert res.ok and res.cached is expected_cached and res.requests == 0


def test_multiple_choice_answer_is_the_correct_option(tmp_path):
    corpus = Corpus([Passage("ctx0", "", "Tom missed the bus, so he walked to school in the rain.")])
    query = Query("m1", "Why did Tom walk?", ("He missed the bus",), ("ctx0",),
                  options=("He likes rain", "He missed the bus", "The school moved"), answer_index=1)
    llm = build_llm({"_target_": "hyperrag.llm.oracle.OracleLLM", "refinement": "gold_answers", "cache_path": None, "show_usage": False},
                    Dataset("mc", corpus, [query]))
    with llm:
        res = llm.complete_structured("grounded_answer", {"question": query.question, "options": list(query.options),
                                                          "passages": [("ctx0", corpus[0].content)]})
    assert res.ok and res.value["answer"] == "He missed the bus"


def test_closed_book_question_is_unknown_to_the_oracle(oracle):
    """No retrieval: the reader shows no passage, so the oracle — which answers from evidence shown — abstains."""
    res = oracle.complete_structured("grounded_answer", {"question": QUESTION, "passages": []})
    assert res.ok and res.value == {"answer": "unknown", "supporting": []}


def test_gold_digest_is_the_key_cached_replies_were_written_under():
    """The oracle's cache key part (its gold digest) is the value the earlier hashlib code gave (non-ASCII kept
    as is in the JSON): routing it through hyperrag.utils.hashing leaves cached replies valid."""
    from hyperrag.llm.oracle.gold import GoldIndex

    ps = [Passage("a", "Zürich", "Zürich lies on the Limmat."), Passage("b", "Limmat", "The Limmat flows north.")]
    q = [Query("q1", "Which river flows through Zürich?", ("Limmat",), ("a",),
               (SubQuestion("Zürich >> river", "Limmat", "a"),))]
    assert GoldIndex(Dataset("toy-ü", Corpus(ps), q, None)).digest == "39bc91d1dac8c3e7"


def test_path_selection_reply_keeps_to_the_prompts_limits(oracle):
    """A long table (``path_selection.max_rows: null``): the oracle's lists keep to Fig 5's limits (``max_selected``,
    ``max_spurious``; else the schema's bound), so its reply stays valid."""
    cands = [{"id": i, "text": f"filler row {i}", "kind": "node", "passage_ids": ["c"]} for i in range(150)]
    cands[3] = {"id": 3, "text": "Black Hawk Township located in Jefferson County", "kind": "edge",
                "passage_ids": ["a"]}
    for limits in ({"max_selected": 12, "max_spurious": 8}, {}):
        res = oracle.complete_structured(get_task("causal_path_selection", variant="spurious", prompts="paper"),
                                         {"query": QUESTION, "candidates": cands, **limits})
        assert res.ok, res.error
        assert res.value["kept"] == [3] and len(res.value["spurious"]) == limits.get("max_spurious", 64)


def test_every_task_the_oracle_answers_is_found_in_its_registry(dataset):
    """query_refinement goes through ORACLES like every task (its reading comes as the ``refinement`` keyword);
    a task without an entry has no gold."""
    from hyperrag.llm.oracle import ORACLES, GoldIndex, NoGold, oracle_reply

    assert "query_refinement" in ORACLES
    gold, task = GoldIndex(dataset), get_task("query_refinement", mode="decompose")
    inputs = {"query": QUESTION}
    for reading in ("no_answers", "gold_answers"):
        assert oracle_reply(task, inputs, gold, refinement=reading) == \
            ORACLES["query_refinement"](task, inputs, gold, refinement=reading)
    assert oracle_reply(task, inputs, gold, refinement="no_answers") != \
        oracle_reply(task, inputs, gold, refinement="gold_answers")  # the reading reaches it
    with pytest.raises(NoGold, match="no gold for task 'entity_summary'"):
        oracle_reply(get_task("entity_summary"), {}, gold, refinement="no_answers")


def test_a_chained_refinement_gets_the_questions_gold(dataset):
    """A chain's later step refines a rewrite (CDF-RAG's second action, its feedback loop's re-query): the call
    names its origin, so the oracle answers it from the question's gold, not ``no_gold`` — every action of a chain
    gets the same gold as its first step; an action repeated rewrites nothing (its gold is the query itself)."""
    from hyperrag.refinement.actions import ACTIONS, QueryRefiner

    for reading in ("gold_answers", "no_answers"):
        llm = build_llm({"_target_": "hyperrag.llm.oracle.OracleLLM", "refinement": reading, "cache_path": None,
                         "show_usage": False}, dataset)
        with llm:
            refiner = QueryRefiner(llm, top_passage=lambda qs: ["unused"] * len(qs))
            first = {a: refiner.refine([QUESTION], [a])[0] for a in ACTIONS}
            for a in ACTIONS:
                for b in ACTIONS:
                    chained = refiner.step([first[a]], [b])[0]
                    assert chained.source == "llm" and chained.llm_failed == 0, (reading, a, b)
                    if a == b and b != "decompose":  # the gold rewrite of the rewrite is itself: nothing changes
                        assert chained.queries == first[a].queries and chained.rewrites == first[a].rewrites
                    else:  # the same gold as the question's own step b (a rewrite equal to the query refined
                        # is already in the query set: it joins no frontier)
                        assert set(first[b].rewrites) <= set(chained.queries), (reading, a, b)
                        assert chained.frontier and set(chained.frontier) <= set(first[b].rewrites), (reading, a, b)
        assert refiner.llm_failed == 0 and refiner.llm_calls > len(ACTIONS)


def test_a_rewrite_without_its_origin_has_no_gold_and_the_origin_is_in_the_cache_key(dataset, tmp_path):
    task = get_task("query_refinement", mode="expand")
    cache = tmp_path / "responses.sqlite"
    rewrite = "Black Hawk Township located in"
    llm = build_llm({"_target_": "hyperrag.llm.oracle.OracleLLM", "refinement": "gold_answers",
                     "cache_path": str(cache), "show_usage": False}, dataset)
    with llm:
        alone = llm.complete_structured(task, {"query": rewrite})
        chained = llm.complete_structured(task, {"query": rewrite, "origin": QUESTION})
        # the same text shown, another origin (a question without a decomposition): not served from the cache
        other = llm.complete_structured(task, {"query": rewrite, "origin": "Which lake lies on the Albanian border?"})
        again = llm.complete_structured(task, {"query": rewrite, "origin": QUESTION})
    assert not alone.ok and alone.error_kind == "no_gold"
    assert chained.ok and chained.value == [f"{QUESTION} Jefferson County"]
    assert not other.ok and other.error_kind == "no_gold" and not other.cached
    assert again.ok and again.cached and again.value == chained.value
    assert task.messages({"query": rewrite, "origin": QUESTION}) == task.messages({"query": rewrite})  # never shown


def test_a_refinement_with_nothing_to_add_gives_the_query_back_and_one_too_long_has_no_gold():
    """``no_answers``' expand of a question that already holds every sub-question's words has nothing to add: the
    oracle gives the query shown back (the refiner keeps it: no stand-in), also for a chained step; a gold rewrite
    longer than the task accepts (a long question + its bridge) is no gold, never an invalid reply."""
    from hyperrag.llm.oracle import GoldIndex, NoGold, oracle_reply
    from hyperrag.llm.oracle.answers import QUERY_MAX_CHARS

    full = "Which county shares border with the county Black Hawk Township located in?"
    long_q = "What county borders the county where Black Hawk Township is, " + "very " * 25 + "precisely?"
    queries = [Query("q1", full, ("Dodge County",), ("a", "b"), HOPS),
               Query("q2", long_q, ("Dodge County",), ("a", "b"), HOPS)]
    gold = GoldIndex(Dataset("toy", Corpus(P), queries))
    expand = get_task("query_refinement", mode="expand")
    for shown in (full, "a sub-question"):
        assert oracle_reply(expand, {"query": shown, "origin": full}, gold, refinement="no_answers") == \
            {"queries": [shown]}
    assert len(long_q) <= QUERY_MAX_CHARS < len(f"{long_q} Jefferson County")
    with pytest.raises(NoGold, match="longer than the task accepts"):
        oracle_reply(expand, {"query": long_q}, gold, refinement="gold_answers")
