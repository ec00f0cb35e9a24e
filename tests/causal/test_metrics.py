import pytest
import torch

from hyperrag.eval.causal import (
    answer_f1,
    causal_chain_depth,
    causal_consistency,
    causal_retrieval_coverage,
    context_precision,
    context_relevance,
    gold_causal_edges,
    groundedness,
    hallucination_rate,
    lexical_groundedness,
    semantic_refinement_score,
    span_similarity,
    summarize_causal_predictions,
)


def test_span_similarity_ignores_function_words():
    assert span_similarity("the soil erosion", "Soil erosion!") == 1.0
    assert span_similarity("soil erosion", "erosion of the coast") == pytest.approx(2 * 0.5 * 0.5 / 1.0)
    assert span_similarity("the", "soil") == 0.0


def test_causal_retrieval_coverage():
    gold = gold_causal_edges(["p1", "p2", "p1", "p3"], ["p1", "p9"])
    assert gold == {0, 2}
    assert causal_retrieval_coverage([0, 3], gold) == 0.5
    assert causal_retrieval_coverage([0, 2, 3], gold) == 1.0
    assert causal_retrieval_coverage([1], set()) is None


def test_context_relevance_and_precision():
    q = torch.tensor([1.0, 0.0])
    ctx = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    assert context_relevance(q, ctx) == 0.5
    assert context_relevance(q, torch.empty(0, 2)) == 0.0
    assert context_precision(["a", "b", "c", "d"], ["b", "d", "z"], 2) == 0.5
    assert context_precision([], ["b"], 3) == 0.0


def test_hallucination_and_groundedness():
    v = ["supported", "refuted", "not_enough_info", "supported"]
    assert hallucination_rate(v) == 0.5 and groundedness(v) == 0.5
    assert hallucination_rate([]) == 0.0 and groundedness([]) is None
    assert lexical_groundedness("The Baltic Sea", ["It empties into the Baltic Sea."]) == 1.0
    assert lexical_groundedness("Baltic Ocean", ["the Baltic Sea"]) == 0.5
    assert lexical_groundedness("the", ["x"]) is None


def test_depth_refinement_f1():
    assert causal_chain_depth([1, 3, 2]) == 3 and causal_chain_depth([]) == 0
    orig = torch.tensor([1.0, 0.0])
    assert semantic_refinement_score(orig, torch.tensor([[1.0, 0.0], [0.6, 0.8]])) == pytest.approx(0.8)
    assert semantic_refinement_score(orig, torch.empty(0)) == 1.0
    assert answer_f1("the Baltic Sea", ["Baltic Sea"]) == 1.0 and answer_f1("Paris", ["Rome"]) == 0.0


def test_causal_consistency_agree_contradict_omit():
    pairs = [("heavy logging", "soil erosion"), ("soil erosion", "reservoir silting"), ("festival", "tourism")]
    q = "Why did the reservoir silt up after logging?"
    # relevant: pairs sharing a content token with question+answer -> the first two, not the festival one
    agree = causal_consistency(pairs, [("logging", "soil erosion"), ("soil erosion", "silting of the reservoir")], q)
    assert agree["relevant"] == [list(pairs[0]), list(pairs[1])]
    assert agree["score"] == 1.0 and agree["checked"] and not agree["contradicted"]
    reversed_ = causal_consistency(pairs, [("soil erosion", "heavy logging")], q)
    assert reversed_["score"] == 0.0 and reversed_["contradicted"] == [list(pairs[0])]
    assert reversed_["omitted"] == [list(pairs[1])]
    half = causal_consistency(pairs, [("heavy logging", "soil erosion")], q)
    assert half["score"] == 0.5
    # no relevant pair -> all retrieved pairs are checked; no pair at all -> nothing to check
    assert causal_consistency([("festival", "tourism")], [], "unrelated?")["relevant"] == [["festival", "tourism"]]
    none = causal_consistency([], [("a", "b")], q)
    assert none["score"] == 1.0 and none["checked"] is False


def test_summarize_predictions():
    rows = [
        {"ranked_ids": ["p1", "p2"], "gold_ids": ["p1"], "answers": ["Baltic Sea"],
         "details": {"causal_depth": 2, "refinement_similarity": 0.8, "causal_edge_ids": [0],
                     "generation": {"answer": "Baltic Sea", "hallucination": 0.0, "consistency_final": 1.0}}},
        {"ranked_ids": ["p3", "p2"], "gold_ids": ["p2"], "answers": ["x"],
         "details": {"causal_depth": 0, "refinement_similarity": 1.0, "causal_edge_ids": []}},
    ]
    out = summarize_causal_predictions(rows, edge_passages=["p1", "p2"], top_n=2)
    assert out["context_precision"] == 50.0 and out["causal_chain_depth"] == 1.0
    assert out["semantic_refinement_score"] == 90.0 and out["causal_retrieval_coverage"] == 50.0
    assert out["hallucination_rate"] == 0.0 and out["groundedness"] == 100.0 and out["answer_f1"] == 100.0
    assert out["causal_consistency"] == 100.0 and out["queries"] == 2
