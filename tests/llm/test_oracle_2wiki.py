"""The oracle on 2WikiMultiHopQA: gold hops from the Wikidata evidence and the question type
(:mod:`hyperrag.data.evidence_hops`), and every LLM step the oracle answers on MuSiQue (``tests/llm/test_oracle.py``)
answered on a fixture with one question of each type (``tests/data/wiki2_fixture.py``), plus the mapping of hops
to gold passages on every question of ``../shared/data/2wiki_dev``."""

from __future__ import annotations

import json
import re

import pytest
import torch

from hyperrag.data.hipporag2_release import read_hipporag2_release
from hyperrag.llm import build_llm
from hyperrag.llm.tasks import get_task
from tests.conftest import SHARED_DATA
from tests.data.wiki2_fixture import EXPECTED_HOPS, PASSAGES, POS, QUESTIONS, TITLES, write_wiki2

Q = {q["_id"]: q["question"] for q in QUESTIONS}
ANSWER = {q["_id"]: q["answer"] for q in QUESTIONS}
GOLD = {q["_id"]: [POS[t] for t in q["supporting_titles"]] for q in QUESTIONS}
#: per question, its gold passages in hop order (what the oracle relates, earlier hop -> later hop)
HOP_ORDER = {qid: list(dict.fromkeys(POS[t] for _, _, t in hops if t)) for qid, hops in EXPECTED_HOPS.items()}
DISTRACTOR = POS["Port Silas"]
TYPES = ["comp", "inf", "cmp", "bcmp"]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    folder = write_wiki2(tmp_path_factory.mktemp("wiki2"))
    return read_hipporag2_release(folder, "2wikimultihopqa", folder / "openie.json")


@pytest.fixture(scope="module")
def oracle(dataset):
    llm = build_llm({"_target_": "hyperrag.llm.oracle.OracleLLM", "cache_path": None, "show_usage": False}, dataset)
    with llm:
        yield llm


def passages(*ids: str) -> list[tuple[str, str]]:
    return [(i, f"{TITLES[int(i)]}\n{PASSAGES[int(i)][1]}") for i in ids]


def test_hops_of_each_type(dataset):
    for q in dataset.queries:
        got = [(h.question, h.answer, TITLES[int(h.gold_id)] if h.gold_id else None) for h in q.decomposition]
        assert got == EXPECTED_HOPS[q.id], q.id
        assert q.decomposition[-1].answer == ANSWER[q.id]  # the last hop answers the question
    comp = dataset.queries[0]
    assert [h.subject for h in comp.decomposition] == ["Quiet Harbor", "#1"]


def test_gold_index_resolves_hops_and_orders_passages(oracle):
    qg = oracle.gold.find(Q["bcmp"])
    assert [h.resolved for h in qg.hops[:2]] == ["What is the director of Quiet Harbor?",
                                                 "What is the date of birth of Lena Ardmore?"]
    assert [h.subject for h in qg.hops[:4]] == ["Quiet Harbor", "Lena Ardmore", "Night Ferry", "Mira Kost"]
    assert [p.id for p in qg.passages] == HOP_ORDER["bcmp"]
    assert oracle.gold.find_hop("What is the father of Tomas of Brenn?")[1].answer == "Anselm Vell"


@pytest.mark.parametrize("qid", TYPES)
def test_fact_filter_keeps_the_gold_passages_triples(oracle, qid):
    facts = [(i, tuple(t)) for i, (_, _, triples) in enumerate(PASSAGES) for t in triples]
    res = oracle.complete_structured("fact_filter", {"query": Q[qid], "facts": facts})
    kept = {TITLES[i] for i in res.value}
    assert res.ok and kept == {TITLES[int(p)] for p in GOLD[qid]}


@pytest.mark.parametrize("qid", TYPES)
def test_edge_scores_follow_the_tiers(oracle, qid):
    """CatRAG's neighbour scores: the answer 10 (a yes / no answer names no neighbour), a bridge 8, 0 unrelated."""
    neighbors = [{"id": 1, "name": ANSWER[qid], "text": ""}, {"id": 2, "name": "Tessel estuary", "text": ""},
                 {"id": 3, "name": EXPECTED_HOPS[qid][0][1], "text": ""}]
    res = oracle.complete_structured("neighbor_scoring", {"query": Q[qid], "entity": "x", "facts": [],
                                                          "neighbors": neighbors})
    first_answer_is_final = EXPECTED_HOPS[qid][0][1] == ANSWER[qid]
    assert res.ok and res.value[1] == 10 and res.value[2] == 0
    assert res.value[3] == (10 if first_answer_is_final else 8)


def test_yes_no_answer_names_no_neighbour(tmp_path):
    folder = write_wiki2(tmp_path)
    records = json.loads((folder / "2wikimultihopqa.json").read_text())
    records[2].update(question="Were Lena Ardmore and Mira Kost born in the same year?", answer="no")
    (folder / "2wikimultihopqa.json").write_text(json.dumps(records))
    data = read_hipporag2_release(folder, "2wikimultihopqa")
    with build_llm({"_target_": "hyperrag.llm.oracle.OracleLLM", "cache_path": None, "show_usage": False},
                   data) as llm:
        res = llm.complete_structured("neighbor_scoring", {
            "query": records[2]["question"], "entity": "x", "facts": [],
            "neighbors": [{"id": 1, "name": "No Exit", "text": ""}, {"id": 2, "name": "Mira Kost", "text": ""}]})
    assert res.ok and res.value == {1: 0, 2: 8}


@pytest.mark.parametrize("qid", TYPES)
def test_selection_relations_and_coverage(oracle, qid):
    shown = passages(DISTRACTOR, *reversed(GOLD[qid]))
    sel = oracle.complete_structured("passage_selection", {"query": Q[qid], "passages": shown})
    assert sel.value == list(reversed(GOLD[qid]))  # the shown gold passages, in the order shown
    rel = oracle.complete_structured("passage_relations", {"query": Q[qid], "passages": shown})
    order = HOP_ORDER[qid]
    assert [(s, t) for s, t, *_ in rel.value] == [(a, b) for i, a in enumerate(order) for b in order[i + 1:]]
    cov = oracle.complete_structured("context_coverage", {"question": Q[qid], "passages": shown[:2]})
    assert cov.ok and cov.output.coverage == round(10 / len(GOLD[qid]))


@pytest.mark.parametrize("qid", TYPES)
def test_follow_ups_name_the_missing_hops(oracle, qid):
    first = HOP_ORDER[qid][0]
    res = oracle.complete_structured("missing_concepts", {"query": Q[qid], "passages": passages(first)})
    assert res.ok and not res.output.sufficient
    qg = oracle.gold.find(Q[qid])
    missing = [h for h in qg.hops if h.passage is not None and h.passage.id != first]
    assert res.output.missing_concepts == list(dict.fromkeys(h.subject for h in missing))[:8]
    assert res.output.follow_up_questions == [h.resolved for h in missing][:4]
    assert all("#" not in f for f in res.output.follow_up_questions)  # resolved: the bridge named
    done = oracle.complete_structured("missing_concepts", {"query": Q[qid], "passages": passages(*GOLD[qid])})
    assert done.output.sufficient


@pytest.mark.parametrize("qid", TYPES)
def test_decomposition_routing_and_expansion(oracle, qid):
    """CDF-RAG's refinement actions and the router: the gold sub-questions, the bridges they imply."""
    hops = [q for q, _, _ in EXPECTED_HOPS[qid]]
    dec = oracle.complete_structured(get_task("query_refinement", mode="decompose"), {"query": Q[qid]})
    assert dec.ok and dec.value == hops[:4]  # the task keeps at most four (bridge comparison: the look-ups)
    route = oracle.complete_structured("question_routing", {"query": Q[qid]})
    assert route.ok and route.output.multi_hop and route.output.sub_questions == hops
    exp = oracle.complete_structured(get_task("query_refinement", mode="expand"), {"query": Q[qid]})
    bridges = [a for _, a, _ in EXPECTED_HOPS[qid][:-1]]
    assert exp.value == [f"{Q[qid]} {' '.join(bridges)}"]


@pytest.mark.parametrize("qid", TYPES)
def test_readers_answer_only_on_the_full_chain(oracle, qid):
    full = passages(DISTRACTOR, *GOLD[qid])
    part = passages(DISTRACTOR, GOLD[qid][0])
    for task, key in (("grounded_answer", "passages"), ("hipporag_qa", "passages"), ("subgraph_answer", "evidence")):
        assert oracle.complete_structured(task, {"question": Q[qid], key: full}).value["answer"] == ANSWER[qid]
        assert oracle.complete_structured(task, {"question": Q[qid], key: part}).value["answer"] == "unknown"
    hop = oracle.gold.find(Q[qid]).hops[0]  # a resolved sub-question is answered from its own passage
    res = oracle.complete_structured("grounded_answer", {"question": hop.resolved, "passages": passages(hop.passage.id)})
    assert res.value["answer"] == hop.answer


@pytest.mark.parametrize("qid", TYPES)
def test_causal_path_selection(oracle, qid):
    """CDF-RAG's / HugRAG's path selection: candidates from gold passages kept, by provenance."""
    cands = [{"id": 7, "text": "Port Silas on Tessel estuary", "kind": "edge", "passage_ids": [DISTRACTOR]}]
    cands += [{"id": 10 + k, "text": f"fact {k}", "kind": "edge", "passage_ids": [pid]}
              for k, pid in enumerate(GOLD[qid])]
    sel = oracle.complete_structured("causal_path_selection", {"query": Q[qid], "candidates": cands})
    assert sel.ok and sel.value["kept"] == [10 + k for k in range(len(GOLD[qid]))]
    assert sel.value["spurious"] == [7] and sel.value["draft"] == ANSWER[qid]


@pytest.mark.slow
def test_hugrag_oracle_gates_join_consecutive_hops(dataset):
    """HugRAG's gates (verifier=oracle): the gold-hop pairs of consecutive hops' passages' entities, on the graph
    built from the fixture's triples (one module per entity)."""
    from hyperrag.data.openie import read_openie
    from hyperrag.eval.gate_recall import gold_hop_pairs, hop_entities_of
    from hyperrag.graph.build import build_knowledge_graph
    from hyperrag.hierarchy.modules import ModuleTree
    from tests.reliability.doubles import HashEncoder

    graph = build_knowledge_graph(dataset.corpus, read_openie(dataset.openie_path, dataset.corpus), HashEncoder())[0]
    hops = hop_entities_of(dataset, graph)
    lookups = {q.id: sum(h.gold_id is not None for h in q.decomposition) for q in dataset.queries}
    assert [len(h) for h in hops] == [lookups[q.id] for q in dataset.queries]  # every look-up hop has entities
    n = graph.num_entities
    tree = ModuleTree(torch.ones(n, dtype=torch.long), torch.full((n,), -1), torch.arange(n + 1), torch.arange(n),
                      torch.arange(n), [torch.arange(n)])
    pairs = gold_hop_pairs(tree, torch.empty(2, 0, dtype=torch.long), hops, min_distance=1)
    names = graph.entity_names
    comp = {(names[a], names[b]) for p in pairs[0] for a, b in p}  # Quiet Harbor's passage -> Lena Ardmore's
    assert ("quiet harbor", "lena ardmore") in comp and ("lena ardmore", "port silas") in comp


def words(text: str) -> str:
    return " ".join(re.sub(r"\W+", " ", text.lower()).split())


@pytest.mark.skipif(not (SHARED_DATA / "2wiki_dev").is_dir(), reason="../shared/data/2wiki_dev is absent")
def test_every_hop_of_2wiki_dev_has_a_gold_passage_among_its_titles():
    """All 499 questions: every look-up hop gets a passage among the question's supporting titles, every title
    is some hop's, placeholders name earlier hops, a chain's last hop answers the question; the passage states
    the hop's answer for at least 99% of the hops (the rest: dates / names written otherwise, checked by hand)."""
    data = read_hipporag2_release(SHARED_DATA / "2wiki_dev", "2wikimultihopqa")
    stated = total = 0
    for q in data.queries:
        lookups = [h for h in q.decomposition if h.gold_id is not None]
        comparison = q.type in ("comparison", "bridge_comparison")
        assert len(lookups) == len(q.evidences) and len(q.decomposition) == len(q.evidences) + comparison, q.id
        assert {h.gold_id for h in lookups} == set(q.gold_ids), q.id
        for k, h in enumerate(q.decomposition):
            assert all(int(m) <= k for m in re.findall(r"#(\d+)", h.question)), (q.id, h.question)
        if not comparison:
            assert q.decomposition[-1].answer == q.answers[0], q.id
        for h in lookups:
            text = words(data.corpus[data.corpus.position(h.gold_id)].text)
            stated += f" {words(h.answer)} " in f" {text} "
            total += 1
    assert total == 1248 and stated / total >= 0.99
